/**
 * Stores without consolidated metadata (zarr-python's ZipStore in the anndata 0.7–0.10 era, folders never
 * consolidated): every listable store — a folder, a zip read from disk, a zip read over HTTP Range — must give
 * back every element (obsm, obsp, layers, uns, varm, raw) exactly as the consolidated original does.
 */
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DenseArray, SparseMatrix } from "../../../../src/sdk/data/arrays.js";
import { loadMatrix, type MatrixSlot } from "../../../../src/sdk/data/lazy.js";
import type { SpatialData } from "../../../../src/sdk/data/spatialdata.js";
import type { AxisArray, Table } from "../../../../src/sdk/data/table.js";
import { isUnsDict } from "../../../../src/sdk/data/uns.js";
import { readAnnDataZarr } from "../../../../src/sdk/io/anndata/read-zarr.js";
import { openData } from "../../../../src/sdk/io/open.js";
import { openStore } from "../../../../src/sdk/io/store/open-store.js";
import { fixture } from "../../../fixtures.js";
import { startServer, type TestServer } from "../store/http-server.js";
import { materialise } from "../values.js";
import { unconsolidatedFolder, unconsolidatedZip } from "./strip.js";

const DATA = new URL("../../../data/zarr-zip/", import.meta.url).pathname;
const PY_ZIP = "anndata-v2-unconsolidated.zarr.zip";

let dir: string;
let server: TestServer;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "tessera-unconsolidated-"));
  server = await startServer(dir);
});
afterAll(async () => {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Every value of an object, plus what `materialise` leaves out (raw.varm). */
async function everything(sd: SpatialData): Promise<unknown> {
  const rawVarm: Record<string, unknown> = {};
  for (const [name, t] of Object.entries(sd.tables)) {
    rawVarm[name] = t.raw ? await axisValues(t.raw.varm) : null;
  }
  return { all: await materialise(sd), rawVarm };
}

async function axisValues(rec: Readonly<Record<string, AxisArray>>): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(rec)) out[k] = v.kind === "dataframe" ? v.columnOrder : await rows(v);
  return out;
}

/** A matrix as nested rows of numbers (sparse densified: fixtures are small). */
async function rows(slot: MatrixSlot): Promise<number[][]> {
  const m = (await loadMatrix(slot)) as DenseArray | SparseMatrix;
  const [r, c] = [m.shape[0] ?? 0, m.shape[1] ?? 1];
  const out = Array.from({ length: r }, () => new Array<number>(c).fill(0));
  if (m.kind === "dense") {
    for (let i = 0; i < r * c; i++) out[Math.floor(i / c)]![i % c] = Number(m.data[i]);
    return out;
  }
  const major = m.kind === "csr" ? r : c;
  for (let a = 0; a < major; a++) {
    for (let k = Number(m.indptr[a]); k < Number(m.indptr[a + 1]); k++) {
      const b = Number(m.indices[k]);
      if (m.kind === "csr") out[a]![b] = Number(m.data[k]);
      else out[b]![a] = Number(m.data[k]);
    }
  }
  return out;
}

/** Open `original` and its unconsolidated copy at `copy` (a path or URL); both must read the same. */
async function expectSameAsOriginal(original: string, copy: string): Promise<SpatialData> {
  const a = await openData(original);
  const b = await openData(copy);
  expect(b.format).toBe(a.format);
  expect(b.warnings.map(stripLocation)).toEqual(a.warnings.map(stripLocation));
  expect(await everything(b.sdata)).toEqual(await everything(a.sdata));
  return b.sdata;
}

/** Warnings name the store; the copy lives elsewhere. */
function stripLocation(w: string): string {
  return w.replace(/^[^:]*(?:\.zarr\.zip|\.zarr|\/[^:]*):\s*/, "").replace(/^(tables\/\w+: )[^:]*: /, "$1");
}

function only(sd: SpatialData): Table {
  const t = Object.values(sd.tables);
  expect(t).toHaveLength(1);
  return t[0]!;
}

describe("AnnData written by zarr-python's ZipStore without .zmetadata (real anndata, zarr v2)", () => {
  const expected = JSON.parse(readFileSync(join(DATA, "expected.json"), "utf8"));

  async function check(location: string): Promise<void> {
    const { sdata, warnings, format } = await openData(location);
    expect(format).toBe("anndata-zarr");
    expect(warnings).toEqual([]);
    const t = only(sdata);
    expect(t.obs.index.values).toEqual(expected.obs_names);
    expect(t.var.index.values).toEqual(expected.var_names);
    expect(await rows(t.X!)).toEqual(expected.X);
    expect(await axisValues(t.obsm)).toEqual(expected.obsm);
    expect(await axisValues(t.varm)).toEqual(expected.varm);
    const maps = async (rec: Readonly<Record<string, MatrixSlot>>) =>
      Object.fromEntries(await Promise.all(Object.entries(rec).map(async ([k, v]) => [k, await rows(v)])));
    expect(await maps(t.obsp)).toEqual(expected.obsp);
    expect(await maps(t.varp)).toEqual(expected.varp);
    expect(await maps(t.layers)).toEqual(expected.layers);
    expect(Object.keys(t.uns.entries).sort()).toEqual(Object.keys(expected.uns).sort());
    expect(t.uns.entries.method).toBe("test");
    const params = t.uns.entries.params;
    expect(typeof params === "object" && params !== null && isUnsDict(params) && params.entries).toEqual({
      k: 3,
      scale: 0.5,
    });
    expect(t.uns.entries.cell_type_colors).toMatchObject({
      kind: "string",
      values: expected.uns.cell_type_colors,
    });
    expect(t.raw).not.toBeNull();
    expect(await rows(t.raw!.X)).toEqual(expected.raw.X);
    expect(t.raw!.var.index.values).toEqual(expected.raw.var_names);
    expect(await axisValues(t.raw!.varm)).toEqual(expected.raw.varm);
  }

  it("a local zip: every slot listed from the central directory", async () => {
    await check(join(DATA, PY_ZIP));
  });

  it("the same zip over HTTP Range (the central directory is read anyway)", async () => {
    copyFileSync(join(DATA, PY_ZIP), join(dir, "py.zarr.zip"));
    server.reset();
    await check(`${server.base}/py.zarr.zip`);
    expect(server.log.every((r) => r.url === "/py.zarr.zip")).toBe(true);
  });

  it("readAnnDataZarr on the opened store lists by itself and names the file in errors", async () => {
    const store = await openStore(join(DATA, PY_ZIP));
    const { table, warnings } = await readAnnDataZarr(store);
    expect(warnings).toEqual([]);
    expect(Object.keys(table.obsm).sort()).toEqual(["X_pca", "X_umap"]);
    await expect(readAnnDataZarr(store, "nope")).rejects.toThrow(
      `${store.location}: nope: no zarr group here`,
    );
  });
});

describe("shared fixtures with their consolidated metadata removed read like the originals", () => {
  it("scanpy pbmc68k .zarr.zip (zarr v3, sharded, duplicate entries) → zip without consolidated_metadata", async () => {
    const src = fixture("scanpy-pbmc68k-reduced/10x_pbmc68k_reduced.zarr.zip");
    const t = only(await expectSameAsOriginal(src, await unconsolidatedZip(src, join(dir, "pbmc.zarr.zip"))));
    expect(Object.keys(t.obsm).sort()).toEqual(["X_pca", "X_umap"]);
    expect(Object.keys(t.obsp).sort()).toEqual(["connectivities", "distances"]);
    expect(Object.keys(t.layers)).toEqual(["counts"]);
    expect(Object.keys(t.varm)).toEqual(["PCs"]);
    expect(Object.keys(t.uns.entries)).toEqual(
      expect.arrayContaining(["bulk_labels_colors", "louvain", "neighbors", "pca", "rank_genes_groups"]),
    );
  });

  it("scanpy pbmc68k → folder without consolidated_metadata", async () => {
    const src = fixture("scanpy-pbmc68k-reduced/10x_pbmc68k_reduced.zarr.zip");
    const t = only(await expectSameAsOriginal(src, await unconsolidatedFolder(src, join(dir, "pbmc.zarr"))));
    expect(Object.keys(t.obsp).sort()).toEqual(["connectivities", "distances"]);
  });

  for (const version of ["0.12"] as const) {
    it(`vitessce anndata-${version} csr (v3 inline consolidated) → zip, folder`, async () => {
      const src = fixture(`vitessce-anndata-zarr/anndata-${version}/anndata-csr.adata.zarr`);
      const zip = only(
        await expectSameAsOriginal(src, await unconsolidatedZip(src, join(dir, `v${version}.zip`))),
      );
      expect(Object.keys(zip.layers).sort()).toEqual(["float32", "int32", "int64"]);
      expect(Object.keys(zip.obsm)).toEqual(["X_umap"]);
      await expectSameAsOriginal(src, await unconsolidatedFolder(src, join(dir, `v${version}.zarr`)));
    });
  }

  it("SpatialData blobs 0.3 full (zarr v2, zmetadata) → zip, folder and zip over HTTP", async () => {
    const src = fixture("vitessce-sdata-blobs-0.3-full/blobs.sdata.zarr");
    const zip = await unconsolidatedZip(src, join(dir, "blobs03.sdata.zarr.zip"));
    const sd = await expectSameAsOriginal(src, zip);
    expect(Object.keys(sd.tables).sort()).toEqual(["table", "table_points"]);
    expect(Object.keys(sd.tables.table!.uns.entries)).toEqual(["spatialdata_attrs"]);
    await expectSameAsOriginal(src, await unconsolidatedFolder(src, join(dir, "blobs03.sdata.zarr")));
    await expectSameAsOriginal(src, `${server.base}/blobs03.sdata.zarr.zip`);
  });

  it("an HTTP folder (cannot list) reads what it can find by path and says which groups it could not list", async () => {
    const src = fixture("vitessce-anndata-zarr/anndata-0.12/anndata-csr.adata.zarr");
    await unconsolidatedFolder(src, join(dir, "http-folder.zarr"));
    const url = `${server.base}/http-folder.zarr`;
    const { table, warnings } = await readAnnDataZarr(await openStore(url));
    expect(table.obs.index.values).toEqual(["CTG", "GCA", "ACG"]);
    expect(table.X).not.toBeNull();
    expect(warnings).toContain(
      `${url}: obsm: obsm was not read: the store has no consolidated metadata and cannot list its keys ` +
        "(an HTTP folder); consolidate it (zarr.consolidate_metadata) or serve it as a .zarr.zip",
    );
  });

  it("SpatialData blobs 0.7 (zarr v3, inline consolidated) → zip", async () => {
    const src = fixture("vitessce-sdata-blobs-0.7/blobs.sdata.zarr");
    const sd = await expectSameAsOriginal(
      src,
      await unconsolidatedZip(src, join(dir, "blobs07.sdata.zarr.zip")),
    );
    expect(Object.keys(sd.tables).sort()).toEqual(["table", "table_points"]);
  });
});
