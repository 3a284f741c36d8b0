/**
 * `gr.ripley`: Ripley's F, G or L per cluster with simulated Poisson processes for p-values, stored
 * as squidpy 1.8.3 stores it: uns `{cluster_key}_ripley_{mode}` with `{mode}_stat` (long frame: bins,
 * cluster, stats), `sims_stat` (bins, simulations, stats), `bins` and `pvalues` (clusters × bins).
 */
import type { Categorical } from "../../sdk/data/arrays.js";
import type { Change } from "../../sdk/data/change.js";
import { dataFrame } from "../../sdk/data/dataframe.js";
import type { SpatialData } from "../../sdk/data/spatialdata.js";
import { unsDict } from "../../sdk/data/uns.js";
import type { OpContext } from "../../sdk/jobs/operation.js";
import { Rng } from "../../sdk/math/rng.js";
import {
  convexHull,
  fgCurve,
  lCurve,
  nearestDistances,
  poissonInHull,
  type RipleyMode,
  support,
} from "../../sdk/math/spatial/ripley.js";
import { clusters, spatialCoords, tableOf, xy } from "./inputs.js";

/** Parameters of `ripley`. */
export interface RipleyParams {
  /**
   * Categorical obs column of the clusters.
   * @widget obs_categorical
   * @maxLength 256
   */
  cluster_key: string;
  /**
   * `F` (empty space: random points to the cluster), `G` (other cells to the cluster) or `L`
   * (Besag's L of the cluster's pairs).
   * @default "F"
   */
  mode?: RipleyMode;
  /**
   * obsm key of the spatial coordinates (x and y are used).
   * @default "spatial"
   * @widget obsm_key
   * @maxLength 256
   */
  spatial_key?: string;
  /**
   * Distance metric (only euclidean is implemented).
   * @default "euclidean"
   */
  metric?: "euclidean";
  /**
   * Nearest cluster cells per point whose distances enter F and G.
   * @default 2
   * @minimum 1
   * @maximum 100
   * @asType integer
   */
  n_neigh?: number;
  /**
   * Simulated Poisson processes for the p-values.
   * @default 100
   * @minimum 1
   * @maximum 10000
   * @asType integer
   */
  n_simulations?: number;
  /**
   * Points per simulated process.
   * @default 1000
   * @minimum 2
   * @maximum 1000000
   * @asType integer
   */
  n_observations?: number;
  /**
   * Largest support distance; unset: √(hull area / 2).
   * @exclusiveMinimum 0
   */
  max_dist?: number | null;
  /**
   * Support distances (from 0 to max_dist).
   * @default 50
   * @minimum 2
   * @maximum 10000
   * @asType integer
   */
  n_steps?: number;
  /**
   * Seed of the simulations.
   * @asType integer
   */
  seed?: number | null;
}

/** Most cells in one cluster for mode L (its pairs are all visited). */
const L_MAX_CLUSTER = 200_000;

/**
 * Ripley's statistics per cluster (squidpy's `gr.ripley`): F, G or L over a support of distances,
 * with simulated Poisson processes in the convex hull for p-values.
 */
export async function ripley(sd: SpatialData, params: RipleyParams, ctx: OpContext): Promise<Change> {
  const t = tableOf(sd, ctx.table);
  const mode = params.mode ?? "F";
  const { codes, labels } = clusters(t, ctx.table, params.cluster_key);
  if (codes.some((c) => c < 0)) {
    throw new Error(
      `ripley: obs column "${params.cluster_key}" has missing values; every cell needs a cluster`,
    );
  }
  const { coords, n, dim } = await spatialCoords(t, ctx.table, params.spatial_key ?? "spatial");
  const pts = xy(coords, n, dim);
  const hull = convexHull(pts, n);
  const steps = params.n_steps ?? 50;
  const sup = support(params.max_dist ?? Math.sqrt(hull.area / 2), steps);
  const nNeigh = params.n_neigh ?? 2;
  const nSim = params.n_simulations ?? 100;
  const nObs = params.n_observations ?? 1000;
  const rng = new Rng(params.seed ?? 0);
  // Clusters present, in sorted label order (scikit-learn's LabelEncoder).
  const present = [...new Set(codes)].sort((a, b) =>
    (labels[a] as string) < (labels[b] as string) ? -1 : 1,
  );
  const classes = present.map((c) => labels[c] as string);
  const members = present.map((c) => {
    const out: number[] = [];
    for (let i = 0; i < n; i++) if (codes[i] === c) out.push(i);
    return out;
  });
  const gather = (ids: number[]) => {
    const out = new Float64Array(2 * ids.length);
    ids.forEach((g, l) => {
      out[2 * l] = pts[2 * g] as number;
      out[2 * l + 1] = pts[2 * g + 1] as number;
    });
    return out;
  };
  const evalPoints = mode === "F" ? poissonInHull(hull, nObs, rng) : null;
  const obs: Float64Array[] = members.map((ids, c) => {
    ctx.signal.throwIfAborted();
    const own = gather(ids);
    if (mode === "L") {
      if (ids.length > L_MAX_CLUSTER)
        throw new Error(
          `ripley: cluster "${classes[c]}" has ${ids.length} cells; mode L visits all pairs, at most ${L_MAX_CLUSTER}`,
        );
      return lCurve(own, ids.length, sup, n, hull.area);
    }
    const queries =
      mode === "F"
        ? (evalPoints as Float64Array)
        : gather(Array.from({ length: n }, (_, i) => i).filter((i) => codes[i] !== present[c]));
    return fgCurve(nearestDistances(own, ids.length, queries, queries.length / 2, nNeigh), sup);
  });
  const k = classes.length;
  const sims = new Float64Array(nSim * steps);
  const pvalues = new Float64Array(k * steps).fill(1);
  for (let s = 0; s < nSim; s++) {
    ctx.signal.throwIfAborted();
    ctx.progress(s / nSim);
    const sim = poissonInHull(hull, nObs, rng);
    const curve =
      mode === "L"
        ? lCurve(sim, nObs, sup, n, hull.area)
        : fgCurve(
            nearestDistances(
              sim,
              nObs,
              mode === "F" ? (evalPoints as Float64Array) : pts,
              mode === "F" ? nObs : n,
              1,
            ),
            sup,
          );
    sims.set(curve, s * steps);
    for (let c = 0; c < k; c++) {
      for (let b = 0; b < steps; b++)
        if ((curve[b] as number) >= ((obs[c] as Float64Array)[b] as number)) pvalues[c * steps + b]++;
    }
  }
  for (let i = 0; i < pvalues.length; i++) {
    const p = (pvalues[i] as number) / (nSim + 1);
    pvalues[i] = Math.min(p, 1 - p);
  }
  const long = (curves: Float64Array[], cats: Categorical["categories"], name: string) => {
    const m = curves.length;
    const bins = new Float64Array(m * steps);
    const stats = new Float64Array(m * steps);
    const codesOut = new Int32Array(m * steps);
    curves.forEach((cv, c) => {
      bins.set(sup, c * steps);
      stats.set(cv, c * steps);
      codesOut.fill(c, c * steps, (c + 1) * steps);
    });
    return dataFrame(
      Array.from({ length: m * steps }, (_, i) => String(i)),
      {
        bins: { kind: "dense", dtype: "float64", shape: [m * steps], data: bins },
        [name]: { kind: "categorical", codes: codesOut, categories: cats, ordered: false },
        stats: { kind: "dense", dtype: "float64", shape: [m * steps], data: stats },
      },
    );
  };
  const simCurves = Array.from({ length: nSim }, (_, s) => sims.subarray(s * steps, (s + 1) * steps));
  return {
    tables: {
      [ctx.table]: {
        uns: {
          [`${params.cluster_key}_ripley_${mode}`]: unsDict({
            [`${mode}_stat`]: long(obs, { kind: "string", shape: [k], values: classes }, params.cluster_key),
            sims_stat: long(
              simCurves,
              {
                kind: "dense",
                dtype: "int32",
                shape: [nSim],
                data: Int32Array.from({ length: nSim }, (_, i) => i),
              },
              "simulations",
            ),
            bins: { kind: "dense", dtype: "float64", shape: [steps], data: sup },
            pvalues: { kind: "dense", dtype: "float64", shape: [k, steps], data: pvalues },
          }),
        },
      },
    },
  };
}
