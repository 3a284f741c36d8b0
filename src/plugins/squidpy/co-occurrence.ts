/**
 * `gr.co_occurrence`: co-occurrence probabilities of clusters across distance thresholds, stored as
 * squidpy 1.8.3 stores them: uns `{cluster_key}_co_occurrence` with `occ` (K × K × (L − 1), float64)
 * and `interval` (the L thresholds, float32).
 */
import type { Change } from "../../sdk/data/change.js";
import type { SpatialData } from "../../sdk/data/spatialdata.js";
import { unsDict } from "../../sdk/data/uns.js";
import type { OpContext } from "../../sdk/jobs/operation.js";
import { coOccurrence, defaultIntervals } from "../../sdk/math/spatial/co-occurrence.js";
import { clusters, needCategories, spatialCoords, tableOf } from "./inputs.js";

/** Thresholds given explicitly: 2 to 1,000 distances. @minItems 2 @maxItems 1000 */
export type Thresholds = number[];

/** Parameters of `co_occurrence`. */
export interface CoOccurrenceParams {
  /**
   * Categorical obs column of the clusters.
   * @widget obs_categorical
   * @maxLength 256
   */
  cluster_key: string;
  /**
   * obsm key of the spatial coordinates (x and y are used).
   * @default "spatial"
   * @widget obsm_key
   * @maxLength 256
   */
  spatial_key?: string;
  /**
   * Distance thresholds: a number of evenly spaced ones (from the smallest distance between the two
   * cells nearest the origin corner to half the distance across), or the thresholds themselves.
   * @default 50
   */
  interval?: number | Thresholds;
}

/** Most cells co_occurrence takes: its time grows with the square of the cells. */
export const CO_OCCURRENCE_MAX_CELLS = 500_000;

/**
 * Co-occurrence probability of clusters (squidpy's `gr.co_occurrence`): for each distance threshold,
 * how much likelier cluster i is near cells of cluster c than overall. Time grows with the square of
 * the cells (every pair), memory with the cells.
 */
export async function co_occurrence(
  sd: SpatialData,
  params: CoOccurrenceParams,
  ctx: OpContext,
): Promise<Change> {
  const t = tableOf(sd, ctx.table);
  const { codes, labels } = clusters(t, ctx.table, params.cluster_key);
  needCategories(labels, params.cluster_key, 1);
  if (codes.some((c) => c < 0)) {
    throw new Error(
      `co_occurrence: obs column "${params.cluster_key}" has missing values; every cell needs a cluster`,
    );
  }
  const { coords, n, dim } = await spatialCoords(t, ctx.table, params.spatial_key ?? "spatial");
  if (n > CO_OCCURRENCE_MAX_CELLS) {
    throw new Error(
      `co_occurrence: ${n} cells; at most ${CO_OCCURRENCE_MAX_CELLS} (every pair of cells is visited)`,
    );
  }
  const x = new Float32Array(n);
  const y = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    x[i] = coords[i * dim] as number;
    y[i] = coords[i * dim + 1] as number;
  }
  const iv = params.interval ?? 50;
  let interval: Float32Array;
  if (typeof iv === "number") {
    if (!Number.isInteger(iv) || iv < 2)
      throw new Error(`interval: expected an integer ≥ 2 or a list of thresholds, got ${iv}`);
    interval = defaultIntervals(x, y, iv);
  } else {
    if (iv.length < 2) throw new Error(`interval: expected at least 2 thresholds, got ${iv.length}`);
    if (iv.some((v) => !Number.isFinite(v))) throw new Error("interval: thresholds must be finite numbers");
    interval = Float32Array.from([...iv].sort((a, b) => a - b));
  }
  ctx.log(
    `co_occurrence: ${n} cells, ${labels.length} clusters, ${interval.length} thresholds on ${ctx.threads} thread(s)`,
  );
  const k = labels.length;
  const occ = await coOccurrence(x, y, codes, k, interval, { threads: ctx.threads, signal: ctx.signal });
  return {
    tables: {
      [ctx.table]: {
        uns: {
          [`${params.cluster_key}_co_occurrence`]: unsDict({
            occ: { kind: "dense", dtype: "float64", shape: [k, k, interval.length - 1], data: occ },
            interval: { kind: "dense", dtype: "float32", shape: [interval.length], data: interval },
          }),
        },
      },
    },
  };
}
