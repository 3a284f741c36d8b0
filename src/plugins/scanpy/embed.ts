/**
 * Embeddings of scanpy's `sc.tl`: `tsne`, `diffmap`, `draw_graph` (ForceAtlas2) and
 * `embedding_density`, with scanpy's names, defaults and output keys.
 */
import { allocArray, type Categorical, type DenseArray, type SparseMatrix } from "../../sdk/data/arrays.js";
import type { Change } from "../../sdk/data/change.js";
import { loadMatrix } from "../../sdk/data/lazy.js";
import type { SpatialData } from "../../sdk/data/spatialdata.js";
import { nObs, type Table } from "../../sdk/data/table.js";
import { isUnsDict, type UnsValue, unsFromJson, unsGet } from "../../sdk/data/uns.js";
import type { OpContext } from "../../sdk/jobs/operation.js";
import { csrMatvec, lanczosTopEigen } from "../../sdk/math/eigen.js";
import { forceAtlas2 } from "../../sdk/math/forceatlas2.js";
import { Rng } from "../../sdk/math/rng.js";
import { switchCompression } from "../../sdk/math/sparse.js";
import { tsne as tsneKernel } from "../../sdk/math/tsne.js";
import { activeTable } from "./pp-matrix.js";

// ---------------------------------------------------------------------------------------------
// Shared helpers (not operations: their first parameter is not a SpatialData)

/** A cell representation as n×d row-major numbers. */
export interface Representation {
  readonly data: Float32Array | Float64Array;
  readonly n: number;
  readonly d: number;
  /** Where it came from (`obsm/X_pca`, `X`). */
  readonly source: string;
}

/**
 * Scanpy's `_choose_representation`: `use_rep` (an obsm key, or `X`), else `X_pca` (its first
 * `n_pcs` columns), else X when it has at most 50 variables. Scanpy would run PCA itself beyond
 * that; here the caller is told to run `sc.pp.pca` first.
 * @internal
 */
export async function chooseRepresentation(
  t: Table,
  op: string,
  use_rep?: string | null,
  n_pcs?: number | null,
): Promise<Representation> {
  const n = nObs(t);
  let m: DenseArray | SparseMatrix;
  let source: string;
  if (use_rep === "X" || (!use_rep && !t.obsm.X_pca && t.X && t.var.index.values.length <= 50)) {
    if (!t.X) throw new Error(`${op}: the table has no X`);
    m = await loadMatrix(t.X);
    source = "X";
  } else {
    const key = use_rep || "X_pca";
    const entry = t.obsm[key];
    if (!entry) {
      throw new Error(
        use_rep
          ? `${op}: no obsm["${key}"] (use_rep)`
          : `${op}: no obsm["X_pca"]; run sc.pp.pca first or pass use_rep`,
      );
    }
    if (entry.kind === "dataframe") throw new Error(`${op}: obsm["${key}"] is a data frame, not a matrix`);
    m = await loadMatrix(entry);
    source = `obsm/${key}`;
  }
  const width = m.shape.length > 1 ? m.shape[1]! : 1;
  const d = n_pcs != null && source !== "X" ? Math.min(n_pcs, width) : width;
  if (n_pcs != null && n_pcs > width)
    throw new Error(`${op}: n_pcs = ${n_pcs} exceeds the ${width} columns of ${source}`);
  if (m.kind === "dense") {
    const src = m.data;
    if (src instanceof Float32Array || src instanceof Float64Array) {
      if (d === width) return { data: src, n, d, source };
    }
    const out = new Float64Array(n * d);
    for (let i = 0; i < n; i++) for (let j = 0; j < d; j++) out[i * d + j] = Number(src[i * width + j]);
    return { data: out, n, d, source };
  }
  // Sparse (X): densify the needed columns only when it is small enough to hold.
  if (n * d > 2e8)
    throw new Error(
      `${op}: ${source} is sparse and too large to densify (${n}×${d}); use a PCA representation`,
    );
  const csr = m.kind === "csr" ? m : switchCompression(m);
  const out = new Float64Array(n * d);
  for (let i = 0; i < n; i++) {
    for (let p = Number(csr.indptr[i]); p < Number(csr.indptr[i + 1]); p++) {
      const j = csr.indices[p] as number;
      if (j < d) out[i * d + j] = Number(csr.data[p]);
    }
  }
  return { data: out, n, d, source };
}

/**
 * The obsp keys of a neighbors run: `uns[neighbors_key].connectivities_key`/`distances_key`, else
 * scanpy's defaults (`connectivities`/`distances` for `neighbors`, `<key>_connectivities` otherwise).
 * @internal
 */
export function neighborsKeys(
  t: Table,
  neighbors_key?: string | null,
): { connectivities: string; distances: string } {
  const key = neighbors_key || "neighbors";
  const entry = unsGet(t.uns, key);
  const prefix = key === "neighbors" ? "" : `${key}_`;
  const read = (name: string, fallback: string) => {
    const v = isUnsDict(entry) ? entry.entries[name] : undefined;
    return typeof v === "string" ? v : fallback;
  };
  return {
    connectivities: read("connectivities_key", `${prefix}connectivities`),
    distances: read("distances_key", `${prefix}distances`),
  };
}

/**
 * A square obsp graph as CSR (converted from CSC or dense when stored so).
 * @internal
 */
export async function obspGraph(t: Table, key: string, op: string): Promise<SparseMatrix> {
  const slot = t.obsp[key];
  if (!slot) throw new Error(`${op}: no obsp["${key}"]; run sc.pp.neighbors first`);
  const m = await loadMatrix(slot);
  if (m.kind === "csr") return m;
  if (m.kind === "csc") return switchCompression(m);
  const n = m.shape[0]!;
  const indptr = new Int32Array(n + 1);
  const cols: number[] = [];
  const vals: number[] = [];
  for (let i = 0; i < n; i++) {
    for (let j = 0; j < n; j++) {
      const v = Number(m.data[i * n + j]);
      if (v !== 0) {
        cols.push(j);
        vals.push(v);
      }
    }
    indptr[i + 1] = cols.length;
  }
  return {
    kind: "csr",
    dtype: "float64",
    shape: [n, n],
    data: Float64Array.from(vals),
    indices: Int32Array.from(cols),
    indptr,
  };
}

/**
 * A categorical obs column, or a clear error naming the column.
 * @internal
 */
export function categoricalObs(
  t: Table,
  key: string,
  op: string,
): { codes: Int32Array; categories: string[] } {
  const col = t.obs.columns[key];
  if (!col) throw new Error(`${op}: no obs column "${key}"`);
  if (col.kind !== "categorical") throw new Error(`${op}: obs column "${key}" is not categorical`);
  const c = col as Categorical;
  const categories =
    c.categories.kind === "string"
      ? c.categories.values.map((v) => String(v))
      : Array.from(c.categories.data as ArrayLike<number>, (v) => String(v));
  return { codes: c.codes, categories };
}

function float32Matrix(src: ArrayLike<number>, n: number, d: number): DenseArray {
  const out = allocArray("float32", n * d) as Float32Array;
  for (let i = 0; i < n * d; i++) out[i] = src[i]!;
  return { kind: "dense", dtype: "float32", shape: [n, d], data: out };
}

function float64Matrix(src: ArrayLike<number>, n: number, d: number): DenseArray {
  const out = allocArray("float64", n * d) as Float64Array;
  for (let i = 0; i < n * d; i++) out[i] = src[i]!;
  return { kind: "dense", dtype: "float64", shape: [n, d], data: out };
}

// ---------------------------------------------------------------------------------------------
// tsne

/** Params of `tsne`. */
export interface TsneParams {
  /**
   * Number of principal components of `X_pca` to use (all when unset).
   * @asType integer
   * @minimum 1
   */
  n_pcs?: number;
  /** Representation to use: an obsm key or `X` (default: `X_pca`, or X with at most 50 variables). */
  use_rep?: string;
  /**
   * Number of embedding dimensions; only 2 (the Barnes-Hut quadtree) is supported.
   * @asType integer
   * @default 2
   * @minimum 2
   * @maximum 2
   */
  n_components?: number;
  /**
   * Perplexity: the effective number of neighbours of each cell (3·perplexity neighbours are used).
   * @default 30
   * @exclusiveMinimum 0
   */
  perplexity?: number;
  /**
   * Distance metric of the neighbour search; only `euclidean`.
   * @default "euclidean"
   */
  metric?: "euclidean";
  /**
   * Factor on the affinities during the first 250 iterations (spreads clusters apart).
   * @default 12
   * @exclusiveMinimum 0
   */
  early_exaggeration?: number;
  /**
   * Gradient-descent step size (scanpy's default 1000), or `auto` = max(n / early_exaggeration / 4, 50).
   * @default 1000
   */
  learning_rate?: number | "auto";
  /**
   * Seed of the PCA initialisation's start vector.
   * @asType integer
   * @default 0
   */
  random_state?: number;
  /**
   * Threads (recorded; the run uses one thread).
   * @asType integer
   */
  n_jobs?: number;
  /** Key of the obsm embedding and the uns parameters (default `X_tsne` and `tsne`). */
  key_added?: string;
}

/**
 * t-SNE embedding (Barnes-Hut, van der Maaten 2014) of a cell representation, as scanpy's default
 * scikit-learn backend computes it: exact 3·perplexity-nearest-neighbour affinities, PCA initialisation,
 * 250 exaggerated iterations then up to 1000 in all. Writes `obsm/X_tsne` and `uns/tsne/params`.
 *
 * Cost: an exact kNN (O(n²·d), with pruning) plus O(n log n) per iteration; about 27 s of CPU
 * at 10k cells on one core. Partially supported above ~50k cells: it runs, but takes several minutes.
 */
export async function tsne(sd: SpatialData, params: TsneParams, ctx: OpContext): Promise<Change> {
  const op = "tsne";
  const t = activeTable(sd, ctx, op);
  if ((params.n_components ?? 2) !== 2) throw new Error(`${op}: only n_components = 2 is supported`);
  if ((params.metric ?? "euclidean") !== "euclidean")
    throw new Error(`${op}: only metric "euclidean" is supported`);
  const perplexity = params.perplexity ?? 30;
  const rep = await chooseRepresentation(t, op, params.use_rep, params.n_pcs);
  const learningRate = params.learning_rate ?? 1000;
  const res = tsneKernel(rep.data, rep.n, rep.d, {
    perplexity,
    earlyExaggeration: params.early_exaggeration ?? 12,
    learningRate,
    seed: params.random_state ?? 0,
    init: "pca",
    signal: ctx.signal,
    progress: (f, m) => ctx.progress(f, m),
  });
  const last = res.klHistory[res.klHistory.length - 1];
  ctx.log(`t-SNE: ${res.iterations} iterations, KL divergence ${last ? last.kl.toFixed(4) : "n/a"}`);
  const obsmKey = params.key_added ?? "X_tsne";
  const unsKey = params.key_added ?? "tsne";
  const recorded: Record<string, unknown> = {
    perplexity,
    early_exaggeration: params.early_exaggeration ?? 12,
    learning_rate: learningRate,
    n_jobs: params.n_jobs ?? ctx.threads,
    metric: "euclidean",
    n_components: 2,
  };
  if (params.use_rep != null) recorded.use_rep = params.use_rep;
  return {
    tables: {
      [ctx.table]: {
        obsm: { [obsmKey]: float32Matrix(res.embedding, rep.n, 2) },
        uns: { [unsKey]: unsFromJson({ params: recorded }) },
      },
    },
  };
}

// ---------------------------------------------------------------------------------------------
// diffmap

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

// ---------------------------------------------------------------------------------------------
// draw_graph

/** Params of `draw_graph`. */
export interface DrawGraphParams {
  /**
   * Graph layout; only `fa` (ForceAtlas2) is available (the igraph layouts are not).
   * @default "fa"
   */
  layout?: "fa" | "fr" | "drl" | "kk" | "grid_fr" | "lgl" | "rt" | "rt_circular";
  /**
   * Initial positions: an obsm key (its first two columns), `paga` (from `uns/paga/pos`, as
   * `sc.pl.paga` leaves it), or unset for uniform random positions in [0, 1)².
   */
  init_pos?: string;
  /**
   * Root cell of tree layouts (unused by `fa`).
   * @asType integer
   */
  root?: number;
  /**
   * Seed of the random initial positions.
   * @asType integer
   * @default 0
   */
  random_state?: number;
  /**
   * Threads (recorded; the run uses one thread).
   * @asType integer
   */
  n_jobs?: number;
  /**
   * Iterations of ForceAtlas2.
   * @asType integer
   * @default 500
   * @minimum 1
   */
  maxiter?: number;
  /** Suffix of the obsm key `X_draw_graph_<key_added_ext>` (default: the layout). */
  key_added_ext?: string;
  /** Which neighbors run to use; default `neighbors`. */
  neighbors_key?: string;
  /** An obsp graph to lay out instead of the neighbors connectivities. */
  obsp?: string;
}

/**
 * Force-directed layout of the neighbourhood graph with ForceAtlas2 (Jacomy et al. 2014), with
 * scanpy's settings (Barnes-Hut θ 1.2, scaling 2, gravity 1, 500 iterations). Writes
 * `obsm/X_draw_graph_fa` and `uns/draw_graph/params`.
 */
export async function draw_graph(sd: SpatialData, params: DrawGraphParams, ctx: OpContext): Promise<Change> {
  const op = "draw_graph";
  const t = activeTable(sd, ctx, op);
  const layout = params.layout ?? "fa";
  if (layout !== "fa") {
    throw new Error(
      `${op}: layout "${layout}" is an igraph layout, which is not available here; use layout "fa" (ForceAtlas2)`,
    );
  }
  const n = nObs(t);
  const graphKey = params.obsp ?? neighborsKeys(t, params.neighbors_key).connectivities;
  const adj = await obspGraph(t, graphKey, op);
  const seed = params.random_state ?? 0;
  const rng = new Rng(seed);
  let init: Float64Array;
  const initPos = params.init_pos;
  if (initPos && initPos !== "paga") {
    const entry = t.obsm[initPos];
    if (!entry || entry.kind === "dataframe")
      throw new Error(`${op}: init_pos "${initPos}" is not an obsm matrix`);
    const m = await loadMatrix(entry);
    if (m.kind !== "dense" || (m.shape[1] ?? 1) < 2)
      throw new Error(`${op}: obsm["${initPos}"] must be dense with ≥ 2 columns`);
    const w = m.shape[1]!;
    init = new Float64Array(2 * n);
    for (let i = 0; i < n; i++) {
      init[2 * i] = Number(m.data[i * w]);
      init[2 * i + 1] = Number(m.data[i * w + 1]);
    }
  } else if (initPos === "paga") {
    init = pagaInitPos(t, adj, rng, op);
  } else {
    init = new Float64Array(2 * n);
    for (let i = 0; i < 2 * n; i++) init[i] = rng.nextDouble();
  }
  const pos = forceAtlas2(adj, init, {
    iterations: params.maxiter ?? 500,
    signal: ctx.signal,
    progress: (f) => ctx.progress(f, "ForceAtlas2"),
  });
  const suffix = params.key_added_ext ?? layout;
  return {
    tables: {
      [ctx.table]: {
        obsm: { [`X_draw_graph_${suffix}`]: float64Matrix(pos, n, 2) },
        uns: { draw_graph: unsFromJson({ params: { layout, random_state: seed } }) },
      },
    },
  };
}

/** Scanpy's `get_init_pos_from_paga`: each group around its PAGA position, spread toward its most connected neighbour. */
function pagaInitPos(t: Table, _adj: SparseMatrix, rng: Rng, op: string): Float64Array {
  const pos = unsGet(t.uns, "paga/pos");
  const groupsKey = unsGet(t.uns, "paga/groups");
  const conn = unsGet(t.uns, "paga/connectivities");
  if (!pos || typeof pos !== "object" || (pos as DenseArray).kind !== "dense") {
    throw new Error(`${op}: init_pos "paga" needs uns["paga"]["pos"]; plot PAGA first (sc.pl.paga)`);
  }
  if (typeof groupsKey !== "string") throw new Error(`${op}: uns["paga"]["groups"] is missing`);
  const p = pos as DenseArray;
  const { codes, categories } = categoricalObs(t, groupsKey, op);
  const n = codes.length;
  const g = categories.length;
  const init = new Float64Array(2 * n).fill(1);
  const c =
    conn &&
    typeof conn === "object" &&
    ((conn as SparseMatrix).kind === "csr" || (conn as SparseMatrix).kind === "csc")
      ? (conn as SparseMatrix)
      : null;
  const cm = c ? (c.kind === "csr" ? c : switchCompression(c)) : null;
  for (let gi = 0; gi < g; gi++) {
    const sub = rng.fork(gi);
    const gx = Number(p.data[2 * gi]);
    const gy = Number(p.data[2 * gi + 1]);
    let best = -1;
    let bestW = -Infinity;
    if (cm) {
      for (let q = Number(cm.indptr[gi]); q < Number(cm.indptr[gi + 1]); q++) {
        const w = Number(cm.data[q]);
        if (w !== 0 && w > bestW) {
          bestW = w;
          best = cm.indices[q] as number;
        }
      }
    }
    for (let i = 0; i < n; i++) {
      if (codes[i] !== gi) continue;
      if (best >= 0) {
        const dx = gx - Number(p.data[2 * best]);
        const dy = gy - Number(p.data[2 * best + 1]);
        init[2 * i] = gx - 0.5 * dx + sub.nextDouble() * dx;
        init[2 * i + 1] = gy - 0.5 * dy + sub.nextDouble() * dy;
      } else {
        init[2 * i] = gx;
        init[2 * i + 1] = gy;
      }
    }
  }
  return init;
}

// ---------------------------------------------------------------------------------------------
// embedding_density

/**
 * scipy's `gaussian_kde(xy)(xy)` in 2-d: Scott's bandwidth (factor n^(-1/6)) on the sample
 * covariance. Kernel terms beyond 8 bandwidths (weight < e⁻³², below float64 resolution of the
 * self term) are skipped through a grid in whitened coordinates, so the cost is near-linear.
 * @internal
 */
export function gaussianKde2d(x: Float64Array, y: Float64Array): Float64Array {
  const n = x.length;
  const out = new Float64Array(n);
  if (n === 0) return out;
  let mx = 0;
  let my = 0;
  for (let i = 0; i < n; i++) {
    mx += x[i]!;
    my += y[i]!;
  }
  mx /= n;
  my /= n;
  let sxx = 0;
  let syy = 0;
  let sxy = 0;
  for (let i = 0; i < n; i++) {
    const a = x[i]! - mx;
    const b = y[i]! - my;
    sxx += a * a;
    syy += b * b;
    sxy += a * b;
  }
  const denom = Math.max(n - 1, 1);
  const f2 = n ** (-2 / 6);
  const cxx = (sxx / denom) * f2;
  const cyy = (syy / denom) * f2;
  const cxy = (sxy / denom) * f2;
  const det = cxx * cyy - cxy * cxy;
  if (!(det > 0))
    throw new Error("embedding_density: the points' covariance is singular (too few or collinear points)");
  // Whitening: Cholesky of the kernel covariance, u = L⁻¹ (p − mean).
  const l11 = Math.sqrt(cxx);
  const l21 = cxy / l11;
  const l22 = Math.sqrt(cyy - l21 * l21);
  const u = new Float64Array(n);
  const v = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const a = x[i]! - mx;
    const b = y[i]! - my;
    u[i] = a / l11;
    v[i] = (b - l21 * u[i]!) / l22;
  }
  const norm = 1 / (n * 2 * Math.PI * Math.sqrt(det));
  const cut = 8;
  let umin = Infinity;
  let vmin = Infinity;
  let umax = -Infinity;
  let vmax = -Infinity;
  for (let i = 0; i < n; i++) {
    umin = Math.min(umin, u[i]!);
    umax = Math.max(umax, u[i]!);
    vmin = Math.min(vmin, v[i]!);
    vmax = Math.max(vmax, v[i]!);
  }
  const gw = Math.max(1, Math.floor((umax - umin) / cut) + 1);
  const gh = Math.max(1, Math.floor((vmax - vmin) / cut) + 1);
  const cell = new Int32Array(n);
  const head = new Int32Array(gw * gh + 1);
  for (let i = 0; i < n; i++) {
    const cx = Math.min(gw - 1, Math.floor((u[i]! - umin) / cut));
    const cy = Math.min(gh - 1, Math.floor((v[i]! - vmin) / cut));
    cell[i] = cy * gw + cx;
    head[cell[i]! + 1]!++;
  }
  for (let c = 0; c < gw * gh; c++) head[c + 1] = head[c + 1]! + head[c]!;
  const members = new Int32Array(n);
  const fill = head.slice(0, gw * gh);
  for (let i = 0; i < n; i++) members[fill[cell[i]!]!++] = i;
  for (let i = 0; i < n; i++) {
    const cx = cell[i]! % gw;
    const cy = (cell[i]! - cx) / gw;
    let s = 0;
    for (let yy = Math.max(0, cy - 1); yy <= Math.min(gh - 1, cy + 1); yy++) {
      for (let xx = Math.max(0, cx - 1); xx <= Math.min(gw - 1, cx + 1); xx++) {
        const c = yy * gw + xx;
        for (let q = head[c]!; q < head[c + 1]!; q++) {
          const j = members[q]!;
          const du = u[i]! - u[j]!;
          const dv = v[i]! - v[j]!;
          s += Math.exp(-0.5 * (du * du + dv * dv));
        }
      }
    }
    out[i] = s * norm;
  }
  return out;
}

/** Params of `embedding_density`. */
export interface EmbeddingDensityParams {
  /**
   * Embedding to estimate densities on: an obsm key or its name without `X_` (`umap`, `tsne`,
   * `diffmap`, `pca`, `draw_graph_fa`; `fa` means `draw_graph_fa`).
   * @default "umap"
   */
  basis?: string;
  /** Categorical obs column: densities are estimated and scaled within each category. */
  groupby?: string;
  /** Name of the obs column written (default `<basis>_density` or `<basis>_density_<groupby>`). */
  key_added?: string;
  /** Two 1-based components, `"1,2"` or `[1, 2]` (for `diffmap` the first, stationary one is skipped). */
  components?: string | number[];
}

/**
 * Density of cells in an embedding (Gaussian KDE with Scott's bandwidth, as scipy's `gaussian_kde`),
 * scaled to [0, 1] over all cells or within each `groupby` category. Writes `obs/<basis>_density[_<groupby>]`
 * and `uns/<key>_params`.
 */
export async function embedding_density(
  sd: SpatialData,
  params: EmbeddingDensityParams,
  ctx: OpContext,
): Promise<Change> {
  const op = "embedding_density";
  const t = activeTable(sd, ctx, op);
  let basis = (params.basis ?? "umap").toLowerCase();
  if (basis === "fa") basis = "draw_graph_fa";
  const obsmKey = t.obsm[basis] ? basis : `X_${basis}`;
  const entry = t.obsm[obsmKey];
  if (!entry || entry.kind === "dataframe") {
    throw new Error(
      `${op}: cannot find the embedded representation obsm["${basis}" | "X_${basis}"]; compute the embedding first`,
    );
  }
  const m = await loadMatrix(entry);
  if (m.kind !== "dense") throw new Error(`${op}: obsm["${obsmKey}"] must be dense`);
  const comps = (
    params.components == null
      ? [1, 2]
      : typeof params.components === "string"
        ? params.components.split(",").map((s) => Number.parseInt(s.trim(), 10))
        : params.components
  ).map((c) => c - 1);
  if (comps.length !== 2 || comps.some((c) => !Number.isInteger(c))) {
    throw new Error(`${op}: please specify exactly 2 components, or none`);
  }
  if (basis === "diffmap") {
    comps[0]! += 1;
    comps[1]! += 1;
  }
  const w = m.shape[1] ?? 1;
  if (comps.some((c) => c < 0 || c >= w))
    throw new Error(`${op}: components out of range for obsm["${obsmKey}"] (${w} columns)`);
  const n = nObs(t);
  const key =
    params.key_added ?? (params.groupby ? `${basis}_density_${params.groupby}` : `${basis}_density`);
  const out = allocArray("float64", n) as Float64Array;
  const scaled = (idx: Int32Array) => {
    const xs = new Float64Array(idx.length);
    const ys = new Float64Array(idx.length);
    for (let r = 0; r < idx.length; r++) {
      xs[r] = Number(m.data[idx[r]! * w + comps[0]!]);
      ys[r] = Number(m.data[idx[r]! * w + comps[1]!]);
    }
    const z = gaussianKde2d(xs, ys);
    let lo = Infinity;
    let hi = -Infinity;
    for (const v of z) {
      lo = Math.min(lo, v);
      hi = Math.max(hi, v);
    }
    for (let r = 0; r < idx.length; r++) out[idx[r]!] = (z[r]! - lo) / (hi - lo);
  };
  if (params.groupby) {
    const { codes, categories } = categoricalObs(t, params.groupby, op);
    for (let g = 0; g < categories.length; g++) {
      ctx.signal.throwIfAborted();
      const idx: number[] = [];
      for (let i = 0; i < n; i++) if (codes[i] === g) idx.push(i);
      if (idx.length > 0) scaled(Int32Array.from(idx));
      ctx.progress((g + 1) / categories.length);
    }
  } else {
    scaled(Int32Array.from({ length: n }, (_, i) => i));
  }
  if (basis !== "diffmap") {
    comps[0]! += 1;
    comps[1]! += 1;
  }
  return {
    tables: {
      [ctx.table]: {
        obs: { [key]: { kind: "dense", dtype: "float64", shape: [n], data: out } },
        uns: { [`${key}_params`]: unsFromJson({ covariate: params.groupby ?? null, components: comps }) },
      },
    },
  };
}
