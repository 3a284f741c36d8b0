import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import FileSystemStore from "@zarrita/storage/fs";
import ZipFileStore from "@zarrita/storage/zip";
import { afterAll, describe, expect, it } from "vitest";
import type { Categorical, DenseArray, SparseMatrix, StringArray } from "../../../../src/sdk/data/arrays.js";
import type { LazyMatrix } from "../../../../src/sdk/data/lazy.js";
import { readAnnDataZarr } from "../../../../src/sdk/io/anndata/read-zarr.js";
import { fixture } from "../../../fixtures.js";

const open = (rel: string, path = "/") =>
  readAnnDataZarr(new FileSystemStore(fixture(rel)), path, { source: rel });

const VITESSCE = [
  ["anndata-0.7", "anndata-dense.zarr"],
  ["anndata-0.7", "anndata-csr.zarr"],
  ["anndata-0.7", "anndata-csc.zarr"],
  ["anndata-0.8", "anndata-dense.zarr"],
  ["anndata-0.8", "anndata-csr.adata.zarr"],
  ["anndata-0.8", "anndata-csc.zarr"],
  ["anndata-0.9", "anndata-dense.zarr"],
  ["anndata-0.9", "anndata-csr.adata.zarr"],
  ["anndata-0.9", "anndata-csr.zarr"],
  ["anndata-0.9", "anndata-csc.zarr"],
  ["anndata-0.10", "anndata-dense.zarr"],
  ["anndata-0.10", "anndata-csr.adata.zarr"],
  ["anndata-0.10", "anndata-csc.zarr"],
  ["anndata-0.11", "anndata-dense.zarr"],
  ["anndata-0.11", "anndata-csr.adata.zarr"],
  ["anndata-0.11", "anndata-csc.zarr"],
  ["anndata-0.12", "anndata-dense.zarr"],
  ["anndata-0.12", "anndata-csr.adata.zarr"],
  ["anndata-0.12", "anndata-csc.zarr"],
] as const;

const GENES = Array.from({ length: 15 }, (_, i) => `gene_${i}`);

describe("readAnnDataZarr: vitessce anndata-zarr 0.7 … 0.12", () => {
  for (const [version, name] of VITESSCE) {
    it(`${version}/${name}`, async () => {
      const { table: t, warnings } = await open(`vitessce-anndata-zarr/${version}/${name}`);
      expect(warnings).toEqual([]);
      expect(t.obs.index.values).toEqual(["CTG", "GCA", "ACG"]);
      expect(t.var.index.values).toEqual(GENES);
      const leiden = t.obs.columns.leiden as Categorical;
      expect(leiden.kind).toBe("categorical");
      expect((leiden.categories as StringArray).values).toEqual(["1", "2"]);
      expect([...leiden.codes]).toEqual([0, 0, 1]);
      expect(leiden.ordered).toBe(false);
      const umap = t.obsm.X_umap as DenseArray;
      expect(umap.dtype).toBe("int32");
      expect(umap.shape).toEqual([3, 2]);
      expect([...umap.data]).toEqual([-1, -1, 0, 0, 1, 1]);
      expect(Object.keys(t.layers).sort()).toEqual(["float32", "int32", "int64"]);
      const l64 = (await (t.layers.int64 as LazyMatrix).load()) as DenseArray;
      expect(l64.dtype).toBe("int64");
      expect([...l64.data.slice(0, 5)]).toEqual([0n, 1n, 2n, 3n, 4n]);
      const lf = (await (t.layers.float32 as LazyMatrix).load()) as DenseArray;
      expect([...lf.data.slice(-3)]).toEqual([12, 13, 14]);
      expect(t.raw).toBeNull();
      const X = t.X as LazyMatrix;
      expect(X.kind).toBe("lazy");
      expect(X.shape).toEqual([3, 15]);
      expect(X.dtype).toBe("float32");
      const format = name.includes("dense") ? "dense" : name.includes("csr") ? "csr" : "csc";
      expect(X.format).toBe(format);
      const m = await X.load();
      expect(m.data.buffer).toBeInstanceOf(SharedArrayBuffer);
      if (format === "dense") {
        expect([...(m as DenseArray).data.slice(0, 15)]).toEqual(Array.from({ length: 15 }, (_, i) => i));
      } else if (format === "csr") {
        const s = m as SparseMatrix;
        expect(X.nnz).toBe(42);
        expect([...s.indptr]).toEqual([0, 14, 28, 42]);
        expect([...s.indices.slice(0, 3)]).toEqual([1, 2, 3]);
        expect([...s.data.slice(0, 3)]).toEqual([1, 2, 3]);
      } else {
        const s = m as SparseMatrix;
        expect([...s.indptr]).toEqual([0, 0, 3, 6, 9, 12, 15, 18, 21, 24, 27, 30, 33, 36, 39, 42]);
        expect([...s.data.slice(0, 4)]).toEqual([1, 1, 1, 2]);
        expect(s.indices).toBeInstanceOf(Int32Array);
      }
    });
  }
});

describe("readAnnDataZarr: vitessce partial stores (consolidated metadata, no chunks)", () => {
  it(".anndata.zarr: metadata only; fails naming obs and the missing index", async () => {
    await expect(open("vitessce-anndata-zarr/partials/.anndata.zarr")).rejects.toThrow(
      /partials\/\.anndata\.zarr: obs: missing the index array "_index"/,
    );
  });
  it("emptymeta: empty consolidated metadata → no group", async () => {
    await expect(open("vitessce-anndata-zarr/partials/emptymeta.h5ad.zarr")).rejects.toThrow(
      /emptymeta\.h5ad\.zarr: \/: no zarr group here/,
    );
  });
  it("invalidmeta: .zmetadata without metadata → clear error", async () => {
    await expect(open("vitessce-anndata-zarr/partials/invalidmeta.adata.zarr")).rejects.toThrow(
      /invalidmeta\.adata\.zarr: \.zmetadata is not zarr consolidated metadata/,
    );
  });
});

describe("readAnnDataZarr: MuData modalities", () => {
  for (const store of [
    "mudata-csr.zarr",
    "mudata-csc.zarr",
    "mudata-dense.zarr",
    "mudata-dense-updated.zarr",
  ]) {
    it(`${store} mod/rna and mod/atac`, async () => {
      const rel = `vitessce-mudata-zarr/mudata-0.2/${store}`;
      const rna = (await open(rel, "mod/rna")).table;
      expect(rna.obs.index.values).toEqual(["CTG", "GCA", "CTT", "AAA"]);
      expect(rna.var.index.values.slice(0, 3)).toEqual(["gene_0", "gene_1", "gene_2"]);
      expect([...(rna.obs.columns.leiden as Categorical).codes]).toEqual([0, 0, 1, 1]);
      expect([...(rna.obsm.X_umap as DenseArray).data]).toEqual([-1, -1, 0, 0, 1, 1, 1, 2]);
      expect((rna.X as LazyMatrix).shape).toEqual([4, 15]);
      const atac = (await open(rel, "mod/atac")).table;
      expect(atac.obs.index.values).toEqual(["CTG", "GCA", "CTT", "GGG"]);
      expect(atac.var.index.values.slice(0, 3)).toEqual(["peak_0", "peak_1", "peak_2"]);
      expect([...(atac.obs.columns.leiden as Categorical).codes]).toEqual([1, 1, 0, 0]);
      expect([...(atac.obsm.X_lsi as DenseArray).data]).toEqual([-2, -2, 0, 0, 2, 2, 2, 1]);
    });
  }
  it("csr rna X values", async () => {
    const t = (await open("vitessce-mudata-zarr/mudata-0.2/mudata-csr.zarr", "mod/rna")).table;
    const X = (await (t.X as LazyMatrix).load()) as SparseMatrix;
    expect(X.kind).toBe("csr");
    expect([...X.data.slice(0, 5)]).toEqual([1, 1, 1, 1, 1]);
  });
});

describe("readAnnDataZarr: exemplar-001 tables", () => {
  it("cells: 218 × 4 dense X, categorical obs", async () => {
    const { table: t, warnings } = await open(
      "vitessce-exemplar-001-crop/exemplar-001.crop.cells.adata.zarr",
    );
    expect(warnings).toEqual([]);
    expect(t.obs.index.values.slice(0, 3)).toEqual(["1006", "1007", "1011"]);
    expect(t.obs.index.values[217]).toBe("2024");
    expect(t.var.index.values).toEqual(["DNA", "FDX1", "CD1D", "CD357"]);
    expect((t.obs.columns.X as DenseArray).data[0]).toBe(1.55);
    const coarse = t.obs.columns.cell_type_coarse as Categorical;
    expect((coarse.categories as StringArray).values).toEqual([
      "Astrocyte",
      "Brain immune",
      "Excitatory neurons",
    ]);
    expect((t.obs.columns.leiden_cluster_str as Categorical).categories.shape).toEqual([9]);
    const X = (await (t.X as LazyMatrix).load()) as DenseArray;
    expect(X.shape).toEqual([218, 4]);
    expect([...X.data.slice(0, 4)]).toEqual([
      51546.0234375, 874.3250122070312, 318.3999938964844, 526.2249755859375,
    ]);
    expect([...X.data.slice(-4)]).toEqual([45798, 900, 304, 365]);
  });
  it("circles: no X, empty var, int64 obs columns", async () => {
    const { table: t } = await open("vitessce-exemplar-001-crop/exemplar-001.crop.circles.adata.zarr");
    expect(t.X).toBeNull();
    expect(t.var.index.values).toEqual([]);
    expect(t.obs.index.values.slice(0, 3)).toEqual(["1", "2", "3"]);
    expect([...(t.obs.columns.X as DenseArray).data.slice(0, 3)]).toEqual([10n, 10n, 10n]);
    expect((t.obs.columns.Y as DenseArray).data[255]).toBe(235n);
  });
});

describe("readAnnDataZarr: SpatialData tables", () => {
  it("blobs 0.3 (zarr v2, '/' separator, zmetadata at the sdata root)", async () => {
    const { table: t, warnings } = await open("vitessce-sdata-blobs-0.3/blobs.sdata.zarr", "tables/table");
    expect(warnings).toEqual([]);
    expect(t.annotation).toEqual({ region: "blobs_labels", regionKey: "region", instanceKey: "instance_id" });
    expect(t.obs.index.values.slice(0, 3)).toEqual(["1", "2", "3"]);
    const X = (await (t.X as LazyMatrix).load()) as SparseMatrix;
    expect(X.shape).toEqual([26, 3]);
    expect(X.data[0]).toBeCloseTo(1309.3692551660652, 10);
    expect(t.raw).toBeNull();
    const sd = t.uns.entries.spatialdata_attrs as { entries: Record<string, unknown> };
    // <U11 / <U12 / <U6 fixed-width 0-d arrays
    expect(sd.entries).toEqual({ instance_key: "instance_id", region: "blobs_labels", region_key: "region" });
  });
  it("blobs 0.3 table_points: null region → no annotation, empty obs", async () => {
    const { table: t } = await open("vitessce-sdata-blobs-0.3/blobs.sdata.zarr", "tables/table_points");
    expect(t.annotation).toBeNull();
    expect(t.obs.index.values).toEqual([]);
    expect(t.var.index.values.length).toBe(2);
  });
  it("blobs 0.7 (zarr v3); region codes chunk absent → fill value 0", async () => {
    const { table: t, warnings } = await open("vitessce-sdata-blobs-0.7/blobs.sdata.zarr", "tables/table");
    expect(warnings).toEqual([]);
    expect(t.annotation).toEqual({ region: "blobs_labels", regionKey: "region", instanceKey: "instance_id" });
    const region = t.obs.columns.region as Categorical;
    expect((region.categories as StringArray).values).toEqual(["blobs_labels"]);
    expect([...region.codes]).toEqual(new Array(26).fill(0));
    expect((t.obs.columns.instance_id as DenseArray).dtype).toBe("int64");
  });
});

describe("readAnnDataZarr: ancient scanpy store (structured obs/var)", () => {
  it("10x-10k-subset: obs/var from |S record arrays", async () => {
    const { table: t } = await open("scanpy-10x-10k-subset/10x-10k-subset.zarr");
    expect(t.obs.index.values.length).toBe(10000);
    expect(t.var.index.values.length).toBe(1000);
    expect(t.obs.indexName).toBe("index");
    expect(t.var.columnOrder).toEqual(["gene_ids"]);
    const X = t.X as LazyMatrix;
    expect(X.shape).toEqual([10000, 1000]);
    expect(X.format).toBe("dense");
  });
});

describe("readAnnDataZarr: pbmc68k .zarr.zip (zarr v3, sharded, duplicate zip entries)", () => {
  const zipPath = fixture("scanpy-pbmc68k-reduced/10x_pbmc68k_reduced.zarr.zip");
  const store = () => ZipFileStore.fromBlob(new Blob([readFileSync(zipPath)]));

  it("the last duplicate entry wins", async () => {
    const s = store();
    // zarr.json is stored 4 times; only the last copy carries consolidated metadata.
    const root = JSON.parse(new TextDecoder().decode(await s.get("/zarr.json")));
    expect(root.attributes).toEqual({ "encoding-type": "anndata", "encoding-version": "0.1.0" });
    expect(root.consolidated_metadata).toBeDefined();
    // obs/zarr.json 5 times; the first has no attributes at all.
    const obs = JSON.parse(new TextDecoder().decode(await s.get("/obs/zarr.json")));
    expect(obs.attributes["encoding-version"]).toBe("0.2.0");
    expect(obs.attributes._index).toBe("index");
  });

  it("reads the table; struct recarrays become warnings", async () => {
    const { table: t, warnings } = await readAnnDataZarr(store(), "/", { source: "pbmc.zarr.zip" });
    expect(t.obs.index.values.length).toBe(700);
    expect(t.var.index.values.length).toBe(765);
    expect(t.obs.index.values[0]).toBe("AAAGCCTGGCTAAC-1");
    expect(warnings).toHaveLength(2);
    expect(warnings[0]).toMatch(/pbmc\.zarr\.zip: uns\/rank_genes_groups\/names: skipped: .*struct/);
    expect(warnings[1]).toMatch(/uns\/rank_genes_groups\/scores/);
    const counts = t.layers.counts as LazyMatrix;
    expect(counts).toMatchObject({ format: "csr", dtype: "int32", shape: [700, 765], nnz: 174400 });
    const c = (await counts.load()) as SparseMatrix;
    expect(c.data).toBeInstanceOf(Int32Array);
    expect([...c.data.slice(0, 5)]).toEqual([1, 1, 1, 2, 3]);
    expect([...c.indptr.slice(0, 4)]).toEqual([0, 217, 448, 708]);
    expect((t.obsm.X_pca as DenseArray).data[0]).toBeCloseTo(-7.939618, 5);
    const vr = (t.uns.entries.pca as { entries: Record<string, DenseArray> }).entries.variance_ratio;
    expect(vr.data[0]).toBeCloseTo(0.0977095365524292, 7);
    const bulk = t.obs.columns.bulk_labels as Categorical;
    expect((bulk.categories as StringArray).values).toHaveLength(10);
    expect([...bulk.codes.slice(0, 5)]).toEqual([5, 9, 8, 0, 9]);
    expect(t.raw).toBeNull();
    const X = (await (t.X as LazyMatrix).load()) as DenseArray;
    expect(X.shape).toEqual([700, 765]);
    expect(X.data[0]).toBeCloseTo(-0.326, 6);
    expect(X.data[700 * 765 - 1]).toBeCloseTo(-0.49, 6);
    const params = (
      t.uns.entries.neighbors as { entries: Record<string, { entries: Record<string, unknown> }> }
    ).entries.params;
    expect(params?.entries.method).toBe("umap");
  });
});

describe("readAnnDataZarr: corrupt stores", () => {
  const dirs: string[] = [];
  afterAll(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });
  const copy = () => {
    const dir = mkdtempSync(join(tmpdir(), "tessera-bad-zarr-"));
    dirs.push(dir);
    cpSync(fixture("vitessce-anndata-zarr/anndata-0.8/anndata-csr.adata.zarr"), dir, { recursive: true });
    return dir;
  };

  it("garbled .zarray → error naming the store and node", async () => {
    const dir = copy();
    writeFileSync(join(dir, "obsm/X_umap/.zarray"), "{ not json");
    await expect(readAnnDataZarr(new FileSystemStore(dir), "/", { source: dir })).rejects.toThrow(
      `${dir}: obsm/X_umap/.zarray is not valid JSON`,
    );
  });

  it("garbled chunk → load() fails naming the store and array", async () => {
    const dir = copy();
    writeFileSync(join(dir, "X/data/0"), "garbage garbage garbage");
    const { table } = await readAnnDataZarr(new FileSystemStore(dir), "/", { source: dir });
    await expect((table.X as LazyMatrix).load()).rejects.toThrow(`${dir}: X/data: cannot read array`);
  });

  it("truncated string chunk → error naming obs/_index", async () => {
    const dir = copy();
    const p = join(dir, "var/_index/0");
    writeFileSync(p, readFileSync(p).subarray(0, 20));
    await expect(readAnnDataZarr(new FileSystemStore(dir), "/", { source: dir })).rejects.toThrow(
      `${dir}: var/_index: cannot read array`,
    );
  });

  it("missing element → error", async () => {
    await expect(open("vitessce-anndata-zarr/anndata-0.8/anndata-csr.adata.zarr", "nope")).rejects.toThrow(
      /anndata-csr\.adata\.zarr: nope: no zarr group here/,
    );
  });
});
