/** Sessions: the service (session store), sessions, their app-state machine, path containment, configuration. */

export * from "../errors.js";
export { ANNOTATE_FUNCTION, type AnnotateRequest, annotate, displayForRegionSet } from "./annotate.js";
export * from "./app-state-machine.js";
export { BUILTIN_LIBRARY, READ_DATA_ENTRY, type ReadDataParams, read_data } from "./builtin-readers.js";
export { type Env, PACKAGE_RECIPES_DIR, platformEnabled, readConfig, type ServiceConfig } from "./config.js";
export { checkCreateSessionRequest, parseCreateSessionRequest } from "./create-request.js";
export {
  type BrowseEntry,
  type BrowseResult,
  browseFolder,
  type DatasetEntry,
  type DiscoveryLimits,
  type EntryKind,
  findDatasets,
} from "./datasets.js";
export { defaultActiveTable, describeFields } from "./fields.js";
export { SessionFunctions } from "./functions.js";
export { containParams, containPath, isPathParam, PATH_PARAM_NAMES, type PathSchema } from "./paths.js";
export {
  type Heartbeat,
  Presence,
  type PresenceOptions,
  type PresenceView,
  type SessionPresence,
} from "./presence.js";
export { requireReady } from "./readiness.js";
export { prefixFromName, resolveSaveTarget, type SaveTarget, validPrefix } from "./save.js";
export { Service, type ServiceOptions } from "./service.js";
export { type RecipeRun, Session, type SessionDeps, type SessionInit } from "./session.js";
export { listShapeAnnotations, queueShapeEdit, type ShapeEditTicket } from "./shape-annotation-jobs.js";
export {
  childAppState,
  childName,
  type PreparedSubset,
  prepareSubset,
  type SubsetRequest,
} from "./subset.js";
export type * from "./types.js";
export * from "./versions.js";
