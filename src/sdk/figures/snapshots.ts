/**
 * Snapshots (service-spec "Snapshot files and sidecar"): a display rendered as vector PDF and/or PNG
 * with its provenance, written as siblings in the data dir sharing a `<base>`:
 * `<base>.figure.pdf`, `<base>.figure.png`, `<base>.figure.thumb.png`, `<base>.figure.json`. The
 * sidecar JSON is also embedded in every output file: the PDF's Info `Keywords` (and `Subject`
 * names it) and a PNG `iTXt` chunk keyed `SNAPSHOT_PNG_KEY`. The request carries framing and output
 * only; styling is the display's persisted encoding.
 *
 * Files are written to a temporary name and renamed, the sidecar last, so a listed snapshot is whole.
 * The drawing and the three files are made and written on the figure thread (`snapshot-files.ts`);
 * this thread gathers the data and writes the sidecar.
 */
import { randomBytes } from "node:crypto";
import { readdir, readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import { BadRequestError, NotFoundError } from "../errors.js";
import type { DisplaySpec, HistEntry } from "../io/checkpoint/app-state.js";
import type { Session } from "../session/session.js";
import { TESSERA_VERSION } from "../version.js";
import { type DrawInputs, drawDisplay } from "./draw.js";
import { onFigureThread } from "./figure-thread.js";
import { checkRenderRequest, gatherDisplay, type RenderedFigure, type RenderStats } from "./render.js";
import { type RenderSource, sessionRenderSource } from "./render-source.js";
import { previewPng, snapshotFiles, writeAtomic } from "./snapshot-files.js";

/** Key of the PNG text chunk holding the sidecar JSON. */
export const SNAPSHOT_PNG_KEY = "tessera:snapshot";
/** Longest side of a thumbnail, px. */
export const THUMBNAIL_PX = 256;
/** Longest side of a preview, px (client.md 14.1: at most 480). */
export const PREVIEW_PX = 480;
const SIDECAR_SUFFIX = ".figure.json";
/** The `render` block of a sidecar before the drawing fills it in. */
const NOT_DRAWN: RenderStats = {
  rasterized_points: false,
  image_element: null,
  cells_in_view: 0,
  shapes_drawn: 0,
  minimap: false,
};
const SIBLINGS = [".figure.pdf", ".figure.png", ".figure.thumb.png", SIDECAR_SUFFIX] as const;
/** Names a snapshot handle may have (what `snapshotBase` makes, and nothing that leaves the folder). */
const NAME_RE = /^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$/;

/** The body of `POST /api/sessions/{id}/snapshot` and `/snapshot/preview`. */
export interface SnapshotRequest {
  viewport: { target: number[]; zoom: number };
  width_px: number;
  height_px: number;
  dpi: number;
  formats?: ("pdf" | "png")[];
  label?: string;
  display_id?: string;
  include_minimap?: boolean;
}

/** The sidecar (and embedded provenance). */
export interface SnapshotSidecar {
  schema_version: string;
  label: string;
  created: string;
  dataset: string;
  kind: "spatial" | "embedding";
  formats: ("pdf" | "png")[];
  output: { width_px: number; height_px: number; dpi: number };
  viewport: { target: number[]; zoom: number };
  encoding: DisplaySpec["encoding"];
  render: RenderStats;
  recipe: { namespace: string; function: string; params: Record<string, unknown> }[];
  /** The fields the figure shows and the history entries (ids) that wrote them. */
  fields: { path: string; produced_by: string[] }[];
  /** Tessera's version and the library versions the recorded steps ran with. */
  versions: { tessera: string; libraries: Record<string, string> };
  display_id: string;
}

/** A gallery entry (`GET /api/snapshots`). */
export interface SnapshotEntry {
  name: string;
  base: string;
  label: string;
  created: string;
  kind: string;
  dataset: string;
  formats: string[];
  output: SnapshotSidecar["output"];
  thumbnail_url: string;
  metadata: SnapshotSidecar;
}

/** The display a request names (the first spatial one, else the first, when it names none). */
export function snapshotDisplay(s: Session, displayId: string | undefined): DisplaySpec {
  const displays = s.appState.displays;
  if (displayId !== undefined) {
    if (typeof displayId !== "string") throw new BadRequestError("display_id: must be a string");
    const d = displays.find((x) => x.id === displayId);
    if (!d) throw new NotFoundError(`session ${s.id} has no display "${displayId.slice(0, 100)}"`);
    return d;
  }
  const d = displays.find((x) => x.type === "spatial_canvas") ?? displays[0];
  if (!d) throw new BadRequestError("display_id: the session has no display to render");
  return d;
}

function checkFormats(f: unknown): ("pdf" | "png")[] {
  if (f === undefined) return ["pdf"];
  if (!Array.isArray(f) || f.length === 0 || f.length > 2 || !f.every((x) => x === "pdf" || x === "png"))
    throw new BadRequestError("formats: must be a non-empty list of 'pdf' and/or 'png'");
  return [...new Set(f as ("pdf" | "png")[])];
}

/** Renders the request's display in `s` (no files). */
export async function renderSnapshot(
  s: Session,
  req: SnapshotRequest,
  opts: { source?: RenderSource; maxPx?: number } = {},
): Promise<{ figure: RenderedFigure; display: DisplaySpec; dpi: number }> {
  const { inputs, display, dpi } = await gatherSnapshot(s, req, opts);
  const figure = await onFigureThread("draw", inputs, drawDisplay);
  return { figure, display, dpi };
}

/** The request checked and its display's data gathered (`gatherDisplay`), ready to draw. */
async function gatherSnapshot(
  s: Session,
  req: SnapshotRequest,
  opts: { source?: RenderSource; maxPx?: number },
): Promise<{ inputs: DrawInputs; display: DisplaySpec; dpi: number }> {
  if (!req || typeof req !== "object" || Array.isArray(req))
    throw new BadRequestError("body: must be a JSON object");
  const display = snapshotDisplay(s, req.display_id);
  checkRenderRequest({
    display,
    viewport: req.viewport,
    widthPx: req.width_px,
    heightPx: req.height_px,
    dpi: req.dpi,
  });
  let dpi = req.dpi;
  if (opts.maxPx !== undefined && Number.isFinite(dpi)) {
    // a preview: the same frame, at the dpi that fits its longest side in maxPx
    const longest = Math.max(Number(req.width_px) || 1, Number(req.height_px) || 1);
    dpi = Math.min(dpi, (opts.maxPx * 96) / longest);
  }
  const inputs = await gatherDisplay(opts.source ?? sessionRenderSource(s), {
    display,
    viewport: req.viewport,
    widthPx: req.width_px,
    heightPx: req.height_px,
    dpi,
    includeMinimap: req.include_minimap === true,
    preview: opts.maxPx !== undefined,
  });
  return { inputs, display, dpi };
}

/** A preview PNG: the request's frame, at most `PREVIEW_PX` on its longest side; writes nothing. */
export async function previewSnapshot(s: Session, req: SnapshotRequest): Promise<Uint8Array> {
  // drawn and rendered on the figure thread: only the PNG comes back, not the SVG
  const { inputs, dpi } = await gatherSnapshot(s, req, { maxPx: PREVIEW_PX });
  return onFigureThread("preview", { draw: inputs, dpi }, previewPng);
}

/** Field paths a display shows. */
function shownFields(d: DisplaySpec): string[] {
  const out: string[] = [];
  if (d.type === "spatial_canvas") out.push(d.encoding.coords || "obsm:spatial");
  else
    out.push(d.encoding.obsm_key.startsWith("obsm:") ? d.encoding.obsm_key : `obsm:${d.encoding.obsm_key}`);
  if (d.encoding.color_by) out.push(d.encoding.color_by);
  return out;
}

/** The completed history entries that wrote field `path` (their structural diff names its slot and key). */
function producers(history: readonly HistEntry[], path: string): string[] {
  const i = path.indexOf(":");
  const slot = i < 0 ? path : path.slice(0, i);
  const key = i < 0 ? "" : path.slice(i + 1);
  return history
    .filter((h) => h.status === "completed")
    .filter((h) => {
      const keys = h.structural_diff?.[slot];
      if (!keys) return false;
      return slot === "X" || slot === "layers" ? keys.length > 0 : keys.includes(key);
    })
    .map((h) => h.id);
}

/**
 * The sidecar of a render. `history` is the session's compute history as it was when the render
 * read its data (default: as it is now), so the recorded steps are those that made what is shown.
 */
export function snapshotSidecar(
  s: Session,
  display: DisplaySpec,
  req: SnapshotRequest,
  render: RenderStats,
  formats: ("pdf" | "png")[],
  history0: readonly HistEntry[] = s.appState.compute_history,
): SnapshotSidecar {
  const history = history0.filter((h) => h.status === "completed");
  const libraries: Record<string, string> = {};
  for (const h of history) Object.assign(libraries, h.library_versions);
  return {
    schema_version: "1",
    label: typeof req.label === "string" ? req.label.slice(0, 500) : "",
    created: new Date().toISOString(),
    dataset: s.name,
    kind: display.type === "spatial_canvas" ? "spatial" : "embedding",
    formats,
    output: { width_px: req.width_px, height_px: req.height_px, dpi: req.dpi },
    viewport: { target: [...req.viewport.target], zoom: req.viewport.zoom },
    encoding: display.encoding,
    render,
    recipe: history.map((h) => ({ namespace: h.namespace, function: h.function, params: h.params })),
    fields: shownFields(display).map((path) => ({ path, produced_by: producers(history, path) })),
    versions: { tessera: TESSERA_VERSION, libraries },
    display_id: display.id,
  };
}

/** A fresh `<base>`: the dataset's name made safe, the time, and a random suffix. */
export function snapshotBase(dataset: string, now = new Date()): string {
  const stem =
    dataset
      .normalize("NFKD")
      .replace(/[^A-Za-z0-9._-]+/g, "-")
      .replace(/^[-.]+|[-.]+$/g, "")
      .slice(0, 60) || "snapshot";
  const t = now
    .toISOString()
    .replace(/[-:]/g, "")
    .replace(/\.\d+Z$/, "Z");
  return `${stem}-${t}-${randomBytes(3).toString("hex")}`;
}

/** Renders and writes a snapshot; returns the route's answer. */
export async function createSnapshot(
  s: Session,
  dataDir: string,
  req: SnapshotRequest,
  opts: { source?: RenderSource } = {},
): Promise<{ status: "ok"; name: string; formats: ("pdf" | "png")[]; rasterized_points: boolean }> {
  if (!req || typeof req !== "object" || Array.isArray(req))
    throw new BadRequestError("body: must be a JSON object");
  const formats = checkFormats(req.formats);
  if (req.label !== undefined && typeof req.label !== "string")
    throw new BadRequestError("label: must be a string");
  if (req.include_minimap !== undefined && typeof req.include_minimap !== "boolean")
    throw new BadRequestError("include_minimap: must be a boolean");
  // the history that goes with the object the render pins (its source is made in the same turn)
  const history = s.appState.compute_history;
  const { inputs, display } = await gatherSnapshot(s, req, opts);
  const draft = snapshotSidecar(s, display, req, NOT_DRAWN, formats, history);
  // drawn, converted, provenance-stamped and written on the figure thread
  const longest = Math.max(req.width_px, req.height_px);
  const base = snapshotBase(s.name);
  const at = (suffix: string) => join(dataDir, `${base}${suffix}`);
  const files = await onFigureThread(
    "snapshot",
    {
      draw: inputs,
      sidecar: draft as unknown as Record<string, unknown>,
      pngKey: SNAPSHOT_PNG_KEY,
      pdf: formats.includes("pdf")
        ? {
            title: draft.label || `${draft.dataset} (${draft.kind})`,
            subject: `Tessera snapshot; provenance JSON (${SNAPSHOT_PNG_KEY}) in Keywords`,
          }
        : null,
      pngDpi: formats.includes("png") ? req.dpi : null,
      thumbDpi: (THUMBNAIL_PX * 96) / longest,
      paths: { pdf: at(".figure.pdf"), png: at(".figure.png"), thumb: at(".figure.thumb.png") },
    },
    snapshotFiles,
  );
  const sidecar = { ...draft, render: files.render };
  try {
    await writeAtomic(at(SIDECAR_SUFFIX), `${JSON.stringify(sidecar, null, 2)}\n`);
  } catch (err) {
    await Promise.all(files.written.map((p) => rm(p, { force: true })));
    throw err;
  }
  return { status: "ok", name: base, formats, rasterized_points: files.render.rasterized_points };
}

/** Every snapshot in the data dir (sidecars that parse), newest first. */
export async function listSnapshots(dataDir: string): Promise<SnapshotEntry[]> {
  let names: string[];
  try {
    names = await readdir(dataDir);
  } catch {
    return [];
  }
  const out: SnapshotEntry[] = [];
  for (const f of names) {
    if (!f.endsWith(SIDECAR_SUFFIX)) continue;
    const base = f.slice(0, -SIDECAR_SUFFIX.length);
    if (!NAME_RE.test(base)) continue;
    try {
      const meta = JSON.parse(await readFile(join(dataDir, f), "utf8")) as SnapshotSidecar;
      if (!meta || typeof meta !== "object") continue;
      out.push({
        name: base,
        base,
        label: String(meta.label ?? ""),
        created: String(meta.created ?? ""),
        kind: String(meta.kind ?? ""),
        dataset: String(meta.dataset ?? ""),
        formats: Array.isArray(meta.formats) ? meta.formats : [],
        output: meta.output,
        thumbnail_url: `/api/snapshots/${encodeURIComponent(base)}/thumbnail`,
        metadata: meta,
      });
    } catch {
      // an unreadable sidecar is not a snapshot
    }
  }
  return out.sort((a, b) => (a.created < b.created ? 1 : a.created > b.created ? -1 : 0));
}

function checkName(name: string): void {
  if (!NAME_RE.test(name) || name.includes(".."))
    throw new NotFoundError(`no snapshot "${name.slice(0, 100)}"`);
}

/** A snapshot's file (`pdf`, `png` or the thumbnail); 404 when absent, 400 for another format. */
export async function snapshotFile(
  dataDir: string,
  name: string,
  fmt: string | undefined,
): Promise<{ bytes: Buffer; type: string }> {
  checkName(name);
  const suffix =
    fmt === "pdf"
      ? ".figure.pdf"
      : fmt === "png"
        ? ".figure.png"
        : fmt === "thumb"
          ? ".figure.thumb.png"
          : null;
  if (!suffix) throw new BadRequestError(`fmt: must be 'pdf' or 'png' (got "${String(fmt).slice(0, 20)}")`);
  try {
    const bytes = await readFile(join(dataDir, `${name}${suffix}`));
    return { bytes, type: fmt === "pdf" ? "application/pdf" : "image/png" };
  } catch {
    throw new NotFoundError(`snapshot "${name}" has no ${fmt === "thumb" ? "thumbnail" : `${fmt} file`}`);
  }
}

/** Removes every sibling of a snapshot; 404 when none exists. */
export async function deleteSnapshot(dataDir: string, name: string): Promise<void> {
  checkName(name);
  let found = false;
  for (const suffix of SIBLINGS) {
    try {
      await rm(join(dataDir, `${name}${suffix}`));
      found = true;
    } catch {
      // absent
    }
  }
  if (!found) throw new NotFoundError(`no snapshot "${name}"`);
}
