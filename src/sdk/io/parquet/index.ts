/** Parquet on zarrita-compatible stores: footer-first range reads, columns into model arrays. */
export * from "./columns.js";
export * from "./dataset.js";
export * from "./dictionary.js";
export * from "./schema.js";
export * from "./source.js";
