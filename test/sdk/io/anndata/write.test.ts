import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import FileSystemStore from "@zarrita/storage/fs";
import { afterAll, describe, expect, it } from "vitest";
import type { StringArray } from "../../../../src/sdk/data/arrays.js";
import { withColumn } from "../../../../src/sdk/data/dataframe.js";
import { loadMatrix, type MatrixSlot } from "../../../../src/sdk/data/lazy.js";
import { type Table, updateTable } from "../../../../src/sdk/data/table.js";
import { unsSet } from "../../../../src/sdk/data/uns.js";
import { readH5ad } from "../../../../src/sdk/io/anndata/read-h5ad.js";
import { readAnnDataZarr } from "../../../../src/sdk/io/anndata/read-zarr.js";
import { writeAnnDataZarr } from "../../../../src/sdk/io/anndata/write.js";
import { fixture } from "../../../fixtures.js";

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), "tessera-write-anndata-"));
  dirs.push(d);
  return d;
}

/** Every zarr.json under a directory, keyed by node path. */
function zarrJsons(root: string): Map<string, Record<string, unknown>> {
  const out = new Map<string, Record<string, unknown>>();
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const p = join(dir, name);
      if (statSync(p).isDirectory()) walk(p);
      else if (name === "zarr.json") out.set(relative(root, dir), JSON.parse(readFileSync(p, "utf8")));
    }
  };
  walk(root);
  return out;
}

/** A table with every lazy slot loaded, as plain data for deep comparison. */
async function materialize(t: Table): Promise<unknown> {
  const load = async (r: Readonly<Record<string, MatrixSlot | unknown>>) =>
    Object.fromEntries(
      await Promise.all(
        Object.entries(r).map(async ([k, v]) => [
          k,
          (v as { kind?: string }).kind === "lazy" ? await loadMatrix(v as MatrixSlot) : v,
        ]),
      ),
    );
  return {
    X: t.X ? await loadMatrix(t.X) : null,
    obs: t.obs,
    var: t.var,
    obsm: await load(t.obsm),
    varm: await load(t.varm),
    obsp: await load(t.obsp),
    varp: await load(t.varp),
    layers: await load(t.layers),
    uns: t.uns,
    raw: t.raw ? { X: await loadMatrix(t.raw.X), var: t.raw.var, varm: await load(t.raw.varm) } : null,
    annotation: t.annotation,
  };
}

async function roundTrip(t: Table): Promise<{ dir: string; back: Table; warnings: string[] }> {
  const dir = tempDir();
  await writeAnnDataZarr(t, new FileSystemStore(dir), "/");
  const { table: back, warnings } = await readAnnDataZarr(new FileSystemStore(dir), "/", { source: dir });
  return { dir, back, warnings };
}

describe("writeAnnDataZarr matches anndata 0.12's layout", () => {
  for (const name of ["anndata-dense.zarr", "anndata-csr.adata.zarr", "anndata-csc.zarr"]) {
    it(`${name}: same nodes, attributes, data types and shapes; values round-trip`, async () => {
      const src = fixture(`vitessce-anndata-zarr/anndata-0.12/${name}`);
      const { table } = await readAnnDataZarr(new FileSystemStore(src));
      const { dir, back, warnings } = await roundTrip(table);
      expect(warnings).toEqual([]);
      const theirs = zarrJsons(src);
      const ours = zarrJsons(dir);
      expect([...ours.keys()].sort()).toEqual([...theirs.keys()].sort());
      for (const [path, meta] of theirs) {
        const mine = ours.get(path) as Record<string, unknown>;
        expect({ path, attributes: mine.attributes }).toEqual({ path, attributes: meta.attributes });
        expect({ path, node_type: mine.node_type, data_type: mine.data_type, shape: mine.shape }).toEqual({
          path,
          node_type: meta.node_type,
          data_type: meta.data_type,
          shape: meta.shape,
        });
        if (meta.node_type === "array") {
          expect({ path, codecs: mine.codecs }).toEqual({ path, codecs: meta.codecs });
          expect({ path, fill: mine.fill_value }).toEqual({ path, fill: meta.fill_value });
        }
      }
      expect(await materialize(back)).toEqual(await materialize(table));
    });
  }
});

describe("writeAnnDataZarr round trips", () => {
  it("pbmc68k h5ad (raw, obsp, rec-arrays as frames, uns scalars) → zarr v3 → same values", async () => {
    const { table } = await readH5ad(fixture("scanpy-pbmc68k-reduced/10x_pbmc68k_reduced.h5ad"));
    const { dir, back, warnings } = await roundTrip(table);
    expect(warnings).toEqual([]);
    expect(await materialize(back)).toEqual(await materialize(table));
    const raw = JSON.parse(readFileSync(join(dir, "raw/zarr.json"), "utf8"));
    expect(raw.attributes).toEqual({ "encoding-type": "raw", "encoding-version": "0.1.0" });
    const codes = JSON.parse(readFileSync(join(dir, "obs/bulk_labels/codes/zarr.json"), "utf8"));
    expect(codes.data_type).toBe("int8");
    const method = JSON.parse(readFileSync(join(dir, "uns/neighbors/params/method/zarr.json"), "utf8"));
    expect(method).toMatchObject({
      data_type: "string",
      shape: [],
      attributes: { "encoding-type": "string" },
    });
    const nn = JSON.parse(readFileSync(join(dir, "uns/neighbors/params/n_neighbors/zarr.json"), "utf8"));
    expect(nn).toMatchObject({ data_type: "int64", shape: [1], attributes: { "encoding-type": "array" } });
  });

  it("squidpy test_data (nested uns, 3-d images, numeric scalars)", async () => {
    const { table } = await readH5ad(fixture("squidpy-tests/test_data.h5ad"));
    const { dir, back } = await roundTrip(table);
    expect(await materialize(back)).toEqual(await materialize(table));
    const a = JSON.parse(readFileSync(join(dir, "uns/umap/params/a/zarr.json"), "utf8"));
    expect(a).toMatchObject({
      data_type: "float64",
      shape: [],
      attributes: { "encoding-type": "numeric-scalar" },
    });
  });

  it("SpatialData table keeps its region annotation", async () => {
    const { table } = await readAnnDataZarr(
      new FileSystemStore(fixture("vitessce-sdata-blobs-0.7/blobs.sdata.zarr")),
      "tables/table",
    );
    const { dir, back } = await roundTrip(table);
    expect(back.annotation).toEqual({
      region: "blobs_labels",
      regionKey: "region",
      instanceKey: "instance_id",
    });
    expect(await materialize(back)).toEqual(await materialize(table));
    const theirs = JSON.parse(
      readFileSync(fixture("vitessce-sdata-blobs-0.7/blobs.sdata.zarr/tables/table/zarr.json"), "utf8"),
    );
    const ours = JSON.parse(readFileSync(join(dir, "zarr.json"), "utf8"));
    expect(ours.attributes).toEqual(theirs.attributes);
  });

  it("anndata 0.11 nullable-string index, new nullable and odd column names", async () => {
    const { table } = await readAnnDataZarr(
      new FileSystemStore(fixture("vitessce-anndata-zarr/anndata-0.11/anndata-csc.zarr")),
    );
    const n = table.obs.index.values.length;
    const odd: StringArray = { kind: "string", shape: [n], values: ["x", null, "z"] };
    const t = updateTable(table, {
      obs: withColumn(withColumn(table.obs, "50% #1 ?", odd), "flag", {
        kind: "nullable",
        dtype: "bool",
        data: Uint8Array.of(1, 0, 1),
        mask: Uint8Array.of(0, 1, 0),
      }),
      uns: unsSet(unsSet(unsSet(table.uns, "p/x", 3.5), "p/none", null), "p/big", 2n ** 60n),
    });
    const { dir, back } = await roundTrip(t);
    expect(await materialize(back)).toEqual(await materialize(t));
    expect(existsSync(join(dir, "obs/50% #1 ?/values/zarr.json"))).toBe(true);
    const flag = JSON.parse(readFileSync(join(dir, "obs/flag/zarr.json"), "utf8"));
    expect(flag.attributes).toEqual({ "encoding-type": "nullable-boolean", "encoding-version": "0.1.0" });
  });

  it("writes big arrays in several chunks", async () => {
    const { table } = await readH5ad(fixture("scanpy-pbmc68k-reduced/10x_pbmc68k_reduced.h5ad"));
    const { dir } = await roundTrip(table);
    // raw/X/data: 174400 float32 = 698 KB → one chunk; X: 700×765 float32 = 2.1 MB → two row blocks.
    const x = JSON.parse(readFileSync(join(dir, "X/zarr.json"), "utf8"));
    expect(x.chunk_grid.configuration.chunk_shape).toEqual([685, 765]);
    expect(readdirSync(join(dir, "X/c")).sort()).toEqual(["0", "1"]);
  });
});
