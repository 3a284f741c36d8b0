/**
 * The bounds on what a client may send, where the session layer first defined them. They live at the
 * SDK's root (`src/sdk/input-limits.ts`) so the data layer can use them without importing the session
 * layer; this module re-exports them for code that still imports them from here.
 */
export * from "../input-limits.js";
