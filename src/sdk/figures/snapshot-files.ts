/**
 * A snapshot's files made in one go on the figure thread: the display drawn (`drawDisplay`), the
 * sidecar completed with what was drawn, and from the one SVG the vector PDF (sidecar in its Info
 * Keywords), the PNG and the thumbnail (sidecar in a PNG text chunk), each written to its file here
 * (a temporary name, then renamed). Nothing large goes back to the main thread: the SVG of a million
 * cells (10 MB of text), the intermediate rasters and the files' bytes (~10 MB at 1M cells) never
 * touch the server's heap, so they cannot set off its garbage collector while other requests wait.
 */
import { randomBytes } from "node:crypto";
import { rename, rm, writeFile } from "node:fs/promises";
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
  /** Where to write the PDF, the PNG and the thumbnail (those made). */
  readonly paths: { readonly pdf: string; readonly png: string; readonly thumb: string };
}

/** What was drawn, the completed sidecar and the files written. */
export interface SnapshotFilesOutput {
  readonly render: RenderStats;
  /** The sidecar as embedded (compact JSON). */
  readonly json: string;
  /** Paths of the files written (all of them, or none when making one failed). */
  readonly written: string[];
}

/** Writes `bytes` to `path` through a temporary name, so a reader never sees half a file. */
export async function writeAtomic(path: string, bytes: Uint8Array | string): Promise<void> {
  const tmp = `${path}.${randomBytes(4).toString("hex")}.tmp`;
  try {
    await writeFile(tmp, bytes);
    await rename(tmp, path);
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  }
}

/** A preview: the display drawn and rendered to PNG at `dpi`, only the PNG's bytes going back. */
export async function previewPng(i: {
  readonly draw: DrawInputs;
  readonly dpi: number;
}): Promise<Uint8Array> {
  const fig = await drawDisplay(i.draw);
  return svgToPng(fig.svg, { dpi: i.dpi });
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
  const written: string[] = [];
  const write = async (path: string, bytes: Uint8Array | null): Promise<void> => {
    if (!bytes) return;
    written.push(path);
    await writeAtomic(path, bytes);
  };
  const settled = await Promise.allSettled([
    write(i.paths.pdf, pdf),
    write(i.paths.png, png),
    write(i.paths.thumb, thumb),
  ]);
  const failed = settled.find((r) => r.status === "rejected");
  if (failed) {
    await Promise.all(written.map((p) => rm(p, { force: true })));
    throw failed.reason;
  }
  return { render: fig.render, json, written };
}
