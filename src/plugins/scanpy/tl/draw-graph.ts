/**
 * `sc.tl.draw_graph` (scanpy's `tools/_draw_graph.py`): a force-directed layout of the neighbourhood
 * graph (ForceAtlas2, `sdk/math/forceatlas2.ts`), optionally started from a PAGA layout.
 */
import type { DenseArray, SparseMatrix } from "../../../sdk/data/arrays.js";
import type { Change } from "../../../sdk/data/change.js";
import { loadMatrix } from "../../../sdk/data/lazy.js";
import type { SpatialData } from "../../../sdk/data/spatialdata.js";
import { nObs, type Table } from "../../../sdk/data/table.js";
import { unsFromJson, unsGet } from "../../../sdk/data/uns.js";
import type { OpContext } from "../../../sdk/jobs/operation.js";
import { forceAtlas2 } from "../../../sdk/math/forceatlas2.js";
import { Rng } from "../../../sdk/math/rng.js";
import { switchCompression } from "../../../sdk/math/sparse.js";
import { activeTable } from "../helpers.js";
import { categoricalObs, float64Matrix, neighborsKeys, obspGraph } from "./helpers.js";

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
