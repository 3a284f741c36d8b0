/**
 * A plot's SVG document → its `PlotResult`: the SVG, a PNG at `PLOT_DPI` and a vector PDF of the same
 * page, with the field paths it read.
 */
import { svgToPdf, svgToPng } from "../../sdk/figures/export.js";
import type { PlotResult } from "../../sdk/jobs/operation.js";

/** Resolution of a plot's PNG (2 px per pt, matplotlib's savefig at 144 dpi). */
export const PLOT_DPI = 144;

/** The page size of a figure document (its root's width and height, in pt). */
export function documentSize(svg: string): { width: number; height: number } {
  const head = /<svg\b[^>]*>/.exec(svg.slice(0, 4096))?.[0] ?? "";
  const width = Number(/\swidth="([\d.]+)"/.exec(head)?.[1]);
  const height = Number(/\sheight="([\d.]+)"/.exec(head)?.[1]);
  if (!(width > 0 && height > 0)) throw new Error("figure: the SVG document has no size");
  return { width, height };
}

/** The three formats of a figure, and its references (deduplicated, in order). */
export async function plotResult(
  svg: string,
  references: readonly string[],
  title: string,
): Promise<PlotResult> {
  const { width, height } = documentSize(svg);
  const png = await svgToPng(svg, { dpi: PLOT_DPI });
  const pdf = await svgToPdf(svg, { widthPt: width, heightPt: height, info: { Title: title } });
  return { kind: "plot", svg, png, pdf, references: [...new Set(references)] };
}
