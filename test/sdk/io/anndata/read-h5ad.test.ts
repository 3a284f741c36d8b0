import { copyFileSync, mkdtempSync, rmSync, truncateSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as h5 from "h5wasm/node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Categorical, DenseArray, SparseMatrix, StringArray } from "../../../../src/sdk/data/arrays.js";
import type { DataFrame } from "../../../../src/sdk/data/dataframe.js";
import type { LazyMatrix } from "../../../../src/sdk/data/lazy.js";
import type { UnsDict } from "../../../../src/sdk/data/uns.js";
import { readH5ad } from "../../../../src/sdk/io/anndata/read-h5ad.js";
import { fixture, reference } from "../../../fixtures.js";

const dict = (v: unknown) => (v as UnsDict).entries;

describe("readH5ad: scanpy pbmc68k_reduced", () => {
  const file = fixture("scanpy-pbmc68k-reduced/10x_pbmc68k_reduced.h5ad");

  it("obs, var, obsm, uns, raw", async () => {
    const { table: t, warnings } = await readH5ad(file);
    expect(warnings).toEqual([]);
    expect(t.obs.index.values).toHaveLength(700);
    expect(t.var.index.values).toHaveLength(765);
    expect(t.obs.indexName).toBe("index");
    expect(t.obs.index.values[0]).toBe("AAAGCCTGGCTAAC-1");
    expect(t.obs.index.values[699]).toBe("TTGAGGTGGAGAGC-8");
    expect(t.var.index.values[0]).toBe("HES4");
    expect(t.var.index.values[764]).toBe("MT-ND3");
    const bulk = t.obs.columns.bulk_labels as Categorical;
    expect((bulk.categories as StringArray).values).toEqual([
      "CD4+/CD25 T Reg",
      "CD4+/CD45RA+/CD25- Naive T",
      "CD4+/CD45RO+ Memory",
      "CD8+ Cytotoxic T",
      "CD8+/CD45RA+ Naive Cytotoxic",
      "CD14+ Monocyte",
      "CD19+ B",
      "CD34+",
      "CD56+ NK",
      "Dendritic",
    ]);
    expect([...bulk.codes.slice(0, 5)]).toEqual([5, 9, 8, 0, 9]);
    expect(bulk.ordered).toBe(false);
    expect([...(t.obs.columns.n_genes as DenseArray).data.slice(0, 3)]).toEqual([1003n, 1080n, 1228n]);
    const hv = t.var.columns.highly_variable as DenseArray;
    expect(hv.dtype).toBe("bool");
    expect([...hv.data.slice(0, 5)]).toEqual([1, 1, 0, 0, 1]);
    expect((t.obsm.X_pca as DenseArray).shape).toEqual([700, 50]);
    expect((t.obsm.X_pca as DenseArray).data[0]).toBeCloseTo(-7.939618, 5);
    expect((t.obsm.X_pca as DenseArray).data[700 * 50 - 1]).toBeCloseTo(0.64597267, 6);
    expect([...(t.obsm.X_umap as DenseArray).data.slice(0, 2)]).toEqual([
      -1.9918625454649166, 8.57641706171008,
    ]);
    expect((t.varm.PCs as DenseArray).data[0]).toBe(-0.06094132363796234);
    const vr = dict(dict(t.uns).pca).variance_ratio as DenseArray;
    expect(vr.data[0]).toBeCloseTo(0.0977095365524292, 7);
    expect(vr.data[1]).toBeCloseTo(0.06692066788673401, 7);
    expect(vr.data[2]).toBeCloseTo(0.04639781266450882, 7);
    expect((dict(t.uns).bulk_labels_colors as StringArray).values.slice(0, 2)).toEqual([
      "#1f77b4",
      "#ff7f0e",
    ]);
    expect(dict(dict(dict(t.uns).neighbors).params)).toMatchObject({ method: "umap" });
    expect([...(dict(dict(dict(t.uns).neighbors).params).n_neighbors as DenseArray).data]).toEqual([10n]);
    // rank_genes_groups recarrays (HDF5 compound) are read as data frames, one column per group.
    const names = dict(dict(t.uns).rank_genes_groups).names as DataFrame;
    expect(names.kind).toBe("dataframe");
    expect(names.columnOrder).toHaveLength(10);
    expect(names.index.values).toHaveLength(100);
    expect((names.columns["CD4+/CD25 T Reg"] as StringArray).values[0]).toBe("RGS19");
    expect((names.columns.Dendritic as StringArray).values[0]).toBe("CST3");
    const scores = dict(dict(t.uns).rank_genes_groups).scores as DataFrame;
    expect((scores.columns["CD4+/CD25 T Reg"] as DenseArray).data[0]).toBeCloseTo(0.36708045, 6);
    expect(dict(dict(dict(t.uns).rank_genes_groups).params)).toMatchObject({
      groupby: "bulk_labels",
      method: "logreg",
      reference: "rest",
    });
    // raw present: CSR log-normalised values with its own var
    expect(t.raw).not.toBeNull();
    expect(t.raw?.var.index.values[0]).toBe("HES4");
    const rawX = t.raw?.X as LazyMatrix;
    expect(rawX).toMatchObject({ format: "csr", dtype: "float32", shape: [700, 765], nnz: 174400 });
    const r = (await rawX.load()) as SparseMatrix;
    expect(r.data[0]).toBeCloseTo(2.177, 6);
    expect(r.data[2]).toBeCloseTo(2.5439999103546143, 7);
    expect([...r.indices.slice(0, 3)]).toEqual([764, 761, 760]);
    expect(r.indptr[700]).toBe(174400);
  });

  it("X and obsp are lazy and read after the file was released", async () => {
    const { table: t } = await readH5ad(file);
    const X = t.X as LazyMatrix;
    expect(X).toMatchObject({ kind: "lazy", format: "dense", dtype: "float32", shape: [700, 765] });
    const m = (await X.load()) as DenseArray;
    expect(m.data.buffer).toBeInstanceOf(SharedArrayBuffer);
    expect([...(m.data as Float32Array).slice(0, 3)].map((v) => Math.round(v * 1000) / 1000)).toEqual([
      -0.326, -0.191, -0.728,
    ]);
    expect(m.data[700 * 765 - 1]).toBeCloseTo(-0.49, 6);
    const conn = (await (t.obsp.connectivities as LazyMatrix).load()) as SparseMatrix;
    expect(conn.shape).toEqual([700, 700]);
    expect([...conn.data.slice(0, 2)]).toEqual([0.17960058288369202, 0.1227288161036776]);
  });
});

describe("readH5ad: squidpy fixtures", () => {
  it("test_data.h5ad", async () => {
    const { table: t, warnings } = await readH5ad(fixture("squidpy-tests/test_data.h5ad"));
    expect(warnings).toEqual([]);
    expect(t.obs.index.values).toHaveLength(49);
    expect(t.obs.index.values[0]).toBe("AAATTGCGGCGGTTCT-1");
    expect(t.var.index.values[0]).toBe("4732440D04Rik");
    expect(((t.obs.columns.leiden as Categorical).categories as StringArray).values).toEqual([
      "0",
      "2",
      "6",
      "7",
      "9",
    ]);
    expect([...(t.obs.columns.in_tissue as DenseArray).data.slice(0, 3)]).toEqual([1n, 1n, 1n]);
    expect([...(t.obsm.spatial as DenseArray).data.slice(0, 2)]).toEqual([337n, 439n]);
    const X = t.X as LazyMatrix;
    expect(X).toMatchObject({ format: "csr", shape: [49, 1999], nnz: 22372 });
    expect([...((await X.load()) as SparseMatrix).data.slice(0, 2)]).toEqual([
      1.0640920400619507, 0.6673693060874939,
    ]);
    const brain = dict(dict(dict(t.uns).spatial).V1_Adult_Mouse_Brain);
    expect(dict(brain.scalefactors).tissue_hires_scalef).toBeCloseTo(0.17011142, 7);
    expect(dict(brain.metadata).software_version).toBe("spaceranger-1.0.0");
    const hires = dict(brain.images).hires as DenseArray;
    expect(hires.shape).toEqual([100, 100, 3]);
    expect(hires.data[0]).toBeCloseTo(-0.25519767185546294, 12);
    expect(dict(dict(dict(t.uns).umap).params).a).toBeCloseTo(0.583030019901822, 12);
    // int64 numeric-scalar read as a JS number
    expect(dict(dict(dict(t.uns).leiden).params).n_iterations).toBe(-1);
  });

  it("ligrec_pvalues_reference.h5ad: dense float64 with NaNs, categorical var", async () => {
    const { table: t } = await readH5ad(fixture("squidpy-tests/ligrec_pvalues_reference.h5ad"));
    expect(t.obs.index.values.slice(0, 2)).toEqual(["0", "1"]);
    expect(((t.var.columns.cluster_1 as Categorical).categories as StringArray).values).toEqual([
      "0",
      "2",
      "6",
      "7",
      "9",
    ]);
    const X = (await (t.X as LazyMatrix).load()) as DenseArray;
    expect(X.dtype).toBe("float64");
    expect([...X.data].filter((v) => Number.isNaN(v))).toHaveLength(544);
    expect(X.data[6 * 25]).toBe(0);
    expect(Object.keys(t.layers)).toEqual(["means"]);
  });
});

describe("readH5ad: synth_10k reference input", () => {
  it("10000 × 2000 CSR float32 read in slices", async () => {
    const { table: t } = await readH5ad(reference("synth_10k/input.h5ad"));
    expect(t.obs.index.values[0]).toBe("cell0000000");
    expect(t.obs.index.values[9999]).toBe("cell0009999");
    const ct = t.obs.columns.cell_type as Categorical;
    expect((ct.categories as StringArray).values).toEqual(
      Array.from({ length: 12 }, (_, i) => `T${String(i).padStart(2, "0")}`),
    );
    const mt = t.var.columns.mt as DenseArray;
    expect(mt.dtype).toBe("bool");
    expect((mt.data as Uint8Array).reduce((a, b) => a + b, 0)).toBe(13);
    expect(((t.var.columns.program as Categorical).categories as StringArray).values.slice(0, 2)).toEqual([
      "housekeeping",
      "marker_up:T00",
    ]);
    expect([...(t.obs.columns.niche as DenseArray).data.slice(0, 3)]).toEqual([46, 19, 108]);
    expect([...(t.obsm.spatial as DenseArray).data.slice(0, 2)]).toEqual([
      994.4666742390367, 857.7111162101751,
    ]);
    expect(dict(dict(t.uns).generator)).toMatchObject({ seed: 10, generator: "peer/gen_data.py v1" });
    const X = t.X as LazyMatrix;
    expect(X).toMatchObject({ format: "csr", dtype: "float32", shape: [10000, 2000], nnz: 2635086 });
    const m = (await X.load()) as SparseMatrix;
    expect([...m.data.slice(0, 4)]).toEqual([5, 2, 1, 9]);
    expect(m.data[2635085]).toBe(1);
    expect(m.indices[2635085]).toBe(1987);
    expect([...m.indptr.slice(-2)]).toEqual([2634790, 2635086]);
  });
});

describe("readH5ad: anndata 0.7 layout (categories as HDF5 object references)", () => {
  let dir: string;
  let file: string;
  beforeAll(async () => {
    await h5.ready;
    dir = mkdtempSync(join(tmpdir(), "tessera-h5ad07-"));
    file = join(dir, "legacy07.h5ad");
    // Build the layout anndata 0.7 wrote: no encoding attrs on the root, int codes + a `categories`
    // object reference into obs/__categories, raw as root datasets `raw.X` / `raw.var`.
    const f = new h5.File(file, "w");
    const obs = f.create_group("obs");
    obs.create_dataset({ name: "_index", data: ["c1", "c2", "c3"] });
    obs.create_dataset({ name: "leiden", data: new Int8Array([1, 0, 1]) });
    obs.create_dataset({ name: "n_counts", data: new Float32Array([1.5, 2.5, 3.5]) });
    obs.create_attribute("_index", "_index");
    obs.create_attribute("column-order", ["leiden", "n_counts"]);
    obs.create_attribute("encoding-type", "dataframe");
    obs.create_attribute("encoding-version", "0.1.0");
    const cats = obs.create_group("__categories");
    cats.create_dataset({ name: "leiden", data: ["a", "b"] });
    const ref = (f.get("obs/__categories/leiden") as h5.Dataset).create_reference();
    (f.get("obs/leiden") as h5.Dataset).create_attribute("categories", ref);
    const vr = f.create_group("var");
    vr.create_dataset({ name: "_index", data: ["g1", "g2"] });
    vr.create_attribute("_index", "_index");
    f.create_dataset({ name: "X", data: new Float32Array([1, 2, 3, 4, 5, 6]), shape: [3, 2] });
    const raw = f.create_group("raw.var");
    raw.create_dataset({ name: "_index", data: ["g1", "g2", "g3"] });
    raw.create_attribute("_index", "_index");
    f.create_dataset({ name: "raw.X", data: new Float32Array(9).fill(7), shape: [3, 3] });
    f.close();
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("resolves the reference and reads raw.X", async () => {
    const { table: t } = await readH5ad(file);
    const leiden = t.obs.columns.leiden as Categorical;
    expect(leiden.kind).toBe("categorical");
    expect((leiden.categories as StringArray).values).toEqual(["a", "b"]);
    expect([...leiden.codes]).toEqual([1, 0, 1]);
    expect(t.obs.columnOrder).toEqual(["leiden", "n_counts"]);
    expect(t.var.columnOrder).toEqual([]);
    expect([...((await (t.X as LazyMatrix).load()) as DenseArray).data]).toEqual([1, 2, 3, 4, 5, 6]);
    expect(t.raw?.var.index.values).toEqual(["g1", "g2", "g3"]);
    expect(((await (t.raw?.X as LazyMatrix).load()) as DenseArray).data[8]).toBe(7);
  });
});

describe("readH5ad: corrupt input", () => {
  const dir = mkdtempSync(join(tmpdir(), "tessera-bad-h5ad-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  for (const size of [1000, 1_000_000, 1_911_000]) {
    it(`truncated to ${size} bytes → error naming the file`, async () => {
      const p = join(dir, `t${size}.h5ad`);
      copyFileSync(fixture("scanpy-pbmc68k-reduced/10x_pbmc68k_reduced.h5ad"), p);
      truncateSync(p, size);
      await expect(readH5ad(p)).rejects.toThrow(
        `${p}: truncated HDF5 file (${size} bytes, the superblock says 1911295)`,
      );
    });
  }

  it("not HDF5 → error", async () => {
    const p = join(dir, "text.h5ad");
    writeFileSync(p, "hello, I am not HDF5".repeat(100));
    await expect(readH5ad(p)).rejects.toThrow(`${p}: not an HDF5 file`);
  });

  it("missing file → error", async () => {
    await expect(readH5ad(join(dir, "absent.h5ad"))).rejects.toThrow(/absent\.h5ad: cannot open/);
  });
});
