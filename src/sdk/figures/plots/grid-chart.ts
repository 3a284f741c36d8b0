/**
 * The rows × columns chart behind scanpy's dotplot and matrixplot (groups × genes), squidpy's
 * nhood_enrichment and interaction_matrix heatmaps (clusters × clusters) and ligrec's dot plot
 * (interactions × cluster pairs): each cell is a coloured square, or a dot whose colour and size carry
 * two values. Labels, optional colour strips of the categories, column group brackets, a colour bar and
 * a dot-size key are laid around it.
 */
import { circle, group, line, rect, svgDocument, text } from "../svg.js";
import { bottomLabels, leftLabels, panelTitle } from "./axes.js";
import { colormapHex, normalizer } from "./colormaps.js";
import { type DendrogramLinks, dendrogramSvg } from "./dendrogram.js";
import { colorbar, type Sized, sizeLegend } from "./legend.js";
import { extent } from "./scale.js";
import { clip, maxTextWidth } from "./text-metrics.js";

/** A bracket over a run of columns (scanpy's `var_group_positions`/`var_group_labels`). */
export interface ColumnGroup {
  /** First column, inclusive. */
  start: number;
  /** Last column, inclusive. */
  end: number;
  label: string;
}

/** What a grid chart draws. */
export interface GridChartSpec {
  rowLabels: readonly string[];
  colLabels: readonly string[];
  /** Colour values, row-major `rows × cols`; NaN cells are left empty. */
  values: ArrayLike<number>;
  /** Dot radii as a fraction (0–1) of half a cell; absent draws filled squares instead of dots. */
  radii?: ArrayLike<number>;
  /** Dots (non-zero entries) outlined in red: squidpy's ligrec marks significant interactions so. */
  highlight?: ArrayLike<number>;
  cmap: string;
  vmin?: number | null;
  vmax?: number | null;
  vcenter?: number | null;
  /** Title of the colour bar. */
  colorTitle?: string;
  /** Dot-size key: labels and radius fractions (dot mode only). */
  sizeKey?: { title: string; dots: readonly { label: string; fraction: number }[] };
  /** Colour strip left of the rows (one colour per row). */
  rowColors?: readonly string[];
  /** Colour strip above the columns (one colour per column). */
  colColors?: readonly string[];
  colGroups?: readonly ColumnGroup[];
  /** Write each cell's value in it. */
  annotate?: boolean;
  title?: string;
  /** Cell size in px. @default 22 */
  cell?: number;
  /** Grey grid lines between squares (matrixplot: scanpy's edge colour gray, width 0.1). */
  gridLines?: boolean;
  /** A dendrogram right of the rows or above the columns (leaves in row / column order). */
  dendrogram?: { links: DendrogramLinks; side: "right" | "top" };
}

/** Room a dendrogram takes beside the grid, px (scanpy: 0.8 in). */
const DENDROGRAM_PX = 48;

/** The whole chart as an SVG document. */
export function gridChart(spec: GridChartSpec): string {
  const nr = spec.rowLabels.length;
  const nc = spec.colLabels.length;
  if (nr === 0 || nc === 0) throw new Error("nothing to draw: the chart has no rows or no columns");
  if (spec.values.length !== nr * nc)
    throw new Error(`grid chart: ${spec.values.length} values for ${nr} × ${nc} cells`);
  const cell = spec.cell ?? 22;
  const rowLabels = spec.rowLabels.map((s) => clip(s));
  const colLabels = spec.colLabels.map((s) => clip(s));
  const stripW = spec.rowColors ? 10 : 0;
  const stripH = spec.colColors ? 10 : 0;
  const groupH = spec.colGroups?.length ? 30 : 0;
  const titleH = spec.title ? 24 : 6;
  const dendroTop = spec.dendrogram?.side === "top" ? DENDROGRAM_PX + 6 : 0;
  const dendroRight = spec.dendrogram?.side === "right" ? DENDROGRAM_PX + 6 : 0;
  const left = 10 + maxTextWidth(rowLabels, 10) + 8 + stripW;
  const top = titleH + groupH + stripH + dendroTop + 4;
  const gridW = nc * cell;
  const gridH = nr * cell;
  const bottom = maxTextWidth(colLabels, 10) + 14;

  const [lo, hi] = extent(Array.from(spec.values).filter((v) => Number.isFinite(v)));
  const vmin = spec.vmin ?? lo;
  const vmax = spec.vmax ?? hi;
  const norm = normalizer(vmin, vmax, spec.vcenter);
  const parts: string[] = [];
  if (spec.title) parts.push(panelTitle(spec.title, left + gridW / 2, 16));

  const cells: string[] = [];
  for (let r = 0; r < nr; r++) {
    for (let c = 0; c < nc; c++) {
      const v = spec.values[r * nc + c]!;
      const x = left + c * cell;
      const y = top + r * cell;
      if (!Number.isFinite(v)) continue;
      const fill = colormapHex(spec.cmap, norm(v));
      if (spec.radii) {
        const f = spec.radii[r * nc + c]!;
        const hl = spec.highlight ? spec.highlight[r * nc + c]! > 0 : false;
        if (f > 0)
          cells.push(
            circle(x + cell / 2, y + cell / 2, (f * cell) / 2, {
              class: hl ? "dot highlighted" : "dot",
              fill,
              stroke: hl ? "#d62728" : "#000",
              // scanpy's DotPlot.DEFAULT_DOT_EDGELW
              "stroke-width": hl ? 1.2 : 0.2,
            }),
          );
      } else {
        cells.push(rect(x, y, cell, cell, { class: "cell", fill }));
      }
      if (spec.annotate) {
        const t = norm(v);
        cells.push(
          text(x + cell / 2, y + cell / 2, Number(v.toPrecision(2)).toString(), {
            size: Math.min(9, cell * 0.4),
            anchor: "middle",
            baseline: "middle",
            fill: t > 0.6 ? "#000" : "#fff",
          }),
        );
      }
    }
  }
  parts.push(group(cells, { class: "cells" }));
  if (spec.gridLines && !spec.radii) {
    const g: string[] = [];
    for (let c = 1; c < nc; c++)
      g.push(
        line(left + c * cell, top, left + c * cell, top + gridH, { stroke: "#808080", "stroke-width": 0.1 }),
      );
    for (let r = 1; r < nr; r++)
      g.push(
        line(left, top + r * cell, left + gridW, top + r * cell, { stroke: "#808080", "stroke-width": 0.1 }),
      );
    parts.push(group(g));
  }
  parts.push(rect(left, top, gridW, gridH, { fill: "none", stroke: "#000", "stroke-width": 0.8 }));
  if (spec.rowColors) {
    spec.rowColors.forEach((c, r) => {
      parts.push(rect(left - stripW - 2, top + r * cell, stripW, cell, { class: "row-color", fill: c }));
    });
  }
  if (spec.colColors) {
    spec.colColors.forEach((c, i) => {
      parts.push(rect(left + i * cell, top - stripH - 2, cell, stripH, { class: "col-color", fill: c }));
    });
  }
  for (const g of spec.colGroups ?? []) {
    const x0 = left + g.start * cell + 2;
    const x1 = left + (g.end + 1) * cell - 2;
    const y = titleH + groupH - 4;
    parts.push(line(x0, y, x1, y, { stroke: "#000", "stroke-width": 0.8 }));
    parts.push(line(x0, y, x0, y + 4, { stroke: "#000", "stroke-width": 0.8 }));
    parts.push(line(x1, y, x1, y + 4, { stroke: "#000", "stroke-width": 0.8 }));
    parts.push(
      text((x0 + x1) / 2, y - 3, clip(g.label, 20), {
        size: 10,
        anchor: "middle",
        rotate: x1 - x0 < 40 ? -45 : 0,
      }),
    );
  }
  parts.push(
    leftLabels(
      rowLabels,
      rowLabels.map((_, r) => top + (r + 0.5) * cell),
      left - stripW - 2,
    ),
  );
  parts.push(
    bottomLabels(
      colLabels,
      colLabels.map((_, c) => left + (c + 0.5) * cell),
      top + gridH,
    ),
  );

  if (spec.dendrogram) {
    const right = spec.dendrogram.side === "right";
    parts.push(
      dendrogramSvg(spec.dendrogram.links, {
        side: spec.dendrogram.side,
        leafCentres: right
          ? rowLabels.map((_, r) => top + (r + 0.5) * cell)
          : colLabels.map((_, c) => left + (c + 0.5) * cell),
        base: right ? left + gridW + 4 : top - stripH - 4,
        depth: DENDROGRAM_PX,
      }),
    );
  }

  // Legends to the right, stacked.
  const lx = left + gridW + 24 + dendroRight;
  let ly = top;
  const legends: Sized[] = [];
  const bar = colorbar(lx, ly, {
    cmap: spec.cmap,
    vmin,
    vmax,
    center: spec.vcenter,
    title: spec.colorTitle,
    length: Math.max(60, Math.min(140, gridH)),
  });
  legends.push(bar);
  ly += bar.height + 24;
  if (spec.sizeKey && spec.radii) {
    const key = sizeLegend(
      lx,
      ly,
      spec.sizeKey.dots.map((d) => ({ label: d.label, r: (d.fraction * cell) / 2 })),
      spec.sizeKey.title,
    );
    legends.push(key);
    ly += key.height;
  }
  parts.push(...legends.map((l) => l.svg));
  const width = lx + Math.max(...legends.map((l) => l.width)) + 12;
  const height = Math.max(top + gridH + bottom, ly) + 8;
  return svgDocument({ width, height, children: parts, background: "#ffffff", title: spec.title });
}
