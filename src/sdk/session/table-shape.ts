/**
 * The shape variables a peak-memory estimate is computed from (see sdk/resources/peak-memory.ts), read from a
 * table without loading anything: counts from the matrix's description, bytes from its stored layout.
 * @module
 */
import { matrixInfo } from "../data/lazy.js";
import { matrixBytes } from "../data/sizes.js";
import { nObs, nVars, type Table } from "../data/table.js";
import type { ShapeVariables } from "../resources/peak-memory.js";

/** `n_obs`, `n_vars`, `nnz`, `x_bytes` and `dense_bytes` of `t` (X absent: no stored values, 0 bytes). */
export function tableShape(t: Table): ShapeVariables {
  const n = nObs(t);
  const m = nVars(t);
  const info = t.X ? matrixInfo(t.X) : null;
  const nnz = info ? (info.format === "dense" ? n * m : (info.nnz ?? n * m)) : 0;
  return { n_obs: n, n_vars: m, nnz, x_bytes: t.X ? matrixBytes(t.X) : 0, dense_bytes: n * m * 4 };
}
