import { promises as fsp } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import yazl from "yazl";
import * as zarr from "zarrita";
import { FileRangeReader } from "../../../../src/sdk/io/store/file-range-reader.js";
import { inflateRawStream } from "../../../../src/sdk/io/store/inflate.js";
import { BytesRangeReader } from "../../../../src/sdk/io/store/range-reader.js";
import type { ReadableStore } from "../../../../src/sdk/io/store/types.js";
import { DEFLATE, STORED } from "../../../../src/sdk/io/store/zip-format.js";
import { detectRootPrefix, ZipStore } from "../../../../src/sdk/io/store/zip-store.js";
import { fixture } from "../../../fixtures.js";

const SCANPY = fixture("scanpy-pbmc68k-reduced/10x_pbmc68k_reduced.zarr.zip");

async function openZip(file: string): Promise<ZipStore> {
  return ZipStore.open(new FileRangeReader(file));
}

async function readArray(store: ReadableStore, p: string) {
  const arr = await zarr.open(zarr.root(store).resolve(p), { kind: "array" });
  const chunk = await zarr.get(arr);
  return { dtype: arr.dtype, shape: chunk.shape, data: Array.from(chunk.data as ArrayLike<number | bigint>) };
}

/** Fast byte equality (vitest's deep equality is slow on large typed arrays). */
function same(a: Uint8Array | undefined, b: Uint8Array): boolean {
  return (
    a !== undefined &&
    Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(
      Buffer.from(b.buffer, b.byteOffset, b.byteLength),
    )
  );
}

const THREE_D = Array.from({ length: 27 }, (_, i) => i);

describe("ZipStore on the zarrita fixtures", () => {
  const cases = [
    {
      file: "zarrita-fixtures/v2/data.zipped_from_parent.zarr.zip",
      prefix: "data.zarr/",
      records: 148,
      v: 2,
    },
    { file: "zarrita-fixtures/v2/data.zipped_from_within.zarr.zip", prefix: "", records: 147, v: 2 },
    {
      file: "zarrita-fixtures/v3/data.zipped_from_parent.zarr.zip",
      prefix: "data.zarr/",
      records: 291,
      v: 3,
    },
    { file: "zarrita-fixtures/v3/data.zipped_from_within.zarr.zip", prefix: "", records: 290, v: 3 },
    { file: "zarrita-fixtures/v3/data.uncompressed.zarr.zip", prefix: "", records: 290, v: 3 },
  ];
  for (const c of cases) {
    it(`reads ${c.file}`, async () => {
      const store = await openZip(fixture(c.file));
      expect(store.prefix).toBe(c.prefix);
      expect(store.directory.entries.length).toBe(c.records);
      expect(store.location).toBe(fixture(c.file));
      // directory entries are ignored, the prefix is stripped
      const keys = (await store.list()).map((e) => e.key);
      expect(keys.some((k) => k.endsWith("/"))).toBe(false);
      expect(keys).toContain(c.v === 2 ? ".zgroup" : "zarr.json");
      expect(keys).toContain(c.v === 2 ? "my group with spaces/.zattrs" : "my group with spaces/zarr.json");

      expect(await readArray(store, "1d.contiguous.raw.i2")).toEqual({
        dtype: "int16",
        shape: [4],
        data: [1, 2, 3, 4],
      });
      const f8 = await readArray(store, "1d.contiguous.f8");
      expect(f8.data).toEqual([1.5, 2.5, 3.5, 4.5]);
      const cube = await readArray(store, "3d.chunked.i2");
      expect(cube.shape).toEqual([3, 3, 3]);
      expect(cube.data).toEqual(THREE_D);
      if (c.v === 2) expect((await readArray(store, "1d.contiguous.zlib.i2")).data).toEqual([1, 2, 3, 4]);
      else expect((await readArray(store, "1d.contiguous.compressed.sharded.i2")).data).toEqual([1, 2, 3, 4]);

      const group = await zarr.open(zarr.root(store).resolve("my group with spaces"), { kind: "group" });
      expect(group.attrs).toEqual({ description: "A group with spaces in the name" });
    });
  }

  it("inflates DEFLATE entries and reads STORED ones directly", async () => {
    const deflated = await openZip(fixture("zarrita-fixtures/v2/data.zipped_from_within.zarr.zip"));
    const zarray = deflated.entry("/1d.contiguous.raw.i2/.zarray")!;
    expect(zarray.method).toBe(DEFLATE);
    const text = new TextDecoder().decode(await deflated.get("/1d.contiguous.raw.i2/.zarray"));
    expect(JSON.parse(text)).toMatchObject({ shape: [4], dtype: "<i2", zarr_format: 2 });
    // getRange on a deflated entry slices the inflated bytes
    const part = await deflated.getRange("/1d.contiguous.raw.i2/.zarray", { offset: 0, length: 1 });
    expect(new TextDecoder().decode(part)).toBe("{");

    const stored = await openZip(fixture("zarrita-fixtures/v3/data.uncompressed.zarr.zip"));
    expect(stored.directory.entries.every((e) => e.method === STORED)).toBe(true);
    const chunk = (await stored.get("/1d.contiguous.raw.i2/c/0"))!;
    expect(Array.from(new Int16Array(chunk.slice().buffer))).toEqual([1, 2, 3, 4]);
    expect(
      Array.from(
        new Int16Array(
          (await stored.getRange("/1d.contiguous.raw.i2/c/0", { offset: 2, length: 4 }))!.slice().buffer,
        ),
      ),
    ).toEqual([2, 3]);
    expect(
      Array.from(
        new Int16Array(
          (await stored.getRange("/1d.contiguous.raw.i2/c/0", { suffixLength: 2 }))!.slice().buffer,
        ),
      ),
    ).toEqual([4]);
    expect(await stored.get("/no/such/key")).toBeUndefined();
    expect(await stored.getRange("/no/such/key", { offset: 0, length: 1 })).toBeUndefined();
  });
});

describe("ZipStore on the scanpy anndata zip (duplicates)", () => {
  it("keeps the LAST central-directory record of a duplicated name", async () => {
    const store = await openZip(SCANPY);
    expect(store.prefix).toBe("");
    expect(store.directory.entries.length).toBe(249);
    expect(store.entries.size).toBe(120);
    expect(store.directory.entries.filter((e) => e.name === "zarr.json").length).toBe(4);
    expect(store.directory.entries.filter((e) => e.name === "obs/zarr.json").length).toBe(5);

    const root = store.entry("/zarr.json")!;
    expect(root.localHeaderOffset).toBe(1636493);
    expect(root.compressedSize).toBe(79688);
    const meta = JSON.parse(new TextDecoder().decode(await store.get("/zarr.json")));
    expect(meta.attributes).toEqual({ "encoding-type": "anndata", "encoding-version": "0.1.0" });
    expect(Object.keys(meta.consolidated_metadata.metadata).length).toBe(67);

    const obs = JSON.parse(new TextDecoder().decode(await store.get("/obs/zarr.json")));
    expect(store.entry("obs/zarr.json")!.compressedSize).toBe(332);
    expect(obs.attributes._index).toBe("index");
    expect(obs.attributes["encoding-type"]).toBe("dataframe");
  });

  it("reads sharded arrays through zarrita", async () => {
    const store = await openZip(SCANPY);
    const codes = await readArray(store, "obs/bulk_labels/codes");
    expect(codes.dtype).toBe("int8");
    expect(codes.shape).toEqual([700]);
    expect(codes.data.slice(0, 10)).toEqual([5, 9, 8, 0, 9, 6, 9, 9, 3, 5]);
    expect(codes.data.slice(-5)).toEqual([9, 9, 0, 6, 9]);
    const nGenes = await readArray(store, "obs/n_genes");
    expect(nGenes.dtype).toBe("int64");
    expect(nGenes.data.slice(0, 5)).toEqual([1003n, 1080n, 1228n, 1007n, 1178n]);
    expect(nGenes.data.slice(-2)).toEqual([1030n, 1552n]);
    const x = await zarr.open(zarr.root(store).resolve("X"), { kind: "array" });
    expect(x.shape).toEqual([700, 765]);
    expect(x.dtype).toBe("float32");
  });

  it("lists de-duplicated keys with their compressed sizes", async () => {
    const store = await openZip(SCANPY);
    const all = await store.list();
    expect(all.length).toBe(120);
    expect(all.find((e) => e.key === "zarr.json")?.size).toBe(79688);
    const obs = await store.list("obs/bulk_labels/");
    expect(obs.map((e) => e.key)).toEqual([
      "obs/bulk_labels/categories/c/0",
      "obs/bulk_labels/categories/zarr.json",
      "obs/bulk_labels/codes/c/0",
      "obs/bulk_labels/codes/zarr.json",
      "obs/bulk_labels/zarr.json",
    ]);
  });
});

describe("detectRootPrefix", () => {
  it("finds the folder holding the zarr root", () => {
    expect(detectRootPrefix(["zarr.json", "a/zarr.json"])).toBe("");
    expect(detectRootPrefix(["d.zarr/", "d.zarr/.zgroup", "d.zarr/a/.zarray"])).toBe("d.zarr/");
    expect(detectRootPrefix(["x/y.zarr/zarr.json", "x/y.zarr/a/c/0"])).toBe("x/y.zarr/");
    expect(detectRootPrefix(["__MACOSX/._d", "d.zarr/zarr.json"])).toBe("d.zarr/");
    // no zarr metadata anywhere: leave names alone
    expect(detectRootPrefix(["a/b.txt", "a/c.txt"])).toBe("");
    // two top folders: the archive root is the root
    expect(detectRootPrefix(["a/zarr.json", "b/zarr.json"])).toBe("");
  });
});

/** Build a zip with yazl directly (deflate, comment, …) into a buffer. */
async function yazlZip(
  files: { name: string; data: Uint8Array; compress: boolean }[],
  end: { comment?: string; forceZip64Format?: boolean } = {},
): Promise<Uint8Array> {
  const zip = new yazl.ZipFile();
  for (const f of files) zip.addBuffer(Buffer.from(f.data), f.name, { compress: f.compress });
  zip.end({ comment: end.comment ?? "", forceZip64Format: end.forceZip64Format ?? false });
  const parts: Buffer[] = [];
  for await (const c of zip.outputStream) parts.push(c as Buffer);
  return new Uint8Array(Buffer.concat(parts));
}

describe("ZipStore on synthetic zips", () => {
  const big = new Uint8Array(300_000).map((_, i) => (i * 7) % 251);
  const text = new TextEncoder().encode('{"zarr_format":3,"node_type":"group","attributes":{"x":1}}');

  it("reads deflated entries (small: sync path, large: thread-pool path), a comment and ZIP64", async () => {
    for (const forceZip64Format of [false, true]) {
      const bytes = await yazlZip(
        [
          { name: "zarr.json", data: text, compress: true },
          { name: "a/c/0", data: big, compress: true },
          { name: "b/c/0", data: big, compress: false },
        ],
        { comment: "a comment with PK in it", forceZip64Format },
      );
      const store = await ZipStore.open(new BytesRangeReader(bytes, "synthetic.zip"));
      expect(store.directory.zip64).toBe(forceZip64Format);
      expect(store.directory.comment).toBe("a comment with PK in it");
      expect(store.entry("a/c/0")!.method).toBe(DEFLATE);
      expect(await store.get("/zarr.json")).toEqual(text);
      expect(same(await store.get("/a/c/0"), big)).toBe(true);
      expect(same(await store.get("/b/c/0"), big)).toBe(true);
      expect(await store.getRange("/b/c/0", { offset: 1000, length: 10 })).toEqual(big.subarray(1000, 1010));
      expect(await store.getRange("/a/c/0", { suffixLength: 5 })).toEqual(big.subarray(big.length - 5));
    }
  });

  it("inflates with DecompressionStream (the browser path)", async () => {
    const zlib = await import("node:zlib");
    const raw = zlib.deflateRawSync(big);
    expect(same(await inflateRawStream(new Uint8Array(raw), big.length), big)).toBe(true);
    await expect(inflateRawStream(new Uint8Array([1, 2, 3]), 10)).rejects.toThrow();
  });

  it("handles a central directory larger than the tail read and a maximal comment", async () => {
    const files = Array.from({ length: 2500 }, (_, i) => ({
      name: `arr/c/${i}`,
      data: new Uint8Array([i & 255, i >> 8]),
      compress: false,
    }));
    const bytes = await yazlZip([{ name: "zarr.json", data: text, compress: false }, ...files], {
      comment: "x".repeat(0xffff),
    });
    const reads: number[] = [];
    const inner = new BytesRangeReader(bytes, "many.zip");
    const store = await ZipStore.open({
      location: inner.location,
      size: () => inner.size(),
      read: (o: number, l: number) => {
        reads.push(l);
        return inner.read(o, l);
      },
    });
    expect(store.directory.cdSize).toBeGreaterThan(66 * 1024);
    expect(reads).toEqual([66 * 1024, store.directory.cdSize]);
    expect(store.directory.comment.length).toBe(0xffff);
    expect(store.entries.size).toBe(2501);
    expect(await store.get("/arr/c/2499")).toEqual(new Uint8Array([2499 & 255, 2499 >> 8]));
  });

  it("reads only the bytes it needs", async () => {
    const bytes = await yazlZip([
      { name: "zarr.json", data: text, compress: false },
      { name: "a/c/0", data: big, compress: false },
      { name: "b/c/0", data: big, compress: false },
    ]);
    const reads: [number, number][] = [];
    const inner = new BytesRangeReader(bytes, "counted.zip");
    const reader = {
      location: inner.location,
      size: () => inner.size(),
      read: (o: number, l: number) => {
        reads.push([o, l]);
        return inner.read(o, l);
      },
    };
    const store = await ZipStore.open(reader);
    expect(reads.length).toBe(1); // the tail, which holds the whole central directory
    expect(reads[0]![1]).toBe(66 * 1024);
    reads.length = 0;
    await store.get("/zarr.json");
    expect(reads.length).toBe(1); // local header + data in one read
    reads.length = 0;
    await store.getRange("/b/c/0", { offset: 10, length: 20 });
    await store.getRange("/b/c/0", { offset: 40, length: 20 });
    // one local-header read, then one 20-byte read per range
    expect(reads.map((r) => r[1])).toEqual([30 + 5 + 64, 20, 20]);
  });
});

describe("ZipStore on corrupt input", () => {
  let dir: string;
  let good: Uint8Array;
  beforeAll(async () => {
    dir = await fsp.mkdtemp(path.join(os.tmpdir(), "tessera-zip-"));
    good = new Uint8Array(await fsp.readFile(fixture("zarrita-fixtures/v3/data.uncompressed.zarr.zip")));
  });
  afterAll(async () => {
    await fsp.rm(dir, { recursive: true, force: true });
  });

  async function write(name: string, bytes: Uint8Array): Promise<string> {
    const p = path.join(dir, name);
    await fsp.writeFile(p, bytes);
    return p;
  }

  it("rejects truncated files with the path and the problem", { timeout: 10_000 }, async () => {
    for (const cut of [
      0,
      10,
      21,
      100,
      5000,
      good.length / 2,
      good.length - 2000,
      good.length - 23,
      good.length - 1,
    ]) {
      const p = await write(`cut-${cut}.zip`, good.subarray(0, Math.floor(cut)));
      const err = await openZip(p).then(
        () => undefined,
        (e: Error) => e,
      );
      expect(err, `cut at ${cut}`).toBeInstanceOf(Error);
      expect(err!.message).toContain(p);
      expect(err!.message).toMatch(/too small to be a zip|no zip end-of-central-directory record/);
    }
  });

  it("rejects a flipped EOCD signature, a directory pointing past EOF, and bad record signatures", async () => {
    const dv = (b: Uint8Array) => new DataView(b.buffer, b.byteOffset, b.byteLength);
    const eocd = good.length - 22;
    expect(dv(good).getUint32(eocd, true)).toBe(0x06054b50);

    const flipped = good.slice();
    flipped[eocd] ^= 0xff;
    const p1 = await write("flipped-eocd.zip", flipped);
    await expect(openZip(p1)).rejects.toThrow(`${p1}: no zip end-of-central-directory record found`);

    const past = good.slice();
    dv(past).setUint32(eocd + 16, good.length + 1000, true);
    const p2 = await write("cd-past-eof.zip", past);
    await expect(openZip(p2)).rejects.toThrow(/lies outside the \d+-byte file/);

    const shifted = good.slice();
    dv(shifted).setUint32(eocd + 16, dv(good).getUint32(eocd + 16, true) + 4, true);
    dv(shifted).setUint32(eocd + 12, dv(good).getUint32(eocd + 12, true) - 4, true);
    const p3 = await write("cd-shifted.zip", shifted);
    await expect(openZip(p3)).rejects.toThrow(/bad central directory signature/);

    const wrongCount = good.slice();
    dv(wrongCount).setUint16(eocd + 10, 7, true);
    dv(wrongCount).setUint16(eocd + 8, 7, true);
    const p4 = await write("wrong-count.zip", wrongCount);
    await expect(openZip(p4)).rejects.toThrow(/holds 290 entries, the end record says 7/);

    // a broken local header is found when the entry is read
    const store = await openZip(fixture("zarrita-fixtures/v3/data.uncompressed.zarr.zip"));
    const e = store.entry("1d.contiguous.raw.i2/c/0")!;
    const badLocal = good.slice();
    badLocal[e.localHeaderOffset] ^= 0xff;
    const p5 = await write("bad-local.zip", badLocal);
    const s5 = await openZip(p5);
    await expect(s5.get("/1d.contiguous.raw.i2/c/0")).rejects.toThrow(
      `${p5}: bad local header signature for "1d.contiguous.raw.i2/c/0"`,
    );
  });

  it("rejects corrupt deflate data with the entry name", async () => {
    const bytes = await yazlZip([{ name: "zarr.json", data: new Uint8Array(5000).fill(7), compress: true }]);
    const store = await ZipStore.open(new BytesRangeReader(bytes, "x.zip"));
    const e = store.entry("zarr.json")!;
    const broken = bytes.slice();
    const dataStart = e.localHeaderOffset + 30 + e.nameLength;
    for (let i = 0; i < 8; i++) broken[dataStart + i] = 0xff;
    const bad = await ZipStore.open(new BytesRangeReader(broken, "broken.zip"));
    await expect(bad.get("/zarr.json")).rejects.toThrow('broken.zip: cannot inflate entry "zarr.json"');
  });

  it("detects a file replaced after opening", async () => {
    const p = await write("replaced.zip", good);
    const store = await openZip(p);
    await fsp.writeFile(p, good.subarray(0, good.length - 5));
    await expect(store.get("/zarr.json")).rejects.toThrow(`${p}: the file changed since it was opened`);
  });
});
