/**
 * Group centralities of clusters in a spatial graph, as squidpy's `gr.centrality_scores` gets them
 * from networkx on the undirected graph of the connectivities (an edge wherever either direction is
 * stored): group degree centrality, average clustering coefficient and group closeness centrality.
 */
import type { CsrGraph } from "./graph.js";

/** An undirected simple graph: sorted neighbour lists (self loops kept, as networkx keeps them). */
export interface UndirectedGraph {
  readonly n: number;
  readonly indptr: Int32Array;
  readonly indices: Int32Array;
}

/** The undirected graph of a CSR pattern (i ~ j when (i, j) or (j, i) is stored). */
export function undirected(g: CsrGraph): UndirectedGraph {
  const { n, indptr, indices } = g;
  const deg = new Int32Array(n + 1);
  for (let i = 0; i < n; i++) {
    for (let p = indptr[i] as number; p < (indptr[i + 1] as number); p++) {
      const j = indices[p] as number;
      deg[i + 1]++;
      if (j !== i) deg[j + 1]++;
    }
  }
  for (let i = 0; i < n; i++) deg[i + 1] = (deg[i + 1] as number) + (deg[i] as number);
  const fill = deg.slice(0, n);
  const both = new Int32Array(deg[n] as number);
  for (let i = 0; i < n; i++) {
    for (let p = indptr[i] as number; p < (indptr[i + 1] as number); p++) {
      const j = indices[p] as number;
      both[fill[i]++] = j;
      if (j !== i) both[fill[j]++] = i;
    }
  }
  // Sort and deduplicate each list.
  const outPtr = new Int32Array(n + 1);
  let w = 0;
  for (let i = 0; i < n; i++) {
    const s = deg[i] as number;
    const e = deg[i + 1] as number;
    const row = both.subarray(s, e).sort();
    let last = -1;
    for (let p = 0; p < row.length; p++) {
      const v = row[p] as number;
      if (v !== last) both[w++] = v;
      last = v;
    }
    outPtr[i + 1] = w;
  }
  return { n, indptr: outPtr, indices: both.slice(0, w) };
}

/** networkx `group_degree_centrality`: |N(S) \ S| / (|V| − |S|). */
export function groupDegree(g: UndirectedGraph, members: Int32Array): number {
  const inS = new Uint8Array(g.n);
  for (const v of members) inS[v] = 1;
  const seen = new Uint8Array(g.n);
  let count = 0;
  for (const v of members) {
    for (let p = g.indptr[v] as number; p < (g.indptr[v + 1] as number); p++) {
      const u = g.indices[p] as number;
      if (!inS[u] && !seen[u]) {
        seen[u] = 1;
        count++;
      }
    }
  }
  return count / (g.n - members.length);
}

/** networkx `average_clustering(G, nodes=S)` (unweighted, zeros counted); NaN for an empty S. */
export function averageClustering(g: UndirectedGraph, members: Int32Array): number {
  if (members.length === 0) return Number.NaN;
  const mark = new Uint8Array(g.n);
  let sum = 0;
  for (const v of members) {
    const s = g.indptr[v] as number;
    const e = g.indptr[v + 1] as number;
    let deg = 0;
    for (let p = s; p < e; p++) {
      const u = g.indices[p] as number;
      if (u !== v) {
        mark[u] = 1;
        deg++;
      }
    }
    let t = 0;
    for (let p = s; p < e; p++) {
      const w = g.indices[p] as number;
      if (w === v) continue;
      for (let q = g.indptr[w] as number; q < (g.indptr[w + 1] as number); q++) {
        const x = g.indices[q] as number;
        if (x !== w && mark[x]) t++;
      }
    }
    for (let p = s; p < e; p++) mark[g.indices[p] as number] = 0;
    sum += t === 0 ? 0 : t / (deg * (deg - 1));
  }
  return sum / members.length;
}

/**
 * networkx `group_closeness_centrality` (unweighted): |V \ S| / Σ_{v ∉ S} d(S, v), d the hop
 * distance from the nearest member (unreachable nodes add 0); 0 when that sum is 0.
 */
export function groupCloseness(g: UndirectedGraph, members: Int32Array): number {
  const dist = new Int32Array(g.n).fill(-1);
  let queue = new Int32Array(g.n);
  let head = 0;
  let tail = 0;
  for (const v of members) {
    if (dist[v] === -1) {
      dist[v] = 0;
      queue[tail++] = v;
    }
  }
  let total = 0;
  while (head < tail) {
    const v = queue[head++] as number;
    const d = (dist[v] as number) + 1;
    for (let p = g.indptr[v] as number; p < (g.indptr[v + 1] as number); p++) {
      const u = g.indices[p] as number;
      if (dist[u] === -1) {
        dist[u] = d;
        total += d;
        if (tail === queue.length) {
          const q2 = new Int32Array(queue.length * 2);
          q2.set(queue);
          queue = q2;
        }
        queue[tail++] = u;
      }
    }
  }
  return total === 0 ? 0 : (g.n - countDistinct(members, g.n)) / total;
}

function countDistinct(members: Int32Array, n: number): number {
  const seen = new Uint8Array(n);
  let c = 0;
  for (const v of members) {
    if (!seen[v]) {
      seen[v] = 1;
      c++;
    }
  }
  return c;
}
