/**
 * Tools 20 and 33: a drawn plot as an image (`view_plot`); a publication snapshot of a display, or a
 * plot's figure files, written into the data dir (`export_figure`).
 */
import { BadRequestError, NotFoundError } from "../../../sdk/errors.js";
import { exportPlotFigure, type PlotFormat, plotPng } from "../../../sdk/figures/plot-export.js";
import { createSnapshot, snapshotDisplay } from "../../../sdk/figures/snapshots.js";
import { fitViewport } from "../../../sdk/figures/vision.js";
import type { Session } from "../../../sdk/session/session.js";
import { S, type ToolContext, tool } from "../tool.js";
import { awaitJob } from "../wait.js";

/** Redraw a plot with the agent's lock and wait for it; the plot's status after. */
async function redrawn(s: Session, plotId: string, timeoutS: number, ctx: ToolContext): Promise<string> {
  const session = ctx.agent.mutable(s.id, { work: `redrawing plot ${plotId}` });
  const ticket = await session.redraw(plotId);
  const out = await awaitJob(ticket, timeoutS, ctx);
  if (!out) return "timed_out";
  return out.status;
}

/** `view_plot`: the plot's PNG, redrawn first when its figure is missing and `redraw_if_missing`. */
export const viewPlot = tool<{
  session_id?: string;
  plot_id: string;
  redraw_if_missing: boolean;
  timeout_s: number;
}>({
  name: "view_plot",
  description:
    "Returns a plot's figure as a PNG image (list_plots gives plot ids and figure_available). When the figure is missing (invalidated by a change, or failed) and redraw_if_missing is set, it is redrawn first (needs the edit lock) and awaited up to timeout_s.",
  inputSchema: {
    type: "object",
    required: ["plot_id"],
    additionalProperties: false,
    properties: {
      session_id: S.session,
      plot_id: S.str("The plot's id.", { minLength: 1, maxLength: 200 }),
      redraw_if_missing: S.bool("Redraw the plot when its figure is missing.", true),
      timeout_s: S.int("Longest wait for a redraw, in seconds.", 300, 1, 86_400),
    },
  },
  async run(a, ctx) {
    const s = ctx.service.readySession(ctx.agent.sessionId(a.session_id), "view_plot");
    const plot = s.appState.plots.find((p) => p.id === a.plot_id);
    if (!plot)
      throw new NotFoundError(`plot_id: session ${s.id} has no plot "${a.plot_id}" (list_plots lists them)`);
    let png = await plotPng(s, a.plot_id);
    let redraw: string | null = null;
    if (!png && a.redraw_if_missing && ["drawn", "invalidated", "failed"].includes(plot.status)) {
      redraw = await redrawn(s, a.plot_id, a.timeout_s, ctx);
      png = await plotPng(s, a.plot_id);
    }
    const after = s.appState.plots.find((p) => p.id === a.plot_id) ?? plot;
    const base = {
      plot_id: plot.id,
      function: `${plot.namespace}.${plot.function}`,
      params: plot.params,
      status: after.status,
      ...(redraw ? { redraw } : {}),
    };
    if (!png)
      return {
        structured: {
          ...base,
          figure_available: false,
          hint:
            after.status === "queued" || after.status === "running"
              ? "the plot is being drawn: call view_plot again when list_plots shows it drawn"
              : "no figure: redraw it (redraw_if_missing) or run the plot function again",
        },
      };
    return { structured: { ...base, figure_available: true }, images: [png] };
  },
});

/** The arguments of `export_figure`. */
interface ExportArgs {
  session_id?: string;
  display_id?: string;
  plot_id?: string;
  viewport?: { target: [number, number]; zoom: number } | "fit";
  width_px: number;
  height_px: number;
  dpi: number;
  formats: PlotFormat[];
  label?: string;
  include_minimap: boolean;
}

/** `export_figure`: a publication snapshot into the data dir's snapshot gallery, as `POST …/snapshot`. */
export const exportFigure = tool<ExportArgs>({
  name: "export_figure",
  description:
    "Writes a publication snapshot of a display into the snapshot gallery in the data dir (PDF and/or PNG with provenance, plus a thumbnail and a JSON sidecar), exactly as the web app's snapshot dialog. viewport: {target, zoom}, 'fit', or omitted for the display's saved viewport. Returns the snapshot's name and files. With plot_id instead, the plot's figure (formats pdf, png, svg) is written into the data dir.",
  inputSchema: {
    type: "object",
    additionalProperties: false,
    properties: {
      session_id: S.session,
      display_id: S.str("The display (default: the first spatial display).", {
        minLength: 1,
        maxLength: 128,
      }),
      plot_id: S.str("A drawn plot to write instead of a display (list_plots).", {
        minLength: 1,
        maxLength: 200,
      }),
      viewport: {
        oneOf: [
          {
            type: "object",
            required: ["target", "zoom"],
            additionalProperties: false,
            properties: {
              target: { type: "array", minItems: 2, maxItems: 2, items: { type: "number" } },
              zoom: { type: "number", minimum: -40, maximum: 40 },
            },
          },
          { type: "string", enum: ["fit"] },
        ],
      },
      width_px: S.int("Canvas width in CSS pixels.", 1600, 16, 8192),
      height_px: S.int("Canvas height in CSS pixels.", 1200, 16, 8192),
      dpi: S.int("Output resolution.", 200, 36, 600),
      formats: {
        type: "array",
        minItems: 1,
        maxItems: 3,
        uniqueItems: true,
        items: { type: "string", enum: ["pdf", "png", "svg"] },
        default: ["pdf", "png"],
        description: "Files to write: pdf and/or png (svg for a plot only).",
      },
      label: S.str("A caption kept with the snapshot.", { maxLength: 500 }),
      include_minimap: S.bool("Draw the minimap.", false),
    },
  },
  async run(a, { service, agent }) {
    const s = service.readySession(agent.sessionId(a.session_id), "export_figure");
    const dataDir = service.config.dataDir;
    if (a.plot_id !== undefined) {
      if (a.display_id !== undefined) throw new BadRequestError("give display_id or plot_id, not both");
      return {
        structured: {
          plot_id: a.plot_id,
          ...(await exportPlotFigure(s, dataDir, a.plot_id, a.formats)),
          data_dir: dataDir,
        },
      };
    }
    if (a.formats.includes("svg"))
      throw new BadRequestError(
        "formats: a display snapshot is written as 'pdf' and/or 'png' ('svg' is for a plot_id)",
      );
    service.resources.admit("rendering a snapshot");
    const display = snapshotDisplay(s, a.display_id);
    const vp =
      a.viewport === "fit"
        ? await fitViewport(s, display, a.width_px, a.height_px)
        : (a.viewport ?? { target: display.viewport.target.slice(0, 2), zoom: display.viewport.zoom });
    const out = await createSnapshot(s, dataDir, {
      viewport: { target: [Number(vp.target[0]), Number(vp.target[1])], zoom: vp.zoom },
      width_px: a.width_px,
      height_px: a.height_px,
      dpi: a.dpi,
      formats: a.formats as ("pdf" | "png")[],
      display_id: display.id,
      include_minimap: a.include_minimap,
      ...(a.label !== undefined ? { label: a.label } : {}),
    });
    return {
      structured: {
        ...out,
        display_id: display.id,
        files: [...out.formats.map((f) => `${out.name}.figure.${f}`), `${out.name}.figure.json`],
        data_dir: dataDir,
        urls: Object.fromEntries(out.formats.map((f) => [f, `/api/snapshots/${out.name}/file?fmt=${f}`])),
      },
    };
  },
});
