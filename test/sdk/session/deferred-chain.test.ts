/**
 * normalize_total then log1p through a session: both steps defer their values (no pass of their
 * own), the first step that reads X writes them out once and hands them back to the session, and
 * every reader — a job on a worker, a field read and a save on the main thread — sees the values the
 * two steps make one after the other (the eager steps on a dense copy of the same counts).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { normalize_total } from "../../../src/plugins/scanpy/pp/normalization.js";
import { log1p } from "../../../src/plugins/scanpy/pp/simple.js";
import type { DenseArray, Matrix, SparseMatrix } from "../../../src/sdk/data/arrays.js";
import { applyChange } from "../../../src/sdk/data/change.js";
import { isDeferredMatrix } from "../../../src/sdk/data/deferred.js";
import { loadMatrix } from "../../../src/sdk/data/lazy.js";
import type { SpatialData } from "../../../src/sdk/data/spatialdata.js";
import { unsGet } from "../../../src/sdk/data/uns.js";
import { Tessera, type TesseraSession } from "../../../src/sdk/tessera.js";
import { makeCtx } from "../../plugins/scanpy/ctx.js";
import { demoDataDir } from "./helpers.js";

let dataDir: string;
let demo: string;
let cleanup: () => Promise<void>;
let t: Tessera;

beforeAll(async () => {
  ({ dataDir, demo, cleanup } = await demoDataDir());
  t = await Tessera.start({ dataDir, config: { computePoolWorkers: 1 } });
});
afterAll(async () => {
  await t?.close();
  await cleanup?.();
});

const table = (s: TesseraSession) => Object.values(s.data.tables)[0]!;

/** A CSR or dense matrix as dense row-major float32 values. */
function denseValues(m: Matrix): Float32Array {
  const [n, p] = m.shape as [number, number];
  if (m.kind === "dense") return Float32Array.from(m.data as Float32Array);
  const out = new Float32Array(n * p);
  const s = m as SparseMatrix;
  for (let i = 0; i < n; i++)
    for (let k = Number(s.indptr[i]); k < Number(s.indptr[i + 1]); k++)
      out[i * p + Number(s.indices[k])] = s.data[k] as number;
  return out;
}

/** The eager steps (dense input is never deferred) on a dense copy of the session's counts. */
async function eager(sd: SpatialData, base: number | null): Promise<Float32Array> {
  const name = Object.keys(sd.tables)[0]!;
  const counts = (await loadMatrix(sd.tables[name]!.X!)) as SparseMatrix;
  const dense: DenseArray = {
    kind: "dense",
    dtype: "float32",
    shape: counts.shape,
    data: denseValues(counts),
  };
  let d = applyChange(sd, { tables: { [name]: { X: dense } } }).sdata;
  const ctx = makeCtx(name);
  d = applyChange(d, await normalize_total(d, {}, ctx)).sdata;
  d = applyChange(d, await log1p(d, { base }, ctx)).sdata;
  return denseValues(await loadMatrix(d.tables[name]!.X!));
}

describe("deferred normalize_total → log1p in a session", () => {
  it("the steps defer; a job reading X writes the values out once and the session keeps them", async () => {
    const s = await t.open(demo);
    const want = await eager(s.data, null);
    await s.run("sc.pp.normalize_total", {});
    const normalised = table(s).X!;
    expect(isDeferredMatrix(normalised) && normalised.loaded()).toBeUndefined();
    await s.run("sc.pp.log1p", {});
    const x = table(s).X!;
    expect(isDeferredMatrix(x) && x.chain?.log1p).toEqual({ lb: 0 });
    expect(unsGet(table(s).uns, "log1p/base")).toBeNull();
    // The chain's base is the counts: the normalised values were never written out.
    expect(normalised.kind === "lazy" && normalised.loaded()).toBeUndefined();
    await s.run("sc.pp.highly_variable_genes", { flavor: "seurat", n_top_genes: 10 });
    // highly_variable_genes takes its column statistics from the chain: still not written out.
    expect(isDeferredMatrix(x) && x.chain).not.toBeNull();
    await s.run("sc.pp.pca", { n_comps: 5 });
    // pca needs the values: written out on the job's worker and handed back; the session holds them.
    expect(isDeferredMatrix(x) && x.chain).toBeNull();
    const written = x.kind === "lazy" ? x.loaded() : undefined;
    expect(written).toBeDefined();
    expect(denseValues(written!)).toEqual(want);
    // The next job reads those values (no second write-out).
    await s.run("sc.pp.pca", { n_comps: 4 });
    expect(x.kind === "lazy" && x.loaded()).toBe(written);
  });

  it("highly_variable_genes from the chain equals it on the values written out, column for column", async () => {
    const fromChain = await t.open(demo);
    const fromValues = await t.open(demo);
    for (const s of [fromChain, fromValues]) {
      await s.run("sc.pp.normalize_total", {});
      await s.run("sc.pp.log1p", {});
    }
    // Written out before: highly_variable_genes then reads the values themselves.
    await loadMatrix(table(fromValues).X!);
    for (const flavor of ["seurat", "cell_ranger"] as const) {
      for (const s of [fromChain, fromValues])
        await s.run("sc.pp.highly_variable_genes", { flavor, n_top_genes: 10 });
      const a = table(fromChain).var;
      const b = table(fromValues).var;
      for (const c of ["highly_variable", "means", "dispersions", "dispersions_norm"])
        expect(Array.from((a.columns[c] as { data: ArrayLike<number> }).data)).toEqual(
          Array.from((b.columns[c] as { data: ArrayLike<number> }).data),
        );
    }
    expect(isDeferredMatrix(table(fromChain).X) && table(fromChain).X).toHaveProperty(
      "chain.kind",
      "deferred-matrix",
    );
  });

  it("a field read and a save on the main thread write them out, with the same values (log base 2)", async () => {
    const s = await t.open(demo);
    const want = await eager(s.data, 2);
    await s.run("sc.pp.normalize_total", {});
    await s.run("sc.pp.log1p", { base: 2 });
    const x = table(s).X!;
    const genes = table(s).var.index;
    const gene = genes.values[3]!;
    const column = await s.values(`X:${gene}`);
    const p = x.shape[1]!;
    // A field's numbers come as the shortest decimal of each float32 value.
    expect(column.map((v) => Math.fround(v as number))).toEqual(
      Array.from({ length: x.shape[0]! }, (_, i) => want[i * p + 3]),
    );
    const path = await s.save({ prefix: "deferred" });
    const back = await t.open(path);
    expect(denseValues(await loadMatrix(table(back).X!))).toEqual(want);
  });
});
