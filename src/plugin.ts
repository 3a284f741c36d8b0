/**
 * What a plugin author imports (`tessera-omics/plugin`): the descriptor helper, the operation contract
 * (`OpContext`, `PlotResult`, `Operation`), the `Change` builders and types a computation returns, the
 * data model an operation reads, the manifest format and the registry's JSON Schema helpers (the
 * params validator, the UI rules). An explicit list: internal modules stay internal.
 * @packageDocumentation
 */

export { ParamsError } from "./registry/errors.js";
export {
  checkManifest,
  type Manifest,
  type ManifestFunction,
  type PathKind,
  type UiField,
  WIDGETS,
} from "./registry/manifest.js";
export {
  definePlugin,
  isNamespace,
  isNamespaceName,
  NAMESPACES,
  type Namespace,
  type PluginDescriptor,
  type PluginModule,
  pluginNamespaces,
} from "./registry/plugin.js";
export {
  decideUi,
  firstSentence,
  type SchemaNode,
  type UiDecision,
  type UiSource,
  type UiTags,
} from "./registry/ui-rules.js";
export { ParamsValidator } from "./registry/validate.js";
export type {
  EffectClass,
  OpContext,
  Operation,
  OperationResults,
  PlotResult,
} from "./sdk/jobs/operation.js";
export { Rng } from "./sdk/math/rng.js";
export * from "./sdk/public-model.js";
export { TESSERA_VERSION } from "./sdk/version.js";
