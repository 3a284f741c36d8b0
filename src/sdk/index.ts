/**
 * Tessera SDK: the public API. Everything a script or notebook imports comes from here.
 * @packageDocumentation
 */
export * from "./data/index.js";
export { type DemoDataset, ensureDemoDataset } from "./demo/ensure.js";
export { type DemoOptions, generateDemo } from "./demo/generate.js";
export { readH5ad } from "./io/anndata/read-h5ad.js";
export { readAnnDataZarr } from "./io/anndata/read-zarr.js";
export { writeAnnDataZarr } from "./io/anndata/write.js";
export * from "./io/checkpoint/app-state.js";
export { type Checkpoint, openCheckpoint, readFigure, readGeneFromMirror } from "./io/checkpoint/read.js";
export { SIDECAR_VERSION, type ViewerSidecar } from "./io/checkpoint/sidecar.js";
export {
  type FigureFile,
  type WriteCheckpointOptions,
  writeCheckpoint,
  writeCheckpointNamed,
} from "./io/checkpoint/write.js";
export { type OpenResult, openData } from "./io/open.js";
export { readSpatialData } from "./io/spatialdata/read.js";
export { writeSpatialData } from "./io/spatialdata/write.js";
export { openStore } from "./io/store/open-store.js";
export { Rng } from "./math/rng.js";
export * from "./recipes/index.js";
export * from "./session/index.js";
export {
  descriptor,
  JobFailedError,
  splitKey,
  Tessera,
  type TesseraOptions,
  TesseraSession,
} from "./tessera.js";
export { TESSERA_VERSION } from "./version.js";
