/**
 * The state the canvas tools share between the sidebar tabs (Regions, Annotations, Subset) and the
 * overlay drawn over each canvas: what is being drawn (region rings, a shape), the live count of the
 * cells inside, the session's shape annotations, and the calls that change the session — every one of
 * them the HTTP API the SDK serves (`POST …/annotate`, `POST …/subset`, `…/shape-annotations`).
 *
 * One controller lives as long as the app. It is an `EventTarget`: it fires `change` whenever
 * something a panel or an overlay draws has changed, and the elements re-render on it.
 */
import { selectInPolygons } from "../../../sdk/data/polygon-select.js";
import { SHAPE_DEFAULTS } from "../../../sdk/data/shape-annotations.js";
import type { DisplaySpec } from "../../../sdk/io/checkpoint/app-state.js";
import type { CanvasBase } from "../../canvas-base.js";
import type { DataSource, SourceFields } from "../../data-source.js";
import { type ApiClient, ApiError } from "../../http.js";
import { applyLocalLabel, localRegionSets } from "./regions-local.js";
import { centroid, type Pt, rowsInScreenRings, type Shape, type ShapeKind, span } from "./shape-geometry.js";

/** Which canvas a drawing belongs to. */
export type CanvasKind = "spatial" | "embedding";
/** The sidebar tabs of the canvas tools. */
export type ToolTab = "regions" | "annotations" | "subset";
/** The Annotations tab's tools (client.md 10.1). */
export type ShapeTool = "select" | "line" | "arrow" | "box" | "ellipse" | "polygon" | "text";

/** The 8 preset colours of regions and shape strokes (client.md 9.1, 10.2). */
export const PRESET_COLORS = [
  "#e41a1c",
  "#377eb8",
  "#4daf4a",
  "#984ea3",
  "#ff7f00",
  "#ffff33",
  "#a65628",
  "#f781bf",
] as const;

/** Default stroke of a new shape (client.md 10.3). */
export const DEFAULT_STROKE = SHAPE_DEFAULTS.color;
/** Style edits are sent this long after the last change of a shape (client.md 10.3). */
export const STYLE_DEBOUNCE_MS = 500;

/** What the controller needs from the app. */
export interface DrawHost {
  readonly api: ApiClient;
  readonly currentId: string | null;
  /** Whether this browser may change the current session (holds or may take the lock). */
  readonly canEdit: boolean;
  readonly mode: string;
  /** Where the canvases read from; outside live mode the shapes come from it (read-only). */
  readonly source?: DataSource | null;
  readonly myPublic: string;
  readonly presence: {
    sessions: Record<string, { lock?: { client_id: string; name: string } | null; viewers: string[] }>;
  };
  readonly state: {
    summary: { read_only: boolean };
    app_state: {
      compute_history: { namespace: string; function: string; params?: unknown; status: string }[];
    };
    fields: SourceFields;
  } | null;
  toast(kind: "info" | "error", text: string): void;
  /**
   * A browser-local edit was made (serverless viewer): re-read the field at `path` (null: only the
   * hidden cells changed) and restyle every display with `restyle`.
   */
  localEdit?(path: string | null, restyle?: (d: DisplaySpec) => DisplaySpec): void;
}

/** A region being drawn: finished rings and the ring in progress. */
export interface Drawing {
  canvas: CanvasKind;
  /** Rings in canvas coordinates, or in CSS pixels when `screen` (a 3D embedding). */
  rings: Pt[][];
  current: Pt[];
  /** Rings captured in screen space (3D): moving the camera discards them. */
  screen: boolean;
}

/** A region set: a categorical obs column written by region labelling, with its categories' counts. */
export interface RegionSet {
  name: string;
  categories: { value: string; count: number }[];
}

/** The shared state and actions of the canvas tools. */
export class DrawController extends EventTarget {
  /** The open tool tab (null: none open; nothing is drawn). */
  tab: ToolTab | null = null;
  /** Whether clicks on a canvas add region vertices (Regions and Subset tabs). */
  armed = true;
  tool: ShapeTool = "select";
  drawing: Drawing | null = null;
  /** Cells inside the drawn region (null: nothing drawn). */
  count: number | null = null;
  regionSet = "regions";
  category = "region 1";
  color: string = PRESET_COLORS[0];
  /** Also save the rings as polygon shape annotations with a text label (spatial canvas only). */
  annotateRegion = false;
  shapes: Shape[] = [];
  selectedId: string | null = null;
  /** Vertices of the polygon shape being clicked (Polygon tool), canvas coordinates. */
  polygonDraft: Pt[] = [];
  /** Region sets of the session and their counts. */
  regionSets: RegionSet[] = [];
  /** A blocking action in progress (its label), e.g. "Subsetting…". */
  busy: string | null = null;

  private canvases = new Map<CanvasKind, CanvasBase>();
  private rows: number[] | null = null;
  /** The cells inside the drawn region, one byte per row (null: nothing drawn). */
  mask: Uint8Array | null = null;
  private shapesKey = "";
  private regionsKey = "";
  private styleTimers = new Map<string, ReturnType<typeof setTimeout>>();
  private session: string | null = null;

  constructor(readonly host: DrawHost) {
    super();
  }

  /** Tell the panels and overlays to re-render. */
  changed(): void {
    this.dispatchEvent(new Event("change"));
  }

  // ------------------------------------------------------------------------------------- lock

  /** The serverless viewer labels regions into columns local to the browser (client.md 9.2, 17.5). */
  get regionsLocal(): boolean {
    return this.host.mode === "serverless";
  }

  /** Why the open tab's tool may not be used (the serverless viewer's Regions tab works locally). */
  get tabReadOnlyReason(): string | null {
    return this.tab === "regions" && this.regionsLocal ? null : this.readOnlyReason;
  }

  /** Why this browser may not edit (null when it may). */
  get readOnlyReason(): string | null {
    const h = this.host;
    if (h.mode !== "live") return "serverless viewer";
    if (!h.state) return "no session";
    if (h.state.summary.read_only) return "the session is read-only";
    if (h.canEdit) return null;
    const lock = h.currentId ? h.presence.sessions[h.currentId]?.lock : null;
    return `locked by ${lock?.name ?? "another viewer"}`;
  }

  // ------------------------------------------------------------------------------------- tabs and tools

  /** Open a tool tab (null closes them). A drawing survives moving between Regions and Subset. */
  openTab(tab: ToolTab | null): void {
    if (tab === this.tab) return;
    this.tab = tab;
    this.armed = true;
    this.polygonDraft = [];
    if (tab !== "annotations") this.tool = "select";
    if (tab === null || tab === "annotations") this.clearDrawing();
    this.changed();
  }

  setTool(tool: ShapeTool): void {
    this.tool = tool;
    if (tool !== "polygon") this.polygonDraft = [];
    this.changed();
  }

  /** Add a vertex to the polygon shape being drawn. */
  addPolygonVertex(p: Pt): void {
    this.polygonDraft = [...this.polygonDraft, p];
    this.changed();
  }

  /** Close the polygon being drawn into a shape (3 vertices or more: **Close shape**). */
  async closePolygon(): Promise<void> {
    const pts = this.polygonDraft;
    this.polygonDraft = [];
    this.changed();
    if (pts.length < 3) return;
    await this.createShape({ kind: "polygon", points: pts });
    this.setTool("select");
  }

  /** Whether a canvas click belongs to the tools (pan is then suppressed). */
  get capturing(): boolean {
    if (this.tab === "regions") return this.armed && (!this.readOnlyReason || this.regionsLocal);
    if (this.tab === "subset") return this.armed && !this.readOnlyReason;
    if (this.tab === "annotations") return this.tool !== "select" && !this.readOnlyReason;
    return false;
  }

  /** The hint banner shown over the canvas while a tool is armed (client.md 5.10). */
  get hint(): string | null {
    if (!this.capturing) return null;
    if (this.tab === "regions")
      return `Annotating ${this.regionSet} / ${this.category} — click to add points, then Finish region`;
    if (this.tab === "subset") return "Subsetting — draw a region (click to add points, then Finish region)";
    const t = this.tool;
    if (t === "polygon") return "Polygon — click the vertices, then Close shape";
    if (t === "text") return "Text — click to place";
    return `${t[0]!.toUpperCase()}${t.slice(1)} — drag on the canvas`;
  }

  // ------------------------------------------------------------------------------------- canvases

  /** An overlay registers its canvas (spatial or embedding) so counts can read the cell positions. */
  attach(kind: CanvasKind, canvas: CanvasBase | null): void {
    if (canvas) this.canvases.set(kind, canvas);
    else this.canvases.delete(kind);
  }

  canvas(kind: CanvasKind): CanvasBase | undefined {
    return this.canvases.get(kind);
  }

  // ------------------------------------------------------------------------------------- region drawing

  /** Add a vertex (canvas coordinates, or CSS px on a 3D canvas) to the ring in progress. */
  addVertex(kind: CanvasKind, p: Pt, screen: boolean): void {
    if (!this.drawing || this.drawing.canvas !== kind || this.drawing.screen !== screen)
      this.drawing = { canvas: kind, rings: [], current: [], screen };
    this.drawing.current.push(p);
    this.changed();
  }

  /** Commit the ring in progress (3 vertices or more); rings are unioned. */
  finishRing(): void {
    const d = this.drawing;
    if (!d || d.current.length < 3) return;
    d.rings.push(d.current);
    d.current = [];
    this.recount();
  }

  /**
   * Esc: drop what is half-drawn (the ring in progress, a polygon's vertices), else deselect the
   * shape. Answers whether it did something.
   */
  cancel(): boolean {
    if (this.drawing?.current.length) {
      this.drawing.current = [];
      if (!this.drawing.rings.length) this.drawing = null;
      this.changed();
      return true;
    }
    if (this.polygonDraft.length) {
      this.polygonDraft = [];
      this.changed();
      return true;
    }
    if (this.selectedId) {
      this.select(null);
      return true;
    }
    return false;
  }

  clearDrawing(): void {
    this.drawing = null;
    this.count = null;
    this.rows = null;
    this.mask = null;
    this.changed();
  }

  /** Cells inside the finished rings: centroid point-in-polygon, the server's own test. */
  recount(): void {
    const d = this.drawing;
    const cv = d ? this.canvases.get(d.canvas) : undefined;
    const pos = (cv as unknown as { positions?: Float32Array | null } | undefined)?.positions ?? null;
    const n = (cv as unknown as { n?: number } | undefined)?.n ?? 0;
    this.mask = null;
    if (!d || !d.rings.length || !cv || !pos || !n) {
      this.count = d?.rings.length ? 0 : null;
      this.rows = null;
      this.changed();
      return;
    }
    const stride = Math.max(2, Math.round(pos.length / n));
    if (d.screen) {
      this.rows = rowsInScreenRings(
        n,
        (i) => cv.project([pos[i * stride]!, pos[i * stride + 1]!, pos[i * stride + 2] ?? 0]),
        d.rings,
      );
      this.count = this.rows.length;
      this.mask = new Uint8Array(n);
      for (const r of this.rows) this.mask[r] = 1;
    } else {
      const mask = selectInPolygons(pos, n, d.rings, { stride });
      this.mask = mask;
      let c = 0;
      const rows: number[] = [];
      for (let i = 0; i < n; i++)
        if (mask[i]) {
          c++;
          if (d.canvas === "embedding") rows.push(i);
        }
      this.count = c;
      this.rows = d.canvas === "embedding" ? rows : null;
    }
    this.changed();
  }

  /** The selection as the API takes it: rings in world space (spatial) or row indices (embedding). */
  selection(): { polygons: number[][][] } | { cell_indices: number[] } | null {
    const d = this.drawing;
    if (!d || !d.rings.length) return null;
    if (d.canvas === "spatial") return { polygons: d.rings.map((r) => r.map(([x, y]) => [x, y])) };
    return this.rows ? { cell_indices: this.rows } : null;
  }

  private path(suffix: string): string | null {
    const id = this.host.currentId;
    return id ? `/api/sessions/${encodeURIComponent(id)}${suffix}` : null;
  }

  /** `POST …/annotate`: label the cells inside into the region set; optionally outline the region. */
  async applyLabel(): Promise<boolean> {
    if (this.regionsLocal) return applyLocalLabel(this);
    const sel = this.selection();
    const path = this.path("/annotate");
    if (!sel || !path) return false;
    const drawing = this.drawing!;
    try {
      await this.host.api.json(path, {
        method: "POST",
        json: {
          ...sel,
          region_set: this.regionSet.trim(),
          category: this.category.trim(),
          color: this.color,
        },
      });
    } catch (e) {
      this.host.toast("error", `Labelling failed: ${(e as Error).message}`);
      return false;
    }
    if (this.annotateRegion && drawing.canvas === "spatial") await this.outlineRegion(drawing.rings);
    this.host.toast("info", `Labelled ${this.count ?? 0} cells as ${this.regionSet} / ${this.category}.`);
    // The next region gets the next preset colour and a fresh label.
    const i = PRESET_COLORS.indexOf(this.color as (typeof PRESET_COLORS)[number]);
    this.color = PRESET_COLORS[(i + 1) % PRESET_COLORS.length]!;
    const m = /^(.*?)(\d+)$/.exec(this.category);
    if (m) this.category = `${m[1]}${Number(m[2]) + 1}`;
    this.clearDrawing();
    return true;
  }

  /** The rings as polygon shapes (fill and outline) and a text label at the centroid (client.md 9.1). */
  private async outlineRegion(rings: Pt[][]): Promise<void> {
    const cv = this.canvases.get("spatial");
    const px = (cv?.scale ?? 1) * span(rings) * 0.1;
    for (const r of rings)
      await this.createShape({
        kind: "polygon",
        points: r,
        color: this.color,
        fill: this.color,
        text: this.category,
      });
    const all = rings.flat();
    const c = centroid(rings.length === 1 ? rings[0]! : all);
    // World units (client.md 10.2), about 10% of the region's span (never under 6 px at this zoom).
    const scale = cv?.scale ?? 1;
    const fontSize = Math.max(6, Math.min(200, px)) / scale;
    // The text's anchor is its top-left: centre it roughly on the centroid.
    const half = fontSize / 2;
    const w = this.category.length * fontSize * 0.3;
    await this.createShape({
      kind: "text",
      points: [[c[0] - w, c[1] - half]],
      text: this.category,
      color: "#ffffff",
      font_size: fontSize,
    });
  }

  /** `POST …/subset`: keep (or with `invert`, remove) the cells in the region, into a child session. */
  async subset(invert: boolean): Promise<boolean> {
    const sel = this.selection();
    const path = this.path("/subset");
    if (!sel || !path || !this.count) return false;
    this.busy = invert ? "Removing the cells in the region…" : "Keeping the cells in the region…";
    this.changed();
    try {
      const r = await this.host.api.json<{ job_id: string }>(path, {
        method: "POST",
        json: { ...sel, ...(invert ? { invert: true } : {}) },
      });
      // The child session arrives by `session.created` and the app follows `session.removed`;
      // the job's status is the fallback when the stream is late.
      const jobPath = this.path(`/jobs/${encodeURIComponent(r.job_id)}`);
      for (let i = 0; i < 600 && jobPath; i++) {
        const j = await this.host.api.json<{ status: string }>(jobPath).catch(() => ({ status: "gone" }));
        if (j.status !== "queued" && j.status !== "running") {
          if (j.status === "failed" || j.status === "cancelled")
            this.host.toast("error", `The subset ${j.status}.`);
          break;
        }
        await new Promise((res) => setTimeout(res, 300));
      }
      this.clearDrawing();
      return true;
    } catch (e) {
      this.host.toast("error", `Subset failed: ${(e as Error).message}`);
      return false;
    } finally {
      this.busy = null;
      this.changed();
    }
  }

  /** A new current session: nothing drawn or selected carries over. */
  private checkSession(): void {
    const sid = this.host.currentId;
    if (sid === this.session) return;
    this.session = sid;
    this.drawing = null;
    this.count = null;
    this.rows = null;
    this.selectedId = null;
    this.shapes = [];
    this.regionSets = [];
    this.polygonDraft = [];
    this.shapesKey = "";
    this.regionsKey = "";
    this.changed();
  }

  // ------------------------------------------------------------------------------------- region sets

  /**
   * The region sets of the session (the categorical columns its history labelled with
   * `custom.annotate_cells`) with their categories' counts, re-read when the data versions move.
   */
  async syncRegionSets(dataKey: string): Promise<void> {
    if (this.regionsLocal) {
      this.regionSets = localRegionSets(this.host.source);
      return;
    }
    this.checkSession();
    const sid = this.host.currentId;
    const key = `${sid}|${dataKey}`;
    if (!sid || key === this.regionsKey) return;
    this.regionsKey = key;
    const names = new Set<string>();
    for (const h of this.host.state?.app_state.compute_history ?? [])
      if (h.function === "annotate_cells" && h.status === "completed") {
        const rs = (h.params as { region_set?: unknown } | undefined)?.region_set;
        if (typeof rs === "string") names.add(rs);
      }
    const cols = new Set((this.host.state?.fields.obs ?? []).map((o) => o.name));
    const out: RegionSet[] = [];
    for (const name of names) {
      if (!cols.has(name)) continue;
      try {
        const r = await this.host.api.json<{ values: { value: unknown; count: number }[] }>(
          `/api/sessions/${encodeURIComponent(sid)}/obs/${encodeURIComponent(name)}/values`,
        );
        out.push({
          name,
          categories: r.values
            .filter((v) => v.value !== null)
            .map((v) => ({ value: String(v.value), count: v.count })),
        });
      } catch {
        /* the column went away meanwhile */
      }
    }
    if (this.regionsKey !== key) return;
    this.regionSets = out;
    this.changed();
  }

  // ------------------------------------------------------------------------------------- shapes

  /** Re-read the shape annotations when the session or its data versions changed. */
  async syncShapes(dataKey: string, force = false): Promise<void> {
    if (this.host.mode !== "live") return this.syncSourceShapes();
    this.checkSession();
    const sid = this.host.currentId;
    const key = `${sid}|${dataKey}`;
    if (!sid) {
      if (this.shapes.length) {
        this.shapes = [];
        this.changed();
      }
      return;
    }
    if (key === this.shapesKey && !force) return;
    this.shapesKey = key;
    try {
      const r = await this.host.api.json<{ shapes: Shape[] }>(
        `/api/sessions/${encodeURIComponent(sid)}/shape-annotations`,
      );
      if (this.host.currentId !== sid) return;
      // Shapes with an edit still waiting to be sent keep their local state.
      this.shapes = r.shapes.map((s) =>
        this.styleTimers.has(s.id) ? (this.shapes.find((x) => x.id === s.id) ?? s) : s,
      );
      if (this.selectedId && !this.shapes.some((s) => s.id === this.selectedId)) this.selectedId = null;
      this.changed();
    } catch {
      /* the session is loading or gone */
    }
  }

  /**
   * The serverless viewer's shapes: read once per source from the checkpoint (client.md 10.3: they
   * show on every viewer's canvas), never edited.
   */
  private async syncSourceShapes(): Promise<void> {
    const src = this.host.source;
    const key = `source|${src?.id ?? ""}`;
    if (key === this.shapesKey) return;
    this.shapesKey = key;
    let shapes: Shape[] = [];
    try {
      shapes = (await src?.getShapeAnnotations?.()) ?? [];
    } catch (e) {
      this.host.toast("error", `Could not read the shape annotations: ${(e as Error).message}`);
    }
    if (this.host.source !== src) return;
    this.shapes = shapes;
    this.changed();
  }

  /** `POST …/shape-annotations`; the new shape is selected once the job has run. */
  async createShape(
    body: { kind: ShapeKind; points: Pt[] } & Partial<Omit<Shape, "id" | "kind" | "points">>,
  ): Promise<string | null> {
    const path = this.path("/shape-annotations");
    if (!path) return null;
    // client.md 10.3's defaults (the server fills the same ones), so the editor shows every field at once.
    const shape = {
      text: null,
      color: DEFAULT_STROKE,
      fill: null,
      stroke_width: 2,
      font_size: 16 / (this.canvases.get("spatial")?.scale || 1),
      dash: "solid" as const,
      arrow_start: false,
      arrow_end: body.kind === "arrow",
      arrow_size: 12,
      stroke_z: 1,
      fill_alpha: 0.25,
      fill_z: 0,
      ...body,
    };
    try {
      const r = await this.host.api.json<{ job_id: string; shape_id: string }>(path, {
        method: "POST",
        json: shape,
      });
      // Shown at once; the listing after the job confirms it.
      this.shapes = [...this.shapes, { id: r.shape_id, ...shape } as Shape];
      this.selectedId = r.shape_id;
      this.changed();
      return r.shape_id;
    } catch (e) {
      this.host.toast("error", `Could not add the shape: ${(e as Error).message}`);
      return null;
    }
  }

  /** Change a shape locally now and send it `STYLE_DEBOUNCE_MS` after the last change (`PUT`). */
  updateShape(id: string, patch: Partial<Omit<Shape, "id">>, immediate = false): void {
    const cur = this.shapes.find((s) => s.id === id);
    if (!cur) return;
    const next = { ...cur, ...patch } as Shape;
    this.shapes = this.shapes.map((s) => (s.id === id ? next : s));
    this.changed();
    const old = this.styleTimers.get(id);
    if (old) clearTimeout(old);
    const send = async () => {
      this.styleTimers.delete(id);
      const path = this.path(`/shape-annotations/${encodeURIComponent(id)}`);
      const latest = this.shapes.find((s) => s.id === id);
      if (!path || !latest) return;
      const { id: _id, ...body } = latest;
      try {
        await this.host.api.fetch(path, { method: "PUT", json: body });
      } catch (e) {
        this.host.toast("error", `Could not save the shape: ${(e as Error).message}`);
        if (e instanceof ApiError) void this.syncShapes(this.shapesKey, true);
      }
    };
    if (immediate) void send();
    else this.styleTimers.set(id, setTimeout(send, STYLE_DEBOUNCE_MS));
  }

  /** `DELETE …/shape-annotations/{id}`. */
  async deleteShape(id: string): Promise<void> {
    const path = this.path(`/shape-annotations/${encodeURIComponent(id)}`);
    if (!path) return;
    const t = this.styleTimers.get(id);
    if (t) clearTimeout(t);
    this.styleTimers.delete(id);
    try {
      await this.host.api.fetch(path, { method: "DELETE" });
      this.shapes = this.shapes.filter((s) => s.id !== id);
      if (this.selectedId === id) this.selectedId = null;
      this.changed();
    } catch (e) {
      this.host.toast("error", `Could not delete the shape: ${(e as Error).message}`);
    }
  }

  select(id: string | null): void {
    this.selectedId = id;
    this.changed();
  }
}
