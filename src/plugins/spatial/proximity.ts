/**
 * `custom.proximity_test`: are cells of type B nearer to (or farther from) cells of type A than
 * chance? The observed statistic is the median (or mean) over A-cells of the distance to the nearest
 * B-cell; the null comes from permuting the labels over the same positions.
 */
import type { Change } from "../../sdk/data/change.js";
import type { SpatialData } from "../../sdk/data/spatialdata.js";
import { type UnsValue, unsDict } from "../../sdk/data/uns.js";
import type { OpContext } from "../../sdk/jobs/operation.js";
import { nearestByLabel } from "../../sdk/math/nearest-label.js";
import { Rng } from "../../sdk/math/rng.js";
import { selectKth } from "../../sdk/math/select.js";
import { matrixFrame } from "./frames.js";
import { activeTable, labelsOf, spatialCoordinates } from "./inputs.js";
import { neighbourLists } from "./neighbours.js";

/** Params of `proximity_test`. */
export interface ProximityTestParams {
  /**
   * Categorical obs column of the cell labels (cell types, clusters).
   * @widget obs_categorical
   * @maxLength 256
   */
  cluster_key: string;
  /**
   * Label permutations of the null distribution.
   * @default 500
   * @asType integer
   * @minimum 1
   * @maximum 100000
   */
  n_perm?: number;
  /**
   * Summary of the nearest-neighbour distances of a label pair.
   * @default "median"
   */
  stat?: "median" | "mean";
  /**
   * obsm key of the coordinates.
   * @default "spatial"
   * @maxLength 256
   */
  spatial_key?: string;
  /**
   * Seed of the permutations.
   * @default 0
   * @asType integer
   */
  seed?: number;
  /**
   * uns key of the result; default `<cluster_key>_proximity`.
   * @maxLength 256
   */
  key_added?: string | null;
}

/** Neighbours listed per cell before falling back to an exact per-label search. */
const LIST_K = 64;

/** Median of `a[0…m)` (reorders it; numpy's mean of the two middle values when m is even), NaN when empty. */
function median(a: Float64Array, m: number): number {
  if (m === 0) return Number.NaN;
  const hi = selectKth(a, 0, m - 1, m >> 1);
  if (m % 2) return hi;
  // The lower middle is the largest of the part left of m/2 after the selection.
  let lo = Number.NEGATIVE_INFINITY;
  for (let i = 0; i < m >> 1; i++) if (a[i]! > lo) lo = a[i]!;
  return (lo + hi) / 2;
}

/**
 * The L × L statistic for one labelling: row a, column b = median (or mean) over a-cells of the
 * distance to their nearest b-cell (itself excluded); NaN when a has no cell or b no other cell.
 */
function pairStatistic(
  near: Float64Array,
  nLabels: number,
  members: Int32Array[],
  useMedian: boolean,
  scratch: Float64Array,
  out: Float64Array,
): void {
  for (let a = 0; a < nLabels; a++) {
    const cells = members[a]!;
    for (let b = 0; b < nLabels; b++) {
      let m = 0;
      let sum = 0;
      for (const i of cells) {
        const d = near[i * nLabels + b]!;
        if (d === Number.POSITIVE_INFINITY) continue;
        scratch[m++] = d;
        sum += d;
      }
      out[a * nLabels + b] = m === 0 ? Number.NaN : useMedian ? median(scratch, m) : sum / m;
    }
  }
}

/** Cells of each label (ascending). */
function membersOf(labels: Int32Array, nLabels: number): Int32Array[] {
  const count = new Int32Array(nLabels);
  for (const l of labels) if (l >= 0) count[l]!++;
  const out = Array.from({ length: nLabels }, (_, b) => new Int32Array(count[b]!));
  const fill = new Int32Array(nLabels);
  labels.forEach((l, i) => {
    if (l >= 0) out[l]![fill[l]!++] = i;
  });
  return out;
}

/**
 * Pairwise proximity of labels against a label-permutation null, as z-scores.
 *
 * For labels a, b: the distance from each a-cell to its nearest b-cell (another cell when a = b),
 * summarised by `stat` over the a-cells. The labels of the labelled cells are shuffled `n_perm`
 * times over the same positions (cells without a label stay out), giving each pair's null mean and
 * standard deviation (ddof 0, as squidpy's permutation z-scores); z = (observed − mean) / sd, so a
 * negative z means b lies nearer to a than chance. The p-value is two-sided,
 * (1 + #{|null − mean| ≥ |observed − mean|}) / (n_perm + 1).
 *
 * Writes uns `<key_added>`: frames `observed`, `null_mean`, `null_std`, `zscore`, `pvalue` (rows: the
 * from-label a, columns: the to-label b) and `params`.
 * @peakMemory n_obs * 8 * 48 + n_obs * 8 * 20
 */
export async function proximity_test(
  sd: SpatialData,
  params: ProximityTestParams,
  ctx: OpContext,
): Promise<Change> {
  const op = "proximity_test";
  const t = activeTable(sd, ctx.table);
  const lab = labelsOf(t, ctx.table, params.cluster_key);
  const coords = await spatialCoordinates(t, ctx.table, params.spatial_key ?? "spatial");
  const nPerm = params.n_perm ?? 500;
  const useMedian = (params.stat ?? "median") === "median";
  if (params.stat !== undefined && params.stat !== "median" && params.stat !== "mean")
    throw new Error(`${op}: stat must be "median" or "mean", got "${params.stat}"`);
  const seed = params.seed ?? 0;
  const key = params.key_added ?? `${params.cluster_key}_proximity`;
  const L = lab.names.length;
  const n = coords.n;
  const labelled = lab.codes.reduce((s, c) => s + (c >= 0 ? 1 : 0), 0);
  if (labelled < 2) throw new Error(`${op}: obs "${params.cluster_key}" labels fewer than two cells`);
  const lists = neighbourLists(coords, LIST_K);
  const near = new Float64Array(n * L);
  const scratch = new Float64Array(n);
  const observed = new Float64Array(L * L);
  const labels = Int32Array.from(lab.codes);
  nearestByLabel(coords.xy, n, coords.dim, labels, L, lists, near);
  pairStatistic(near, L, membersOf(labels, L), useMedian, scratch, observed);

  // The null: labels shuffled among the labelled cells only.
  const slots = Int32Array.from(Array.from(lab.codes).flatMap((c, i) => (c >= 0 ? [i] : [])));
  const pool = Int32Array.from(slots, (i) => lab.codes[i]!);
  const rng = new Rng(seed);
  const sum = new Float64Array(L * L);
  const sumSq = new Float64Array(L * L);
  const nulls = new Float64Array(nPerm * L * L);
  const perm = new Float64Array(L * L);
  const permLabels = new Int32Array(n).fill(-1);
  for (let p = 0; p < nPerm; p++) {
    if (p % 8 === 0) {
      ctx.signal.throwIfAborted();
      ctx.progress(p / nPerm, "permutations");
    }
    rng.shuffle(pool);
    for (let s = 0; s < slots.length; s++) permLabels[slots[s]!] = pool[s]!;
    nearestByLabel(coords.xy, n, coords.dim, permLabels, L, lists, near);
    pairStatistic(near, L, membersOf(permLabels, L), useMedian, scratch, perm);
    for (let e = 0; e < L * L; e++) {
      const v = perm[e]!;
      nulls[p * L * L + e] = v;
      sum[e]! += v;
      sumSq[e]! += v * v;
    }
  }
  const mean = new Float64Array(L * L);
  const std = new Float64Array(L * L);
  const z = new Float64Array(L * L);
  const pv = new Float64Array(L * L);
  for (let e = 0; e < L * L; e++) {
    mean[e] = sum[e]! / nPerm;
    std[e] = Math.sqrt(Math.max(0, sumSq[e]! / nPerm - mean[e]! * mean[e]!));
    const dev = Math.abs(observed[e]! - mean[e]!);
    z[e] = (observed[e]! - mean[e]!) / std[e]!;
    let extreme = 0;
    for (let p = 0; p < nPerm; p++) if (Math.abs(nulls[p * L * L + e]! - mean[e]!) >= dev) extreme++;
    pv[e] = Number.isNaN(observed[e]!) ? Number.NaN : (1 + extreme) / (nPerm + 1);
  }
  const names = lab.names;
  const entries: Record<string, UnsValue> = {
    observed: matrixFrame(observed, names, names),
    null_mean: matrixFrame(mean, names, names),
    null_std: matrixFrame(std, names, names),
    zscore: matrixFrame(z, names, names),
    pvalue: matrixFrame(pv, names, names),
    params: unsDict({
      cluster_key: params.cluster_key,
      n_perm: nPerm,
      stat: useMedian ? "median" : "mean",
      seed,
    }),
  };
  ctx.progress(1);
  ctx.log(`${op}: ${L} labels over ${labelled} cells, ${nPerm} permutations; added uns["${key}"]`);
  return { tables: { [ctx.table]: { uns: { [key]: unsDict(entries) } } } };
}
