/**
 * A drawn plot's figure written into the data dir (MCP `export_figure` with a `plot_id`): the files
 * a user downloads from `GET …/plots/{id}/figure`, kept beside the snapshots under a generated name
 * (`<dataset>-<time>-<random>.plot.<fmt>`), so nothing the caller gives decides where a file goes.
 * A PNG the plot was not drawn with is rasterised from its SVG; a missing PDF is reported, not faked.
 */
import { randomBytes } from "node:crypto";
import { rename, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { NotFoundError, StateError } from "../errors.js";
import type { Session } from "../session/session.js";
import { svgToPng } from "./export.js";
import { snapshotBase } from "./snapshots.js";

/** Dpi a plot's SVG is rasterised at when it has no PNG (checkpoints keep plot PNGs at 130). */
export const PLOT_PNG_DPI = 130;

/** A figure format of a plot. */
export type PlotFormat = "svg" | "pdf" | "png";

/** A plot's PNG: the one it was drawn with, else its SVG rasterised; null without a figure. */
export async function plotPng(s: Session, plotId: string): Promise<Uint8Array | null> {
  const png = await s.figure(plotId, "png");
  if (png) return png;
  const svg = await s.figure(plotId, "svg");
  return svg ? svgToPng(new TextDecoder().decode(svg), { dpi: PLOT_PNG_DPI }) : null;
}

/**
 * Write plot `plotId`'s figure in `formats` into `dataDir`. 404 for an unknown plot, 409 when it has no
 * figure (not drawn, or invalidated: redraw it first). Answers the base name, the files written and
 * the formats the plot has no figure in.
 */
export async function exportPlotFigure(
  s: Session,
  dataDir: string,
  plotId: string,
  formats: readonly PlotFormat[],
): Promise<{ name: string; files: string[]; missing: PlotFormat[] }> {
  const plot = s.appState.plots.find((p) => p.id === plotId);
  if (!plot) throw new NotFoundError(`plot_id: session ${s.id} has no plot "${plotId}"`);
  if (!(await s.figure(plotId, "svg")))
    throw new StateError(`plot "${plotId}" is ${plot.status} and has no figure: redraw it first`);
  const name = `${snapshotBase(s.name)}.${plot.function}`.replace(/[^A-Za-z0-9._-]+/g, "-");
  const files: string[] = [];
  const missing: PlotFormat[] = [];
  for (const fmt of new Set(formats)) {
    const bytes = fmt === "png" ? await plotPng(s, plotId) : await s.figure(plotId, fmt);
    if (!bytes) {
      missing.push(fmt);
      continue;
    }
    const file = `${name}.plot.${fmt}`;
    const tmp = join(dataDir, `${file}.${randomBytes(4).toString("hex")}.tmp`);
    try {
      await writeFile(tmp, bytes);
      await rename(tmp, join(dataDir, file));
    } catch (err) {
      await rm(tmp, { force: true });
      throw err;
    }
    files.push(file);
  }
  return { name, files, missing };
}
