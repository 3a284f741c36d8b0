/**
 * Tessera SDK: the public API of the package's main entry (`import … from "tessera-omics"`).
 * Everything a script or notebook needs: the {@link Tessera} facade, the readers and writers, the
 * data model, recipes, and the service and session underneath. Each name is listed on purpose: a
 * module's other exports stay internal. Plugin authors import from `tessera-omics/plugin`, servers
 * from `tessera-omics/server`.
 * @packageDocumentation
 */

export { ParamsError } from "../registry/errors.js";
// Types the API refers to (options, results, records), exported so that a script can name them. The
// service's internal machinery (pools, hubs, stores, buses) stays internal; typedoc.json lists it.
export type { FunctionEntry, PublicEntry } from "../registry/registry.js";
export { ELEMENT_FAMILIES, TABLE_SLOTS } from "./data/fieldpath.js";
export type {
  AxisArrayEntry,
  AxisArrayKind,
  ColumnEntry,
  LayerEntry,
  LevelEntry,
  MatrixKind,
  PointsEntry,
  RasterEntry,
  ShapesEntry,
  TableEntry,
} from "./data/inventory.js";
export type { PolygonRing } from "./data/polygon-select.js";
export { ELEMENT_KINDS } from "./data/spatialdata.js";
export { KEYED_SLOTS } from "./data/table.js";
// The facade.
export { type DemoDataset, ensureDemoDataset } from "./demo/ensure.js";
export { type DemoOptions, generateDemo } from "./demo/generate.js";
export type {
  EventDescriptor,
  EventDisplaySpec,
  EventMap,
  EventName,
  EventPresenceView,
  EventSessionSummary,
  EventUploadRow,
  ResourceGlobal,
  TesseraEvent,
} from "./events/types.js";
export type { DecodeResult } from "./io/anndata/decode.js";
export type { ReadH5adOptions } from "./io/anndata/read-h5ad.js";
export { readH5ad } from "./io/anndata/read-h5ad.js";
export { readAnnDataZarr } from "./io/anndata/read-zarr.js";
export type { WriteAnnDataOptions } from "./io/anndata/write.js";
export { writeAnnDataZarr } from "./io/anndata/write.js";
export type { ZarrTreeOptions } from "./io/anndata/zarr-node.js";
export type {
  AppState,
  CategoryColors,
  CategoryColorsByField,
  ChannelSetting,
  ColorText,
  DisplaySpec,
  EmbeddingDisplay,
  EmbeddingEncoding,
  HistEntry,
  HistStatus,
  PlotEntry,
  PlotStatus,
  SpatialDisplay,
  SpatialEncoding,
  ViewTarget,
} from "./io/checkpoint/app-state.js";
export { type Checkpoint, openCheckpoint, readFigure, readGeneFromMirror } from "./io/checkpoint/read.js";
export type {
  Affine6,
  SidecarFigure,
  SidecarLevel,
  SidecarObsm,
  SidecarRaster,
  SidecarTable,
  SidecarVector,
} from "./io/checkpoint/sidecar.js";
export { SIDECAR_VERSION, type ViewerSidecar } from "./io/checkpoint/sidecar.js";
export {
  type FigureFile,
  type WriteCheckpointOptions,
  writeCheckpoint,
  writeCheckpointNamed,
} from "./io/checkpoint/write.js";
// Reading and writing data.
export { type OpenResult, openData } from "./io/open.js";
export type { ReadResult, ReadSpatialDataOptions } from "./io/spatialdata/read.js";
export { readSpatialData } from "./io/spatialdata/read.js";
export type { WriteSpatialDataOptions } from "./io/spatialdata/write.js";
export { writeSpatialData } from "./io/spatialdata/write.js";
export type { OpenStoreOptions } from "./io/store/open-store.js";
export { openStore } from "./io/store/open-store.js";
export type { HttpRequestInfo } from "./io/store/range-reader.js";
export type { ListableWritableStore, ReadableStore, StoreEntry, WritableStore } from "./io/store/types.js";
export type { WrittenZip } from "./io/store/zip-writer.js";
export type { Indexable, RngState } from "./math/rng.js";
export { Rng } from "./math/rng.js";
// The data model (also exported by `tessera-omics/plugin`).
export * from "./public-model.js";
export type { RenderedImage, RenderOptions } from "./raster/hub.js";
export type { ImageInfo } from "./raster/info.js";
// Recipes.
export {
  type DiscoveredRecipe,
  discoverRecipes,
  RecipeCatalog,
  type RecipeProblem,
} from "./recipes/discover.js";
export { type ExportRecipeOptions, exportRecipe } from "./recipes/export.js";
export type { FunctionInfo, FunctionLookup } from "./recipes/lookup.js";
export {
  catalogEntry,
  type ParamRef,
  parseRecipe,
  type Recipe,
  type RecipeCatalogEntry,
  type RecipeMeta,
  type RecipeParam,
  type RecipeParamSchema,
} from "./recipes/model.js";
export { type PreflightResult, preflight } from "./recipes/preflight.js";
export { type RecipeValues, resolveValues, substituteSteps } from "./recipes/substitute.js";
export type { Descriptor } from "./session/app-state-machine.js";
// The service and its sessions (what the facade wraps; the HTTP server and the CLI are built on them).
export { type Env, readConfig, type ServiceConfig } from "./session/config.js";
// Errors an SDK call rejects with (each carries the HTTP status an adapter answers with).
export {
  BadRequestError,
  ForbiddenError,
  LimitError,
  LockConflictError,
  LockedError,
  NotFoundError,
  PathError,
  StateError,
  TesseraError,
} from "./session/errors.js";
export type { SaveTicket } from "./session/save.js";
export { Service, type ServiceOptions } from "./session/service.js";
export { type RecipeRun, Session, type SessionDeps, type SessionInit } from "./session/session.js";
export type { SubsetRequest } from "./session/subset.js";
export type {
  CreateSessionRequest,
  JobAnswer,
  JobKind,
  JobOutcome,
  JobStatus,
  JobTicket,
  QueueItem,
  SaveOptions,
  SessionFields,
  SessionSource,
  SessionState,
  SessionStatus,
  SessionSummary,
} from "./session/types.js";
export type { DataVersions } from "./session/versions.js";
export type { RecipeRunListeners } from "./tessera.js";
export {
  descriptor,
  JobFailedError,
  splitKey,
  Tessera,
  type TesseraOptions,
  TesseraSession,
} from "./tessera.js";
export { TESSERA_VERSION } from "./version.js";
