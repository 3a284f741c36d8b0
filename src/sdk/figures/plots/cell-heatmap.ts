/**
 * scanpy's `heatmap`: every cell a row (grouped by category), every gene a column, the expression as
 * colour, a strip of the group colours with their labels on the left. The cells × genes image is a
 * raster (nearest-neighbour down-sampled to at most `MAX_ROWS` pixel rows, as matplotlib's imshow
 * samples it), embedded in the SVG; labels and legend stay vector.
 */
import sharp from "sharp";
import { image, line, rect, svgDocument } from "../svg.js";
import { bottomLabels, frame, leftLabels, panelTitle } from "./axes.js";
import { colormapRgb, normalizer } from "./colormaps.js";
import { type DendrogramLinks, dendrogramSvg } from "./dendrogram.js";
import { colorbar } from "./legend.js";
import { clip, maxTextWidth } from "./text-metrics.js";

/** Pixel rows of the cells × genes raster at most (a figure is a few hundred px tall). */
export const MAX_ROWS = 600;

/** What the heatmap draws. */
export interface CellHeatmapSpec {
  /** Gene (column) labels. */
  genes: readonly string[];
  /** Values per gene (`genes.length` arrays of n cells). */
  columns: readonly ArrayLike<number>[];
  /** Cells in drawing order (grouped). */
  order: ArrayLike<number>;
  /** Groups in order, with how many consecutive rows of `order` each takes and its colour. */
  groups: readonly { label: string; count: number; color: string }[];
  cmap: string;
  vmin?: number | null;
  vmax?: number | null;
  vcenter?: number | null;
  colorTitle?: string;
  title?: string;
  /** Height of the cells axis in px. @default 360 */
  height?: number;
  /** A dendrogram right of the heatmap, its leaves at the groups' bands (in `groups` order). */
  dendrogram?: DendrogramLinks;
}

/** Room the dendrogram takes, px (scanpy: 0.8 in). */
const DENDROGRAM_PX = 48;

/** The heatmap as an SVG document. */
export async function cellHeatmap(spec: CellHeatmapSpec): Promise<string> {
  const n = spec.order.length;
  const g = spec.genes.length;
  if (n === 0 || g === 0) throw new Error("nothing to draw: no cells or no genes");
  const ph = spec.height ?? 360;
  const colW = Math.max(8, Math.min(24, 480 / g));
  const rows = Math.min(n, MAX_ROWS);
  let lo = Infinity;
  let hi = -Infinity;
  for (const col of spec.columns)
    for (let i = 0; i < col.length; i++) {
      const v = col[i]!;
      if (v < lo) lo = v;
      if (v > hi) hi = v;
    }
  const vmin = spec.vmin ?? (lo <= hi ? lo : 0);
  const vmax = spec.vmax ?? (lo <= hi ? hi : 1);
  const norm = normalizer(vmin, vmax, spec.vcenter);
  const raw = new Uint8Array(rows * g * 3);
  for (let r = 0; r < rows; r++) {
    const cell = spec.order[Math.min(n - 1, Math.floor(((r + 0.5) * n) / rows))]!;
    for (let j = 0; j < g; j++) {
      const rgb = colormapRgb(spec.cmap, norm(spec.columns[j]![cell]!));
      raw.set(rgb, (r * g + j) * 3);
    }
  }
  const png = await sharp(Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength), {
    raw: { width: g, height: rows, channels: 3 },
  })
    .resize(Math.round(g * colW * 2), Math.round(ph * 2), { kernel: "nearest", fit: "fill" })
    .png()
    .toBuffer();
  const labels = spec.groups.map((x) => clip(x.label));
  const left = 12 + maxTextWidth(labels, 10) + 14;
  const top = spec.title ? 30 : 10;
  const pw = g * colW;
  const parts: string[] = [];
  if (spec.title) parts.push(panelTitle(spec.title, left + pw / 2, 18));
  parts.push(
    image(left, top, pw, ph, new Uint8Array(png.buffer, png.byteOffset, png.byteLength), {
      class: "heatmap-raster",
    }),
  );
  let acc = 0;
  const centres: number[] = [];
  for (const grp of spec.groups) {
    const y0 = top + (acc / n) * ph;
    const h = (grp.count / n) * ph;
    parts.push(rect(left - 12, y0, 10, h, { class: "group-strip", fill: grp.color }));
    if (acc > 0) parts.push(line(left, y0, left + pw, y0, { stroke: "#000", "stroke-width": 0.6 }));
    centres.push(y0 + h / 2);
    acc += grp.count;
  }
  parts.push(leftLabels(labels, centres, left - 12));
  parts.push(frame(left, top, pw, ph));
  const dx = spec.dendrogram ? DENDROGRAM_PX + 8 : 0;
  if (spec.dendrogram)
    parts.push(
      dendrogramSvg(spec.dendrogram, {
        side: "right",
        leafCentres: centres,
        base: left + pw + 4,
        depth: DENDROGRAM_PX,
      }),
    );
  parts.push(
    bottomLabels(
      spec.genes.map((s) => clip(s)),
      spec.genes.map((_, j) => left + (j + 0.5) * colW),
      top + ph,
    ),
  );
  const bar = colorbar(left + pw + 20 + dx, top, {
    cmap: spec.cmap,
    vmin,
    vmax,
    center: spec.vcenter,
    title: spec.colorTitle,
    length: 140,
  });
  parts.push(bar.svg);
  const bottom =
    maxTextWidth(
      spec.genes.map((s) => clip(s)),
      10,
    ) + 14;
  return svgDocument({
    width: left + pw + 20 + dx + bar.width + 16,
    height: top + ph + bottom + 8,
    children: parts,
    background: "#ffffff",
  });
}
