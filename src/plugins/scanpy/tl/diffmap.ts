/**
 * `sc.tl.diffmap` (scanpy's `tools/_diffmap.py`): the diffusion map of the neighbourhood graph
 * (Coifman et al. 2005, Haghverdi et al. 2015), whose spectrum `dpt` also uses.
 */
import { allocArray, type DenseArray, type SparseMatrix } from "../../../sdk/data/arrays.js";
import type { Change } from "../../../sdk/data/change.js";
import type { SpatialData } from "../../../sdk/data/spatialdata.js";
import { nObs } from "../../../sdk/data/table.js";
import type { UnsValue } from "../../../sdk/data/uns.js";
import type { OpContext } from "../../../sdk/jobs/operation.js";
import { csrMatvec, lanczosTopEigen } from "../../../sdk/math/eigen.js";
import { activeTable } from "../helpers.js";
import { float32Matrix, neighborsKeys, obspGraph } from "./helpers.js";

/** Eigenpairs of scanpy's symmetric diffusion operator. */
export interface DiffusionSpectrum {
  /** Eigenvalues, decreasing. */
  readonly values: Float64Array;
  /** n×k row-major eigenvectors. */
  readonly vectors: Float64Array;
}

/**
 * Scanpy's `compute_transitions` (Coifman–Lafon density normalisation of the connectivities K:
 * K' = D⁻¹ K D⁻¹ with D the column sums, then T = Z K' Z with Z = diag(1/√colsum(K'))) as a new CSR
 * matrix, and its `k` eigenpairs of largest magnitude (`compute_eigen`).
 * @internal
 */
export function diffusionSpectrum(
  conn: SparseMatrix,
  k: number,
  seed: number,
  signal?: AbortSignal,
): DiffusionSpectrum & { converged: boolean } {
  const n = conn.shape[0];
  const { indptr, indices, data } = conn;
  const dens = new Float64Array(n);
  for (let p = 0; p < Number(indptr[n]); p++) dens[indices[p] as number]! += Number(data[p]);
  const z = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    for (let p = Number(indptr[i]); p < Number(indptr[i + 1]); p++) {
      const j = indices[p] as number;
      z[j]! += Number(data[p]) / (dens[i]! * dens[j]!);
    }
  }
  for (let i = 0; i < n; i++) z[i] = Math.sqrt(z[i]!);
  const nnz = Number(indptr[n]);
  const tdata = new Float64Array(nnz);
  for (let i = 0; i < n; i++) {
    for (let p = Number(indptr[i]); p < Number(indptr[i + 1]); p++) {
      const j = indices[p] as number;
      tdata[p] = Number(data[p]) / (dens[i]! * dens[j]! * z[i]! * z[j]!);
    }
  }
  const tsym: SparseMatrix = {
    kind: "csr",
    dtype: "float64",
    shape: [n, n],
    data: tdata,
    indices: indices,
    indptr: indptr,
  };
  const kk = Math.min(n - 1, k);
  const eig = lanczosTopEigen(csrMatvec(tsym), n, kk, { which: "LM", seed, signal });
  return { values: eig.values, vectors: eig.vectors, converged: eig.converged };
}

/** Params of `diffmap`. */
export interface DiffmapParams {
  /**
   * Number of diffusion components (eigenvectors of the transition matrix) to compute; more than 2.
   * @asType integer
   * @default 15
   * @minimum 3
   */
  n_comps?: number;
  /** Which neighbors run to use (its uns entry names the obsp graphs); default `neighbors`. */
  neighbors_key?: string;
  /**
   * Seed of the Lanczos start vector.
   * @asType integer
   * @default 0
   */
  random_state?: number;
  /** Where to store the result: obsm[key_added] and uns[key_added]/evals (default `X_diffmap` and `diffmap_evals`). */
  key_added?: string;
}

/**
 * Diffusion map (Coifman et al. 2005; Haghverdi et al. 2015) of the neighbourhood graph: the top
 * eigenvectors of scanpy's density-normalised, symmetrised transition matrix. Writes
 * `obsm/X_diffmap` (the first column is the stationary, near-constant component) and `uns/diffmap_evals`.
 */
export async function diffmap(sd: SpatialData, params: DiffmapParams, ctx: OpContext): Promise<Change> {
  const op = "diffmap";
  const t = activeTable(sd, ctx, op);
  const nComps = params.n_comps ?? 15;
  if (nComps <= 2) throw new Error(`${op}: provide any value greater than 2 for n_comps`);
  const keys = neighborsKeys(t, params.neighbors_key);
  const conn = await obspGraph(t, keys.connectivities, op);
  ctx.progress(0.05, "transition matrix");
  const spec = diffusionSpectrum(conn, nComps, params.random_state ?? 0, ctx.signal);
  if (!spec.converged) ctx.log(`${op}: Lanczos did not fully converge; eigenvalues may be inaccurate`);
  ctx.progress(1);
  return { tables: { [ctx.table]: diffmapWrites(spec, nObs(t), params.key_added) } };
}

/**
 * The obsm/uns writes of a diffusion map, as scanpy lays them out.
 * @internal
 */
export function diffmapWrites(
  spec: DiffusionSpectrum,
  n: number,
  key_added?: string,
): { obsm: Record<string, DenseArray>; uns: Record<string, UnsValue> } {
  const k = spec.values.length;
  const evals = allocArray("float32", k) as Float32Array;
  evals.set(spec.values);
  const evalsArr: DenseArray = { kind: "dense", dtype: "float32", shape: [k], data: evals };
  const basis = float32Matrix(spec.vectors, n, k);
  if (key_added) {
    return {
      obsm: { [key_added]: basis },
      uns: { [key_added]: { kind: "dict", entries: { evals: evalsArr } } },
    };
  }
  return { obsm: { X_diffmap: basis }, uns: { diffmap_evals: evalsArr } };
}
