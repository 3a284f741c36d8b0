import { promises as fsp } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as zarr from "zarrita";
import { HttpStore } from "../../../../src/sdk/io/store/http-store.js";
import { openStore } from "../../../../src/sdk/io/store/open-store.js";
import { HttpRangeReader, type HttpRequestInfo } from "../../../../src/sdk/io/store/range-reader.js";
import { ZipStore } from "../../../../src/sdk/io/store/zip-store.js";
import { openZarr } from "../../../../src/sdk/io/zarr/open.js";
import { fixture } from "../../../fixtures.js";
import { startServer, type TestServer } from "./http-server.js";

const DATA = fixture("");
const SCANPY = "scanpy-pbmc68k-reduced/10x_pbmc68k_reduced.zarr.zip";

describe("HTTP range reading", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer(DATA);
  });
  afterAll(async () => {
    await server.close();
  });

  it("reads one small array of the scanpy zip without downloading the file", async () => {
    const size = (await fsp.stat(fixture(SCANPY))).size;
    server.reset();
    const seen: HttpRequestInfo[] = [];
    const reader = new HttpRangeReader(`${server.base}/${SCANPY}`, { onRequest: (i) => seen.push(i) });
    const store = await ZipStore.open(reader);
    // opening = one suffix-range request for the tail, which holds the whole central directory
    expect(server.log.map((r) => [r.method, r.status, r.range])).toEqual([["GET", 206, "bytes=-67584"]]);
    expect(store.entries.size).toBe(120);

    const arr = await zarr.open(zarr.root(store).resolve("obs/bulk_labels/codes"), { kind: "array" });
    const { data } = await zarr.get(arr);
    expect(Array.from(data as Int8Array).slice(0, 10)).toEqual([5, 9, 8, 0, 9, 6, 9, 9, 3, 5]);

    expect(reader.rangeIgnored).toBe(false);
    expect(reader.requests).toBe(server.log.length);
    expect(seen.reduce((s, r) => s + r.bytes, 0)).toBe(server.bytesServed());
    expect(reader.bytesReceived).toBe(server.bytesServed());
    expect(server.log.every((r) => r.status === 206)).toBe(true);
    // 66 KiB tail + metadata + one shard: a small fraction of the 1.7 MB file
    expect(server.bytesServed()).toBeLessThan(size / 5);
    expect(server.bytesServed()).toBeLessThan(70_000);
  });

  it("opens zarrita zips over HTTP via openStore (prefix detection, deflate entries)", async () => {
    for (const f of [
      "zarrita-fixtures/v3/data.zipped_from_parent.zarr.zip",
      "zarrita-fixtures/v2/data.zipped_from_parent.zarr.zip",
    ]) {
      const store = await openStore(`${server.base}/${f}`);
      expect(store).toBeInstanceOf(ZipStore);
      expect((store as ZipStore).prefix).toBe("data.zarr/");
      const arr = await zarr.open(zarr.root(store).resolve("3d.chunked.i2"), { kind: "array" });
      const { data } = await zarr.get(arr);
      expect(Array.from(data as Int16Array)).toEqual(Array.from({ length: 27 }, (_, i) => i));
    }
  });

  it("walks a consolidated v2 directory over HTTP and refuses to walk an unconsolidated one", async () => {
    const v2 = await openStore(`${server.base}/zarrita-fixtures/v2/data.zarr`);
    expect(v2).toBeInstanceOf(HttpStore);
    server.reset();
    const tree = await openZarr(v2);
    expect(tree.index?.source).toBe(".zmetadata");
    expect(await tree.children("")).toContain("my group with spaces");
    const arr = await zarr.open(zarr.root(tree.store).resolve("1d.contiguous.raw.i2"), { kind: "array" });
    expect(Array.from((await zarr.get(arr)).data as Int16Array)).toEqual([1, 2, 3, 4]);
    // zarr.json, .zmetadata and zmetadata probed once, then only the chunk
    expect(server.log.map((r) => r.url).sort()).toEqual(
      [
        "/zarrita-fixtures/v2/data.zarr/.zmetadata",
        "/zarrita-fixtures/v2/data.zarr/1d.contiguous.raw.i2/0",
        "/zarrita-fixtures/v2/data.zarr/zarr.json",
        "/zarrita-fixtures/v2/data.zarr/zmetadata",
      ].sort(),
    );

    const v3 = await openZarr(await openStore(`${server.base}/zarrita-fixtures/v3/data.zarr`));
    expect(v3.index).toBeNull();
    await expect(v3.children("")).rejects.toThrow(/consolidated metadata is required/);
    expect(await v3.attrs("my group with spaces")).toEqual({
      description: "A group with spaces in the name",
    });
    await expect(v3.attrs("nope")).rejects.toThrow(/no zarr group or array at "nope"/);
  });

  it("reports 404 and network errors with the URL", async () => {
    const missing = new HttpRangeReader(`${server.base}/nope.zip`);
    await expect(missing.size()).rejects.toThrow(`${server.base}/nope.zip: HTTP 404 Not Found`);
    await expect(ZipStore.open(missing)).rejects.toThrow(`${server.base}/nope.zip: HTTP 404 Not Found`);
    await expect(openStore(`${server.base}/nope.zarr.zip`)).rejects.toThrow("HTTP 404");

    const dead = "http://127.0.0.1:9/x.zip";
    await expect(new HttpRangeReader(dead).read(0, 10)).rejects.toThrow(`${dead}: network error`);
    expect(
      await new HttpStore(`${server.base}/zarrita-fixtures/v2/data.zarr`).get("/no/such/key"),
    ).toBeUndefined();
  });

  it("rejects ranges past the end of the file", async () => {
    const reader = new HttpRangeReader(`${server.base}/${SCANPY}`);
    const size = await reader.size();
    expect(size).toBe((await fsp.stat(fixture(SCANPY))).size);
    await expect(reader.read(size - 10, 20)).rejects.toThrow(/short read: got 10 of 20 bytes|416/);
    await expect(reader.read(size + 10, 20)).rejects.toThrow(/HTTP 416/);
  });
});

describe("misbehaving HTTP servers", () => {
  it("tolerates (and detects) a server that ignores Range for small files, refuses it for large ones", async () => {
    const server = await startServer(DATA, { ignoreRange: true });
    try {
      const f = "zarrita-fixtures/v3/data.zipped_from_within.zarr.zip";
      const reader = new HttpRangeReader(`${server.base}/${f}`);
      const store = await ZipStore.open(reader);
      expect(reader.rangeIgnored).toBe(true);
      const arr = await zarr.open(zarr.root(store).resolve("1d.contiguous.raw.i2"), { kind: "array" });
      expect(Array.from((await zarr.get(arr)).data as Int16Array)).toEqual([1, 2, 3, 4]);
      // the full body was downloaded once and reused
      expect(server.log.length).toBe(1);

      const strict = new HttpRangeReader(`${server.base}/${SCANPY}`, { maxFullBodyBytes: 100_000 });
      await expect(ZipStore.open(strict)).rejects.toThrow(
        /ignored the Range header \(HTTP 200 with the full 1733874-byte body\)/,
      );
    } finally {
      await server.close();
    }
  });

  it("finds the size without HEAD", async () => {
    const server = await startServer(DATA, { noHead: true });
    try {
      const reader = new HttpRangeReader(`${server.base}/${SCANPY}`);
      expect(await reader.size()).toBe(1733874);
      expect(server.log.map((r) => [r.method, r.status])).toEqual([
        ["HEAD", 405],
        ["GET", 206],
      ]);
    } finally {
      await server.close();
    }
  });
});
