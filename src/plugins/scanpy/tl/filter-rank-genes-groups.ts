/**
 * `sc.tl.filter_rank_genes_groups` (scanpy's `tools/_rank_genes_groups.py`): copy a
 * `rank_genes_groups` result with the genes that fail the fold-change and fraction filters set to NaN.
 */
import { strings } from "../../../sdk/data/arrays.js";
import type { Change } from "../../../sdk/data/change.js";
import { columnValue, type DataFrame, dataFrame } from "../../../sdk/data/dataframe.js";
import type { SpatialData } from "../../../sdk/data/spatialdata.js";
import { isUnsDict, type UnsDict, type UnsValue, unsDict } from "../../../sdk/data/uns.js";
import type { OpContext } from "../../../sdk/jobs/operation.js";
import { expressionSource, groupingOf, matrixColumns } from "../get/expression.js";
import { activeTable } from "../helpers.js";
import { expm1For } from "./rank-genes-groups.js";

/** Params of `filter_rank_genes_groups`. */
export interface FilterRankGenesGroupsParams {
  /**
   * uns key of the `rank_genes_groups` results.
   * @default "rank_genes_groups"
   */
  key?: string;
  /** obs column of the groups (default: the one the results were computed with). */
  groupby?: string;
  /** Use `raw` (default: as the results were computed). */
  use_raw?: boolean;
  /** Layer to read expression from. */
  layer?: string;
  /**
   * uns key the filtered results are stored under.
   * @default "rank_genes_groups_filtered"
   */
  key_added?: string;
  /**
   * Keep genes expressed in more than this fraction of the group's cells.
   * @default 0.25
   */
  min_in_group_fraction?: number;
  /**
   * Keep genes whose log2 fold change is above this.
   * @default 1
   */
  min_fold_change?: number;
  /**
   * Keep genes expressed in less than this fraction of the other cells.
   * @default 0.5
   */
  max_out_group_fraction?: number;
  /**
   * Compare the absolute log2 fold change with `min_fold_change`.
   * @default false
   */
  compare_abs?: boolean;
}

/**
 * Filter the genes of `rank_genes_groups` results by log fold change and by the fractions of cells
 * expressing them inside and outside each group; genes that fail get a missing name (scanpy's NaN),
 * keeping the tables' shape. Writes `uns/<key_added>`.
 */
export async function filter_rank_genes_groups(
  sd: SpatialData,
  params: FilterRankGenesGroupsParams,
  ctx: OpContext,
): Promise<Change> {
  const op = "filter_rank_genes_groups";
  const t = activeTable(sd, ctx, op);
  const key = params.key ?? "rank_genes_groups";
  const entry = t.uns.entries[key];
  if (!isUnsDict(entry)) throw new Error(`${op}: no rank_genes_groups results in uns "${key}"`);
  const prm = entry.entries.params;
  const pget = (f: string): UnsValue | undefined => (isUnsDict(prm) ? prm.entries[f] : undefined);
  const groupby = params.groupby ?? (pget("groupby") as string | undefined);
  if (typeof groupby !== "string")
    throw new Error(`${op}: uns "${key}/params/groupby" is missing; pass groupby`);
  const useRaw = params.use_raw ?? (params.layer ? false : pget("use_raw") === true);
  const namesV = entry.entries.names;
  if (!namesV || typeof namesV !== "object" || namesV.kind !== "dataframe")
    throw new Error(`${op}: uns "${key}/names" is missing or not a per-group frame`);
  const namesFrame = namesV;
  const sameParams =
    pget("groupby") === groupby && pget("reference") === "rest" && pget("use_raw") === useRaw;
  const lfcV = entry.entries.logfoldchanges;
  const useLogfolds = sameParams && !!lfcV && typeof lfcV === "object" && lfcV.kind === "dataframe";
  const ptsV = entry.entries.pts;
  const restV = entry.entries.pts_rest;
  const useFraction =
    sameParams &&
    !!ptsV &&
    typeof ptsV === "object" &&
    ptsV.kind === "dataframe" &&
    !!restV &&
    typeof restV === "object" &&
    restV.kind === "dataframe";

  const grouping = groupingOf(t, groupby, op);
  let src: Awaited<ReturnType<typeof expressionSource>> | null = null;
  if (!useLogfolds || !useFraction) src = await expressionSource(t, useRaw, params.layer, op);
  const expm1 = expm1For(t);
  const minIn = params.min_in_group_fraction ?? 0.25;
  const maxOut = params.max_out_group_fraction ?? 0.5;
  const minFc = params.min_fold_change ?? 1;
  const newNames: Record<string, ReturnType<typeof strings>> = {};
  for (const group of namesFrame.columnOrder) {
    const col = namesFrame.columns[group]!;
    const geneNames: (string | null)[] = [];
    for (let r = 0; r < namesFrame.index.values.length; r++) {
      const v = columnValue(col, r);
      geneNames.push(v === null ? null : String(v));
    }
    const n = geneNames.length;
    const fin = new Float64Array(n);
    const fout = new Float64Array(n);
    const fc = new Float64Array(n);
    if (src) {
      const at = new Map(src.varNames.map((g, i) => [g, i]));
      const cat = grouping.categories.indexOf(group);
      const cols = geneNames.map((g) => (g === null ? -1 : (at.get(g) ?? -1)));
      const present = cols.filter((c) => c >= 0);
      const values = matrixColumns(src.matrix, present);
      let p = 0;
      let nIn = 0;
      for (const c of grouping.codes) if (c === cat) nIn++;
      const nOut = grouping.codes.length - nIn;
      cols.forEach((c, r) => {
        if (c < 0) {
          fin[r] = fout[r] = fc[r] = Number.NaN;
          return;
        }
        const v = values[p++]!;
        let sIn = 0;
        let sOut = 0;
        let zIn = 0;
        let zOut = 0;
        for (let i = 0; i < v.length; i++) {
          const x = v[i]!;
          if (grouping.codes[i] === cat) {
            sIn += x;
            if (x !== 0) zIn++;
          } else {
            sOut += x;
            if (x !== 0) zOut++;
          }
        }
        fin[r] = zIn / nIn;
        fout[r] = zOut / nOut;
        fc[r] = Math.log2((expm1(sIn / nIn) + 1e-9) / (expm1(sOut / nOut) + 1e-9));
      });
    }
    if (useFraction) {
      const ptsF = ptsV as DataFrame;
      const restF = restV as DataFrame;
      const at = new Map(ptsF.index.values.map((g, i) => [g, i]));
      geneNames.forEach((g, r) => {
        const i = g === null ? undefined : at.get(g);
        fin[r] = i === undefined ? Number.NaN : Number(columnValue(ptsF.columns[group]!, i));
        fout[r] = i === undefined ? Number.NaN : Number(columnValue(restF.columns[group]!, i));
      });
    }
    if (useLogfolds) {
      const lf = (lfcV as DataFrame).columns[group];
      for (let r = 0; r < n; r++) fc[r] = lf ? Number(columnValue(lf, r)) : Number.NaN;
    }
    newNames[group] = strings(
      geneNames.map((g, r) => {
        const f = params.compare_abs ? Math.abs(fc[r]!) : fc[r]!;
        return fin[r]! > minIn && fout[r]! < maxOut && f > minFc ? g : null;
      }),
    );
  }
  const out: Record<string, UnsValue> = { ...entry.entries };
  out.names = dataFrame(namesFrame.index, newNames, namesFrame.indexName, namesFrame.columnOrder);
  const keyAdded = params.key_added ?? "rank_genes_groups_filtered";
  return { tables: { [ctx.table]: { uns: { [keyAdded]: unsDict(out) as UnsDict } } } };
}
