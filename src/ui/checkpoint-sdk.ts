/** The SDK code the serverless viewer needs, gathered so the bundler puts it in one lazy chunk. */
export { searchVarNames } from "../sdk/data/var-search.js";
export { fieldBatch } from "../sdk/io/arrow/field-batch.js";
export { openCheckpoint, readFigure, readGeneFromMirror } from "../sdk/io/checkpoint/read.js";
