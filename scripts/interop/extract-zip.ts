/**
 * Unzip a `.zarr.zip` into a folder with Tessera's own zip reader (`spatialdata.read_zarr` reads folders, not
 * zips), so the interop check needs no `unzip` binary.
 */
import { mkdir, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { FileRangeReader } from "../../src/sdk/io/store/file-range-reader.js";
import { keySegments } from "../../src/sdk/io/store/keys.js";
import { ZipStore } from "../../src/sdk/io/store/zip-store.js";

/** Write every entry of the zip at `zipPath` under `folder` (entry names checked: none leaves the folder). */
export async function extractZip(zipPath: string, folder: string): Promise<void> {
  const zip = await ZipStore.open(new FileRangeReader(zipPath));
  for (const { key } of await zip.list()) {
    const target = join(folder, ...keySegments(zipPath, key));
    const bytes = await zip.get(`/${key}`);
    if (!bytes) throw new Error(`${zipPath}: entry ${key} vanished while extracting`);
    await mkdir(dirname(target), { recursive: true });
    await writeFile(target, bytes);
  }
}
