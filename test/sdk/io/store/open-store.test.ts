import { promises as fsp } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FsStore } from "../../../../src/sdk/io/store/fs-store.js";
import { openStore } from "../../../../src/sdk/io/store/open-store.js";
import { ZipStore } from "../../../../src/sdk/io/store/zip-store.js";
import { fixture } from "../../../fixtures.js";

describe("openStore", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await fsp.mkdtemp(path.join(os.tmpdir(), "tessera-open-"));
  });
  afterAll(async () => {
    await fsp.rm(dir, { recursive: true, force: true });
  });

  it("opens directories as FsStore and .zip files as ZipStore", async () => {
    const d = await openStore(fixture("vitessce-sdata-blobs-0.7/blobs.sdata.zarr"));
    expect(d).toBeInstanceOf(FsStore);
    expect(d.location).toBe(fixture("vitessce-sdata-blobs-0.7/blobs.sdata.zarr"));
    const z = await openStore(fixture("scanpy-pbmc68k-reduced/10x_pbmc68k_reduced.zarr.zip"));
    expect(z).toBeInstanceOf(ZipStore);
    expect(await z.get("/obs/zarr.json")).toBeDefined();
    const u = await openStore(pathToFileURL(fixture("zarrita-fixtures/v3/data.uncompressed.zarr.zip")).href);
    expect(u).toBeInstanceOf(ZipStore);
  });

  it("recognises a zip by its signature whatever its name", async () => {
    const p = path.join(dir, "checkpoint.bin");
    await fsp.copyFile(fixture("zarrita-fixtures/v2/data.zipped_from_within.zarr.zip"), p);
    const s = await openStore(p);
    expect(s).toBeInstanceOf(ZipStore);
    expect(await s.get("/.zgroup")).toBeDefined();
  });

  it("rejects missing paths and files that are not zarr", async () => {
    const missing = path.join(dir, "missing.zarr");
    await expect(openStore(missing)).rejects.toThrow(`${missing}: no such file or directory`);
    const text = path.join(dir, "notes.txt");
    await fsp.writeFile(text, "hello");
    await expect(openStore(text)).rejects.toThrow(`${text}: not a zarr store or .zarr.zip (`);
    const fake = path.join(dir, "fake.zarr.zip");
    await fsp.writeFile(fake, "definitely not a zip archive, just text");
    await expect(openStore(fake)).rejects.toThrow(`${fake}: no zip end-of-central-directory record found`);
    await expect(openStore("s3://bucket/x.zarr")).rejects.toThrow(/unsupported URL scheme/);
  });
});
