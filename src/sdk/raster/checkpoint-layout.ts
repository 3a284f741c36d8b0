/**
 * Saving images in the served layout: a checkpoint's image gets the full 2× pyramid down to
 * `TESSERA_RASTER_BASE_PX` with one-plane `512 × 512` chunks (`bytes` + zstd), so that a session
 * loading the checkpoint serves it from the file with no rebuild, and a serverless viewer reads it
 * over Range. An image whose levels are already that pyramid is copied as it is (`writeRasterElement`
 * re-chunks every level to 512); one lacking levels is rebuilt straight into the staging folder by
 * the streaming pyramid builder (worker threads, one band at a time). Labels keep their levels.
 */
import type { ImageElement, LabelsElement } from "../data/elements.js";
import { writeRasterElement, writeRasterGroup } from "../io/ome/write.js";
import { FsStore } from "../io/store/fs-store.js";
import type { ListableWritableStore } from "../io/store/types.js";
import { buildServedRaster, planServedLevels } from "./build.js";
import { levelScaleTransform } from "./pyramid.js";

/** The coarsest-level target of saved pyramids: `TESSERA_RASTER_BASE_PX`, default 1024. */
export function savedBasePx(env: Readonly<Record<string, string | undefined>> = process.env): number {
  const v = Number(env.TESSERA_RASTER_BASE_PX);
  return Number.isInteger(v) && v >= 1 ? v : 1024;
}

/** Write `el` at `path` of a checkpoint's staging store in the served layout (see the module comment). */
export async function writeServedRasterElement(
  el: ImageElement | LabelsElement,
  store: ListableWritableStore,
  path: string,
  signal?: AbortSignal,
): Promise<void> {
  const opts = signal ? { signal } : {};
  const plan = el.kind === "image" ? planServedLevels(el, savedBasePx()) : [];
  const complete = plan.every((p) => p.source !== null);
  if (el.kind === "labels" || complete || !(store instanceof FsStore)) {
    await writeRasterElement(el, store, path, opts);
    return;
  }
  const built = await buildServedRaster(el, store.filePath(path), {
    basePx: savedBasePx(),
    ...(signal ? { signal } : {}),
  });
  // The group metadata of the levels as built (a 2× scale per level).
  const described: ImageElement = {
    ...el,
    levels: built.levels.map((lv, k) => ({
      path: lv.path,
      shape: lv.shape,
      chunks: lv.chunks,
      dtype: el.dtype,
      levelTransform: levelScaleTransform(el.axes, k),
      source: el.levels[0]!.source,
    })),
  };
  await writeRasterGroup(described, store, path, opts);
}
