/** Engine test plot (namespace `pl`): a small SVG scatter of the cells with the field paths it read. */

import { defaultColor } from "../../../src/plugins/tessera/palette.js";
import { type ColumnKind, columnKind, columnValue } from "../../../src/sdk/data/dataframe.js";
import type { SpatialData } from "../../../src/sdk/data/spatialdata.js";
import { nObs } from "../../../src/sdk/data/table.js";
import type { OpContext, PlotResult } from "../../../src/sdk/jobs/operation.js";

/** Params of `test_scatter`. */
export interface TestScatterParams {
  /**
   * obsm key of the coordinates.
   * @default "spatial"
   */
  basis?: string;
  /**
   * Obs column to colour by (categorical or numeric).
   * @widget obs_key
   */
  color?: string;
  /**
   * At most this many cells are drawn (the first ones).
   * @asType integer
   * @minimum 1
   * @default 500
   */
  max_points?: number;
  /**
   * Wait this long before drawing, logging each tenth of the wait (the app's live plot log is tested
   * with it).
   * @asType integer
   * @minimum 0
   * @default 0
   */
  delay_ms?: number;
}

const SIZE = 200;

/** Draw the cells of the active table as a small SVG scatter plot. */
export async function test_scatter(
  sd: SpatialData,
  params: TestScatterParams,
  ctx: OpContext,
): Promise<PlotResult> {
  const t = sd.tables[ctx.table];
  if (!t) throw new Error(`no table "${ctx.table}"`);
  const delay = params.delay_ms ?? 0;
  for (let i = 1; delay > 0 && i <= 10; i++) {
    ctx.signal.throwIfAborted();
    await new Promise((r) => setTimeout(r, delay / 10));
    ctx.log(`drawing test_scatter ${i}/10`);
  }
  const basis = params.basis ?? "spatial";
  const xy = t.obsm[basis];
  if (!xy || xy.kind !== "dense" || xy.shape.length !== 2 || xy.shape[1]! < 2) {
    throw new Error(`table "${ctx.table}" has no dense obsm "${basis}" with 2 columns`);
  }
  const n = Math.min(nObs(t), params.max_points ?? 500);
  const w = xy.shape[1]!;
  const at = (i: number, j: number) => Number(xy.data[i * w + j]);
  let [x0, x1, y0, y1] = [Infinity, -Infinity, Infinity, -Infinity];
  for (let i = 0; i < n; i++) {
    x0 = Math.min(x0, at(i, 0));
    x1 = Math.max(x1, at(i, 0));
    y0 = Math.min(y0, at(i, 1));
    y1 = Math.max(y1, at(i, 1));
  }
  const scale = SIZE / Math.max(x1 - x0, y1 - y0, 1e-9);
  const col = params.color ? t.obs.columns[params.color] : undefined;
  if (params.color && !col) throw new Error(`table "${ctx.table}" has no obs column "${params.color}"`);
  const kind: ColumnKind | undefined = col ? columnKind(col) : undefined;
  const colorOf = (i: number): string => {
    if (!col) return "#1f77b4";
    if (col.kind === "categorical") return col.codes[i]! < 0 ? "#cccccc" : defaultColor(col.codes[i]!);
    const v = columnValue(col, i);
    return kind === "numeric" && typeof v === "number"
      ? `hsl(${Math.round(240 - 240 * Math.tanh(Math.abs(v)))},70%,50%)`
      : "#1f77b4";
  };
  const dots: string[] = [];
  for (let i = 0; i < n; i++) {
    const cx = ((at(i, 0) - x0) * scale).toFixed(1);
    const cy = ((at(i, 1) - y0) * scale).toFixed(1);
    dots.push(`<circle cx="${cx}" cy="${cy}" r="1.5" fill="${colorOf(i)}"/>`);
  }
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${SIZE}" height="${SIZE}" viewBox="0 0 ${SIZE} ${SIZE}">${dots.join("")}</svg>`;
  const references = [
    `tables:${ctx.table}:obsm:${basis}`,
    ...(params.color ? [`tables:${ctx.table}:obs:${params.color}`] : []),
  ];
  return { kind: "plot", svg, references };
}
