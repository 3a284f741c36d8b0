/**
 * Tumour-margin style analyses: `custom.region_boundary` derives a region from cell-type labels (the
 * cells whose neighbourhood is rich enough in the chosen types) and the signed distance of every cell
 * to the region's margin; `custom.infiltration_profile` bins that distance and counts the cell types
 * in each bin — how far each type infiltrates across the margin.
 */
import { allocArray, dense } from "../../sdk/data/arrays.js";
import type { Change } from "../../sdk/data/change.js";
import type { SpatialData } from "../../sdk/data/spatialdata.js";
import { nObs } from "../../sdk/data/table.js";
import { type UnsValue, unsDict } from "../../sdk/data/uns.js";
import type { OpContext } from "../../sdk/jobs/operation.js";
import { nearestByLabel } from "../../sdk/math/nearest-label.js";
import { obsColumn, stringArray } from "../tessera/tables.js";
import { float64Column, matrixFrame } from "./frames.js";
import { activeTable, categoricalOf, labelsOf, spatialCoordinates } from "./inputs.js";
import { neighbourLists } from "./neighbours.js";

/** A category name. @maxLength 256 */
export type CategoryName = string;

/** Params of `region_boundary`. */
export interface RegionBoundaryParams {
  /**
   * Categorical obs column of the cell types.
   * @widget obs_categorical
   * @maxLength 256
   */
  cell_type_key: string;
  /**
   * The types that make the region (for example the tumour cell types).
   * @minItems 1
   * @maxItems 10000
   */
  region_types: CategoryName[];
  /**
   * `mask`: a cell is inside when the fraction of region types among its window reaches
   * `threshold`; `soft`: the same with each window cell weighted by a Gaussian of its distance.
   * @default "mask"
   */
  method?: "mask" | "soft";
  /**
   * Fraction of region types (weighted, for `soft`) from which a cell is inside.
   * @default 0.25
   * @minimum 0
   * @maximum 1
   */
  threshold?: number;
  /**
   * Cells per window: the cell and its n_neighbors − 1 nearest.
   * @default 15
   * @asType integer
   * @minimum 1
   * @maximum 1000
   */
  n_neighbors?: number;
  /**
   * Gaussian bandwidth σ of `soft`, in coordinate units; default half the median distance to the
   * window's farthest cell.
   * @exclusiveMinimum 0
   */
  bandwidth?: number | null;
  /**
   * obsm key of the coordinates.
   * @default "spatial"
   * @maxLength 256
   */
  spatial_key?: string;
  /**
   * obs key of the inside/outside labels; the distance goes to `<key_added>_distance` and the score
   * to `<key_added>_score`.
   * @default "region_boundary"
   * @maxLength 256
   */
  key_added?: string;
}

/**
 * A region from cell-type labels, and each cell's signed distance to its margin.
 *
 * Each cell's window is itself and its `n_neighbors` − 1 nearest cells; its score is the fraction of
 * `region_types` in the window (`mask`), or that fraction with each window cell weighted by
 * exp(−d²/2σ²) (`soft`, the cell itself weight 1). Cells scoring at least `threshold` are inside. The
 * signed distance is the distance to the nearest cell on the other side of the margin: positive
 * inside the region, negative outside.
 *
 * Writes obs `<key_added>` (categorical `inside`/`outside`), `<key_added>_distance` and
 * `<key_added>_score` (float64), and uns `<key_added>/params`.
 */
export async function region_boundary(
  sd: SpatialData,
  params: RegionBoundaryParams,
  ctx: OpContext,
): Promise<Change> {
  const op = "region_boundary";
  const t = activeTable(sd, ctx.table);
  const types = labelsOf(t, ctx.table, params.cell_type_key);
  const unknown = params.region_types.filter((r) => !types.names.includes(r));
  if (unknown.length)
    throw new Error(
      `${op}: obs "${params.cell_type_key}" has no categor${unknown.length > 1 ? "ies" : "y"} ${unknown.map((u) => `"${u}"`).join(", ")}`,
    );
  const method = params.method ?? "mask";
  if (method !== "mask" && method !== "soft")
    throw new Error(`${op}: method must be "mask" or "soft", got "${method}"`);
  const threshold = params.threshold ?? 0.25;
  const k = params.n_neighbors ?? 15;
  const key = params.key_added ?? "region_boundary";
  const coords = await spatialCoordinates(t, ctx.table, params.spatial_key ?? "spatial");
  const n = coords.n;
  const inRegion = new Uint8Array(types.names.length);
  for (const r of params.region_types) inRegion[types.names.indexOf(r)] = 1;
  const isRegion = (i: number) => (types.codes[i]! >= 0 && inRegion[types.codes[i]!] ? 1 : 0);
  const lists = neighbourLists(coords, Math.max(1, k - 1));
  const kk = lists.k;
  let sigma = params.bandwidth ?? 0;
  if (method === "soft" && !(sigma > 0)) {
    const far = Float64Array.from({ length: n }, (_, i) => lists.distances[i * kk + kk - 1]!).filter(
      Number.isFinite,
    );
    far.sort();
    sigma = far.length ? far[far.length >> 1]! / 2 : 1;
    if (!(sigma > 0)) sigma = 1;
  }
  const score = allocArray("float64", n) as Float64Array;
  const side = new Int32Array(n);
  let inside = 0;
  for (let i = 0; i < n; i++) {
    let w = 1;
    let hit = isRegion(i);
    const window = Math.min(kk, k - 1);
    for (let j = 0; j < window; j++) {
      const nb = lists.indices[i * kk + j]!;
      if (nb < 0) break;
      const d = lists.distances[i * kk + j]!;
      const wj = method === "soft" ? Math.exp((-d * d) / (2 * sigma * sigma)) : 1;
      w += wj;
      hit += wj * isRegion(nb);
    }
    score[i] = hit / w;
    side[i] = score[i]! >= threshold ? 0 : 1;
    if (side[i] === 0) inside++;
  }
  if (inside === 0 || inside === n)
    throw new Error(
      `${op}: ${inside === 0 ? "no cell" : "every cell"} is inside the region at threshold ${threshold}; there is no margin`,
    );
  const near = nearestByLabel(coords.xy, n, coords.dim, side, 2, neighbourLists(coords, 32));
  const distance = allocArray("float64", n) as Float64Array;
  for (let i = 0; i < n; i++) distance[i] = side[i] === 0 ? near[i * 2 + 1]! : -near[i * 2]!;
  ctx.log(`${op}: ${inside} of ${n} cells inside (${method}, threshold ${threshold}); added obs["${key}"]`);
  return {
    tables: {
      [ctx.table]: {
        obs: {
          [key]: categoricalOf(side, ["inside", "outside"]),
          [`${key}_distance`]: dense(distance),
          [`${key}_score`]: dense(score),
        },
        uns: {
          [key]: unsDict({
            params: unsDict({
              cell_type_key: params.cell_type_key,
              region_types: stringArray(params.region_types),
              method,
              threshold,
              n_neighbors: k,
              bandwidth: method === "soft" ? sigma : null,
            }),
          }),
        },
      },
    },
  };
}

/** Params of `infiltration_profile`. */
export interface InfiltrationProfileParams {
  /**
   * Numeric obs column of the signed distance to the margin (from `region_boundary`).
   * @widget obs_key
   * @default "region_boundary_distance"
   * @maxLength 256
   */
  distance_key?: string;
  /**
   * Categorical obs column of the cell types counted in each bin.
   * @widget obs_categorical
   * @maxLength 256
   */
  cell_type_key: string;
  /**
   * Number of equal-width distance bins.
   * @default 20
   * @asType integer
   * @minimum 1
   * @maximum 10000
   */
  bins?: number;
  /**
   * `fraction`: each type's share of the cells in a bin; `count`: the number of cells.
   * @default "fraction"
   */
  value?: "fraction" | "count";
  /**
   * Distance range [min, max] binned (cells outside it are left out); default the data's range.
   * @minItems 2
   * @maxItems 2
   */
  range?: number[] | null;
  /**
   * uns key of the result.
   * @default "infiltration_profile"
   * @maxLength 256
   */
  key_added?: string;
}

/**
 * An infiltration curve: the signed distance to the margin cut into `bins` equal-width bins, and per
 * bin each cell type's share of the cells (or count).
 *
 * Writes uns `<key_added>`: `profile` (bins × cell types; a bin without cells has NaN fractions),
 * `bin_edges` (bins + 1), `bin_centers`, `n_cells` per bin, and `params`. The last bin includes its
 * upper edge (numpy's `histogram` rule); cells with a missing type or a non-finite distance are
 * left out.
 */
export async function infiltration_profile(
  sd: SpatialData,
  params: InfiltrationProfileParams,
  ctx: OpContext,
): Promise<Change> {
  const op = "infiltration_profile";
  const t = activeTable(sd, ctx.table);
  const distanceKey = params.distance_key ?? "region_boundary_distance";
  const col = obsColumn(t, ctx.table, distanceKey);
  if (col.kind !== "dense") throw new Error(`${op}: obs "${distanceKey}" is ${col.kind}, not numeric`);
  const types = labelsOf(t, ctx.table, params.cell_type_key);
  const bins = params.bins ?? 20;
  const value = params.value ?? "fraction";
  const key = params.key_added ?? "infiltration_profile";
  const n = nObs(t);
  const dist = col.data as unknown as ArrayLike<number>;
  let lo = Number.POSITIVE_INFINITY;
  let hi = Number.NEGATIVE_INFINITY;
  if (params.range) {
    if (params.range.length !== 2 || !(params.range[0]! < params.range[1]!))
      throw new Error(`${op}: range must be [min, max] with min < max`);
    [lo, hi] = params.range as [number, number];
  } else {
    for (let i = 0; i < n; i++) {
      const d = Number(dist[i]);
      if (!Number.isFinite(d) || types.codes[i]! < 0) continue;
      if (d < lo) lo = d;
      if (d > hi) hi = d;
    }
    if (!(hi >= lo)) throw new Error(`${op}: no cell has both a finite "${distanceKey}" and a type`);
    if (hi === lo) {
      lo -= 0.5;
      hi += 0.5;
    }
  }
  const L = types.names.length;
  const counts = new Float64Array(bins * L);
  const total = new Float64Array(bins);
  const width = (hi - lo) / bins;
  for (let i = 0; i < n; i++) {
    const d = Number(dist[i]);
    const c = types.codes[i]!;
    if (!Number.isFinite(d) || c < 0 || d < lo || d > hi) continue;
    const b = Math.min(bins - 1, Math.floor((d - lo) / width));
    counts[b * L + c]! += 1;
    total[b]! += 1;
  }
  const profile = value === "count" ? counts : counts.map((v, e) => v / total[Math.floor(e / L)]!);
  const edges = Float64Array.from({ length: bins + 1 }, (_, b) => (b === bins ? hi : lo + b * width));
  const centers = Float64Array.from({ length: bins }, (_, b) => (edges[b]! + edges[b + 1]!) / 2);
  const rowNames = Array.from(centers, (c) => String(c));
  const entries: Record<string, UnsValue> = {
    profile: matrixFrame(profile, rowNames, types.names),
    bin_edges: float64Column(edges),
    bin_centers: float64Column(centers),
    n_cells: float64Column(total),
    params: unsDict({ distance_key: distanceKey, cell_type_key: params.cell_type_key, bins, value }),
  };
  ctx.log(`${op}: ${bins} bins over [${lo}, ${hi}]; added uns["${key}"]`);
  return { tables: { [ctx.table]: { uns: { [key]: unsDict(entries) } } } };
}
