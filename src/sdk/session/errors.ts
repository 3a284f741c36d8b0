/**
 * The SDK's errors, where the session layer first defined them. They live at the SDK's root
 * (`src/sdk/errors.ts`) so every layer (data, io, math) can throw them without importing the session
 * layer; this module re-exports them for code that still imports them from here.
 */
export * from "../errors.js";
