/**
 * Deferred element-wise chains (normalize_total's row division, then log1p): written out, they are
 * bit for bit the values of the two passes one after the other, on one thread, on two, and off the
 * calling thread; a chain crosses to a worker as a marker and back, and values written out elsewhere
 * are handed to the main thread's matrix.
 */
import { describe, expect, it } from "vitest";
import { allocArray, type SparseMatrix } from "../../../src/sdk/data/arrays.js";
import { dataFrame } from "../../../src/sdk/data/dataframe.js";
import { deferredChain, isDeferredMatrix, provideDeferred } from "../../../src/sdk/data/deferred.js";
import { loadMatrix } from "../../../src/sdk/data/lazy.js";
import { makeSpatialData } from "../../../src/sdk/data/spatialdata.js";
import { makeTable } from "../../../src/sdk/data/table.js";
import {
  packResult,
  prepareForWorker,
  restoreInWorker,
  unpackResult,
} from "../../../src/sdk/jobs/transfer.js";
import { csrScaleRows } from "../../../src/sdk/math/csr.js";
import { csrColumnSumsAsync, log1pValues } from "../../../src/sdk/math/csr-threads.js";
import { deferredValues, writeOutDeferred } from "../../../src/sdk/math/deferred-values.js";
import { Rng } from "../../../src/sdk/math/rng.js";

/** Positions where two arrays differ (bit for bit; a deep `toEqual` on millions of values is slow). */
function differences(a: Float32Array, b: Float32Array): number {
  if (a.length !== b.length) return Math.max(a.length, b.length);
  const x = new Uint32Array(a.buffer, a.byteOffset, a.length);
  const y = new Uint32Array(b.buffer, b.byteOffset, b.length);
  let d = 0;
  for (let k = 0; k < x.length; k++) if (x[k] !== y[k]) d++;
  return d;
}

/** Counts in a CSR matrix on shared memory: `n` rows of 0…2·per values (some rows empty). */
function counts(n: number, per: number, seed = 3): SparseMatrix {
  const rng = new Rng(seed);
  const lengths = Array.from({ length: n }, (_, i) => (i % 97 === 5 ? 0 : rng.int(2 * per + 1)));
  const indptr = allocArray("int32", n + 1) as Int32Array;
  for (let i = 0; i < n; i++) indptr[i + 1] = indptr[i]! + lengths[i]!;
  const nnz = indptr[n]!;
  const data = allocArray("float32", nnz) as Float32Array;
  const indices = allocArray("int32", nnz) as Int32Array;
  for (let k = 0; k < nnz; k++) {
    data[k] = 1 + rng.int(12);
    indices[k] = k % 1000;
  }
  return { kind: "csr", dtype: "float32", shape: [n, 1000], data, indices, indptr };
}

function sizeFactors(m: SparseMatrix): Float64Array {
  const rng = new Rng(9);
  return Float64Array.from({ length: m.shape[0] }, () => Math.fround(0.3 + 2 * rng.next()));
}

/** The two passes one after the other: divide each row, then log1p (as the eager steps write them). */
async function eager(m: SparseMatrix, f: Float64Array, lb: number): Promise<Float32Array> {
  const divided = csrScaleRows(m, f, { divide: true, dtype: "float32" });
  return (await log1pValues(divided.data as Float32Array, "float32", lb, 1)) as Float32Array;
}

describe("writeOutDeferred", () => {
  // 30,000 rows of ~60 values: 1.8M values, over the size where threads start.
  const m = counts(30_000, 60);
  const f = sizeFactors(m);

  it("equals normalize then log1p bit for bit, on one thread, two, and off the calling thread", async () => {
    for (const lb of [0, Math.fround(Math.log(2))]) {
      const want = await eager(m, f, lb);
      const chain = deferredValues(
        m,
        { rowDivisors: f, log1p: { lb }, nonNegative: true },
        { threads: 1, offThread: false },
      ).chain!;
      for (const opts of [
        { threads: 1, offThread: false },
        { threads: 2, offThread: false },
        { threads: 2, offThread: true },
      ]) {
        const out = (await writeOutDeferred(chain, opts)) as SparseMatrix;
        expect(differences(out.data as Float32Array, want)).toBe(0);
        expect(out.indices).toBe(m.indices);
        expect(out.indptr).toBe(m.indptr);
      }
    }
  });

  it("the row division alone equals normalize_total's pass", async () => {
    const want = csrScaleRows(m, f, { divide: true, dtype: "float32" }).data;
    const d = deferredValues(
      m,
      { rowDivisors: f, log1p: null, nonNegative: true },
      { threads: 2, offThread: true },
    );
    expect(differences((await d.load()).data as Float32Array, want as Float32Array)).toBe(0);
  });
});

describe("column sums of a chain", () => {
  // 4.5M values: over the size where the column pass is shared among threads.
  const m = counts(60_000, 75);
  const f = sizeFactors(m);

  // The same with other values in some rows: fractions, counts past the per-row table, NaN.
  const mixed: SparseMatrix = { ...m, data: Float32Array.from(m.data as Float32Array) };
  for (let k = 0; k < mixed.data.length; k += 997) (mixed.data as Float32Array)[k] = 0.37 * (k % 5);
  (mixed.data as Float32Array)[12_345] = 70_000;
  (mixed.data as Float32Array)[54_321] = Number.NaN;

  it("are the sums over the chain written out, on one thread and two (expm1 and none)", async () => {
    for (const [lb, x] of [
      [0, m],
      [Math.fround(Math.log(2)), m],
      [0, mixed],
    ] as const) {
      const chain = deferredValues(
        x,
        { rowDivisors: f, log1p: { lb }, nonNegative: true },
        { threads: 2, offThread: false },
      );
      const marker = chain.chain!;
      const written = (await writeOutDeferred(marker, { threads: 2, offThread: false })) as SparseMatrix;
      for (const transform of [
        { kind: "none" } as const,
        { kind: "expm1", logBase: lb ? 2 : null } as const,
      ]) {
        const opts = { float32Squares: true, transform };
        const want = await csrColumnSumsAsync(written, opts, 1);
        for (const threads of [1, 2]) {
          const got = await csrColumnSumsAsync(x, { ...opts, chain: marker }, threads);
          expect(got.rows).toBe(want.rows);
          expect(Array.from(got.sum)).toEqual(Array.from(want.sum));
          expect(Array.from(got.sumSq)).toEqual(Array.from(want.sumSq));
        }
      }
    }
  });
});

describe("deferred matrices", () => {
  const m = counts(500, 10);
  const f = sizeFactors(m);
  const steps = { rowDivisors: f, log1p: { lb: 0 }, nonNegative: true };

  it("are lazy matrices: described without a read, written out once, the chain let go", async () => {
    const d = deferredValues(m, steps, { threads: 1, offThread: false });
    expect(isDeferredMatrix(d)).toBe(true);
    expect(d).toMatchObject({
      kind: "lazy",
      format: "csr",
      dtype: "float32",
      shape: m.shape,
      nnz: m.data.length,
    });
    expect(deferredChain(d)?.base).toBe(m);
    const a = await d.load();
    expect(await d.load()).toBe(a);
    expect(d.loaded()).toBe(a);
    expect(d.chain).toBeNull();
    expect(deferredChain(d)).toBeNull();
  });

  it("cross to a worker as a marker, come back as a new main-thread matrix, take values written elsewhere", async () => {
    const d = deferredValues(m, steps, { threads: 1, offThread: false });
    const names = (n: number, p: string) => Array.from({ length: n }, (_, i) => `${p}${i}`);
    const table = makeTable({ X: d, obs: dataFrame(names(500, "c")), var: dataFrame(names(1000, "g")) });
    const sd = makeSpatialData({ tables: { table } });
    // Main → worker: the chain as plain data (no write-out), rebuilt there with the main id.
    const wire = await prepareForWorker(sd);
    expect(d.loaded()).toBeUndefined();
    const marker = wire.tables.table!.X as unknown as { kind: string; id: number };
    expect(marker.kind).toBe("deferred-matrix");
    const cloned = structuredClone(wire);
    const seen: ReturnType<typeof deferredValues>[] = [];
    const inWorker = restoreInWorker(cloned, { threads: 1, deferred: seen });
    const wx = inWorker.tables.table!.X!;
    expect(isDeferredMatrix(wx) && wx.id).toBe(d.id);
    expect(seen).toEqual([wx]);
    // The worker writes it out; the main thread's matrix takes those values by id.
    const written = await loadMatrix(wx);
    provideDeferred(d.id, written);
    expect(d.loaded()).toBe(written);
    expect(d.chain).toBeNull();
    // Worker → main: a chain made in the worker travels as a marker and arrives as a deferred matrix.
    const fresh = deferredValues(m, steps, { threads: 1, offThread: false });
    const packed = await packResult({ X: fresh }, "result of test");
    const back = unpackResult(structuredClone(packed.value)) as { X: unknown };
    expect(isDeferredMatrix(back.X)).toBe(true);
    expect(fresh.loaded()).toBeUndefined();
    const values = (await (back.X as ReturnType<typeof deferredValues>).load()) as SparseMatrix;
    expect(differences(values.data as Float32Array, written.data as Float32Array)).toBe(0);
  });
});
