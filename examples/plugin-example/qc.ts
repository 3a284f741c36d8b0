/** The example's operations: plain exported functions whose params types become JSON Schemas. */
import {
  type Change,
  dense,
  type OpContext,
  type SpatialData,
  setObs,
  varNames,
} from "tessera-omics/plugin";
import { columnMeans, matrixOf, rowSums } from "./totals.js";

/** Params of {@link flag_low_counts}. */
export interface FlagLowCountsParams {
  /**
   * Cells whose total counts are below this are flagged.
   * @minimum 0
   * @default 10
   */
  min_counts?: number;
  /**
   * The obs column written: 1 for a flagged cell, 0 otherwise.
   * @maxLength 64
   * @default "low_counts"
   */
  key_added?: string;
}

/**
 * Flag the cells whose total counts (the row sums of X) are below `min_counts`, in an obs column.
 * @peakMemory n_obs * 8
 */
export async function flag_low_counts(
  sd: SpatialData,
  params: FlagLowCountsParams,
  ctx: OpContext,
): Promise<Change> {
  const table = sd.tables[ctx.table]!;
  const totals = rowSums(await matrixOf(table, ctx.table));
  const min = params.min_counts ?? 10;
  const flags = new Uint8Array(totals.length);
  for (let i = 0; i < totals.length; i++) flags[i] = totals[i]! < min ? 1 : 0;
  ctx.progress(1, `${flags.reduce((a, b) => a + b, 0)} of ${flags.length} cells flagged`);
  return setObs(ctx.table, params.key_added ?? "low_counts", dense(flags));
}

/** Params of {@link top_genes}. */
export interface TopGenesParams {
  /**
   * How many genes to list.
   * @asType integer
   * @minimum 1
   * @maximum 100
   * @default 5
   */
  n_top?: number;
}

/** One gene and its mean over the cells. */
export interface GeneMean {
  gene: string;
  mean: number;
}

/** The genes with the highest mean over all cells of the active table, highest first. */
export async function top_genes(sd: SpatialData, params: TopGenesParams, ctx: OpContext): Promise<GeneMean[]> {
  const table = sd.tables[ctx.table]!;
  const means = columnMeans(await matrixOf(table, ctx.table));
  const names = varNames(table).values;
  const order = Array.from(means.keys()).sort((a, b) => means[b]! - means[a]! || a - b);
  return order.slice(0, params.n_top ?? 5).map((i) => ({ gene: names[i] ?? String(i), mean: means[i]! }));
}
