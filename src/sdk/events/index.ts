/** Events: the typed event bus with monotonic ids and an in-memory ring. */
export * from "./bus.js";
export * from "./types.js";
