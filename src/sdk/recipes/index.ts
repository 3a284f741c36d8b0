/** Recipes: the file format, `$param` substitution, inherited enums, preflight, discovery and export. */
export * from "./discover.js";
export * from "./enums.js";
export * from "./export.js";
export * from "./lookup.js";
export * from "./model.js";
export * from "./preflight.js";
export * from "./produces.js";
export * from "./substitute.js";
