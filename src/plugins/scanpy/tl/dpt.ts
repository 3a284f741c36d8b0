/**
 * `sc.tl.dpt` (scanpy's `tools/_dpt.py`): diffusion pseudotime from a root cell (Haghverdi et al. 2016),
 * with scanpy's outputs (obs `dpt_pseudotime`, optional branching groups).
 */
import { allocArray, type DenseArray } from "../../../sdk/data/arrays.js";
import type { Change } from "../../../sdk/data/change.js";
import { loadMatrix } from "../../../sdk/data/lazy.js";
import type { SpatialData } from "../../../sdk/data/spatialdata.js";
import { nObs } from "../../../sdk/data/table.js";
import { type UnsValue, unsGet } from "../../../sdk/data/uns.js";
import type { OpContext } from "../../../sdk/jobs/operation.js";
import { activeTable } from "../helpers.js";
import { diffmapWrites, diffusionSpectrum } from "./diffmap.js";
import { connectedComponents, neighborsKeys, obspGraph, scalarNumber } from "./helpers.js";

/** Params of `dpt`. */
export interface DptParams {
  /**
   * Number of diffusion components to use (of `X_diffmap`).
   * @asType integer
   * @default 10
   * @minimum 1
   */
  n_dcs?: number;
  /**
   * Number of branchings to detect; only 0 (pseudotime only) is supported: detect branchings with `paga`.
   * @asType integer
   * @default 0
   * @minimum 0
   * @maximum 0
   */
  n_branchings?: number;
  /**
   * Minimal group size during branching detection, as a fraction of cells (unused with n_branchings = 0).
   * @default 0.01
   */
  min_group_size?: number;
  /**
   * Allow the Kendall-tau shift during branching detection (unused with n_branchings = 0).
   * @default true
   */
  allow_kendall_tau_shift?: boolean;
  /** Which neighbors run to use; default `neighbors`. */
  neighbors_key?: string;
  /**
   * Index of the root cell; overrides `uns/iroot` (which scanpy users set by hand).
   * @asType integer
   * @minimum 0
   */
  iroot?: number;
}

/**
 * Diffusion pseudotime (Haghverdi et al. 2016): the DPT distance of every cell from a root cell
 * (`uns/iroot` or `iroot`), from the diffusion map (computed with 15 components first when
 * `X_diffmap` is absent, as scanpy does). Writes `obs/dpt_pseudotime` (scaled to [0, 1]; cells in
 * other graph components get infinity) and `uns/iroot`.
 */
export async function dpt(sd: SpatialData, params: DptParams, ctx: OpContext): Promise<Change> {
  const op = "dpt";
  const t = activeTable(sd, ctx, op);
  const n = nObs(t);
  if ((params.n_branchings ?? 0) !== 0) {
    throw new Error(
      `${op}: n_branchings > 0 (branching detection) is not supported; compute pseudotime with n_branchings = 0 and detect branchings with tl.paga`,
    );
  }
  const iroot = params.iroot ?? scalarNumber(unsGet(t.uns, "iroot"));
  if (iroot === undefined) {
    throw new Error(`${op}: no root cell found; set uns["iroot"] to the root cell's index, or pass iroot`);
  }
  if (!Number.isInteger(iroot) || iroot < 0 || iroot >= n) {
    throw new Error(`${op}: root cell index ${iroot} does not exist for ${n} cells`);
  }
  const nDcs = params.n_dcs ?? 10;
  const keys = neighborsKeys(t, params.neighbors_key);
  const conn = await obspGraph(t, keys.connectivities, op);
  const change: {
    obs: Record<string, DenseArray>;
    obsm: Record<string, DenseArray>;
    uns: Record<string, UnsValue>;
  } = {
    obs: {},
    obsm: {},
    uns: {},
  };
  let evals: Float32Array;
  let basis: Float32Array;
  let width: number;
  const storedBasis = t.obsm.X_diffmap;
  const storedEvals = unsGet(t.uns, "diffmap_evals");
  if (
    storedBasis &&
    storedBasis.kind !== "dataframe" &&
    storedEvals &&
    (storedEvals as DenseArray).kind === "dense"
  ) {
    const m = await loadMatrix(storedBasis);
    if (m.kind !== "dense") throw new Error(`${op}: obsm["X_diffmap"] must be dense`);
    width = m.shape[1] ?? 1;
    basis = Float32Array.from(m.data as ArrayLike<number>);
    evals = Float32Array.from((storedEvals as DenseArray).data as ArrayLike<number>);
  } else {
    ctx.log(`${op}: no X_diffmap; computing tl.diffmap with default parameters`);
    const spec = diffusionSpectrum(conn, 15, 0, ctx.signal);
    const writes = diffmapWrites(spec, n);
    Object.assign(change.obsm, writes.obsm);
    Object.assign(change.uns, writes.uns);
    width = spec.values.length;
    basis = writes.obsm.X_diffmap!.data as Float32Array;
    evals = (writes.uns.diffmap_evals as DenseArray).data as Float32Array;
  }
  if (nDcs > evals.length) {
    throw new Error(
      `${op}: cannot use n_dcs = ${nDcs}; compute the diffusion map with more components first`,
    );
  }
  ctx.progress(0.5, "pseudotime");
  const comps = connectedComponents(conn);
  const rootLabel = comps.labels[iroot]!;
  const row = new Float64Array(n);
  for (let j = 0; j < nDcs; j++) {
    const lam = evals[j]!;
    const f = lam < 0.9994 ? lam / (1 - lam) : 1;
    const r = basis[iroot * width + j]!;
    for (let i = 0; i < n; i++) {
      const d = f * (r - basis[i * width + j]!);
      row[i] = row[i]! + d * d;
    }
  }
  let max = 0;
  for (let i = 0; i < n; i++) {
    if (comps.count > 1 && comps.labels[i] !== rootLabel) row[i] = Number.POSITIVE_INFINITY;
    else {
      row[i] = Math.sqrt(row[i]!);
      if (row[i]! > max) max = row[i]!;
    }
  }
  const pt = allocArray("float32", n) as Float32Array;
  for (let i = 0; i < n; i++) pt[i] = max > 0 ? row[i]! / max : row[i]!;
  change.obs.dpt_pseudotime = { kind: "dense", dtype: "float32", shape: [n], data: pt };
  change.uns.iroot = iroot;
  ctx.progress(1);
  return { tables: { [ctx.table]: change } };
}
