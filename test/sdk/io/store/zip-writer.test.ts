import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { promises as fsp } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as zarr from "zarrita";
import { FileRangeReader } from "../../../../src/sdk/io/store/file-range-reader.js";
import { FsStore } from "../../../../src/sdk/io/store/fs-store.js";
import { MemoryStore } from "../../../../src/sdk/io/store/memory-store.js";
import { openStore } from "../../../../src/sdk/io/store/open-store.js";
import { STORED } from "../../../../src/sdk/io/store/zip-format.js";
import { ZipStore } from "../../../../src/sdk/io/store/zip-store.js";
import {
  compareZarrEntryNames,
  contentHashName,
  writeZip,
  writeZipFromStore,
  type ZipWriteEntry,
} from "../../../../src/sdk/io/store/zip-writer.js";
import { consolidateV3 } from "../../../../src/sdk/io/zarr/consolidated.js";
import { openZarr } from "../../../../src/sdk/io/zarr/open.js";
import { fixture } from "../../../fixtures.js";

const enc = new TextEncoder();
const execFileP = promisify(execFile);

function entries(): ZipWriteEntry[] {
  return [
    { name: "b/c/0", data: new Uint8Array([1, 2, 3, 4]) },
    { name: "b/x.parquet/part.0.parquet", data: async () => enc.encode("PAR1....PAR1") },
    { name: "a/x/zarr.json", data: enc.encode('{"zarr_format":3,"node_type":"group","attributes":{}}') },
    {
      name: "b/zarr.json",
      data: async () => enc.encode('{"zarr_format":3,"node_type":"group","attributes":{}}'),
    },
    { name: "a/c/0", data: new Uint8Array(1000).fill(42) },
    { name: "zarr.json", data: enc.encode('{"zarr_format":3,"node_type":"group","attributes":{"k":1}}') },
    { name: "a/zarr.json", data: enc.encode('{"zarr_format":3,"node_type":"group","attributes":{}}') },
  ];
}

const ORDER = [
  "zarr.json",
  "a/zarr.json",
  "b/zarr.json",
  "a/x/zarr.json",
  "a/c/0",
  "b/c/0",
  "b/x.parquet/part.0.parquet",
];

describe("writeZip", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await fsp.mkdtemp(path.join(os.tmpdir(), "tessera-zipw-"));
  });
  afterAll(async () => {
    await fsp.rm(dir, { recursive: true, force: true });
  });

  it("is deterministic: same entries → same bytes and hash", async () => {
    const a = await writeZip(path.join(dir, "a.zip"), entries());
    const b = await writeZip(path.join(dir, "b.zip"), [...entries()].reverse());
    const bytesA = await fsp.readFile(a.path);
    const bytesB = await fsp.readFile(b.path);
    expect(bytesA.equals(bytesB)).toBe(true);
    expect(a.sha256).toBe(b.sha256);
    expect(a.sha256).toBe(createHash("sha256").update(bytesA).digest("hex"));
    expect(a.bytes).toBe(bytesA.length);
    // DOS date 1980-01-01 (0x0021), time 00:00:00 in the first local header
    expect(bytesA.readUInt16LE(10)).toBe(0);
    expect(bytesA.readUInt16LE(12)).toBe(0x21);
  });

  it("gives the same bytes on machines in different time zones", async () => {
    const writer = fileURLToPath(new URL("../../../../src/sdk/io/store/zip-writer.ts", import.meta.url));
    const script = `
      import { writeZip } from ${JSON.stringify(pathToFileURL(writer).href)};
      const r = await writeZip(process.argv[1], [
        { name: "a/c/0", data: new Uint8Array([1, 2, 3]) },
        { name: "zarr.json", data: new TextEncoder().encode("{}") },
      ]);
      console.log(r.sha256);`;
    const hashes = await Promise.all(
      ["Asia/Tokyo", "America/Los_Angeles", "UTC"].map(async (tz, i) => {
        const { stdout } = await execFileP(
          process.execPath,
          ["--import", "tsx", "--input-type=module", "-e", script, path.join(dir, `tz-${i}.zip`)],
          { env: { ...process.env, TZ: tz } },
        );
        return stdout.trim();
      }),
    );
    expect(hashes[0]).toMatch(/^[0-9a-f]{64}$/);
    expect(new Set(hashes).size).toBe(1);
  });

  it("puts the root zarr.json first, metadata breadth-first, then the rest; all STORED", async () => {
    const out = await writeZip(path.join(dir, "order.zip"), entries());
    const store = await ZipStore.open(new FileRangeReader(out.path));
    const cd = store.directory.entries;
    expect(cd.map((e) => e.name)).toEqual(ORDER);
    expect([...cd].sort((x, y) => x.localHeaderOffset - y.localHeaderOffset).map((e) => e.name)).toEqual(
      ORDER,
    );
    expect(cd[0]!.localHeaderOffset).toBe(0);
    expect(cd.every((e) => e.method === STORED && e.compressedSize === e.uncompressedSize)).toBe(true);
    expect(store.directory.zip64).toBe(false);
    expect(await store.get("/a/c/0")).toEqual(new Uint8Array(1000).fill(42));
    expect(new TextDecoder().decode(await store.get("/b/x.parquet/part.0.parquet"))).toBe("PAR1....PAR1");
    expect([...ORDER].sort(compareZarrEntryNames)).toEqual(ORDER);
  });

  it("round-trips with forced ZIP64 records", async () => {
    const out = await writeZip(path.join(dir, "z64.zip"), entries(), { forceZip64Format: true });
    const store = await ZipStore.open(new FileRangeReader(out.path));
    expect(store.directory.zip64).toBe(true);
    expect(store.directory.entries.map((e) => e.name)).toEqual(ORDER);
    expect(await store.get("/b/c/0")).toEqual(new Uint8Array([1, 2, 3, 4]));
    expect(await store.getRange("/a/c/0", { offset: 990, length: 100 })).toEqual(new Uint8Array(10).fill(42));
    const plain = await writeZip(path.join(dir, "plain.zip"), entries());
    expect(out.bytes).toBeGreaterThan(plain.bytes);
    expect(out.sha256).not.toBe(plain.sha256);
  });

  it("never leaves a half file: a failing source keeps the old file and removes the temp file", async () => {
    const final = path.join(dir, "safe.sdata.zarr.zip");
    const first = await writeZip(final, entries());
    const before = await fsp.readFile(final);
    for (const failAt of [0, 3, 6]) {
      const broken = entries().map((e, i) =>
        i === failAt
          ? {
              name: e.name,
              data: async (): Promise<Uint8Array> => {
                throw new Error("source exploded");
              },
            }
          : e,
      );
      await expect(writeZip(final, broken)).rejects.toThrow(
        `${final}: writing the zip failed: source exploded`,
      );
      expect((await fsp.readFile(final)).equals(before)).toBe(true);
      expect((await fsp.readdir(dir)).filter((f) => f.endsWith(".tmp"))).toEqual([]);
    }
    // and a fresh path stays absent
    const fresh = path.join(dir, "never.zip");
    await expect(
      writeZip(fresh, [{ name: "zarr.json", data: async () => Promise.reject(new Error("no")) }]),
    ).rejects.toThrow("no");
    await expect(fsp.stat(fresh)).rejects.toThrow(/ENOENT/);
    expect((await fsp.readdir(dir)).filter((f) => f.endsWith(".tmp"))).toEqual([]);
    expect(first.path).toBe(final);
  });

  it("rejects duplicate and unsafe names before touching the disk", async () => {
    const p = path.join(dir, "bad.zip");
    await expect(
      writeZip(p, [
        { name: "a", data: new Uint8Array(1) },
        { name: "a", data: new Uint8Array(1) },
      ]),
    ).rejects.toThrow(`${p}: duplicate zip entry name "a"`);
    await expect(writeZip(p, [{ name: "../evil", data: new Uint8Array(1) }])).rejects.toThrow(
      /invalid zip entry name/,
    );
    await expect(writeZip(p, [{ name: "/abs", data: new Uint8Array(1) }])).rejects.toThrow(
      /invalid zip entry name/,
    );
    await expect(fsp.stat(p)).rejects.toThrow(/ENOENT/);
  });

  it("zips a zarrita-written, consolidated MemoryStore that reads back through openStore + openZarr", async () => {
    const mem = new MemoryStore();
    const root = await zarr.create(mem, { attributes: { spatialdata_attrs: { version: "0.2" } } });
    const images = await zarr.create(root.resolve("images"), { attributes: {} });
    const arr = await zarr.create(images.resolve("img/s0"), {
      shape: [2, 3],
      chunkShape: [1, 3],
      dtype: "uint16",
      attributes: { note: "level 0" },
    });
    await zarr.set(arr, null, { data: new Uint16Array([1, 2, 3, 4, 5, 6]), shape: [2, 3], stride: [3, 1] });
    await zarr.create(images.resolve("img"), { attributes: { ome: { version: "0.5" } } });
    await consolidateV3(mem);

    const out = await writeZipFromStore(path.join(dir, "mem.sdata.zarr.zip"), mem);
    const again = await writeZipFromStore(path.join(dir, "mem2.sdata.zarr.zip"), mem);
    expect(again.sha256).toBe(out.sha256);
    const name = contentHashName("mem", out.sha256);
    expect(name).toBe(`mem-${out.sha256.slice(0, 12)}.sdata.zarr.zip`);

    const store = await openStore(out.path);
    const zs = store as ZipStore;
    expect(zs.directory.entries.map((e) => e.name)).toEqual([
      "zarr.json",
      "images/zarr.json",
      "images/img/zarr.json",
      "images/img/s0/zarr.json",
      "images/img/s0/c/0/0",
      "images/img/s0/c/1/0",
    ]);
    const tree = await openZarr(store);
    expect(tree.index?.source).toBe("zarr.json");
    expect(await tree.children("")).toEqual(["images"]);
    expect(await tree.children("images/img")).toEqual(["s0"]);
    expect(await tree.attrs("images/img")).toEqual({ ome: { version: "0.5" } });
    const back = await zarr.open(zarr.root(tree.store).resolve("images/img/s0"), { kind: "array" });
    expect(Array.from((await zarr.get(back)).data as Uint16Array)).toEqual([1, 2, 3, 4, 5, 6]);
  });

  it("zips a real SpatialData directory (blobs 0.7) from an FsStore, byte for byte", async () => {
    const src = new FsStore(fixture("vitessce-sdata-blobs-0.7/blobs.sdata.zarr"));
    const out = await writeZipFromStore(path.join(dir, "blobs.sdata.zarr.zip"), src);
    const zs = (await openStore(out.path)) as ZipStore;
    const names = zs.directory.entries.map((e) => e.name);
    expect(names[0]).toBe("zarr.json");
    const firstChunk = names.findIndex((n) => !n.endsWith("zarr.json"));
    expect(names.slice(firstChunk).some((n) => n.endsWith("zarr.json"))).toBe(false);
    const listed = await src.list();
    expect(await zs.list()).toEqual(listed);
    for (const { key } of listed.filter((e) => e.key.endsWith(".parquet") || e.key === "zarr.json")) {
      const a = (await zs.get(`/${key}`))!;
      expect(Buffer.from(a).equals(Buffer.from((await src.get(`/${key}`))!))).toBe(true);
    }
    const tree = await openZarr(zs);
    expect(await tree.children("")).toEqual(["images", "labels", "points", "tables"]);
    const labels = await zarr.open(zarr.root(tree.store).resolve("labels/blobs_labels/s0"), {
      kind: "array",
    });
    expect(Array.from((await zarr.get(labels, [50, zarr.slice(40, 45)])).data as Int16Array)).toEqual([
      0, 0, 0, 1, 1,
    ]);
  });

  it("contentHashName validates its digest", () => {
    expect(contentHashName("blobs", "0123456789abcdef".repeat(4))).toBe("blobs-0123456789ab.sdata.zarr.zip");
    expect(() => contentHashName("x", "nothex")).toThrow(/not a hex digest/);
  });
});
