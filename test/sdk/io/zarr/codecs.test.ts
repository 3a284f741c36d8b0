import { gunzipSync, inflateSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import * as zarr from "zarrita";
import {
  decodeVlenUtf8,
  encodeVlenUtf8,
  gzipBytes,
  registerCodecs,
} from "../../../../src/sdk/io/zarr/codecs.js";

type CodecClass = {
  fromConfig(c: unknown, m: unknown): { encode(x: unknown): unknown; decode(b: Uint8Array): unknown };
};
const codec = async (name: string, config: unknown = {}, shape = [3]) => {
  registerCodecs();
  const entry = (await zarr.registry.get(name)?.()) as CodecClass;
  return entry.fromConfig(config, { shape, dataType: "string", codecs: [], fillValue: null });
};

describe("vlen-utf8", () => {
  it("encodes numcodecs VLenUTF8 framing (bytes checked against numcodecs)", () => {
    // numcodecs.VLenUTF8().encode(np.array(["a", "bé"], dtype=object))
    expect([...encodeVlenUtf8(["a", "bé"])]).toEqual([
      2, 0, 0, 0, 1, 0, 0, 0, 0x61, 3, 0, 0, 0, 0x62, 0xc3, 0xa9,
    ]);
  });
  it("writes null as an empty item, like numcodecs does for None", () => {
    expect(decodeVlenUtf8(encodeVlenUtf8(["x", null, "", "日本"]))).toEqual(["x", "", "", "日本"]);
  });
  it("decodes a view with a byte offset", () => {
    const enc = encodeVlenUtf8(["abc", "d"]);
    const padded = new Uint8Array(enc.length + 5);
    padded.set(enc, 5);
    expect(decodeVlenUtf8(padded.subarray(5))).toEqual(["abc", "d"]);
  });
  it("rejects truncated chunks", () => {
    expect(() => decodeVlenUtf8(encodeVlenUtf8(["abc", "def"]).subarray(0, 12))).toThrow(/truncated/);
    expect(() => decodeVlenUtf8(new Uint8Array(2))).toThrow(/no item count/);
  });
  it("registered codec encodes and decodes chunks", async () => {
    const c = await codec("vlen-utf8");
    const bytes = c.encode({ data: ["a", "b", "c"], shape: [3], stride: [1] }) as Uint8Array;
    expect(c.decode(bytes)).toEqual({ data: ["a", "b", "c"], shape: [3], stride: [1] });
    expect(await zarr.registry.get("numcodecs.vlen-utf8")?.()).toBe(await zarr.registry.get("vlen-utf8")?.());
  });
});

describe("gzip / zlib encode", () => {
  const payload = new TextEncoder().encode("tessera ".repeat(1000));
  it("gzip output is standard gzip", async () => {
    const c = await codec("gzip", { level: 5 });
    const out = (await c.encode(payload)) as Uint8Array;
    expect(out.length).toBeLessThan(payload.length / 10);
    expect(new Uint8Array(gunzipSync(out))).toEqual(payload);
    expect(await c.decode(out)).toEqual(payload);
    expect(new Uint8Array(gunzipSync(await gzipBytes(payload)))).toEqual(payload);
  });
  it("zlib output is standard zlib (deflate with header)", async () => {
    const c = await codec("numcodecs.zlib", { level: 1 });
    const out = (await c.encode(payload)) as Uint8Array;
    expect(out[0]).toBe(0x78);
    expect(new Uint8Array(inflateSync(out))).toEqual(payload);
    expect(await c.decode(out)).toEqual(payload);
  });
});

describe("checked blosc / zstd decoders", () => {
  it("blosc: a chunk whose header sizes disagree is rejected", async () => {
    const c = await codec("numcodecs.blosc", { cname: "lz4", clevel: 5, shuffle: 1, blocksize: 0 });
    const raw = new Uint8Array(400).map((_, i) => i % 7);
    const enc = (await c.encode(raw)) as Uint8Array;
    expect(await c.decode(enc)).toEqual(raw);
    await expect(c.decode(enc.subarray(0, enc.length - 3))).rejects.toThrow(/corrupt or truncated/);
    await expect(c.decode(new Uint8Array(8))).rejects.toThrow(/shorter than its header/);
  });
  it("zstd: input without the frame magic is rejected", async () => {
    const c = await codec("zstd", { level: 0, checksum: false });
    expect(() => c.decode(new TextEncoder().encode("garbage"))).toThrow(/zstd frame/);
  });
});
