/** The SpatialData model: arrays, frames, tables (AnnData), elements, transformations, field paths. */
export * from "./affine.js";
export * from "./arrays.js";
export * from "./change.js";
export * from "./dataframe.js";
export * from "./elements.js";
export * from "./field.js";
export * from "./fieldpath.js";
export * from "./inventory.js";
export * from "./lazy.js";
export * from "./sizes.js";
export * from "./spatialdata.js";
export * from "./table.js";
export * from "./transforms.js";
export * from "./uns.js";
