/**
 * The generic reader names a known format it does not read (loom, R objects, a lone .mtx, a text
 * table, vendor images …) and says what to do, as a DataError (422), before opening anything.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { DataError } from "../../../src/sdk/io/data-error.js";
import { unsupportedFormatMessage } from "../../../src/sdk/io/known-formats.js";
import { openData } from "../../../src/sdk/io/open.js";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "tessera-known-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

it.each([
  ["pbmc.loom", /a loom file, which Tessera does not read: convert it to \.h5ad/],
  ["seurat.rds", /an R object .*export it to \.h5ad/],
  ["obj.h5Seurat", /an R object/],
  ["matrix.mtx.gz", /a Matrix Market file on its own.*io\.read_10x_mtx/],
  ["counts.csv", /a delimited text table/],
  ["slide.svs", /a vendor microscopy image.*OME-TIFF or OME-Zarr/],
])("%s is named as a known but unsupported format", async (name, message) => {
  const path = join(dir, name);
  await writeFile(path, "not read");
  const err = await openData(path).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(DataError);
  expect((err as DataError).status).toBe(422);
  expect((err as Error).message).toMatch(message);
  expect((err as Error).message.startsWith(path)).toBe(true);
});

it("says nothing about names it does not know, and a missing file stays a missing file", async () => {
  expect(unsupportedFormatMessage("/data/sample.h5ad")).toBeNull();
  expect(unsupportedFormatMessage("/data/run.sdata.zarr.zip")).toBeNull();
  await expect(openData(join(dir, "absent.loom"))).rejects.toThrow("no such file or directory");
});
