/**
 * The zarr v3 structural rules that zarr-python enforces (explicit groups, nothing inside arrays, complete and
 * ordered consolidated metadata): each rule broken on purpose is reported, and consolidation repairs what can be.
 */
import { describe, expect, it } from "vitest";
import * as zarr from "zarrita";
import { FsStore } from "../../../../src/sdk/io/store/fs-store.js";
import { MemoryStore } from "../../../../src/sdk/io/store/memory-store.js";
import { consolidateV3 } from "../../../../src/sdk/io/zarr/consolidated.js";
import {
  assertV3Hierarchy,
  checkV3Hierarchy,
  makeGroupsExplicit,
} from "../../../../src/sdk/io/zarr/hierarchy-v3.js";
import { fixture } from "../../../fixtures.js";

const enc = new TextEncoder();
const dec = new TextDecoder();
const group = (attributes: object = {}) => ({ zarr_format: 3, node_type: "group", attributes });
const array = {
  zarr_format: 3,
  node_type: "array",
  shape: [2],
  data_type: "uint8",
  chunk_grid: { name: "regular", configuration: { chunk_shape: [2] } },
  chunk_key_encoding: { name: "default", configuration: { separator: "/" } },
  fill_value: 0,
  codecs: [{ name: "bytes" }],
  attributes: {},
};

async function put(store: MemoryStore, key: string, doc: object): Promise<void> {
  await store.set(`/${key}` as `/${string}`, enc.encode(JSON.stringify(doc)));
}

async function rootJson(store: MemoryStore): Promise<Record<string, unknown>> {
  return JSON.parse(dec.decode((await store.get("/zarr.json"))!));
}

/** A small well-formed hierarchy: root, `a` group, `a/x` array with a chunk, `b` group. */
async function wellFormed(): Promise<MemoryStore> {
  const s = new MemoryStore();
  await put(s, "zarr.json", group({ k: 1 }));
  await put(s, "a/zarr.json", group());
  await put(s, "a/x/zarr.json", array);
  await s.set("/a/x/c/0", new Uint8Array([1, 2]));
  await put(s, "b/zarr.json", group());
  return s;
}

describe("checkV3Hierarchy", () => {
  it("accepts a consolidated hierarchy and the spatialdata 0.7 fixture written by Python", async () => {
    const s = await wellFormed();
    await consolidateV3(s);
    expect(await checkV3Hierarchy(s)).toEqual([]);
    const blobs = new FsStore(fixture("vitessce-sdata-blobs-0.7/blobs.sdata.zarr"));
    expect(await checkV3Hierarchy(blobs)).toEqual([]);
  });

  it("reports an implicit group, once, naming the folder", async () => {
    const s = await wellFormed();
    await put(s, "viewer/X_csc/t/zarr.json", group());
    await put(s, "viewer/X_csc/t/data/zarr.json", array);
    await put(s, "viewer/zarr.json", group());
    const v = await checkV3Hierarchy(s);
    expect(v).toEqual([
      {
        path: "viewer/X_csc",
        rule: "implicit-group",
        message: "folder viewer/X_csc holds nodes but has no zarr.json",
      },
    ]);
  });

  it("reports a node inside an array and a root that is not a v3 group", async () => {
    const s = await wellFormed();
    await put(s, "a/x/inner/zarr.json", group());
    expect((await checkV3Hierarchy(s)).map((v) => [v.rule, v.path])).toEqual([["inside-array", "a/x/inner"]]);
    const noRoot = new MemoryStore();
    await put(noRoot, "a/zarr.json", group());
    expect((await checkV3Hierarchy(noRoot)).map((v) => v.rule)).toEqual(["root"]);
  });

  it("reports consolidated metadata that misses a node, lists a ghost, or is stale", async () => {
    const s = await wellFormed();
    await consolidateV3(s);
    await put(s, "c/zarr.json", group()); // written after consolidation
    const root = await rootJson(s);
    const md = (root.consolidated_metadata as { metadata: Record<string, unknown> }).metadata;
    md.ghost = group();
    md.b = group({ changed: true });
    await put(s, "zarr.json", root);
    const rules = (await checkV3Hierarchy(s)).map((v) => `${v.rule} ${v.path}`).sort();
    expect(rules).toEqual(["consolidated-extra ghost", "consolidated-missing c", "consolidated-stale b"]);
  });

  it("reports an entry listed without its parent, and siblings split so zarr-python would drop some", async () => {
    const s = new MemoryStore();
    await put(s, "zarr.json", {
      ...group(),
      consolidated_metadata: {
        kind: "inline",
        must_understand: false,
        metadata: { "a/x": array, a: group(), b: group(), "b/y": array, "a/z": array },
      },
    });
    await put(s, "a/zarr.json", group());
    await put(s, "a/x/zarr.json", array);
    await put(s, "a/z/zarr.json", array);
    await put(s, "b/zarr.json", group());
    await put(s, "b/y/zarr.json", array);
    const v = await checkV3Hierarchy(s);
    expect(v.map((x) => `${x.rule} ${x.path}`)).toEqual(["consolidated-order a/z"]);
    // Same nodes, parent missing from the listing.
    const root = await rootJson(s);
    (root.consolidated_metadata as { metadata: Record<string, unknown> }).metadata = { "a/x": array };
    await put(s, "zarr.json", root);
    const rules = (await checkV3Hierarchy(s)).map((x) => `${x.rule} ${x.path}`);
    expect(rules).toContain("consolidated-order a/x");
  });

  it("assertV3Hierarchy throws an error naming every broken rule", async () => {
    const s = await wellFormed();
    await put(s, "p/q/zarr.json", group());
    await expect(assertV3Hierarchy(s)).rejects.toThrow(/implicit-group: folder p holds nodes/);
  });
});

describe("makeGroupsExplicit and consolidateV3", () => {
  it("gives every implicit group its zarr.json, and consolidation lists parents before children", async () => {
    const s = await wellFormed();
    await put(s, "viewer/zarr.json", group());
    await put(s, "viewer/X_csc/t/zarr.json", group({ "encoding-type": "csc_matrix" }));
    await zarr.create(zarr.root(s).resolve("deep/er/arr"), { shape: [1], dtype: "uint8", chunkShape: [1] });
    expect(await makeGroupsExplicit(s)).toEqual(["deep", "deep/er", "viewer/X_csc"]);
    expect(await makeGroupsExplicit(s)).toEqual([]);
    await consolidateV3(s);
    expect(await checkV3Hierarchy(s)).toEqual([]);
    const md = ((await rootJson(s)).consolidated_metadata as { metadata: Record<string, unknown> }).metadata;
    expect(Object.keys(md)).toEqual([
      "a",
      "a/x",
      "b",
      "deep",
      "deep/er",
      "deep/er/arr",
      "viewer",
      "viewer/X_csc",
      "viewer/X_csc/t",
    ]);
  });

  it("refuses to repair a node inside an array", async () => {
    const s = await wellFormed();
    await put(s, "a/x/inner/zarr.json", group());
    await expect(makeGroupsExplicit(s)).rejects.toThrow(/node a\/x\/inner is inside the array a\/x/);
  });
});
