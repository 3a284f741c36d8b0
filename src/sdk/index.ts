/**
 * Tessera SDK: the public API. Everything a script or notebook imports comes from here.
 * @packageDocumentation
 */
export * from "./data/index.js";
