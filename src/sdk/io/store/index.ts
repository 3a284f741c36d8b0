/**
 * Byte stores for zarr: directory (Node), memory, HTTP, zip (file or HTTP), the deterministic zip writer and
 * `openStore`. This barrel is for Node code; browser code should import the browser-safe modules directly
 * (`types`, `keys`, `memory-store`, `http-store`, `range-reader`, `zip-format`, `zip-store`, `inflate`,
 * `open-store`), since `fs-store`, `file-range-reader` and `zip-writer` import Node built-ins.
 * @module
 */
export * from "./file-range-reader.js";
export * from "./fs-store.js";
export * from "./http-store.js";
export * from "./inflate.js";
export * from "./keys.js";
export * from "./memory-store.js";
export * from "./open-store.js";
export * from "./range-reader.js";
export * from "./types.js";
export * from "./zip-format.js";
export * from "./zip-store.js";
export * from "./zip-writer.js";
