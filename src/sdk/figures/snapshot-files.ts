/**
 * A snapshot's files made in one go on the figure thread: the display drawn (`drawDisplay`), the
 * sidecar completed with what was drawn, and from the one SVG the vector PDF (sidecar in its Info
 * Keywords), the PNG and the thumbnail (sidecar in a PNG text chunk). Only the finished bytes go back
 * to the main thread (moved, not copied): the SVG of a million cells (10 MB of text) and the
 * intermediate rasters never touch the server's heap, so they cannot set off its garbage collector
 * while other requests wait.
 */
import { type DrawInputs, drawDisplay } from "./draw.js";
import { svgToPdfHere, svgToPng } from "./export.js";
import { addPngText } from "./png-text.js";
import type { RenderStats } from "./render.js";

/** What to make. */
export interface SnapshotFilesInput {
  readonly draw: DrawInputs;
  /** The sidecar without its `render` block (filled in here from the drawing). */
  readonly sidecar: Record<string, unknown>;
  /** Key of the PNG text chunk holding the sidecar. */
  readonly pngKey: string;
  /** The PDF's Title and Subject, or null for no PDF. */
  readonly pdf: { readonly title: string; readonly subject: string } | null;
  /** Dpi of the PNG, or null for none. */
  readonly pngDpi: number | null;
  /** Dpi of the thumbnail, or null for none. */
  readonly thumbDpi: number | null;
}

/** The files' bytes and the completed sidecar. */
export interface SnapshotFilesOutput {
  readonly render: RenderStats;
  /** The sidecar as embedded (compact JSON). */
  readonly json: string;
  readonly pdf: Uint8Array | null;
  readonly png: Uint8Array | null;
  readonly thumb: Uint8Array | null;
}

/** Makes the files (see the module comment). */
export async function snapshotFiles(i: SnapshotFilesInput): Promise<SnapshotFilesOutput> {
  const fig = await drawDisplay(i.draw);
  const json = JSON.stringify({ ...i.sidecar, render: fig.render });
  const [pdf, png, thumb] = await Promise.all([
    i.pdf
      ? svgToPdfHere(fig.svg, {
          widthPt: fig.widthPt,
          heightPt: fig.heightPt,
          info: { Title: i.pdf.title, Subject: i.pdf.subject, Keywords: json },
        })
      : null,
    i.pngDpi ? svgToPng(fig.svg, { dpi: i.pngDpi }).then((b) => addPngText(b, i.pngKey, json)) : null,
    i.thumbDpi ? svgToPng(fig.svg, { dpi: i.thumbDpi }).then((b) => addPngText(b, i.pngKey, json)) : null,
  ]);
  return { render: fig.render, json, pdf, png, thumb };
}
