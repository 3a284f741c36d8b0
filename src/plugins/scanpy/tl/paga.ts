/**
 * `sc.tl.paga` (scanpy's `tools/_paga.py`): partition-based graph abstraction (Wolf et al. 2019), the
 * connectivities between the groups of a clustering, stored in uns `paga`.
 */
import { allocArray } from "../../../sdk/data/arrays.js";
import type { Change } from "../../../sdk/data/change.js";
import type { SpatialData } from "../../../sdk/data/spatialdata.js";
import { nObs } from "../../../sdk/data/table.js";
import { unsGet } from "../../../sdk/data/uns.js";
import type { OpContext } from "../../../sdk/jobs/operation.js";
import { activeTable } from "../helpers.js";
import { categoricalObs, csrFromRows, neighborsKeys, obspGraph, scalarNumber } from "./helpers.js";

/** Params of `paga`. */
export interface PagaParams {
  /** Categorical obs column of the partition (default: `leiden`, else `louvain`). */
  groups?: string;
  /**
   * Orient edges by RNA velocity; not supported (only false).
   * @default false
   */
  use_rna_velocity?: boolean;
  /**
   * Connectivity model: `v1.2` (kNN edges against a random null, capped at 1) or `v1.0`.
   * @default "v1.2"
   */
  model?: "v1.2" | "v1.0";
  /** Which neighbors run to use; default `neighbors`. */
  neighbors_key?: string;
}

/**
 * Partition-based graph abstraction (Wolf et al. 2019): how strongly each pair of groups is
 * connected in the kNN graph relative to a random null, and the maximum spanning tree of these
 * confidences. Writes `uns/paga/connectivities`, `uns/paga/connectivities_tree`, `uns/paga/groups`
 * and `uns/<groups>_sizes`.
 */
export async function paga(sd: SpatialData, params: PagaParams, ctx: OpContext): Promise<Change> {
  const op = "paga";
  const t = activeTable(sd, ctx, op);
  if (params.use_rna_velocity)
    throw new Error(`${op}: use_rna_velocity is not supported (RNA velocity graphs are not available)`);
  const keys = neighborsKeys(t, params.neighbors_key);
  let groups = params.groups;
  if (!groups) {
    groups = ["leiden", "louvain"].find((k) => k in t.obs.columns);
    if (!groups) {
      throw new Error(
        `${op}: run tl.leiden or tl.louvain to compute community labels, or pass groups = an existing obs key`,
      );
    }
  }
  const { codes, categories } = categoricalObs(t, groups, op);
  const g = categories.length;
  const n = nObs(t);
  const ns = new Float64Array(g);
  for (let i = 0; i < n; i++) if (codes[i]! >= 0) ns[codes[i]!]!++;
  const model = params.model ?? "v1.2";
  const inter = Array.from({ length: g }, () => new Map<number, number>());
  const conn = Array.from({ length: g }, () => new Map<number, number>());
  if (model === "v1.2") {
    // Directed kNN graph of the distances: one edge per stored entry.
    const dist = await obspGraph(t, keys.distances, op);
    const inner = new Float64Array(g);
    const out = new Float64Array(g);
    for (let i = 0; i < n; i++) {
      const a = codes[i]!;
      for (let p = Number(dist.indptr[i]); p < Number(dist.indptr[i + 1]); p++) {
        const b = codes[dist.indices[p] as number]!;
        if (a < 0 || b < 0) continue;
        if (a === b) inner[a]!++;
        else {
          inter[a]!.set(b, (inter[a]!.get(b) ?? 0) + 1);
          out[a]!++;
        }
      }
    }
    const es = new Float64Array(g);
    for (let a = 0; a < g; a++) es[a] = inner[a]! + out[a]!;
    for (let a = 0; a < g; a++) {
      for (const [b, v] of inter[a]!) {
        // ε_ab + ε_ba, scaled by the expected count under random connections.
        const sym = v + (inter[b]!.get(a) ?? 0);
        const expected = (es[a]! * ns[b]! + es[b]! * ns[a]!) / (n - 1);
        const s = expected !== 0 ? Math.min(sym / expected, 1) : 1;
        conn[a]!.set(b, s);
        conn[b]!.set(a, s);
      }
    }
  } else {
    const c = await obspGraph(t, keys.connectivities, op);
    const nnRaw = unsGet(t.uns, `${params.neighbors_key || "neighbors"}/params/n_neighbors`);
    const nNeighbors = scalarNumber(nnRaw) ?? Math.floor(Number(c.indptr[n]) / n / 2);
    for (let i = 0; i < n; i++) {
      const a = codes[i]!;
      for (let p = Number(c.indptr[i]); p < Number(c.indptr[i + 1]); p++) {
        if (Number(c.data[p]) === 0) continue;
        const b = codes[c.indices[p] as number]!;
        if (a < 0 || b < 0 || a === b) continue;
        inter[a]!.set(b, (inter[a]!.get(b) ?? 0) + 0.5);
        inter[b]!.set(a, (inter[b]!.get(a) ?? 0) + 0.5);
      }
    }
    for (let a = 0; a < g; a++) {
      for (const [b, v] of inter[a]!) {
        const geo = Math.sqrt(nNeighbors * nNeighbors * ns[a]! * ns[b]!);
        conn[a]!.set(b, geo !== 0 ? v / geo : 1);
      }
    }
  }
  // Tree: minimum spanning tree of the inverse weights (Kruskal; each undirected edge once, a < b).
  const weightOf = model === "v1.2" ? conn : inter;
  const edges: [number, number, number][] = [];
  for (let a = 0; a < g; a++)
    for (const [b, v] of weightOf[a]!) if (a < b && v > 0) edges.push([a, b, 1 / v]);
  edges.sort((x, y) => x[2] - y[2] || x[0] - y[0] || x[1] - y[1]);
  const parent = Int32Array.from({ length: g }, (_, i) => i);
  const find = (x: number): number => {
    while (parent[x] !== x) x = parent[x]!;
    return x;
  };
  const tree = Array.from({ length: g }, () => new Map<number, number>());
  for (const [a, b] of edges) {
    const ra = find(a);
    const rb = find(b);
    if (ra === rb) continue;
    parent[ra] = rb;
    tree[a]!.set(b, conn[a]!.get(b)!);
  }
  const sizes = allocArray("int64", g) as BigInt64Array;
  for (let a = 0; a < g; a++) sizes[a] = BigInt(ns[a]!);
  ctx.progress(1);
  return {
    tables: {
      [ctx.table]: {
        uns: {
          "paga/connectivities": csrFromRows(conn, g),
          "paga/connectivities_tree": csrFromRows(tree, g),
          "paga/groups": groups,
          [`${groups}_sizes`]: { kind: "dense", dtype: "int64", shape: [g], data: sizes },
        },
      },
    },
  };
}
