/** The function registry: manifests of opt-in plugins, params validation, coverage. */
export { type CoverageReport, type CoverageTerm, coverageOf } from "./coverage.js";
export { ParamsError } from "./errors.js";
export { builtinPlugins, locatePlugin, moduleUrl, type PluginLocation } from "./locate.js";
export {
  checkManifest,
  type Manifest,
  type ManifestFunction,
  type PathKind,
  type UiField,
  WIDGETS,
} from "./manifest.js";
export {
  definePlugin,
  isNamespace,
  NAMESPACES,
  type Namespace,
  type PluginDescriptor,
  type PluginModule,
} from "./plugin.js";
export {
  configuredPlugins,
  type FunctionEntry,
  type PublicEntry,
  Registry,
  type RegistryOptions,
} from "./registry.js";
export {
  decideUi,
  firstSentence,
  ruleFor,
  typeWidget,
  type UiDecision,
  type UiSource,
  type UiTags,
} from "./ui-rules.js";
