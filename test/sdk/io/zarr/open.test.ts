import { describe, expect, it } from "vitest";
import * as zarr from "zarrita";
import { FsStore } from "../../../../src/sdk/io/store/fs-store.js";
import { openStore } from "../../../../src/sdk/io/store/open-store.js";
import type { AbsolutePath, ReadableStore } from "../../../../src/sdk/io/store/types.js";
import { openZarr, openZarrTree } from "../../../../src/sdk/io/zarr/open.js";
import { fixture } from "../../../fixtures.js";

describe("openZarr", () => {
  it("walks a v2 SpatialData store through its zmetadata", async () => {
    const tree = await openZarr(await openStore(fixture("vitessce-sdata-blobs-0.3/blobs.sdata.zarr")));
    expect(tree.index?.source).toBe("zmetadata");
    expect(await tree.children("")).toEqual(["images", "labels", "points", "tables"]);
    expect(await tree.children("/points/")).toEqual(["blobs_points"]);
    expect((await tree.attrs("")).spatialdata_attrs).toEqual({
      spatialdata_software_version: "0.3.0",
      version: "0.1",
    });
    expect((await tree.attrs("points/blobs_points"))["encoding-type"]).toBe("ngff:points");
    expect(await tree.node("images/blobs_image/0")).toMatchObject({ kind: "array", zarrFormat: 2 });
    expect(await tree.children("images/blobs_image/0")).toEqual([]);
    await expect(tree.children("images/missing")).rejects.toThrow(/no zarr group at "images\/missing"/);
    await expect(tree.attrs("images/missing")).rejects.toThrow(/no zarr group or array at "images\/missing"/);
  });

  it("walks a v3 SpatialData store through its inline consolidated metadata", async () => {
    const tree = await openZarrTree(new FsStore(fixture("vitessce-sdata-blobs-0.7/blobs.sdata.zarr")));
    expect(tree.index?.format).toBe(3);
    expect(await tree.children("")).toEqual(["images", "labels", "points", "tables"]);
    expect(await tree.children("images/blobs_multiscale_image")).toEqual(["s0", "s1", "s2"]);
    expect(await tree.children("tables/table")).toEqual([
      "X",
      "layers",
      "obs",
      "obsm",
      "obsp",
      "raw",
      "uns",
      "var",
      "varm",
      "varp",
    ]);
    expect((await tree.attrs("")).spatialdata_attrs).toEqual({
      version: "0.2",
      spatialdata_software_version: "0.7.3",
    });
    const arr = await zarr.open(zarr.root(tree.store).resolve("labels/blobs_labels/s0"), { kind: "array" });
    expect(arr.shape).toEqual([100, 100]);
  });

  it("walks the scanpy anndata zip (last duplicate wins, consolidated)", async () => {
    const tree = await openZarr(
      await openStore(fixture("scanpy-pbmc68k-reduced/10x_pbmc68k_reduced.zarr.zip")),
    );
    expect(tree.index?.nodes.size).toBe(68);
    const top = await tree.children("");
    expect(top).toEqual(expect.arrayContaining(["X", "obs", "var", "obsm", "uns", "layers"]));
    expect(await tree.children("obs/bulk_labels")).toEqual(["categories", "codes"]);
    expect(await tree.attrs("obs/bulk_labels")).toMatchObject({
      "encoding-type": "categorical",
      ordered: false,
    });
    expect(await tree.attrs("")).toEqual({ "encoding-type": "anndata", "encoding-version": "0.1.0" });
  });

  it("lists an unconsolidated v3 store (zarrita fixture) and reads its metadata once", async () => {
    const base = new FsStore(fixture("zarrita-fixtures/v3/data.zarr"));
    const tree = await openZarr(base);
    expect(tree.index).toBeNull();
    const top = await tree.children("");
    expect(top).toContain("my group with spaces");
    expect(top).toContain("1d.contiguous.raw.i2");
    expect(top).toContain("consolidated");
    expect(await tree.children("consolidated/nested")).toEqual(["1d.i2"]);
    expect(await tree.attrs("my group with spaces")).toEqual({
      description: "A group with spaces in the name",
    });
    // metadata is now served from memory: opening an array reads only its chunk
    const reads: string[] = [];
    const spy: ReadableStore = {
      location: base.location,
      get: (k: AbsolutePath, o) => {
        reads.push(k);
        return base.get(k, o);
      },
      list: (p) => base.list(p),
    };
    const spied = await openZarr(spy);
    reads.length = 0;
    const arr = await zarr.open(zarr.root(spied.store).resolve("1d.contiguous.raw.i2"), { kind: "array" });
    expect(Array.from((await zarr.get(arr)).data as Int16Array)).toEqual([1, 2, 3, 4]);
    expect(reads).toEqual(["/1d.contiguous.raw.i2/c/0"]);
  });

  it("walks zips whose root sits under a folder: consolidated (v2) and listed (v3)", async () => {
    const v2 = await openZarr(
      await openStore(fixture("zarrita-fixtures/v2/data.zipped_from_parent.zarr.zip")),
    );
    expect(v2.index?.source).toBe(".zmetadata");
    expect(await v2.children("")).toContain("3d.chunked.i2");
    const v3 = await openZarr(
      await openStore(fixture("zarrita-fixtures/v3/data.zipped_from_parent.zarr.zip")),
    );
    expect(v3.index).toBeNull(); // root zarr.json has consolidated_metadata: null
    expect(await v3.children("")).toContain("3d.chunked.i2");
    expect(await v3.node("3d.chunked.i2")).toMatchObject({ kind: "array", zarrFormat: 3 });
    expect(await v3.children("consolidated")).toEqual(["1d.chunked.i2", "2d.contiguous.i2", "nested"]);
  });
});
