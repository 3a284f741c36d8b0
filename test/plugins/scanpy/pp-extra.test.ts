import { describe, expect, it } from "vitest";
import { combat } from "../../../src/plugins/scanpy/pp/combat.js";
import { legacyChoice, subsample } from "../../../src/plugins/scanpy/pp/sampling.js";
import { scrublet } from "../../../src/plugins/scanpy/pp/scrublet.js";
import { thresholdMinimum } from "../../../src/plugins/scanpy/pp/scrublet-core.js";
import { regress_out } from "../../../src/plugins/scanpy/pp/simple.js";
import {
  type Categorical,
  type DenseArray,
  dense,
  type SparseMatrix,
  strings,
} from "../../../src/sdk/data/arrays.js";
import { applyChange } from "../../../src/sdk/data/change.js";
import { type Column, dataFrame } from "../../../src/sdk/data/dataframe.js";
import { loadMatrix } from "../../../src/sdk/data/lazy.js";
import { makeSpatialData, type SpatialData } from "../../../src/sdk/data/spatialdata.js";
import { makeTable, type Table } from "../../../src/sdk/data/table.js";
import { type UnsDict, unsDict } from "../../../src/sdk/data/uns.js";
import { readH5ad } from "../../../src/sdk/io/anndata/read-h5ad.js";
import { Rng } from "../../../src/sdk/math/rng.js";
import { reference } from "../../fixtures.js";
import { makeCtx } from "./ctx.js";

/** CSR float32 from a row-major dense array. */
function csr(rows: number[][]): SparseMatrix {
  const indptr = [0];
  const indices: number[] = [];
  const data: number[] = [];
  for (const r of rows) {
    r.forEach((v, j) => {
      if (v !== 0) {
        indices.push(j);
        data.push(v);
      }
    });
    indptr.push(indices.length);
  }
  return {
    kind: "csr",
    dtype: "float32",
    shape: [rows.length, rows[0]!.length],
    data: Float32Array.from(data),
    indices: Int32Array.from(indices),
    indptr: Int32Array.from(indptr),
  };
}

function cat(codes: number[], categories: string[]): Categorical {
  return {
    kind: "categorical",
    codes: Int32Array.from(codes),
    categories: strings(categories),
    ordered: false,
  };
}

function sdWith(t: Table): SpatialData {
  return makeSpatialData({ tables: { table: t } });
}

function smallTable(x: SparseMatrix | DenseArray, obs: Record<string, Column>): Table {
  const [n, m] = x.shape as [number, number];
  return makeTable({
    X: x,
    obs: dataFrame(
      Array.from({ length: n }, (_, i) => `c${i}`),
      obs,
    ),
    var: dataFrame(Array.from({ length: m }, (_, j) => `g${j}`)),
  });
}

const X6 = [
  [1, 0, 3, 0],
  [0, 2, 0, 5],
  [4, 1, 0, 0],
  [0, 0, 2, 1],
  [3, 3, 0, 2],
  [1, 0, 1, 4],
];

describe("regress_out", () => {
  it("numeric keys: residuals of [1, a, b] as numpy computes them (float32)", async () => {
    const t = smallTable(csr(X6), {
      a: dense(Float64Array.from([0.5, 1.5, 2.0, 0.1, 3.2, 1.1])),
      b: dense(Int32Array.from([10, 20, 15, 12, 30, 18])),
    });
    const change = await regress_out(sdWith(t), { keys: ["a", "b"] }, makeCtx());
    const out = applyChange(sdWith(t), change).sdata.tables.table!;
    const x = (await loadMatrix(out.X!)) as DenseArray<Float32Array>;
    expect(x.kind).toBe("dense");
    expect(x.dtype).toBe("float32");
    expect(x.shape).toEqual([6, 4]);
    // np.linalg.inv(R.T@R) @ (R.T@X), then X[i] -= R[i] @ coef in float32 (scanpy's numpy_regress_out).
    const expected = [
      -0.24193817377090454, 0.1088554710149765, 1.129156231880188, -0.7248120307922363, -1.0464494228363037,
      0.7329156398773193, -0.8633249998092651, 2.1398496627807617, 0.15795043110847473, -0.0917850211262703,
      -0.5990532040596008, 0.382957398891449, 0.4158730208873749, 0.14126984775066376, -0.13015873730182648,
      -1.4571428298950195, 0.260540246963501, -0.001893622917123139, 0.6818156242370605, -1.4726817607879639,
      0.45402395725250244, -0.8893622756004333, -0.21843497455120087, 1.1318296194076538,
    ];
    for (let k = 0; k < expected.length; k++) expect(x.data[k]).toBeCloseTo(expected[k]!, 5);
  });

  it("a single categorical key (with a missing code) fits [1, category mean] per gene", async () => {
    const t = smallTable(csr(X6), { g: cat([0, 0, 1, 1, -1, 1], ["u", "v"]) });
    const change = await regress_out(sdWith(t), { keys: "g" }, makeCtx());
    const x = (await loadMatrix(applyChange(sdWith(t), change).sdata.tables.table!.X!)) as DenseArray;
    // statsmodels GLM (pinv) on [1, float32 category means], as scanpy's _regress_out_chunk.
    const expected = [
      -0.5294117686932753, -0.5999999872843429, 1.5000000000000002, -2.1666666785875943, -1.5294117686932753,
      1.400000012715657, -1.4999999999999998, 2.8333333214124057, 2.5392156919806057, -0.1333333349227912,
      -0.9999999999999996, -1.9999999960263568, -1.460784308019394, -1.1333333349227912, 1.0000000000000004,
      -0.9999999960263568, 1.4411764614447309, 1.5999999793370552, 1.0547118733938987e-15, 0.3333333452542595,
      -0.4607843080193941, -1.1333333349227912, 4.440892098500626e-16, 2.000000003973643,
    ];
    for (let k = 0; k < expected.length; k++) expect(x.data[k]).toBeCloseTo(expected[k]!, 5);
  });

  it("collinear keys: minimum-norm fit, constant genes left as they are (scanpy's GLM fallback)", async () => {
    const rows = X6.map((r) => [...r, 7]);
    const a = [0.5, 1.5, 2.0, 0.1, 3.2, 1.1];
    const t = smallTable(csr(rows), {
      a: dense(Float64Array.from(a)),
      a2: dense(Float64Array.from(a, (v) => 2 * v)),
    });
    const ctx = makeCtx();
    const change = await regress_out(sdWith(t), { keys: ["a", "a2"] }, ctx);
    const x = (await loadMatrix(applyChange(sdWith(t), change).sdata.tables.table!.X!)) as DenseArray;
    const single = await regress_out(sdWith(t), { keys: ["a"] }, makeCtx());
    const y = (await loadMatrix(applyChange(sdWith(t), single).sdata.tables.table!.X!)) as DenseArray;
    for (let i = 0; i < 6; i++) {
      for (let j = 0; j < 4; j++) expect(x.data[i * 5 + j]).toBeCloseTo(y.data[i * 5 + j] as number, 5);
      expect(x.data[i * 5 + 4]).toBe(7); // constant gene unchanged in the fallback
      expect(y.data[i * 5 + 4]).toBeCloseTo(0, 5); // and fitted exactly in the regular path
    }
    expect(ctx.logs.join("\n")).toMatch(/collinear/);
  });

  it("writes a layer when asked, refuses categorical + more keys and oversized results", async () => {
    const t0 = smallTable(csr(X6), {
      a: dense(Float64Array.from([1, 2, 3, 4, 5, 7])),
      g: cat([0, 0, 1, 1, 0, 1], ["u", "v"]),
    });
    const t = makeTable({ ...t0, layers: { counts: csr(X6) } });
    const change = await regress_out(sdWith(t), { keys: "a", layer: "counts" }, makeCtx());
    expect(change.tables?.table?.X).toBeUndefined();
    expect(change.tables?.table?.layers?.counts?.kind).toBe("dense");
    await expect(regress_out(sdWith(t), { keys: ["g", "a"] }, makeCtx())).rejects.toThrow(
      /only a single key/,
    );
    await expect(regress_out(sdWith(t), { keys: ["nope"] }, makeCtx())).rejects.toThrow(
      /no obs column "nope"/,
    );
    await expect(regress_out(sdWith(t), { keys: "a", max_dense_gib: 1e-9 }, makeCtx())).rejects.toThrow(
      /max_dense_gib/,
    );
  });

  it("synth_10k: regressing total_counts leaves residuals orthogonal to [1, total_counts]", async () => {
    const { table } = await readH5ad(reference("synth_10k/input.h5ad"));
    const x0 = (await loadMatrix(table.X!)) as SparseMatrix;
    const [n, m] = x0.shape;
    const tc = new Float64Array(n);
    for (let i = 0; i < n; i++) {
      for (let k = x0.indptr[i] as number; k < (x0.indptr[i + 1] as number); k++)
        tc[i]! += x0.data[k] as number;
    }
    const t = makeTable({
      ...table,
      obs: dataFrame(table.obs.index, { ...table.obs.columns, total_counts: dense(tc) }),
    });
    const change = await regress_out(sdWith(t), { keys: ["total_counts"] }, makeCtx());
    const x = (await loadMatrix(
      applyChange(sdWith(t), change).sdata.tables.table!.X!,
    )) as DenseArray<Float32Array>;
    expect(x.shape).toEqual([n, m]);
    const tcNorm = Math.hypot(...tc);
    let worst = 0;
    for (let j = 0; j < m; j += 7) {
      let s0 = 0;
      let s1 = 0;
      let ss = 0;
      for (let i = 0; i < n; i++) {
        const r = x.data[i * m + j]!;
        s0 += r;
        s1 += r * tc[i]!;
        ss += r * r;
      }
      const norm = Math.sqrt(ss);
      if (norm === 0) continue;
      worst = Math.max(worst, Math.abs(s0) / (Math.sqrt(n) * norm), Math.abs(s1) / (tcNorm * norm));
    }
    expect(worst).toBeLessThan(1e-5);
  }, 60_000);
});

describe("subsample", () => {
  it("draws the cells numpy's legacy RandomState draws", () => {
    // np.random.seed(0); np.random.choice(10000, 1000, replace=False)
    const c = legacyChoice(10000, 1000, false, 0);
    expect(Array.from(c.subarray(0, 10))).toEqual([
      9394, 898, 2398, 5906, 2343, 8225, 5506, 6451, 2670, 3497,
    ]);
    expect(Array.from(c.subarray(995))).toEqual([9319, 2662, 6925, 8070, 3651]);
    expect(c.reduce((a, b) => a + b, 0)).toBe(5075556);
    expect(Array.from(legacyChoice(10, 10, false, 0))).toEqual([2, 8, 4, 9, 1, 6, 7, 3, 0, 5]);
    // np.random.seed(7); np.random.choice(100, 20, replace=True)
    expect(Array.from(legacyChoice(100, 20, true, 7))).toEqual([
      47, 68, 25, 67, 83, 23, 92, 57, 14, 23, 72, 89, 42, 90, 8, 39, 68, 48, 7, 44,
    ]);
  });

  it("synth_10k: n_obs and fraction give scanpy's rows in draw order, with obsm and X subset alike", async () => {
    const { table } = await readH5ad(reference("synth_10k/input.h5ad"));
    const sd = sdWith(table);
    const change = await subsample(sd, { n_obs: 1000 }, makeCtx());
    const t = applyChange(sd, change).sdata.tables.table!;
    expect(t.obs.index.values.length).toBe(1000);
    const idx = legacyChoice(10000, 1000, false, 0);
    expect(t.obs.index.values.slice(0, 3)).toEqual([9394, 898, 2398].map((i) => table.obs.index.values[i]));
    const x0 = (await loadMatrix(table.X!)) as SparseMatrix;
    const x1 = (await loadMatrix(t.X!)) as SparseMatrix;
    expect(x1.kind).toBe("csr");
    expect(x1.shape).toEqual([1000, 2000]);
    for (const r of [0, 1, 999]) {
      const i = idx[r]!;
      const a = Array.from(
        x0.data.subarray(x0.indptr[i] as number, x0.indptr[i + 1] as number) as Float32Array,
      );
      const b = Array.from(
        x1.data.subarray(x1.indptr[r] as number, x1.indptr[r + 1] as number) as Float32Array,
      );
      expect(b).toEqual(a);
    }
    const sp0 = table.obsm.spatial as DenseArray<Float64Array>;
    const sp1 = t.obsm.spatial as DenseArray<Float64Array>;
    expect(sp1.shape).toEqual([1000, 2]);
    expect([sp1.data[2], sp1.data[3]]).toEqual([sp0.data[idx[1]! * 2], sp0.data[idx[1]! * 2 + 1]]);
    // Deterministic, and fraction truncates like int(fraction * n).
    const again = await subsample(sd, { n_obs: 1000 }, makeCtx());
    expect(again.replaceTables?.table?.obs.index.values).toEqual(t.obs.index.values);
    const byFraction = await subsample(sd, { fraction: 0.12345 }, makeCtx());
    expect(byFraction.replaceTables?.table?.obs.index.values.length).toBe(1234);
    const other = await subsample(sd, { n_obs: 1000, random_state: 1 }, makeCtx());
    expect(other.replaceTables?.table?.obs.index.values).not.toEqual(t.obs.index.values);
  }, 30_000);

  it("subsets obsp on both axes, layers, raw, and drops unused categories with their colours", async () => {
    // A ring graph on 6 cells as obsp, a dense layer and a raw X.
    const ring: SparseMatrix = {
      kind: "csr",
      dtype: "float64",
      shape: [6, 6],
      indptr: Int32Array.from([0, 2, 4, 6, 8, 10, 12]),
      indices: Int32Array.from([1, 5, 0, 2, 1, 3, 2, 4, 3, 5, 0, 4]),
      data: Float64Array.from([1, 6, 1, 2, 2, 3, 3, 4, 4, 5, 6, 5]),
    };
    const base = smallTable(csr(X6), { g: cat([0, 0, 1, 1, 2, 2], ["a", "b", "c"]) });
    const t = makeTable({
      ...base,
      obsp: { connectivities: ring },
      layers: { dense: dense(Float32Array.from(X6.flat()), [6, 4]) },
      obsm: {
        X_pca: dense(
          Float64Array.from({ length: 12 }, (_, k) => k),
          [6, 2],
        ),
      },
      raw: { X: csr(X6), var: base.var, varm: {} },
      uns: unsDict({ g_colors: strings(["#a", "#b", "#c"]) }),
    });
    const sd = sdWith(t);
    const n = 4;
    const idx = legacyChoice(6, n, false, 3);
    const out = applyChange(sd, await subsample(sd, { n_obs: n, random_state: 3 }, makeCtx())).sdata.tables
      .table!;
    const g = out.obs.columns.g as Categorical;
    const used = new Set(Array.from(idx, (i) => Math.floor(i / 2)));
    const expCats = ["a", "b", "c"].filter((_, c) => used.has(c));
    expect((g.categories as unknown as { values: string[] }).values).toEqual(expCats);
    expect((out.uns.entries.g_colors as unknown as { values: string[] }).values).toEqual(
      expCats.map((c) => `#${c}`),
    );
    const conn = out.obsp.connectivities as SparseMatrix;
    for (let r = 0; r < n; r++) {
      for (let c = 0; c < n; c++) {
        const i = idx[r]!;
        const j = idx[c]!;
        let want = 0;
        for (let k = ring.indptr[i]!; k < ring.indptr[i + 1]!; k++)
          if (ring.indices[k] === j) want = ring.data[k] as number;
        let got = 0;
        for (let k = conn.indptr[r] as number; k < (conn.indptr[r + 1] as number); k++) {
          if (conn.indices[k] === c) got = conn.data[k] as number;
        }
        expect(got).toBe(want);
      }
    }
    const layer = out.layers.dense as DenseArray;
    const pca = out.obsm.X_pca as DenseArray;
    const raw = out.raw!.X as SparseMatrix;
    expect(raw.shape).toEqual([n, 4]);
    for (let r = 0; r < n; r++) {
      expect(Array.from(layer.data.subarray(r * 4, r * 4 + 4) as Float32Array)).toEqual(X6[idx[r]!]);
      expect(pca.data[r * 2]).toBe(idx[r]! * 2);
    }
    // With replacement rows (and obsp columns) may repeat.
    const rep = await subsample(sd, { fraction: 2, replace: true, random_state: 0 }, makeCtx());
    const tr = rep.replaceTables!.table!;
    expect(tr.obs.index.values.length).toBe(12);
    expect((tr.obsp.connectivities as SparseMatrix).shape).toEqual([12, 12]);
    await expect(subsample(sd, { fraction: 2 }, makeCtx())).rejects.toThrow(/within \[0, 1\]/);
    await expect(subsample(sd, {}, makeCtx())).rejects.toThrow(/exactly one/);
  });
});

describe("combat", () => {
  // 12 cells × 5 genes, two batches of 6 (numpy: rng = default_rng(3); gamma(2, 1) + batch shift, rounded).
  const X = [
    // biome-ignore lint/suspicious/noApproximativeNumericConstant: a data value, not log2(e)
    5.934, 2.267, 1.148, 0.183, 0.781, 1.975, 1.329, 0.642, 2.369, 3.234, 1.698, 2.474, 1.442, 5.621, 1.372,
    0.764, 3.085, 1.788, 0.709, 2.05, 1.156, 1.701, 4.22, 1.93, 1.415, 2.54, 1.404, 1.98, 2.726, 0.32, 1.706,
    4.761, 0.645, 5.127, 6.179, 3.168, 6.22, 1.731, 7.917, 4.341, 3.159, 2.832, 4.635, 4.009, 3.474, 1.518,
    3.661, 3.348, 4.29, 2.872, 1.837, 3.528, 2.474, 7.447, 1.677, 1.998, 5.458, 1.196, 4.723, 7.455,
  ];
  const batch = cat([0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1], ["b1", "b2"]);

  it("matches a numpy port of scanpy's ComBat formulas on a tiny example", async () => {
    const t = smallTable(dense(Float64Array.from(X), [12, 5]), { batch });
    const change = await combat(sdWith(t), {}, makeCtx());
    const x = (await loadMatrix(applyChange(sdWith(t), change).sdata.tables.table!.X!)) as DenseArray;
    expect(x.dtype).toBe("float64");
    const expected = [
      5.664547978746294, 3.259509173191176, 1.612783609021934, 1.727451607978903, 1.9284595073878383,
      2.351583391797805, 2.2178550097682397, 1.103021395977427, 3.7974679422100683, 4.737496842672939,
      2.119784657121187, 3.4893838126672403, 1.9089695588936435, 6.876924995695772, 2.6052393953427893,
      1.3381961438072467, 4.167902676048279, 2.257542139354907, 2.225543370012569, 3.3816467794941536,
      1.6662290102088146, 2.6309630575223255, 4.707624554620205, 3.3817601788397655, 2.6544805716237754,
      2.8243858650551665, 2.3011429226218856, 2.450969698454799, 4.135526419483868, 1.4005482919102878,
      1.3856373802280428, 3.7450807365578362, 0.36621902775293336, 3.7250727198114335, 4.622746842428473,
      2.8860701095108174, 4.960484161797411, 1.3265313452453285, 6.320725327318419, 3.0922827919830302,
      2.876833519522072, 2.1381491345789874, 3.8944383157774785, 2.6849509939358747, 2.3703500761309084,
      1.1926952782409284, 2.828738195253153, 2.7563886356552754, 2.946376937559338, 1.8690773022635756,
      1.520081078953107, 2.717944051622678, 1.9835406011356134, 5.883464852218676, 0.8740258657661304,
      1.685313410973987, 4.32570869227544, 0.8534493103848941, 3.349214779512931, 5.685245280060893,
    ];
    for (let k = 0; k < expected.length; k++) expect(x.data[k]).toBeCloseTo(expected[k]!, 9);
  });

  it("with a numeric covariate, as the numpy port gives", async () => {
    const cov = [0.768, 0.155, 1.76, 0.742, 1.369, -1.078, -0.192, -0.814, 1.505, 0.658, -0.305, -0.452];
    const t = smallTable(dense(Float64Array.from(X), [12, 5]), { batch, cov: dense(Float64Array.from(cov)) });
    const change = await combat(sdWith(t), { key: "batch", covariates: ["cov"], inplace: false }, makeCtx());
    expect(change.tables?.table?.X).toBeUndefined();
    const x = change.tables!.table!.layers!.combat as DenseArray;
    const expected = [
      5.602410149987177, 3.1234318206311777, 1.833603838582774, 1.818334680496301, 1.99794254215256,
      2.4035824465011295, 2.2825261982001535, 1.3294840541439048, 3.737100273444611, 4.39754413682364,
      2.145380449018121, 3.2853401550440307, 2.1951942327943907, 6.475000596328438, 2.569130395206658,
      1.4089451318408726, 3.8722433668481355, 2.3846647707104918, 2.2744059291478487, 3.237543668322581,
      1.713858796853562, 2.589201402837708, 4.557097788821254, 3.301252263369639, 2.6135121582021896,
      2.88765270901556, 2.385175004211076, 2.354227808059892, 4.102917225597877, 1.55893224461824,
      1.2899489721699047, 3.8651172328246304, 0.003554094160740373, 3.73760574585551, 4.777630290343499,
      2.942987482962944, 5.248507763537913, 1.1645139480752098, 6.647638714461842, 3.1661365165467266,
      2.967903960366649, 2.01909200739629, 4.117815849059204, 2.5945968971120585, 2.328584773138718,
      1.0890547670067947, 2.814719693416725, 2.8021063447502472, 2.875176492141921, 1.8198304375234196,
      1.4371986217293093, 2.708421820927504, 1.9233285436337464, 6.16386503271994, 0.7886458332037969,
      1.6180464527424983, 4.525275131711965, 0.5904766406326788, 3.310641366041461, 5.916878292535971,
    ];
    for (let k = 0; k < expected.length; k++) expect(x.data[k]).toBeCloseTo(expected[k]!, 9);
  });

  it("removes a batch shift on synthetic data and keeps the within-batch structure", async () => {
    const rng = new Rng(11);
    const n = 600;
    const m = 40;
    const types = 3;
    const typeMean = Array.from({ length: types * m }, () => rng.uniform(0, 4));
    const shift = Array.from({ length: m }, () => rng.uniform(1, 3));
    const scale = Array.from({ length: m }, () => rng.uniform(1, 1.6));
    const x = new Float32Array(n * m);
    const b = new Int32Array(n);
    const ty = new Int32Array(n);
    for (let i = 0; i < n; i++) {
      b[i] = i < n / 2 ? 0 : 1;
      ty[i] = i % types;
      for (let j = 0; j < m; j++) {
        const base = typeMean[ty[i]! * m + j]! + rng.normal(0, 0.5);
        x[i * m + j] = b[i] ? base * scale[j]! + shift[j]! : base;
      }
    }
    const t = smallTable(dense(x, [n, m]), {
      batch: { kind: "categorical", codes: b, categories: strings(["A", "B"]), ordered: false },
    });
    const ctx = makeCtx();
    const change = await combat(sdWith(t), {}, ctx);
    const y = change.tables!.table!.X as DenseArray<Float32Array>;
    expect(y.dtype).toBe("float32");
    const meanBy = (data: Float32Array, j: number, pred: (i: number) => boolean) => {
      let s = 0;
      let c = 0;
      for (let i = 0; i < n; i++) {
        if (!pred(i)) continue;
        s += data[i * m + j]!;
        c++;
      }
      return s / c;
    };
    let before = 0;
    let after = 0;
    let structure = 0;
    for (let j = 0; j < m; j++) {
      before += Math.abs(meanBy(x, j, (i) => b[i] === 0) - meanBy(x, j, (i) => b[i] === 1));
      after += Math.abs(meanBy(y.data, j, (i) => b[i] === 0) - meanBy(y.data, j, (i) => b[i] === 1));
      // Within batch A, the difference between cell types 0 and 1 survives the correction.
      const d0 =
        meanBy(x, j, (i) => b[i] === 0 && ty[i] === 0) - meanBy(x, j, (i) => b[i] === 0 && ty[i] === 1);
      const d1 =
        meanBy(y.data, j, (i) => b[i] === 0 && ty[i] === 0) -
        meanBy(y.data, j, (i) => b[i] === 0 && ty[i] === 1);
      structure = Math.max(structure, Math.abs(d1 - d0) / (Math.abs(d0) + 0.5));
    }
    expect(after / m).toBeLessThan(0.02 * (before / m));
    expect(structure).toBeLessThan(0.35);
    expect(ctx.logs.join("\n")).toMatch(/2 batches/);
  });

  it("refuses batches with one cell and unknown keys", async () => {
    const t = smallTable(dense(Float64Array.from(X), [12, 5]), {
      batch: cat([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1], ["b1", "b2"]),
    });
    await expect(combat(sdWith(t), {}, makeCtx())).rejects.toThrow(/fewer than 2 cells/);
    await expect(combat(sdWith(t), { key: "nope" }, makeCtx())).rejects.toThrow(
      /could not find the key "nope"/,
    );
    await expect(combat(sdWith(t), { covariates: ["batch"] }, makeCtx())).rejects.toThrow(/cannot overlap/);
  });
});

describe("scrublet", () => {
  /** Counts of `n` cells of 6 types over 400 genes, with `nDoublets` of them replaced by two-cell sums. */
  function doubletData(n: number, nDoublets: number, seed: number) {
    const rng = new Rng(seed);
    const m = 400;
    const types = 6;
    const base = Array.from({ length: m }, () => Math.exp(rng.normal(-0.5, 1.2)));
    const mu = new Float64Array(types * m);
    for (let ty = 0; ty < types; ty++) {
      for (let j = 0; j < m; j++) mu[ty * m + j] = base[j]! * (Math.floor(j / 40) % types === ty ? 8 : 1);
    }
    const cell = (ty: number, sf: number) =>
      Array.from({ length: m }, (_, j) => rng.negativeBinomial(mu[ty * m + j]! * sf, 0.2));
    const rows: number[][] = [];
    const typeOf: number[] = [];
    for (let i = 0; i < n; i++) {
      const ty = i % types;
      typeOf.push(ty);
      rows.push(cell(ty, Math.exp(rng.normal(0, 0.3))));
    }
    const truth = new Uint8Array(n);
    for (let d = 0; d < nDoublets; d++) {
      const i = rng.int(n);
      if (truth[i]) continue;
      const other = cell((typeOf[i]! + 1 + rng.int(types - 1)) % types, Math.exp(rng.normal(0, 0.3)));
      rows[i] = rows[i]!.map((v, j) => v + other[j]!);
      truth[i] = 1;
    }
    return { x: csr(rows), truth };
  }

  function auc(scores: Float64Array, truth: Uint8Array): number {
    let pos = 0;
    let wins = 0;
    const neg: number[] = [];
    for (let i = 0; i < truth.length; i++) if (!truth[i]) neg.push(scores[i]!);
    for (let i = 0; i < truth.length; i++) {
      if (!truth[i]) continue;
      pos++;
      for (const v of neg) wins += scores[i]! > v ? 1 : scores[i]! === v ? 0.5 : 0;
    }
    return wins / (pos * neg.length);
  }

  it("flags simulated-like doublets: AUC of doublet_score > 0.8, obs and uns laid out as scanpy", async () => {
    const { x, truth } = doubletData(1200, 80, 5);
    const t = smallTable(x, {});
    const ctx = makeCtx();
    const change = await scrublet(sdWith(t), {}, ctx);
    const out = applyChange(sdWith(t), change).sdata.tables.table!;
    const score = out.obs.columns.doublet_score as DenseArray<Float64Array>;
    const called = out.obs.columns.predicted_doublet as DenseArray<Uint8Array>;
    expect(score.data.length).toBe(1200);
    expect(called.dtype).toBe("bool");
    const a = auc(score.data, truth);
    expect(a).toBeGreaterThan(0.8);
    const s = out.uns.entries.scrublet as UnsDict;
    const sim = s.entries.doublet_scores_sim as DenseArray;
    expect(sim.data.length).toBe(2400);
    expect((s.entries.doublet_parents as DenseArray).shape).toEqual([2400, 2]);
    const p = s.entries.parameters as UnsDict;
    expect(p.entries.n_neighbors).toBe(17); // round(0.5·√1200)
    expect(p.entries.sim_doublet_ratio).toBe(2);
    expect(typeof s.entries.threshold).toBe("number");
    // Calls are the scores above the threshold.
    const thr = s.entries.threshold as number;
    for (let i = 0; i < 1200; i++) expect(called.data[i]).toBe(score.data[i]! > thr ? 1 : 0);
    // The flagged cells are mostly true doublets.
    let tp = 0;
    let flagged = 0;
    for (let i = 0; i < 1200; i++) {
      if (!called.data[i]) continue;
      flagged++;
      tp += truth[i]!;
    }
    expect(flagged).toBeGreaterThan(0);
    expect(tp / flagged).toBeGreaterThan(0.5);
    // Seeded: the same call gives the same scores.
    const again = await scrublet(sdWith(t), {}, makeCtx());
    const againScore = again.tables!.table!.obs!.doublet_score as DenseArray<Float64Array>;
    expect(Array.from(againScore.data.subarray(0, 20))).toEqual(Array.from(score.data.subarray(0, 20)));
  }, 60_000);

  it("approximate neighbours (random-projection forest) also separate the doublets", async () => {
    const { x, truth } = doubletData(1200, 80, 5);
    const t = smallTable(x, {});
    const change = await scrublet(
      sdWith(t),
      { use_approx_neighbors: true, get_doublet_neighbor_parents: true },
      makeCtx(),
    );
    const score = change.tables!.table!.obs!.doublet_score as DenseArray<Float64Array>;
    expect(auc(score.data, truth)).toBeGreaterThan(0.8);
    const uns = change.tables!.table!.uns!.scrublet as UnsDict;
    const np = uns.entries.doublet_neighbor_parents as UnsDict;
    expect(Object.keys(np.entries).length).toBe(1200);
  }, 60_000);

  it("runs per batch with batch_key and lays uns out by batch", async () => {
    const { x } = doubletData(600, 30, 9);
    const t = smallTable(x, {
      sample: cat(
        Array.from({ length: 600 }, (_, i) => (i < 300 ? 0 : 1)),
        ["s1", "s2"],
      ),
    });
    const change = await scrublet(sdWith(t), { batch_key: "sample", threshold: 0.25 }, makeCtx());
    const uns = change.tables!.table!.uns!.scrublet as UnsDict;
    expect(uns.entries.batched_by).toBe("sample");
    const batches = uns.entries.batches as UnsDict;
    expect(Object.keys(batches.entries)).toEqual(["s1", "s2"]);
    const b2 = batches.entries.s2 as UnsDict;
    const parents = (b2.entries.doublet_parents as DenseArray<Int32Array>).data;
    // Parents are table rows of the batch.
    expect(Math.min(...Array.from(parents))).toBeGreaterThanOrEqual(300);
    expect(b2.entries.threshold).toBe(0.25);
  }, 60_000);

  it("thresholdMinimum finds the valley of a bimodal sample", () => {
    const rng = new Rng(1);
    const v = [
      ...Array.from({ length: 3000 }, () => rng.normal(0.1, 0.03)),
      ...Array.from({ length: 1000 }, () => rng.normal(0.6, 0.08)),
    ];
    const thr = thresholdMinimum(v)!;
    expect(thr).toBeGreaterThan(0.2);
    expect(thr).toBeLessThan(0.45);
    expect(thresholdMinimum([1, 1, 1])).toBeNull();
  });
});
