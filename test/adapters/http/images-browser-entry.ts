/**
 * Browser bundle entry for the image raster test: zarrita's FetchStore in the page reads one chunk
 * of an image's served store through the raw raster route, as the client's image layer does, and
 * reports what it read in the page body. The raster base URL and group path come in the page's hash.
 */
import { FetchStore } from "@zarrita/storage";
import * as zarr from "zarrita";

(async () => {
  try {
    const { base, group } = JSON.parse(decodeURIComponent(location.hash.slice(1))) as {
      base: string;
      group: string;
    };
    const store = new FetchStore(new URL(base, location.href).href);
    const root = zarr.root(store);
    const meta = await zarr.open.v3(root.resolve(group), { kind: "group" });
    const arr = await zarr.open.v3(root.resolve(`${group}/s0`), { kind: "array" });
    const chunk = await arr.getChunk([1, 0, 0]);
    const out = {
      levels: (meta.attrs.ome as { multiscales: { datasets: unknown[] }[] }).multiscales[0]!.datasets.length,
      shape: arr.shape,
      chunk_shape: chunk.shape,
      data: Array.from(chunk.data as ArrayLike<number>),
    };
    document.body.textContent = `RESULT ${JSON.stringify(out)}`;
  } catch (e) {
    document.body.textContent = `ERROR ${String((e as Error).stack ?? e)}`;
  }
})();
