/**
 * Cell colours and legends: the shared module `src/sdk/display/cell-colors.ts` (the server's figure
 * renderer uses the same one), re-exported where the canvases import it.
 */
export * from "../sdk/display/cell-colors.js";
