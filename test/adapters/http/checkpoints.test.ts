/**
 * `GET, HEAD /api/checkpoints/{name}` over real HTTP: whole bodies, HEAD, single ranges (206),
 * unsatisfiable ranges (416), ignored ranges (200), never gzip, name rules (400/404, symlinks), and
 * a checkpoint opened remotely by the SDK's HTTP Range store.
 */
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readField } from "../../../src/sdk/data/field.js";
import { openCheckpoint } from "../../../src/sdk/io/checkpoint/read.js";
import { openData } from "../../../src/sdk/io/open.js";
import type { HttpRequestInfo } from "../../../src/sdk/io/store/range-reader.js";
import { startTestServer, type TestServer } from "./harness.js";

let t: TestServer;
let name: string;
let bytes: Buffer;
let outside: string;
beforeAll(async () => {
  t = await startTestServer();
  name = basename(t.demo);
  bytes = await readFile(t.demo);
  outside = await mkdtemp(join(tmpdir(), "tessera-outside-"));
});
afterAll(async () => {
  await t?.close();
  await rm(outside, { recursive: true, force: true });
});

const get = (n: string, headers: Record<string, string> = {}, method = "GET") =>
  t.api(`/api/checkpoints/${n}`, { method, headers });

describe("GET /api/checkpoints/{name}", () => {
  it("serves the whole file: 200, application/zip, Accept-Ranges, length, never gzip", async () => {
    const r = await get(name, { "accept-encoding": "gzip" });
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toBe("application/zip");
    expect(r.headers.get("accept-ranges")).toBe("bytes");
    expect(r.headers.get("content-encoding")).toBeNull();
    expect(r.headers.get("content-length")).toBe(String(bytes.length));
    expect(r.headers.get("etag")).toMatch(/^"[0-9a-f]+-[0-9a-f]+"$/);
    expect(Buffer.from(await r.arrayBuffer()).equals(bytes)).toBe(true);
  });

  it("HEAD gives the headers and no body", async () => {
    const r = await get(name, {}, "HEAD");
    expect(r.status).toBe(200);
    expect(r.headers.get("content-length")).toBe(String(bytes.length));
    expect(r.headers.get("accept-ranges")).toBe("bytes");
    expect(r.headers.get("content-type")).toBe("application/zip");
    expect((await r.arrayBuffer()).byteLength).toBe(0);
    const ranged = await get(name, { range: "bytes=0-9" }, "HEAD");
    expect(ranged.status).toBe(206);
    expect(ranged.headers.get("content-range")).toBe(`bytes 0-9/${bytes.length}`);
    expect((await ranged.arrayBuffer()).byteLength).toBe(0);
  });

  it("answers a single range with 206 and Content-Range (a-b, a-, -n, end past the size)", async () => {
    const n = bytes.length;
    const cases: [string, number, number][] = [
      ["bytes=0-3", 0, 3],
      ["bytes=100-199", 100, 199],
      [`bytes=${n - 10}-`, n - 10, n - 1],
      ["bytes=-22", n - 22, n - 1],
      [`bytes=${n - 5}-${n + 100}`, n - 5, n - 1],
      [`bytes=-${n + 50}`, 0, n - 1],
    ];
    for (const [range, a, b] of cases) {
      const r = await get(name, { range, "accept-encoding": "gzip" });
      expect(r.status, range).toBe(206);
      expect(r.headers.get("content-range")).toBe(`bytes ${a}-${b}/${n}`);
      expect(r.headers.get("content-length")).toBe(String(b - a + 1));
      expect(r.headers.get("content-encoding")).toBeNull();
      expect(Buffer.from(await r.arrayBuffer()).equals(bytes.subarray(a, b + 1)), range).toBe(true);
    }
    const magic = await get(name, { range: "bytes=0-3" });
    expect([...new Uint8Array(await magic.arrayBuffer())]).toEqual([0x50, 0x4b, 0x03, 0x04]);
  });

  it("answers 416 with Content-Range bytes */size for a range past the end", async () => {
    for (const range of [
      `bytes=${bytes.length}-`,
      `bytes=${bytes.length + 10}-${bytes.length + 20}`,
      "bytes=-0",
    ]) {
      const r = await get(name, { range });
      expect(r.status, range).toBe(416);
      expect(r.headers.get("content-range")).toBe(`bytes */${bytes.length}`);
      expect(r.headers.get("accept-ranges")).toBe("bytes");
      await r.arrayBuffer();
    }
  });

  it("ignores malformed, reversed and multiple ranges and a stale If-Range (200, whole file)", async () => {
    const headers: Record<string, string>[] = [
      { range: "bytes=9-2" },
      { range: "items=0-3" },
      { range: "bytes=abc" },
      { range: "bytes=0-1,4-5" },
      { range: "bytes=0-3", "if-range": '"stale-etag"' },
    ];
    for (const h of headers) {
      const r = await get(name, h);
      expect(r.status, JSON.stringify(h)).toBe(200);
      expect((await r.arrayBuffer()).byteLength).toBe(bytes.length);
    }
    const etag = (await get(name, {}, "HEAD")).headers.get("etag")!;
    const fresh = await get(name, { range: "bytes=0-3", "if-range": etag });
    expect(fresh.status).toBe(206);
    await fresh.arrayBuffer();
  });

  it("404 for a checkpoint that is not there, or a folder with a checkpoint's name", async () => {
    const r = await get("nope.sdata.zarr.zip");
    expect(r.status).toBe(404);
    expect((await r.json()).detail).toMatch(/no checkpoint "nope\.sdata\.zarr\.zip"/);
    await mkdir(join(t.dataDir, "folder.zarr.zip"), { recursive: true });
    expect((await get("folder.zarr.zip")).status).toBe(404);
  });

  it("400 for names that are not a plain *.zarr.zip file name of the data dir", async () => {
    await mkdir(join(t.dataDir, "sub"), { recursive: true });
    await writeFile(join(t.dataDir, "sub", "in-sub.zarr.zip"), bytes);
    await writeFile(join(t.dataDir, "notes.txt"), "hello");
    await writeFile(join(t.dataDir, ".hidden.zarr.zip"), bytes);
    const names = [
      "notes.txt",
      "demo.zarr",
      "sub%2Fin-sub.zarr.zip",
      "sub%5Cin-sub.zarr.zip",
      "..%2F..%2Fetc%2Fpasswd.zarr.zip",
      "%2E%2E%2Fx.zarr.zip",
      "a..b.zarr.zip",
      ".hidden.zarr.zip",
      "x%00.zarr.zip",
    ];
    for (const n of names) {
      const r = await get(n);
      expect(r.status, n).toBe(400);
      expect((await r.json()).detail, n).toMatch(/checkpoint name/);
    }
    // A literal traversal never reaches the route (the URL is normalised by the client or 404s).
    expect([400, 404]).toContain((await get("../x.zarr.zip")).status);
  });

  it("follows a symlink that stays inside the data dir, refuses one leading outside (400)", async () => {
    await symlink(t.demo, join(t.dataDir, "alias.zarr.zip"));
    const ok = await get("alias.zarr.zip", { range: "bytes=0-3" });
    expect(ok.status).toBe(206);
    await ok.arrayBuffer();
    await writeFile(join(outside, "secret.zarr.zip"), "secret bytes");
    await symlink(join(outside, "secret.zarr.zip"), join(t.dataDir, "evil.zarr.zip"));
    const evil = await get("evil.zarr.zip");
    expect(evil.status).toBe(400);
    expect((await evil.json()).detail).toMatch(/outside the data dir/);
  });

  it("is read remotely by the SDK's HTTP Range store (openData and openCheckpoint on the URL)", async () => {
    const url = `${t.url}/api/checkpoints/${name}`;
    const opened = await openData(url);
    expect(opened.format).toBe("checkpoint");
    expect(Object.keys(opened.sdata.tables)).toEqual(["table"]);
    expect(Object.keys(opened.sdata.images)).toEqual(["morphology"]);
    const seen: HttpRequestInfo[] = [];
    const cp = await openCheckpoint(url, { onRequest: (i) => seen.push(i) });
    const col = await readField(cp.sdata, "obs:cell_type", "table");
    expect(col.nRows).toBe(300);
    const gets = seen.filter((s) => s.method === "GET");
    expect(gets.length).toBeGreaterThan(0);
    expect(gets.every((s) => s.status === 206 && s.range)).toBe(true);
    // Ranged reads fetched far less than the file.
    expect(gets.reduce((p, s) => p + s.bytes, 0)).toBeLessThan(bytes.length);
  });
});
