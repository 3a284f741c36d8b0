/**
 * Parameters whose natural bound is the data's shape, checked at submission, before a job takes any memory.
 *
 * A JSON Schema can bound `n_comps` by a number, not by "the cells and genes of the table this will run on", so
 * a request such as `sc.pp.pca {n_comps: 1000000}` or `sc.tl.umap {n_components: 1000000}` validated and then
 * ran until the watchdog stopped it, or took the server past its memory. The names below are the ones scanpy
 * and squidpy give these parameters; any operation (a plugin's too) that uses them gets the check. Parameters
 * scanpy itself lowers to what the data allows (`n_neighbors`, `n_top_genes`) are left to the operation, as
 * there. A computation or plot on a table with no cells is refused too: it has nothing to compute, and some
 * methods would report success on nothing.
 * @module
 */
import { BadRequestError } from "../errors.js";

/** The active table's shape, as the check needs it. */
export interface TableShape {
  readonly name: string;
  readonly nObs: number;
  readonly nVars: number;
}

/** Keys of analyses (scanpy's and squidpy's namespaces): they need cells to work on. */
const ANALYSIS_KEYS = /^(sc|sq)\./;

/** Integer value of a param, or undefined when absent/null/not a number. */
function intParam(params: Record<string, unknown>, name: string): number | undefined {
  const v = params[name];
  return typeof v === "number" && Number.isFinite(v) ? v : undefined;
}

/**
 * Refuse `key`'s params when they ask for more than the table can give (a BadRequestError naming the param, its
 * value and the bound), or when an analysis (`effect` compute or plot) would run on a table with no cells.
 * `table` is null when the session has no table (nothing to check).
 */
export function checkShapeBounds(
  key: string,
  effect: string,
  params: Record<string, unknown>,
  table: TableShape | null,
): void {
  if (!table) return;
  const { nObs, nVars, name } = table;
  if (nObs === 0 && (effect === "compute" || effect === "plot") && ANALYSIS_KEYS.test(key)) {
    throw new BadRequestError(
      `${key}: the table "${name}" has no cells (0 × ${nVars}); there is nothing to analyse`,
    );
  }
  const bounds: [param: string, max: number, why: string][] = [
    ["n_comps", Math.min(nObs, nVars), `min(n_obs, n_vars) = min(${nObs}, ${nVars})`],
    ["n_prin_comps", Math.min(nObs, nVars), `min(n_obs, n_vars) = min(${nObs}, ${nVars})`],
    ["n_pcs", Math.min(nObs, nVars), `min(n_obs, n_vars) = min(${nObs}, ${nVars})`],
    ["n_components", Math.max(1, nObs - 1), `n_obs − 1 = ${nObs - 1}`],
  ];
  for (const [param, max, why] of bounds) {
    const v = intParam(params, param);
    if (v !== undefined && v > max) {
      throw new BadRequestError(
        `${key}: ${param} = ${v} is more than the table "${name}" allows (at most ${why})`,
      );
    }
  }
}
