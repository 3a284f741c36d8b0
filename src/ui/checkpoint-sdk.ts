/** The SDK code the serverless viewer needs, gathered so the bundler puts it in one lazy chunk. */

export { readShapeAnnotations } from "../sdk/data/shape-annotations.js";
export { canvasShapes, queryShapes } from "../sdk/data/shape-index.js";
export { searchVarNames } from "../sdk/data/var-search.js";
export { fieldBatch } from "../sdk/io/arrow/field-batch.js";
export { geoArrowTable } from "../sdk/io/arrow/geoarrow.js";
export { openCheckpoint, readFigure, readGeneFromMirror } from "../sdk/io/checkpoint/read.js";
export { coarsestStats, imageInfoOf, isRgbImage } from "../sdk/raster/info.js";
