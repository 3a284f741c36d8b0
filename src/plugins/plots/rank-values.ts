/**
 * `values_to_plot` of the rank_genes_groups dot and matrix plots: the colour of (group, gene) is the
 * ranking's statistic for that gene in that group's ranking (NaN when the gene is not among the
 * group's stored genes), as scanpy takes it from `rank_genes_groups_df`.
 */
import { columnValue, type DataFrame } from "../../sdk/data/dataframe.js";
import type { GroupedExpression } from "./grouped-data.js";

/** The colour values, colour map, centre and colour bar title of a statistic. */
export interface RankColour {
  values: Float64Array;
  cmap?: string;
  vcenter?: number;
  title: string;
}

/** The colour of each (group, gene) by `stat` of the ranking, or null when `stat` is not set. */
export function finishOptional(
  stat: string | null | undefined,
  frames: Record<string, DataFrame>,
  e: GroupedExpression,
  op: string,
): RankColour | null {
  if (!stat) return null;
  const log10 = stat.startsWith("log10_");
  const base = log10 ? stat.slice("log10_".length) : stat;
  const frame = frames[base];
  const names = frames.names;
  if (!frame || !names) throw new Error(`${op}: values_to_plot "${stat}": the ranking has no "${base}"`);
  const nv = e.genes.length;
  const values = new Float64Array(e.labels.length * nv).fill(Number.NaN);
  e.labels.forEach((g, gi) => {
    const nameCol = names.columns[g];
    const valCol = frame.columns[g];
    if (!nameCol || !valCol) return;
    const at = new Map<string, number>();
    for (let i = 0; i < names.index.values.length; i++) {
      const n = columnValue(nameCol, i);
      if (n !== null && !at.has(String(n))) at.set(String(n), i);
    }
    e.genes.forEach((gene, j) => {
      const i = at.get(gene);
      if (i === undefined) return;
      const v = Number(columnValue(valCol, i));
      values[gi * nv + j] = log10 ? -Math.log10(v) : v;
    });
  });
  if (base === "logfoldchanges") return { values, cmap: "bwr", vcenter: 0, title: "log fold change" };
  return { values, title: log10 ? `-log10(${base})` : base };
}
