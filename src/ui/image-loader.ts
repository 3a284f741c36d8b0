/**
 * Reading an image's served raster store (zarr v3, one plane × T × T chunks, 2× pyramid) with
 * zarrita, chunk by chunk: over the raw raster route for a live session, or from any zarrita store
 * (a checkpoint's zip) for the serverless viewer.
 */
import type { Readable } from "@zarrita/storage";
import * as zarr from "zarrita";
import type { ImageInfo, ImageLoader, TilePixels } from "./data-source.js";

/** An `ImageLoader` over a zarrita store holding the served layout at `info.zarr_group_path`. */
export async function zarrImageLoader(
  store: Readable,
  info: ImageInfo,
  groupPath?: string,
): Promise<ImageLoader> {
  const root = zarr.root(store);
  const group = groupPath ?? info.zarr_group_path;
  const meta = await zarr.open.v3(root.resolve(group), { kind: "group" });
  const ome = (meta.attrs.ome ?? meta.attrs) as { multiscales?: { datasets: { path: string }[] }[] };
  const paths = ome.multiscales?.[0]?.datasets.map((d) => d.path) ?? info.levels.map((l) => `s${l.level}`);
  const arrays = new Map<number, Promise<zarr.Array<zarr.DataType, Readable>>>();
  const open = (level: number) => {
    let a = arrays.get(level);
    if (!a) {
      a = zarr.open.v3(root.resolve(`${group}/${paths[level]}`), { kind: "array" });
      arrays.set(level, a);
    }
    return a;
  };
  const axes = info.axes.map((a) => a.toLowerCase());
  return {
    info,
    async getTile(level, c, row, col): Promise<TilePixels | null> {
      const arr = await open(level);
      const coords = axes.map((a) => (a === "c" ? c : a === "y" ? row : a === "x" ? col : 0));
      const chunk = await arr.getChunk(coords);
      const shape = chunk.shape;
      const height = shape[shape.length - 2]!;
      const width = shape[shape.length - 1]!;
      return { data: chunk.data as ArrayLike<number>, width, height };
    },
  };
}
