/**
 * `gr.ligrec`: CellPhoneDB's ligand–receptor permutation test as squidpy 1.8.3 runs it, on
 * interactions given as a parameter (no network download). Stored in uns `{cluster_key}_ligrec`
 * (or `key_added`): `means` and `pvalues` (data frames, one row per interaction named
 * `source|target`, one column per cluster pair named `cluster_1|cluster_2` — squidpy's MultiIndex
 * levels joined by `|`), `interactions` (source, target) and `clusters` (cluster_1, cluster_2) with
 * the levels themselves, and `metadata` (an empty frame; interactions carry no extra columns here).
 */
import { readFile, stat } from "node:fs/promises";
import { allocArray, type Matrix } from "../../sdk/data/arrays.js";
import type { Change } from "../../sdk/data/change.js";
import { type Column, dataFrame } from "../../sdk/data/dataframe.js";
import { loadMatrix } from "../../sdk/data/lazy.js";
import type { SpatialData } from "../../sdk/data/spatialdata.js";
import { unsDict } from "../../sdk/data/uns.js";
import type { OpContext } from "../../sdk/jobs/operation.js";
import { type GeneRows, ligrecTest } from "../../sdk/math/spatial/ligrec.js";
import { benjaminiHochberg, bonferroni } from "../../sdk/math/stats.js";
import { clusters, tableOf } from "./inputs.js";

/** A gene (or a complex, genes joined by `_`). @maxLength 256 */
export type GeneName = string;

/** One interaction: [source, target]. @minItems 2 @maxItems 2 */
export type InteractionPair = GeneName[];

/** Parameters of `ligrec`. */
export interface LigrecParams {
  /**
   * Categorical obs column of the clusters.
   * @widget obs_categorical
   * @maxLength 256
   */
  cluster_key: string;
  /**
   * Ligand–receptor pairs [source, target] (e.g. from CellPhoneDB or OmniPath, saved beforehand:
   * nothing is downloaded). Complexes join their genes with `_`.
   * Give these or `interactions_file`.
   * @minItems 1
   * @maxItems 100000
   */
  interactions?: InteractionPair[] | null;
  /**
   * A CSV or TSV file under the data dir with the pairs, one per line: columns `source` and `target`
   * named in a header line (as squidpy's interactions frame), else the first two columns (as CellPhoneDB
   * exports and `omnipath` tables saved as CSV). Instead of `interactions`.
   * @pathKind file
   * @maxLength 4096
   */
  interactions_file?: string | null;
  /**
   * Complexes: `min` takes the gene with the smallest mean expression, `all` every combination.
   * @default "min"
   */
  complex_policy?: "min" | "all";
  /**
   * Leave a (gene, cluster) out of the test when fewer than this fraction of the cluster's cells
   * express the gene.
   * @default 0.01
   * @minimum 0
   * @maximum 1
   */
  threshold?: number;
  /** Multiple-testing correction of the p-values (none by default). */
  corr_method?: "fdr_bh" | "bonferroni" | null;
  /**
   * Axis of the correction: across the interactions of each cluster pair (`clusters`) or across the
   * cluster pairs of each interaction (`interactions`).
   * @default "clusters"
   */
  corr_axis?: "interactions" | "clusters";
  /**
   * Read expression from `raw` (squidpy's default) instead of X.
   * @default true
   */
  use_raw?: boolean;
  /**
   * Permutations of the cluster labels.
   * @default 1000
   * @minimum 1
   * @maximum 100000
   * @asType integer
   */
  n_perms?: number;
  /**
   * Seed of the permutations.
   * @asType integer
   */
  seed?: number | null;
  /**
   * uns key of the result (default `{cluster_key}_ligrec`).
   * @maxLength 256
   */
  key_added?: string | null;
}

/** Largest interactions file read (bytes). */
const MAX_INTERACTIONS_FILE_BYTES = 64 * 1024 * 1024;
/** Most interactions one call takes (the `interactions` param's bound too). */
const MAX_INTERACTIONS = 100_000;

/**
 * The pairs of `interactions`, or of `interactions_file` (a path the session already resolved and
 * contained under the data dir: it is only read here).
 */
async function interactionsOf(params: LigrecParams, what: string): Promise<string[][]> {
  const file = params.interactions_file ?? null;
  if (params.interactions && file)
    throw new Error(`${what}: give interactions or interactions_file, not both`);
  if (params.interactions) return params.interactions;
  if (!file) throw new Error(`${what}: no interactions: give interactions or interactions_file`);
  const st = await stat(file).catch((err: Error) => {
    throw new Error(`${what}: interactions_file ${file}: ${err.message}`);
  });
  if (!st.isFile()) throw new Error(`${what}: interactions_file ${file} is not a regular file`);
  if (st.size > MAX_INTERACTIONS_FILE_BYTES)
    throw new Error(
      `${what}: interactions_file ${file} has ${st.size} bytes, over ${MAX_INTERACTIONS_FILE_BYTES}`,
    );
  const lines = (await readFile(file, "utf8"))
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l.length > 0);
  if (lines.length === 0) throw new Error(`${what}: interactions_file ${file} is empty`);
  const sep = lines[0]!.includes("\t") ? "\t" : ",";
  const cells = (l: string) => l.split(sep).map((c) => c.trim().replace(/^"(.*)"$/, "$1"));
  const head = cells(lines[0]!).map((c) => c.toLowerCase());
  let si = head.indexOf("source");
  let ti = head.indexOf("target");
  let body = lines.slice(1);
  if (si < 0 || ti < 0) {
    si = 0;
    ti = 1;
    body = lines;
  }
  if (body.length > MAX_INTERACTIONS)
    throw new Error(`${what}: interactions_file ${file} has ${body.length} pairs, over ${MAX_INTERACTIONS}`);
  return body.map((l, i) => {
    const c = cells(l);
    const src = c[si];
    const tgt = c[ti];
    if (!src || !tgt)
      throw new Error(
        `${what}: interactions_file ${file} line ${i + (body === lines ? 1 : 2)}: no source and target`,
      );
    return [src, tgt];
  });
}

/**
 * Ligand–receptor interaction test between clusters (squidpy's `gr.ligrec`, CellPhoneDB's method):
 * mean expression of each pair across each cluster pair, and its permutation p-value.
 */
export async function ligrec(sd: SpatialData, params: LigrecParams, ctx: OpContext): Promise<Change> {
  const what = "ligrec";
  const t = tableOf(sd, ctx.table);
  const useRaw = params.use_raw ?? true;
  if (useRaw && !t.raw) throw new Error(`${what}: the table has no raw; pass use_raw=false to use X`);
  const slot = useRaw ? t.raw?.X : t.X;
  if (!slot) throw new Error(`${what}: the table has no X`);
  const varNames = (useRaw ? (t.raw?.var ?? t.var) : t.var).index.values.map((v) => (v ?? "").toUpperCase());
  const { codes, labels } = clusters(t, ctx.table, params.cluster_key);
  // Clusters present (squidpy drops the unused), all ordered pairs, sorted.
  const presentSet = new Set<number>();
  for (const c of codes) if (c >= 0) presentSet.add(c);
  const present = [...presentSet].map((c) => labels[c] as string).sort();
  if (present.length < 2)
    throw new Error(
      `${what}: expected at least 2 clusters in "${params.cluster_key}", found ${present.length}`,
    );
  const clusterIndex = new Map(present.map((l, i) => [l, i]));
  const x = await loadMatrix(slot);
  // Cells with a cluster only.
  const cells: number[] = [];
  for (let i = 0; i < codes.length; i++) if ((codes[i] as number) >= 0) cells.push(i);
  const cellLabels = Int32Array.from(
    cells,
    (i) => clusterIndex.get(labels[codes[i] as number] as string) as number,
  );
  const geneAt = new Map<string, number>();
  varNames.forEach((g, j) => {
    if (!geneAt.has(g)) geneAt.set(g, j);
  });
  // Interactions: upper-cased, deduplicated, complexes resolved, kept when both genes are present.
  const given = await interactionsOf(params, what);
  const raw = given.map(([s, tg]) => [String(s).toUpperCase(), String(tg).toUpperCase()] as [string, string]);
  const seen = new Set<string>();
  let pairs = raw.filter(([s, tg]) => {
    const key = `${s}\u0000${tg}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
  const policy = params.complex_policy ?? "min";
  if (policy === "min") {
    const meanOf = (g: string) => columnMean(x, geneAt.get(g) as number, cells);
    const pick = (c: string) => {
      if (!c.includes("_")) return c;
      const parts = c.split("_").filter((p) => geneAt.has(p));
      if (parts.length === 0) return c;
      if (parts.length === 1) return parts[0] as string;
      let best = parts[0] as string;
      let bestMean = meanOf(best);
      for (const p of parts.slice(1)) {
        const m = meanOf(p);
        if (m < bestMean) {
          best = p;
          bestMean = m;
        }
      }
      return best;
    };
    pairs = pairs.map(([s, tg]) => [pick(s), pick(tg)]);
  } else {
    pairs = pairs.flatMap(([s, tg]) =>
      s.split("_").flatMap((a) => tg.split("_").map((b) => [a, b] as [string, string])),
    );
  }
  pairs = pairs.filter(([s, tg]) => geneAt.has(s) && geneAt.has(tg));
  if (pairs.length === 0) throw new Error(`${what}: after filtering by genes, no interactions remain`);
  const seen2 = new Set<string>();
  pairs = pairs.filter(([s, tg]) => {
    const key = `${s}\u0000${tg}`;
    if (seen2.has(key)) return false;
    seen2.add(key);
    return true;
  });
  // Interaction genes, as columns 0…G−1 of a cells × G CSR.
  const genes = [...new Set(pairs.flat())];
  const local = new Map(genes.map((g, j) => [g, j]));
  const rows = geneRows(
    x,
    cells,
    genes.map((g) => geneAt.get(g) as number),
  );
  const pairIdx = Int32Array.from(
    pairs.flatMap(([s, tg]) => [local.get(s) as number, local.get(tg) as number]),
  );
  const clusterPairs: [string, string][] = [];
  for (const a of present) for (const b of present) clusterPairs.push([a, b]);
  const cpIdx = Int32Array.from(
    clusterPairs.flatMap(([a, b]) => [clusterIndex.get(a) as number, clusterIndex.get(b) as number]),
  );
  const nPerms = params.n_perms ?? 1000;
  ctx.log(
    `${what}: ${nPerms} permutations on ${pairs.length} interactions and ${clusterPairs.length} cluster pairs, ${ctx.threads} thread(s)`,
  );
  const r = await ligrecTest({
    rows,
    labels: cellLabels,
    k: present.length,
    pairs: pairIdx,
    clusterPairs: cpIdx,
    threshold: params.threshold ?? 0.01,
    nPerms,
    seed: params.seed ?? 0,
    threads: ctx.threads,
    signal: ctx.signal,
  });
  const nI = pairs.length;
  const nC = clusterPairs.length;
  if (params.corr_method) correct(r.pvalues, nI, nC, params.corr_method, params.corr_axis ?? "clusters");
  const rowNames = pairs.map(([s, tg]) => `${s}|${tg}`);
  const colNames = clusterPairs.map(([a, b]) => `${a}|${b}`);
  const frame = (v: Float64Array) => {
    const cols: Record<string, Column> = {};
    colNames.forEach((c, j) => {
      cols[c] = {
        kind: "dense",
        dtype: "float64",
        shape: [nI],
        data: Float64Array.from({ length: nI }, (_, i) => v[i * nC + j] as number),
      };
    });
    return dataFrame(rowNames, cols);
  };
  const str = (values: string[]): Column => ({ kind: "string", shape: [values.length], values });
  const key = params.key_added ?? `${params.cluster_key}_ligrec`;
  return {
    tables: {
      [ctx.table]: {
        uns: {
          [key]: unsDict({
            means: frame(r.means),
            pvalues: frame(r.pvalues),
            interactions: dataFrame(rowNames, {
              source: str(pairs.map((p) => p[0])),
              target: str(pairs.map((p) => p[1])),
            }),
            clusters: dataFrame(colNames, {
              cluster_1: str(clusterPairs.map((p) => p[0])),
              cluster_2: str(clusterPairs.map((p) => p[1])),
            }),
            metadata: dataFrame(rowNames, {}),
          }),
        },
      },
    },
  };
}

/** statsmodels' correction of each column (`clusters`) or row (`interactions`), NaN kept as NaN. */
function correct(
  p: Float64Array,
  nI: number,
  nC: number,
  method: "fdr_bh" | "bonferroni",
  axis: "interactions" | "clusters",
) {
  const lines = axis === "clusters" ? nC : nI;
  const len = axis === "clusters" ? nI : nC;
  const at = (line: number, e: number) => (axis === "clusters" ? e * nC + line : line * nC + e);
  for (let line = 0; line < lines; line++) {
    const v = Float64Array.from({ length: len }, (_, e) => {
      const x = p[at(line, e)] as number;
      return Number.isNaN(x) ? 1 : x;
    });
    const q = method === "fdr_bh" ? benjaminiHochberg(v) : bonferroni(v);
    for (let e = 0; e < len; e++)
      if (!Number.isNaN(p[at(line, e)] as number)) p[at(line, e)] = q[e] as number;
  }
}

/** Mean of column j of a cells × genes matrix over the given rows. */
function columnMean(x: Matrix, j: number, cells: number[]): number {
  const r = geneRows(x, cells, [j]);
  let s = 0;
  for (let p = 0; p < r.data.length; p++) s += r.data[p] as number;
  return s / cells.length;
}

/** Rows `cells` and columns `cols` of a matrix as CSR (columns renumbered 0…), float64, shared. */
function geneRows(x: Matrix, cells: number[], cols: number[]): GeneRows {
  const width = x.shape[1] as number;
  const at = new Int32Array(width).fill(-1);
  cols.forEach((c, k) => {
    at[c] = k;
  });
  const idx: number[] = [];
  const val: number[] = [];
  const indptr = allocArray("int32", cells.length + 1) as Int32Array;
  const push = (k: number, v: number) => {
    if (v !== 0) {
      idx.push(k);
      val.push(v);
    }
  };
  if (x.kind === "csr") {
    cells.forEach((i, r) => {
      for (let p = Number(x.indptr[i]); p < Number(x.indptr[i + 1]); p++) {
        const k = at[Number(x.indices[p])] as number;
        if (k >= 0) push(k, Number(x.data[p]));
      }
      indptr[r + 1] = idx.length;
    });
  } else if (x.kind === "dense") {
    const d = x.data as unknown as ArrayLike<number | bigint>;
    cells.forEach((i, r) => {
      cols.forEach((c, k) => {
        push(k, Number(d[i * width + c]));
      });
      indptr[r + 1] = idx.length;
    });
  } else {
    // CSC: gather per column, then sort into rows.
    const rowOf = new Int32Array(x.shape[0] as number).fill(-1);
    cells.forEach((i, r) => {
      rowOf[i] = r;
    });
    const lists: [number, number][][] = cells.map(() => []);
    cols.forEach((c, k) => {
      for (let p = Number(x.indptr[c]); p < Number(x.indptr[c + 1]); p++) {
        const r = rowOf[Number(x.indices[p])] as number;
        if (r >= 0) lists[r]?.push([k, Number(x.data[p])]);
      }
    });
    lists.forEach((l, r) => {
      for (const [k, v] of l) push(k, v);
      indptr[r + 1] = idx.length;
    });
  }
  const indices = allocArray("int32", idx.length) as Int32Array;
  indices.set(idx);
  const data = allocArray("float64", val.length) as Float64Array;
  data.set(val);
  return { indptr, indices, data, nGenes: cols.length };
}
