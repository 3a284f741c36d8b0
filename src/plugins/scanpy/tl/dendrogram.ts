/**
 * `sc.tl.dendrogram` (scanpy's `tools/_dendrogram.py`): hierarchical clustering of the groups of an obs
 * column by the correlation of their mean representation, with scipy's linkage methods and dendrogram
 * layout.
 */
import { allocArray, type DenseArray } from "../../../sdk/data/arrays.js";
import type { Change } from "../../../sdk/data/change.js";
import { loadMatrix } from "../../../sdk/data/lazy.js";
import type { SpatialData } from "../../../sdk/data/spatialdata.js";
import { nObs } from "../../../sdk/data/table.js";
import type { UnsDict } from "../../../sdk/data/uns.js";
import type { OpContext } from "../../../sdk/jobs/operation.js";
import { switchCompression } from "../../../sdk/math/sparse.js";
import { activeTable } from "../helpers.js";
import { categoricalObs, chooseRepresentation } from "./helpers.js";

/** Linkage methods of scipy's `linkage`. */
export type LinkageMethod = "single" | "complete" | "average" | "weighted" | "centroid" | "median" | "ward";

/**
 * Agglomerative clustering of k items from a condensed-free full distance matrix (k×k row-major),
 * scipy's `linkage` layout: rows `[id_a, id_b, distance, size]` with `id_a < id_b`, new clusters
 * numbered k, k+1, …; ties merge the first pair in scan order.
 * @internal
 */
export function linkage(dist: Float64Array, k: number, method: LinkageMethod): Float64Array {
  const d = Float64Array.from(dist);
  const active = new Uint8Array(k).fill(1);
  const id = Int32Array.from({ length: k }, (_, i) => i);
  const size = new Float64Array(k).fill(1);
  const z = new Float64Array(Math.max(0, (k - 1) * 4));
  for (let step = 0; step < k - 1; step++) {
    let best = Infinity;
    let ba = -1;
    let bb = -1;
    for (let a = 0; a < k; a++) {
      if (!active[a]) continue;
      for (let b = a + 1; b < k; b++) {
        if (!active[b]) continue;
        const v = d[a * k + b]!;
        if (v < best) {
          best = v;
          ba = a;
          bb = b;
        }
      }
    }
    const na = size[ba]!;
    const nb = size[bb]!;
    const dab = best;
    for (let c = 0; c < k; c++) {
      if (!active[c] || c === ba || c === bb) continue;
      const dac = d[ba * k + c]!;
      const dbc = d[bb * k + c]!;
      const nc = size[c]!;
      let v: number;
      switch (method) {
        case "single":
          v = Math.min(dac, dbc);
          break;
        case "complete":
          v = Math.max(dac, dbc);
          break;
        case "average":
          v = (na * dac + nb * dbc) / (na + nb);
          break;
        case "weighted":
          v = (dac + dbc) / 2;
          break;
        case "centroid":
          v = Math.sqrt(
            Math.max(
              0,
              (na * dac * dac + nb * dbc * dbc) / (na + nb) - (na * nb * dab * dab) / (na + nb) ** 2,
            ),
          );
          break;
        case "median":
          v = Math.sqrt(Math.max(0, (dac * dac) / 2 + (dbc * dbc) / 2 - (dab * dab) / 4));
          break;
        case "ward":
          v = Math.sqrt(
            Math.max(0, ((na + nc) * dac * dac + (nb + nc) * dbc * dbc - nc * dab * dab) / (na + nb + nc)),
          );
          break;
      }
      d[ba * k + c] = v;
      d[c * k + ba] = v;
    }
    const ia = id[ba]!;
    const ib = id[bb]!;
    z[step * 4] = Math.min(ia, ib);
    z[step * 4 + 1] = Math.max(ia, ib);
    z[step * 4 + 2] = dab;
    z[step * 4 + 3] = na + nb;
    active[bb] = 0;
    size[ba] = na + nb;
    id[ba] = k + step;
  }
  if (
    method === "single" ||
    method === "complete" ||
    method === "average" ||
    method === "weighted" ||
    method === "ward"
  ) {
    // scipy sorts these (monotone) merges by distance, stably; relabel accordingly.
    sortLinkage(z, k);
  }
  return z;
}

function sortLinkage(z: Float64Array, k: number): void {
  const m = k - 1;
  const order = Array.from({ length: m }, (_, i) => i).sort((a, b) => z[a * 4 + 2]! - z[b * 4 + 2]! || a - b);
  if (order.every((v, i) => v === i)) return;
  const newId = new Int32Array(m);
  order.forEach((old, at) => {
    newId[old] = k + at;
  });
  const src = Float64Array.from(z);
  order.forEach((old, at) => {
    const map = (x: number) => (x < k ? x : newId[x - k]!);
    const a = map(src[old * 4]!);
    const b = map(src[old * 4 + 1]!);
    z[at * 4] = Math.min(a, b);
    z[at * 4 + 1] = Math.max(a, b);
    z[at * 4 + 2] = src[old * 4 + 2]!;
    z[at * 4 + 3] = src[old * 4 + 3]!;
  });
}

/** scipy's `dendrogram(Z, labels, no_plot=True)` output. */
export interface DendrogramLayout {
  icoord: number[][];
  dcoord: number[][];
  ivl: string[];
  leaves: number[];
  color_list: string[];
  leaves_color_list: string[];
}

/**
 * The layout scipy's `dendrogram` computes (no truncation, no sorting, default colour threshold
 * 0.7·max height and matplotlib's C1…C9 link palette, C0 above the threshold).
 * @internal
 */
export function dendrogramLayout(z: Float64Array, labels: readonly string[]): DendrogramLayout {
  const n = labels.length;
  const out: DendrogramLayout = {
    icoord: [],
    dcoord: [],
    ivl: [],
    leaves: [],
    color_list: [],
    leaves_color_list: [],
  };
  if (n < 2) {
    if (n === 1) {
      out.ivl.push(labels[0]!);
      out.leaves.push(0);
      out.leaves_color_list.push("C0");
    }
    return out;
  }
  let maxH = 0;
  for (let r = 0; r < n - 1; r++) maxH = Math.max(maxH, z[r * 4 + 2]!);
  const threshold = 0.7 * maxH;
  const palette = ["C1", "C2", "C3", "C4", "C5", "C6", "C7", "C8", "C9"];
  let current = 0;
  let below = false;
  // Returns [x of the node, width, height].
  const walk = (i: number, iv: number): [number, number, number] => {
    if (i < n) {
      out.leaves.push(i);
      out.ivl.push(labels[i]!);
      return [iv + 5, 10, 0];
    }
    const r = i - n;
    const ua = z[r * 4]!;
    const ub = z[r * 4 + 1]!;
    const [xa, wa, ha] = walk(ua, iv);
    const h = z[r * 4 + 2]!;
    let c: string;
    if (h >= threshold || threshold <= 0) {
      c = "C0";
      if (below) current = (current + 1) % palette.length;
      below = false;
    } else {
      below = true;
      c = palette[current]!;
    }
    const [xb, wb, hb] = walk(ub, iv + wa);
    out.icoord.push([xa, xa, xb, xb]);
    out.dcoord.push([ha, h, h, hb]);
    out.color_list.push(c);
    return [(xa + xb) / 2, wa + wb, h];
  };
  walk(2 * n - 2, 0);
  const leafColors: (string | null)[] = new Array(n).fill(null);
  out.icoord.forEach((xs, li) => {
    xs.forEach((x, k) => {
      if (out.dcoord[li]![k] === 0 && x % 5 === 0 && x % 2 === 1)
        leafColors[(x - 5) / 10] = out.color_list[li]!;
    });
  });
  out.leaves_color_list = leafColors.map((c) => c ?? "C0");
  return out;
}

function ranks(v: Float64Array): Float64Array {
  const idx = Array.from(v.keys()).sort((a, b) => v[a]! - v[b]!);
  const r = new Float64Array(v.length);
  for (let i = 0; i < idx.length; ) {
    let j = i;
    while (j + 1 < idx.length && v[idx[j + 1]!] === v[idx[i]!]) j++;
    const avg = (i + j) / 2 + 1;
    for (let t = i; t <= j; t++) r[idx[t]!] = avg;
    i = j + 1;
  }
  return r;
}

function pearson(a: Float64Array, b: Float64Array): number {
  const n = a.length;
  let ma = 0;
  let mb = 0;
  for (let i = 0; i < n; i++) {
    ma += a[i]!;
    mb += b[i]!;
  }
  ma /= n;
  mb /= n;
  let sab = 0;
  let saa = 0;
  let sbb = 0;
  for (let i = 0; i < n; i++) {
    const x = a[i]! - ma;
    const y = b[i]! - mb;
    sab += x * y;
    saa += x * x;
    sbb += y * y;
  }
  return sab / Math.sqrt(saa * sbb);
}

function kendallTauB(a: Float64Array, b: Float64Array): number {
  const n = a.length;
  let concordant = 0;
  let discordant = 0;
  let tiesA = 0;
  let tiesB = 0;
  for (let i = 0; i < n; i++) {
    for (let j = i + 1; j < n; j++) {
      const da = Math.sign(a[i]! - a[j]!);
      const db = Math.sign(b[i]! - b[j]!);
      if (da === 0 && db === 0) continue;
      if (da === 0) tiesA++;
      else if (db === 0) tiesB++;
      else if (da === db) concordant++;
      else discordant++;
    }
  }
  return (
    (concordant - discordant) /
    Math.sqrt((concordant + discordant + tiesA) * (concordant + discordant + tiesB))
  );
}

/** Params of `dendrogram`. */
export interface DendrogramParams {
  /** Categorical obs column(s) whose categories are clustered (several are combined as `a_b`). */
  groupby: string | string[];
  /**
   * Number of principal components of `X_pca` to use.
   * @asType integer
   * @minimum 1
   */
  n_pcs?: number;
  /** Representation to use: an obsm key or `X` (default `X_pca`). */
  use_rep?: string;
  /** Genes whose mean expression is correlated instead of a representation (use_rep and n_pcs are then ignored). */
  var_names?: string[];
  /** With `var_names`: read expression from `raw` (default: when the table has raw). */
  use_raw?: boolean;
  /**
   * Correlation between group means.
   * @default "pearson"
   */
  cor_method?: "pearson" | "spearman" | "kendall";
  /**
   * Linkage method of the hierarchical clustering (scipy's `linkage`).
   * @default "complete"
   */
  linkage_method?: LinkageMethod;
  /**
   * Reorder leaves to minimise distances between neighbours; only false is supported.
   * @default false
   */
  optimal_ordering?: boolean;
  /** uns key written (default `dendrogram_<groupby>`). */
  key_added?: string;
}

/**
 * Hierarchical clustering of the `groupby` categories: the correlation of their mean representation
 * (PCA by default, or mean expression of `var_names`), clustered on 1 − correlation. Writes
 * `uns/dendrogram_<groupby>` with scipy's linkage, the dendrogram layout and the correlation matrix.
 */
export async function dendrogram(sd: SpatialData, params: DendrogramParams, ctx: OpContext): Promise<Change> {
  const op = "dendrogram";
  const t = activeTable(sd, ctx, op);
  if (params.optimal_ordering) throw new Error(`${op}: optimal_ordering = true is not supported`);
  const groupby = Array.isArray(params.groupby) ? params.groupby : [params.groupby];
  if (groupby.length === 0) throw new Error(`${op}: groupby is empty`);
  const n = nObs(t);
  // Combined category of each cell (scanpy joins several groupby columns with "_").
  const parts = groupby.map((g) => categoricalObs(t, g, op));
  let codes: Int32Array;
  let categories: string[];
  if (parts.length === 1) {
    codes = parts[0]!.codes;
    categories = parts[0]!.categories;
  } else {
    const labels = new Array<string | null>(n);
    for (let i = 0; i < n; i++) {
      const vals = parts.map((p) => (p.codes[i]! < 0 ? null : p.categories[p.codes[i]!]!));
      labels[i] = vals.some((v) => v === null) ? null : vals.join("_");
    }
    categories = [...new Set(labels.filter((v): v is string => v !== null))].sort();
    const at = new Map(categories.map((c, i) => [c, i]));
    codes = Int32Array.from(labels, (l) => (l === null ? -1 : at.get(l)!));
  }
  const k = categories.length;
  // Feature matrix: representation or selected genes.
  let feat: Float64Array;
  let d: number;
  if (params.var_names && params.var_names.length > 0) {
    const useRaw = params.use_raw ?? t.raw !== null;
    if (useRaw && !t.raw) throw new Error(`${op}: use_raw is true but the table has no raw`);
    const names = useRaw ? t.raw!.var.index.values : t.var.index.values;
    const cols = params.var_names.map((g) => {
      const j = names.indexOf(g);
      if (j < 0) throw new Error(`${op}: gene "${g}" is not in ${useRaw ? "raw.var_names" : "var_names"}`);
      return j;
    });
    const slot = useRaw ? t.raw!.X : t.X;
    if (!slot) throw new Error(`${op}: the table has no X`);
    const x = await loadMatrix(slot);
    d = cols.length;
    feat = new Float64Array(n * d);
    if (x.kind === "dense") {
      const w = x.shape[1]!;
      for (let i = 0; i < n; i++)
        for (let c = 0; c < d; c++) feat[i * d + c] = Number(x.data[i * w + cols[c]!]);
    } else {
      const csc = x.kind === "csc" ? x : switchCompression(x);
      cols.forEach((j, c) => {
        for (let p = Number(csc.indptr[j]); p < Number(csc.indptr[j + 1]); p++) {
          feat[(csc.indices[p] as number) * d + c] = Number(csc.data[p]);
        }
      });
    }
  } else {
    const rep = await chooseRepresentation(t, op, params.use_rep, params.n_pcs);
    d = rep.d;
    feat = rep.data instanceof Float64Array ? rep.data : Float64Array.from(rep.data);
  }
  const means = new Float64Array(k * d);
  const counts = new Float64Array(k);
  for (let i = 0; i < n; i++) {
    const c = codes[i]!;
    if (c < 0) continue;
    counts[c]!++;
    for (let j = 0; j < d; j++) means[c * d + j] = means[c * d + j]! + feat[i * d + j]!;
  }
  for (let c = 0; c < k; c++) {
    if (counts[c] === 0)
      throw new Error(`${op}: category "${categories[c]}" of ${groupby.join("_")} has no cells`);
    for (let j = 0; j < d; j++) means[c * d + j] = means[c * d + j]! / counts[c]!;
  }
  const method = params.cor_method ?? "pearson";
  const rows = Array.from({ length: k }, (_, c) => {
    const r = means.slice(c * d, (c + 1) * d);
    return method === "spearman" ? ranks(r) : r;
  });
  const corr = new Float64Array(k * k);
  for (let a = 0; a < k; a++) {
    corr[a * k + a] = 1;
    for (let b = a + 1; b < k; b++) {
      const v = method === "kendall" ? kendallTauB(rows[a]!, rows[b]!) : pearson(rows[a]!, rows[b]!);
      const clipped = Math.max(-1, Math.min(1, v));
      corr[a * k + b] = clipped;
      corr[b * k + a] = clipped;
    }
  }
  const dist = new Float64Array(k * k);
  for (let i = 0; i < k * k; i++) dist[i] = 1 - corr[i]!;
  const z = linkage(dist, k, params.linkage_method ?? "complete");
  const layout = dendrogramLayout(z, categories);
  const key = params.key_added ?? `dendrogram_${groupby.join("_")}`;
  const f64 = (data: Float64Array, shape: number[]): DenseArray => {
    const out = allocArray("float64", data.length) as Float64Array;
    out.set(data);
    return { kind: "dense", dtype: "float64", shape, data: out };
  };
  const i64 = (v: number[]): DenseArray => {
    const out = allocArray("int64", v.length) as BigInt64Array;
    v.forEach((x, i) => {
      out[i] = BigInt(x);
    });
    return { kind: "dense", dtype: "int64", shape: [v.length], data: out };
  };
  const strs = (v: string[]) => ({ kind: "string" as const, shape: [v.length], values: v });
  const m = layout.icoord.length;
  const info: UnsDict = {
    kind: "dict",
    entries: {
      icoord: f64(Float64Array.from(layout.icoord.flat()), [m, 4]),
      dcoord: f64(Float64Array.from(layout.dcoord.flat()), [m, 4]),
      ivl: strs(layout.ivl),
      leaves: i64(layout.leaves),
      color_list: strs(layout.color_list),
      leaves_color_list: strs(layout.leaves_color_list),
    },
  };
  const dat: UnsDict = {
    kind: "dict",
    entries: {
      linkage: f64(z, [Math.max(0, k - 1), 4]),
      groupby: strs(groupby),
      use_rep: params.use_rep ?? null,
      cor_method: method,
      linkage_method: params.linkage_method ?? "complete",
      categories_ordered: strs(layout.ivl),
      categories_idx_ordered: i64(layout.leaves),
      dendrogram_info: info,
      correlation_matrix: f64(corr, [k, k]),
    },
  };
  ctx.progress(1);
  return { tables: { [ctx.table]: { uns: { [key]: dat } } } };
}
