/**
 * A dendrogram beside a chart's rows or above its columns, drawn from scipy's `dendrogram` layout
 * (`icoord`, `dcoord`: one ⊓-shaped link of four points per merge; leaf j sits at 5 + 10·j along the
 * leaves, height 0) as scanpy draws it next to dotplots, matrixplots and heatmaps: the leaves touch
 * the chart, the root is farthest from it. Leaf positions are the chart's row (or column) centres,
 * which need not be evenly spaced (a heatmap's group bands), so positions between leaves are
 * interpolated.
 */
import { group, path } from "../svg.js";

/** scipy's dendrogram layout. */
export interface DendrogramLinks {
  readonly icoord: readonly (readonly number[])[];
  readonly dcoord: readonly (readonly number[])[];
}

/** Where to draw: beside rows (`right`) or above columns (`top`). */
export interface DendrogramPlacement {
  readonly side: "right" | "top";
  /** Centre of leaf j along the chart (y for `right`, x for `top`), in leaf order. */
  readonly leafCentres: readonly number[];
  /** The edge of the chart the leaves touch (x for `right`, y for `top`). */
  readonly base: number;
  /** How far the root is from `base`, in px. */
  readonly depth: number;
}

/** The links as one SVG group of paths. */
export function dendrogramSvg(links: DendrogramLinks, at: DendrogramPlacement): string {
  const c = at.leafCentres;
  const along = (ic: number): number => {
    const j = (ic - 5) / 10;
    if (c.length === 1) return c[0]!;
    const i = Math.max(0, Math.min(c.length - 2, Math.floor(j)));
    return c[i]! + (j - i) * (c[i + 1]! - c[i]!);
  };
  let maxH = 0;
  for (const d of links.dcoord) for (const v of d) maxH = Math.max(maxH, v);
  const away = (h: number) => (maxH > 0 ? (h / maxH) * at.depth : 0);
  const paths = links.icoord.map((ic, k) => {
    const dc = links.dcoord[k]!;
    const pts = ic.map((v, i) => {
      const a = along(v);
      const b = away(dc[i]!);
      return at.side === "right" ? [at.base + b, a] : [a, at.base - b];
    });
    const d = pts.map(([x, y], i) => `${i === 0 ? "M" : "L"}${x!.toFixed(2)} ${y!.toFixed(2)}`).join("");
    return path(d, { fill: "none", stroke: "#000", "stroke-width": 0.8 });
  });
  return group(paths, { class: "dendrogram" });
}
