/**
 * The sidecar names every raster level by the path the writer gives it (`s0, s1, …`), whatever the
 * levels were called in memory: an in-memory pyramid (levels `0, 1`) and a trimmed one both point the
 * serverless viewer at arrays that exist in the file.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { trimPyramid } from "../../../../src/sdk/data/select.js";
import { generateDemo } from "../../../../src/sdk/demo/generate.js";
import { openCheckpoint } from "../../../../src/sdk/io/checkpoint/read.js";
import { writeCheckpoint } from "../../../../src/sdk/io/checkpoint/write.js";

const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

async function levelsExist(sd: ReturnType<typeof generateDemo>): Promise<string[]> {
  const dir = await mkdtemp(join(tmpdir(), "tessera-sidecar-"));
  dirs.push(dir);
  const path = join(dir, "x.sdata.zarr.zip");
  await writeCheckpoint(sd, path);
  const cp = await openCheckpoint(path);
  const paths = [...cp.sidecar.images, ...cp.sidecar.labels].flatMap((r) => r.levels.map((l) => l.path));
  for (const p of paths) expect(await cp.store.get(`/${p}/zarr.json`), p).toBeDefined();
  return paths;
}

describe("sidecar level paths", () => {
  const sd = generateDemo({ nCells: 40, nGenes: 30, imageSize: 512, nTranscripts: 10 });
  it("name the written arrays for an in-memory pyramid", async () => {
    expect(sd.images.morphology!.levels[0]!.path).toBe("0");
    expect(await levelsExist(sd)).toEqual([
      "images/morphology/s0",
      "images/morphology/s1",
      "labels/cell_labels/s0",
      "labels/cell_labels/s1",
    ]);
  });

  it("name the written arrays for a trimmed pyramid", async () => {
    const trimmed = { ...sd, images: { morphology: trimPyramid(sd.images.morphology!, 1) } };
    expect((await levelsExist(trimmed)).filter((p) => p.startsWith("images/"))).toEqual([
      "images/morphology/s0",
    ]);
  });
});
