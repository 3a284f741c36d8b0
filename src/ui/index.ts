/**
 * The reusable canvas package (client.md 19): `<tessera-spatial-canvas>` and
 * `<tessera-embedding-canvas>` (custom elements registered on import), the `DataSource` interface
 * with its two implementations (a live session over HTTP, a checkpoint over HTTP Range), the
 * `CanvasHost` contract and the encoding defaults shared with the server's figure renderer.
 *
 * ```html
 * <script type="module">
 *   import { LiveDataSource, ApiClient } from "/tessera-canvas.js";
 *   const el = document.querySelector("tessera-spatial-canvas");
 *   el.source = new LiveDataSource(new ApiClient(), sessionId);
 *   el.display = { id: "d1", type: "spatial_canvas", encoding: { coords: "obsm:spatial", color_by: "obs:cell_type" }, viewport: { target: [], zoom: 0 } };
 * </script>
 * <tessera-spatial-canvas style="height: 600px"></tessera-spatial-canvas>
 * ```
 */
export * from "../sdk/display/encoding.js";
export { type CanvasHost, LOCAL_HOST } from "./canvas-base.js";
export { type CheckpointDataSource, openCheckpointSource } from "./checkpoint-source.js";
export { cellColors, type Legend } from "./colors.js";
export type {
  DataSource,
  FieldData,
  ImageLoader,
  PolygonData,
  SourceElements,
  SourceFields,
} from "./data-source.js";
export { EmbeddingCanvas } from "./embedding-canvas.js";
export { FieldCache, fieldCache, fieldVersion } from "./field-cache.js";
export { ApiClient, ApiError } from "./http.js";
export { LiveDataSource } from "./live-source.js";
export { SpatialCanvas } from "./spatial-canvas.js";
