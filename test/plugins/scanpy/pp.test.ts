import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { beforeAll, describe, expect, it } from "vitest";
import { highly_variable_genes } from "../../../src/plugins/scanpy/pp/highly-variable-genes.js";
import { normalize_total } from "../../../src/plugins/scanpy/pp/normalization.js";
import { calculate_qc_metrics } from "../../../src/plugins/scanpy/pp/qc.js";
import { scale } from "../../../src/plugins/scanpy/pp/scale.js";
import { filter_cells, filter_genes, log1p } from "../../../src/plugins/scanpy/pp/simple.js";
import type { DenseArray, Matrix, SparseMatrix, TypedArray } from "../../../src/sdk/data/arrays.js";
import { applyChange, type Change } from "../../../src/sdk/data/change.js";
import { type Column, type DataFrame, dataFrame } from "../../../src/sdk/data/dataframe.js";
import { loadMatrix } from "../../../src/sdk/data/lazy.js";
import { makeSpatialData, type SpatialData } from "../../../src/sdk/data/spatialdata.js";
import { makeTable, type Table } from "../../../src/sdk/data/table.js";
import { unsDict, unsGet } from "../../../src/sdk/data/uns.js";
import { readH5ad } from "../../../src/sdk/io/anndata/read-h5ad.js";
import { fixture, reference } from "../../fixtures.js";
import { readNpy } from "../../helpers/npy.js";
import { makeCtx } from "./ctx.js";

const REF = "synth_10k/scanpy-squidpy/";

/** A small CSV reader (the reference files have no quoted commas); header names unquoted. */
function readCsv(path: string): { header: string[]; rows: string[][] } {
  const lines = readFileSync(path, "utf8").trim().split("\n");
  const unq = (s: string) => s.replace(/^"(.*)"$/, "$1");
  return { header: lines[0]!.split(",").map(unq), rows: lines.slice(1).map((l) => l.split(",").map(unq)) };
}

/** Compare a frame's numeric columns to a reference CSV: |got − want| ≤ atol + rtol·|want|. */
function compareFrame(df: DataFrame, path: string, rtol: number, atol: number, skip: string[] = []): void {
  const { header, rows } = readCsv(path);
  expect(df.index.values).toEqual(rows.map((r) => r[0]));
  for (let c = 1; c < header.length; c++) {
    const name = header[c]!;
    if (skip.includes(name)) continue;
    const col = df.columns[name];
    expect(col, `column ${name}`).toBeDefined();
    const data = (col as DenseArray).data as unknown as ArrayLike<number>;
    let bad = 0;
    let first = "";
    rows.forEach((r, i) => {
      const want = Number(r[c]);
      const got = Number(data[i]);
      const ok = Number.isNaN(want)
        ? Number.isNaN(got)
        : Math.abs(got - want) <= atol + rtol * Math.abs(want);
      if (!ok) {
        bad++;
        if (!first) first = `${r[0]}: got ${got}, want ${want}`;
      }
    });
    expect(bad, `${name} mismatches (first: ${first})`).toBe(0);
  }
}

/** Hash of every buffer of a matrix (to prove an operation did not write into its input). */
function checksum(m: Matrix): string {
  const h = createHash("sha1");
  const add = (a: TypedArray) => h.update(Buffer.from(a.buffer as ArrayBuffer, a.byteOffset, a.byteLength));
  add(m.data);
  if (m.kind !== "dense") {
    add(m.indices);
    add(m.indptr);
  }
  return h.digest("hex");
}

function run(sd: SpatialData, change: Change): SpatialData {
  return applyChange(sd, change).sdata;
}

function table(sd: SpatialData): Table {
  return sd.tables.table!;
}

function col(df: DataFrame, name: string): ArrayLike<number> {
  return (df.columns[name] as DenseArray).data as unknown as ArrayLike<number>;
}

describe("sc.pp on synth_10k, in the reference's order", () => {
  let sd: SpatialData;
  let input: Matrix;

  beforeAll(async () => {
    const { table: t } = await readH5ad(reference("synth_10k/input.h5ad"));
    input = await loadMatrix(t.X!);
    sd = makeSpatialData({ tables: { table: { ...t, X: input } } });
  });

  it("calculate_qc_metrics(qc_vars=['mt']) matches qc_obs.csv and qc_var.csv", async () => {
    const before = checksum(input);
    const ctx = makeCtx();
    sd = run(sd, await calculate_qc_metrics(sd, { qc_vars: ["mt"] }, ctx));
    expect(checksum(input)).toBe(before);
    compareFrame(table(sd).obs, reference(`${REF}qc_obs.csv`), 1e-5, 0);
    compareFrame(table(sd).var, reference(`${REF}qc_var.csv`), 1e-5, 0);
    expect((table(sd).obs.columns.total_counts as DenseArray).dtype).toBe("float32");
    expect(ctx.fractions.at(-1)).toBe(1);
  });

  it("filter_cells(min_genes=20), filter_genes(min_cells=10) keep the reference's names", async () => {
    const before = checksum(input);
    const ctx = makeCtx();
    const nObs0 = table(sd).obs.index.values.length;
    sd = run(sd, await filter_cells(sd, { min_genes: 20 }, ctx));
    sd = run(sd, await filter_genes(sd, { min_cells: 10 }, ctx));
    expect(checksum(input)).toBe(before);
    const t = table(sd);
    expect(t.obs.index.values).toEqual(readCsv(reference(`${REF}kept_obs_names.csv`)).rows.map((r) => r[0]));
    expect(t.var.index.values).toEqual(readCsv(reference(`${REF}kept_var_names.csv`)).rows.map((r) => r[0]));
    const n = t.obs.index.values.length;
    expect(nObs0 - n).toBe(45);
    expect(Math.min(...Array.from(col(t.obs, "n_genes")))).toBeGreaterThanOrEqual(20);
    expect(Math.min(...Array.from(col(t.var, "n_cells")))).toBeGreaterThanOrEqual(10);
    // obs-aligned slots followed the cells; QC columns were subset with them.
    expect((t.obsm.spatial as DenseArray).shape).toEqual([n, 2]);
    expect(col(t.obs, "total_counts").length).toBe(n);
    expect((t.X as SparseMatrix).shape).toEqual([n, 1996]);
    expect(ctx.logs).toEqual([
      "filtered out 45 cells that have less than 20 genes expressed",
      "filtered out 4 genes that are detected in less than 10 cells",
    ]);
  });

  it("normalize_total() + log1p() match lognorm_row0_100_sums.npy", async () => {
    const x0 = table(sd).X as SparseMatrix;
    const before = checksum(x0);
    sd = run(sd, await normalize_total(sd, {}, makeCtx()));
    // Deferred (written out by the first reader): read it here.
    const xn = (await loadMatrix(table(sd).X!)) as SparseMatrix;
    expect(xn.data).not.toBe(x0.data);
    // Every cell now sums to the median total of the input (scanpy's default target).
    const sums = Array.from({ length: 5 }, (_, i) => {
      let s = 0;
      for (let k = xn.indptr[i]!; k < xn.indptr[i + 1]!; k++) s += xn.data[k] as number;
      return s;
    });
    for (const s of sums) expect(s).toBeCloseTo(sums[0]!, 2);
    sd = run(sd, await log1p(sd, {}, makeCtx()));
    expect(checksum(x0)).toBe(before);
    const x = (await loadMatrix(table(sd).X!)) as SparseMatrix;
    expect(x.dtype).toBe("float32");
    expect(unsGet(table(sd).uns, "log1p/base")).toBeNull();
    const want = (await readNpy(reference(`${REF}lognorm_row0_100_sums.npy`))).data as Float32Array;
    expect(want.length).toBe(100);
    for (let i = 0; i < 100; i++) {
      let s = 0;
      for (let k = x.indptr[i]!; k < x.indptr[i + 1]!; k++) s += x.data[k] as number;
      expect(Math.abs(s - want[i]!)).toBeLessThanOrEqual(1e-5 * want[i]!);
    }
  });

  it("highly_variable_genes(flavor='seurat', n_top_genes=1000) matches hvg.csv", async () => {
    const x = (await loadMatrix(table(sd).X!)) as SparseMatrix;
    const before = checksum(x);
    sd = run(sd, await highly_variable_genes(sd, { n_top_genes: 1000 }, makeCtx()));
    expect(checksum(x)).toBe(before);
    const v = table(sd).var;
    const { rows } = readCsv(reference(`${REF}hvg.csv`));
    const flags = col(v, "highly_variable");
    expect(Array.from(flags, (f) => (f ? "True" : "False"))).toEqual(rows.map((r) => r[4]));
    expect(Array.from(flags).reduce((a, b) => a + b, 0)).toBe(1000);
    // Relative 1e-5, plus 1e-6 absolute for dispersions near zero (logs of ratios near 1), where
    // float32 rounding differences of libm's log1pf/expm1f in the input dominate.
    compareFrame(v, reference(`${REF}hvg.csv`), 1e-5, 1e-6, ["highly_variable"]);
    expect((v.columns.dispersions_norm as DenseArray).dtype).toBe("float32");
    expect(unsGet(table(sd).uns, "hvg/flavor")).toBe("seurat");
  });
});

describe("highly_variable_genes on pbmc68k_reduced vs the published Seurat / Cell Ranger tables", () => {
  let base: Table;
  beforeAll(async () => {
    const { table: t } = await readH5ad(fixture("scanpy-pbmc68k-reduced/10x_pbmc68k_reduced.h5ad"));
    // Recipe of scanpy's test: X = raw.X, filter_cells(min_counts=1), normalize_total(1e4), log1p.
    base = makeTable({ X: await loadMatrix(t.raw!.X), obs: t.obs, var: t.raw!.var });
  });

  for (const [flavor, params, file] of [
    ["seurat", { min_mean: 0.0125, max_mean: 3, min_disp: 0.5 }, "seurat_hvg.csv"],
    ["cell_ranger", { n_top_genes: 100 }, "cell_ranger_hvg.csv"],
  ] as const) {
    it(`${flavor}: identical mask, statistics within rtol = atol = 2e-5`, async () => {
      let sd = makeSpatialData({ tables: { table: base } });
      const ctx = makeCtx();
      sd = run(sd, await filter_cells(sd, { min_counts: 1 }, ctx));
      sd = run(sd, await normalize_total(sd, { target_sum: 1e4 }, ctx));
      sd = run(sd, await log1p(sd, {}, ctx));
      sd = run(sd, await highly_variable_genes(sd, { flavor, ...params }, ctx));
      const v = table(sd).var;
      const path = fixture(`scanpy-pbmc68k-reduced/reference/${file}`);
      const { rows } = readCsv(path);
      expect(Array.from(col(v, "highly_variable"), (f) => f === 1)).toEqual(
        rows.map((r) => r[4] === "TRUE" || r[4] === "True"),
      );
      compareFrame(v, path, 2e-5, 2e-5, ["highly_variable"]);
    });
  }
});

describe("highly_variable_genes(flavor='seurat_v3') on synth_10k raw counts", () => {
  // Expected values: scanpy's seurat_v3 algorithm run in numpy with skmisc.loess 0.1.4 (the LOESS
  // scanpy calls) on input.h5ad's X; the selection is summarised by the sum of selected indices and
  // of their squares.
  let sd: SpatialData;
  beforeAll(async () => {
    const { table: t } = await readH5ad(reference("synth_10k/input.h5ad"));
    sd = makeSpatialData({ tables: { table: { ...t, X: await loadMatrix(t.X!) } } });
  });

  function selection(v: DataFrame): [number, number, number] {
    const hv = col(v, "highly_variable");
    let c = 0;
    let s = 0;
    let q = 0;
    for (let i = 0; i < hv.length; i++)
      if (hv[i]) {
        c++;
        s += i;
        q += i * i;
      }
    return [c, s, q];
  }

  it("without batches: same 1000 genes, variances_norm to 1e-9", async () => {
    const out = run(
      sd,
      await highly_variable_genes(sd, { flavor: "seurat_v3", n_top_genes: 1000 }, makeCtx()),
    );
    const v = table(out).var;
    expect(selection(v)).toEqual([1000, 990556, 1300666020]);
    const want: Record<number, number> = {
      0: 0.23457172209827915,
      1: 0.3223442255324648,
      7: 0.38421639999621265,
      100: 0.8614938048738537,
      500: 0.9903446596593652,
      999: 0.9948071867939354,
      1999: 0.8383187959355349,
    };
    const vn = col(v, "variances_norm");
    for (const [i, w] of Object.entries(want)) expect(Math.abs(vn[Number(i)]! - w)).toBeLessThan(1e-9 * w);
    const rank = col(v, "highly_variable_rank");
    expect(rank[500]).toBe(797);
    expect(rank[999]).toBe(756);
    expect(Number.isNaN(rank[0]!)).toBe(true);
    expect(v.columns.highly_variable_nbatches).toBeUndefined();
    expect(unsGet(table(out).uns, "hvg/flavor")).toBe("seurat_v3");
  });

  it("with batch_key='domain' (8 batches): same 500 genes and batch counts", async () => {
    const out = run(
      sd,
      await highly_variable_genes(
        sd,
        { flavor: "seurat_v3", n_top_genes: 500, batch_key: "domain" },
        makeCtx(),
      ),
    );
    const v = table(out).var;
    expect(selection(v)).toEqual([500, 483694, 635542938]);
    const nb = col(v, "highly_variable_nbatches");
    expect(Array.from(nb).reduce((a, b) => a + b, 0)).toBe(4000);
    expect(nb[100]).toBe(1);
    expect(col(v, "highly_variable_rank")[500]).toBe(216);
    expect(Math.abs(col(v, "variances_norm")[500]! - 1.0235680897609376)).toBeLessThan(1e-9);
  });

  it("seurat flavor with batch_key: per-batch counts and intersection", async () => {
    let s2 = run(sd, await normalize_total(sd, { target_sum: 1e4 }, makeCtx()));
    s2 = run(s2, await log1p(s2, {}, makeCtx()));
    const out = run(
      s2,
      await highly_variable_genes(s2, { n_top_genes: 300, batch_key: "domain" }, makeCtx()),
    );
    const v = table(out).var;
    const nb = col(v, "highly_variable_nbatches");
    const inter = col(v, "highly_variable_intersection");
    const hv = col(v, "highly_variable");
    let selected = 0;
    let minSelected = 9;
    let maxUnselected = 0;
    for (let g = 0; g < nb.length; g++) {
      expect(nb[g]).toBeGreaterThanOrEqual(0);
      expect(nb[g]).toBeLessThanOrEqual(8);
      expect(inter[g]).toBe(nb[g] === 8 ? 1 : 0);
      if (hv[g]) {
        selected++;
        minSelected = Math.min(minSelected, nb[g]!);
      } else maxUnselected = Math.max(maxUnselected, nb[g]!);
    }
    expect(selected).toBe(300);
    // Genes are ranked by how many batches select them first.
    expect(minSelected).toBeGreaterThanOrEqual(maxUnselected);
  });

  it("subset=true keeps only the selected genes", async () => {
    const out = run(
      sd,
      await highly_variable_genes(sd, { flavor: "seurat_v3", n_top_genes: 200, subset: true }, makeCtx()),
    );
    const t = table(out);
    expect(t.var.index.values.length).toBe(200);
    expect((t.X as SparseMatrix).shape).toEqual([10000, 200]);
    expect(Array.from(col(t.var, "highly_variable")).every((f) => f === 1)).toBe(true);
    expect(unsGet(t.uns, "hvg/flavor")).toBe("seurat_v3");
  });
});

function expectClose(got: ArrayLike<unknown>, want: number[], tol = 1e-12): void {
  expect(got.length).toBe(want.length);
  want.forEach((w, i) => {
    expect(Math.abs(Number(got[i]) - w)).toBeLessThanOrEqual(tol);
  });
}

describe("scale", () => {
  const obs = dataFrame(["a", "b", "c"], {
    m: { kind: "dense", dtype: "bool", shape: [3], data: Uint8Array.from([1, 1, 0]) },
  });
  const vr = dataFrame(["g0", "g1", "g2"]);
  const dense: DenseArray = {
    kind: "dense",
    dtype: "float64",
    shape: [3, 3],
    data: Float64Array.from([1, 2, 7, 3, 6, 7, 5, 10, 7]),
  };
  const sdOf = (X: Matrix) => makeSpatialData({ tables: { table: makeTable({ X, obs, var: vr }) } });

  it("centres and scales to unit variance (ddof 1); constant genes become 0", async () => {
    const sd = sdOf(dense);
    const before = checksum(dense);
    const out = run(sd, await scale(sd, {}, makeCtx()));
    const x = table(out).X as DenseArray;
    // Variance as E[x²] − E[x]² (scanpy's formula): exact up to rounding.
    expectClose(x.data, [-1, -1, 0, 0, 0, 0, 1, 1, 0]);
    expect(Array.from(col(table(out).var, "mean"))).toEqual([3, 6, 7]);
    expectClose(col(table(out).var, "std"), [2, 4, 1]);
    expect(checksum(dense)).toBe(before);
  });

  it("clips at max_value", async () => {
    const sd = sdOf(dense);
    const x = table(run(sd, await scale(sd, { max_value: 0.5 }, makeCtx()))).X as DenseArray;
    expectClose(x.data, [-0.5, -0.5, 0, 0, 0, 0, 0.5, 0.5, 0]);
  });

  it("mask_obs: statistics and scaling on the masked cells only", async () => {
    const sd = sdOf(dense);
    const out = table(run(sd, await scale(sd, { mask_obs: "m" }, makeCtx())));
    const x = out.X as DenseArray;
    const r = Math.SQRT1_2;
    // rows a, b: mean (2, 4, 7), std (√2, √8, 1); row c unchanged.
    const want = [-r, -r, 0, r, r, 0, 5, 10, 7];
    want.forEach((w, i) => {
      expect(x.data[i]).toBeCloseTo(w, 12);
    });
    expect(Array.from(col(out.var, "mean of m"))).toEqual([2, 4, 7]);
  });

  it("sparse input: zero-centring densifies to float64; zero_center=false keeps it sparse", async () => {
    const csr: SparseMatrix = {
      kind: "csr",
      dtype: "float32",
      shape: [3, 3],
      data: Float32Array.from([1, 2, 7, 3, 6, 7, 5, 10, 7]),
      indices: Int32Array.from([0, 1, 2, 0, 1, 2, 0, 1, 2]),
      indptr: Int32Array.from([0, 3, 6, 9]),
    };
    const sd = sdOf(csr);
    const ctx = makeCtx();
    const d = table(run(sd, await scale(sd, {}, ctx))).X as DenseArray;
    expect(d.kind).toBe("dense");
    expect(d.dtype).toBe("float64");
    expectClose(d.data, [-1, -1, 0, 0, 0, 0, 1, 1, 0]);
    expect(ctx.logs).toContain("zero-centering a sparse array/matrix densifies it.");
    const s = table(run(sd, await scale(sd, { zero_center: false, max_value: 2 }, makeCtx())))
      .X as SparseMatrix;
    expect(s.kind).toBe("csr");
    expect(s.dtype).toBe("float32");
    expectClose(s.data, [0.5, 0.5, 2, 1.5, 1.5, 2, 2, 2, 2], 1e-6);
  });
});

describe("filters carry every aligned slot; errors; cancellation", () => {
  function small(): SpatialData {
    const X: SparseMatrix = {
      kind: "csr",
      dtype: "float32",
      shape: [4, 3],
      data: Float32Array.from([1, 5, 2, 3, 1, 4]),
      indices: Int32Array.from([0, 2, 0, 1, 2, 1]),
      indptr: Int32Array.from([0, 2, 5, 5, 6]),
    };
    const cellType: Column = {
      kind: "categorical",
      codes: Int32Array.from([0, 1, 2, 1]),
      categories: { kind: "string", shape: [3], values: ["A", "B", "C"] },
      ordered: false,
    };
    const obs = dataFrame(["c0", "c1", "c2", "c3"], { cell_type: cellType });
    const vr = dataFrame(["g0", "g1", "g2"], {
      mt: { kind: "dense", dtype: "bool", shape: [3], data: Uint8Array.from([0, 0, 1]) },
    });
    const dense = (rows: number, cols: number): DenseArray => ({
      kind: "dense",
      dtype: "float64",
      shape: [rows, cols],
      data: Float64Array.from({ length: rows * cols }, (_, i) => i),
    });
    const t = makeTable({
      X,
      obs,
      var: vr,
      obsm: { spatial: dense(4, 2) },
      varm: { PCs: dense(3, 2) },
      obsp: { distances: dense(4, 4) },
      layers: { counts: dense(4, 3) },
      uns: unsDict({
        cell_type_colors: { kind: "string", shape: [3], values: ["#ff0000", "#00ff00", "#0000ff"] },
      }),
      raw: { X: dense(4, 5), var: dataFrame(["r0", "r1", "r2", "r3", "r4"]), varm: {} },
    });
    return makeSpatialData({ tables: { table: t } });
  }

  it("filter_cells(min_counts=1) drops the empty cell from X, layers, obs, obsm, obsp, raw", async () => {
    const sd = small();
    const t = table(run(sd, await filter_cells(sd, { min_counts: 1 }, makeCtx())));
    expect(t.obs.index.values).toEqual(["c0", "c1", "c3"]);
    expect(Array.from(col(t.obs, "n_counts"))).toEqual([6, 6, 4]);
    expect((t.X as SparseMatrix).shape).toEqual([3, 3]);
    expect(Array.from((t.obsm.spatial as DenseArray<Float64Array>).data)).toEqual([0, 1, 2, 3, 6, 7]);
    expect(Array.from((t.obsp.distances as DenseArray<Float64Array>).data)).toEqual([
      0, 1, 3, 4, 5, 7, 12, 13, 15,
    ]);
    expect((t.layers.counts as DenseArray).shape).toEqual([3, 3]);
    expect((t.raw!.X as DenseArray).shape).toEqual([3, 5]);
    // Category C (only on the dropped cell) is gone, and its colour with it.
    const ct = t.obs.columns.cell_type as unknown as { categories: { values: string[] }; codes: Int32Array };
    expect(ct.categories.values).toEqual(["A", "B"]);
    expect(Array.from(ct.codes)).toEqual([0, 1, 1]);
    expect((unsGet(t.uns, "cell_type_colors") as unknown as { values: string[] }).values).toEqual([
      "#ff0000",
      "#00ff00",
    ]);
  });

  it("filter_genes(max_cells=1) drops genes from X, layers, var, varm", async () => {
    const sd = small();
    const t = table(run(sd, await filter_genes(sd, { max_cells: 1 }, makeCtx())));
    expect(t.var.index.values).toEqual([]);
    const t2 = table(run(sd, await filter_genes(sd, { min_counts: 6 }, makeCtx())));
    expect(t2.var.index.values).toEqual(["g1", "g2"]);
    expect(Array.from(col(t2.var, "n_counts"))).toEqual([7, 6]);
    expect(Array.from((t2.varm.PCs as DenseArray<Float64Array>).data)).toEqual([2, 3, 4, 5]);
    expect(Array.from((t2.layers.counts as DenseArray<Float64Array>).data)).toEqual([
      1, 2, 4, 5, 7, 8, 10, 11,
    ]);
    expect((t2.raw!.X as DenseArray).shape).toEqual([4, 5]);
    const x = t2.X as SparseMatrix;
    expect(Array.from(x.indptr)).toEqual([0, 1, 3, 3, 4]);
    expect(Array.from(x.indices)).toEqual([1, 0, 1, 0]);
  });

  it("refuses zero or two thresholds, unknown layers and non-boolean qc_vars", async () => {
    const sd = small();
    await expect(filter_cells(sd, {}, makeCtx())).rejects.toThrow(/exactly one of/);
    await expect(filter_genes(sd, { min_cells: 1, min_counts: 2 }, makeCtx())).rejects.toThrow(
      /exactly one of/,
    );
    await expect(log1p(sd, { layer: "nope" }, makeCtx())).rejects.toThrow(/no layer "nope"/);
    await expect(calculate_qc_metrics(sd, { qc_vars: ["nope"] }, makeCtx())).rejects.toThrow(
      /no var column "nope"/,
    );
    await expect(calculate_qc_metrics(sd, { percent_top: [5] }, makeCtx())).rejects.toThrow(
      /outside the range/,
    );
    await expect(normalize_total(sd, {}, makeCtx("other"))).rejects.toThrow(/no table "other"/);
  });

  it("honours an aborted signal", async () => {
    const sd = small();
    const ac = new AbortController();
    ac.abort();
    await expect(calculate_qc_metrics(sd, {}, makeCtx("table", 0, ac.signal))).rejects.toThrow();
    await expect(normalize_total(sd, {}, makeCtx("table", 0, ac.signal))).rejects.toThrow();
    await expect(highly_variable_genes(sd, {}, makeCtx("table", 0, ac.signal))).rejects.toThrow();
  });

  it("layers: normalize_total, log1p(base=2) and qc on a layer; exclude_highly_expressed", async () => {
    const sd = small();
    const ctx = makeCtx();
    let out = run(sd, await normalize_total(sd, { layer: "counts", target_sum: 1, key_added: "sf" }, ctx));
    const layer = table(out).layers.counts as DenseArray<Float64Array>;
    expect(layer.data[0]! + layer.data[1]! + layer.data[2]!).toBeCloseTo(1, 12);
    expect(table(out).X).toBe(table(sd).X);
    expect(Array.from(col(table(out).obs, "sf"))).toEqual([3, 12, 21, 30]);
    out = run(out, await log1p(out, { base: 2, layer: "counts" }, ctx));
    expect(unsGet(table(out).uns, "log1p/base")).toBe(2);
    // scanpy's docstring example: exclude_highly_expressed with max_fraction 0.2.
    const X: DenseArray = {
      kind: "dense",
      dtype: "float32",
      shape: [3, 5],
      data: Float32Array.from([3, 3, 3, 6, 6, 1, 1, 1, 2, 2, 1, 22, 1, 2, 2]),
    };
    const s2 = makeSpatialData({
      tables: {
        table: makeTable({ X, obs: dataFrame(["a", "b", "c"]), var: dataFrame(["0", "1", "2", "3", "4"]) }),
      },
    });
    const n = table(
      run(
        s2,
        await normalize_total(
          s2,
          { target_sum: 1, exclude_highly_expressed: true, max_fraction: 0.2 },
          makeCtx(),
        ),
      ),
    ).X as DenseArray<Float32Array>;
    expect(Array.from(n.data)).toEqual([0.5, 0.5, 0.5, 1, 1, 0.5, 0.5, 0.5, 1, 1, 0.5, 11, 0.5, 1, 1]);
    const q = table(
      run(
        sd,
        await calculate_qc_metrics(sd, { layer: "counts", percent_top: [1, 2], qc_vars: ["mt"] }, makeCtx()),
      ),
    );
    // counts layer rows: [0,1,2] [3,4,5] …: top-1 share of row 0 is 2/3.
    expect(col(q.obs, "pct_counts_in_top_1_genes")[0]).toBeCloseTo(200 / 3, 10);
    expect(col(q.obs, "pct_counts_in_top_2_genes")[0]).toBeCloseTo(100, 10);
    expect(Array.from(col(q.obs, "total_counts_mt"))).toEqual([2, 5, 8, 11]);
  });
});
