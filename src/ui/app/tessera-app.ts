/**
 * `<tessera-app>`: the web app's frame (client.md 1, 2, 12, 17, 18). The header (session switcher
 * with status, size, lock holder, viewers and running jobs; lock badge; cell readout), the view
 * switcher (Spatial, Embeddings, Plots, Tables), a collapsible sidebar, toasts, the startup splash,
 * light/dark theme, the event stream with its polling fallback, the resource strip, the presence
 * heartbeat, the about dialog and the new-session dialog. It works in three modes: live (a server),
 * serverless (`?checkpoint=`, read-only) and collection (`index.json`); `embed=1` shows the canvas
 * only and talks to the host page over postMessage.
 */
import { css, html, LitElement, nothing, type TemplateResult } from "lit";
import { missingAutomaticDisplays } from "../../sdk/display/automatic.js";
import type { AppState, DisplaySpec } from "../../sdk/io/checkpoint/app-state.js";
import type { CanvasHost } from "../canvas-base.js";
import type { DataSource, SourceFields } from "../data-source.js";
import { fieldVersion } from "../field-cache.js";
import { ApiClient, ApiError } from "../http.js";
import { LiveDataSource } from "../live-source.js";
import "../spatial-canvas.js";
import "../embedding-canvas.js";
import { APP_EVENT } from "./analysis/index.js";
import "./canvas-tools/canvas-overlay.js";
import { formatMb } from "./analysis/save-model.js";
import { DrawController } from "./canvas-tools/draw-controller.js";
import { drawTabs } from "./canvas-tools/draw-panel.js";
import { type DisplayPayload, EmbedBridge, payloadOf, refreshingFetch } from "./embed.js";
import { type AppEvent, EventStream } from "./events.js";
import { clientId, clientName, publicId, setClientName } from "./identity.js";
import { decodeViewLink, encodeViewLink, encodingDiff, LINK_WARN_CHARS, type ViewLink } from "./view-link.js";

interface SessionSummary {
  id: string;
  name: string;
  status: "loading" | "ready" | "errored";
  resident_mb: number;
  parent_id: string | null;
  created_at: string;
  saved: boolean;
  read_only: boolean;
  error: string | null;
}

interface SessionState {
  summary: SessionSummary;
  app_state: AppState;
  queue: { job_id: string; status: string; descriptor?: { namespace: string; function: string } }[];
  fields: SourceFields;
  figures: Record<string, Record<string, number>>;
  data_versions: Record<string, number>;
}

interface PresenceView {
  sessions: Record<string, { lock?: { client_id: string; name: string } | null; viewers: string[] }>;
}

interface Toast {
  id: number;
  kind: "info" | "error";
  text: string;
}

interface LoadProgress {
  loadId: string;
  sessionId: string | null;
  message: string;
  pct: number | null;
  log: string;
  done: boolean;
  error: string | null;
}

type View = "spatial" | "embeddings" | "plots" | "tables";

interface FunctionEntry {
  key: string;
  namespace: string;
  function: string;
  effect_class: string;
  summary: string;
  json_schema: { properties?: Record<string, JsonSchema>; required?: string[] };
  ui_schema: Record<
    string,
    { widget?: string; path_kind?: string | null; bound_to?: string | null; tooltip?: string }
  >;
}

interface JsonSchema {
  type?: string | string[];
  enum?: unknown[];
  default?: unknown;
  description?: string;
  items?: JsonSchema;
  anyOf?: JsonSchema[];
}

const THEME_KEY = "tessera-theme";
const HEARTBEAT_MS = 5000;
const PERSIST_MS = 500;
const LINK_SYNC_MS = 400;

function uuid(): string {
  return (
    globalThis.crypto?.randomUUID?.() ?? `d${Date.now().toString(36)}${Math.random().toString(36).slice(2)}`
  );
}

/** The app element. */
export class TesseraApp extends LitElement {
  static override properties = {
    mode: { state: true },
    theme: { state: true },
    ready: { state: true },
    splashText: { state: true },
    sessions: { state: true },
    currentId: { state: true },
    state: { state: true },
    presence: { state: true },
    myPublic: { state: true },
    view: { state: true },
    sidebarOpen: { state: true },
    toasts: { state: true },
    resources: { state: true },
    dialog: { state: true },
    loads: { state: true },
    source: { state: true },
    displays: { state: true },
    dataKey: { state: true },
    streamMode: { state: true },
    switcherOpen: { state: true },
    lockOpen: { state: true },
    licenses: { state: true },
    datasets: { state: true },
    datasetFilter: { state: true },
    readers: { state: true },
    reader: { state: true },
    readerParams: { state: true },
    browse: { state: true },
    newName: { state: true },
    collection: { state: true },
    embed: { state: true },
    checkpointUrl: { state: true },
    cells: { state: true },
  };

  declare mode: "starting" | "live" | "serverless" | "collection" | "error";
  declare theme: "light" | "dark";
  declare ready: boolean;
  declare splashText: string;
  declare sessions: SessionSummary[];
  declare currentId: string | null;
  declare state: SessionState | null;
  declare presence: PresenceView;
  declare myPublic: string;
  declare view: View;
  declare sidebarOpen: boolean;
  declare toasts: Toast[];
  declare resources: { ram: number; cpu: number } | null;
  declare dialog: null | "new-session" | "about" | { kind: "delete"; id: string };
  declare loads: LoadProgress[];
  declare source: DataSource | null;
  declare displays: DisplaySpec[];
  declare dataKey: string;
  declare streamMode: string;
  declare switcherOpen: boolean;
  declare lockOpen: boolean;
  declare licenses: {
    server: { name: string; version: string; license: string }[];
    client: { name: string; version: string; license: string }[];
  } | null;
  declare datasets: { name: string; path: string }[];
  declare datasetFilter: string;
  declare readers: FunctionEntry[];
  declare reader: string;
  declare readerParams: Record<string, unknown>;
  declare browse: {
    param: string;
    path: string;
    parent: string | null;
    entries: { name: string; path: string; kind: string }[];
  } | null;
  declare newName: string;
  declare collection: {
    title?: string;
    checkpoints: { path: string; label?: string; description?: string }[];
    base: string;
  } | null;
  declare embed: boolean;
  declare checkpointUrl: string | null;
  declare cells: number;

  readonly clientId = clientId();
  private name = clientName();
  readonly api = new ApiClient({
    headers: () => ({ "x-tessera-client-id": this.clientId, "x-tessera-client-name": this.name }),
  });
  /** The canvas tools' state (Regions, Annotations, Subset tabs and the canvas overlays). */
  readonly draw = new DrawController(this);
  private stream: EventStream | null = null;
  private heartbeat: ReturnType<typeof setInterval> | null = null;
  private toastSeq = 0;
  private persistTimers = new Map<string, ReturnType<typeof setTimeout>>();
  private savedEncodings = new Map<string, Record<string, unknown>>();
  private linkTimer: ReturnType<typeof setTimeout> | null = null;
  private linkWarned = false;
  private bridge: EmbedBridge | null = null;
  private jobLogs = new Map<string, string>();
  private loadJobs = new Map<string, string>();
  private lockWarned = false;

  static override styles = css`
    :host {
      display: flex;
      flex-direction: column;
      height: 100vh;
      font: 13px/1.4 system-ui, -apple-system, "Segoe UI", sans-serif;
      --bg: #14161a;
      --fg: #e6e6e6;
      --muted: #9aa0a6;
      --panel: #1c1f25;
      --border: #2c3038;
      --accent: #4c9ffe;
      --danger: #ff6b6b;
      background: var(--bg);
      color: var(--fg);
    }
    :host([theme="light"]) {
      --bg: #f6f6f4;
      --fg: #1d1f23;
      --muted: #5f6368;
      --panel: #ffffff;
      --border: #d7d9dd;
      --tessera-panel-bg: rgba(255, 255, 255, 0.94);
      --tessera-panel-fg: #1d1f23;
    }
    header {
      display: flex;
      align-items: center;
      gap: 10px;
      padding: 6px 10px;
      background: var(--panel);
      border-bottom: 1px solid var(--border);
      position: relative;
      z-index: 10;
    }
    header .name {
      font-weight: 700;
      letter-spacing: 0.02em;
    }
    header .spacer {
      flex: 1;
    }
    button {
      font: inherit;
      color: inherit;
      background: transparent;
      border: 1px solid var(--border);
      border-radius: 5px;
      padding: 3px 9px;
      cursor: pointer;
    }
    button:hover {
      border-color: var(--accent);
    }
    button.primary {
      background: var(--accent);
      border-color: var(--accent);
      color: #fff;
    }
    button[disabled] {
      opacity: 0.5;
      cursor: default;
    }
    .pill {
      border: 1px solid var(--border);
      border-radius: 10px;
      padding: 1px 8px;
      font-size: 12px;
      color: var(--muted);
    }
    .pill.run {
      color: var(--accent);
      border-color: var(--accent);
    }
    .dropdown {
      position: absolute;
      top: 100%;
      background: var(--panel);
      border: 1px solid var(--border);
      border-radius: 6px;
      min-width: 380px;
      max-height: 60vh;
      overflow: auto;
      box-shadow: 0 8px 24px rgba(0, 0, 0, 0.35);
      padding: 4px;
    }
    .srow {
      display: flex;
      align-items: center;
      gap: 8px;
      padding: 5px 8px;
      border-radius: 4px;
      cursor: pointer;
    }
    .srow:hover,
    .srow.cur {
      background: rgba(127, 127, 127, 0.15);
    }
    .srow .meta {
      color: var(--muted);
      font-size: 11px;
    }
    .status-ready {
      color: #4caf50;
    }
    .status-loading {
      color: #f0ad4e;
    }
    .status-errored {
      color: var(--danger);
    }
    main {
      flex: 1;
      display: flex;
      min-height: 0;
    }
    aside {
      width: 260px;
      border-right: 1px solid var(--border);
      background: var(--panel);
      overflow: auto;
      padding: 8px;
      box-sizing: border-box;
    }
    .stage {
      flex: 1;
      position: relative;
      min-width: 0;
    }
    .stage > tessera-spatial-canvas,
    .stage > tessera-embedding-canvas {
      position: absolute;
      inset: 0;
    }
    .switcher {
      position: absolute;
      top: 10px;
      left: 50%;
      transform: translateX(-50%);
      z-index: 5;
      display: flex;
      gap: 2px;
      background: var(--panel);
      border: 1px solid var(--border);
      border-radius: 6px;
      padding: 2px;
    }
    .switcher button {
      border: none;
    }
    .switcher button[aria-pressed="true"] {
      background: var(--accent);
      color: #fff;
    }
    .placeholder {
      padding: 60px 24px;
      text-align: center;
      color: var(--muted);
    }
    footer {
      display: flex;
      gap: 16px;
      padding: 2px 10px;
      font-size: 11px;
      color: var(--muted);
      border-top: 1px solid var(--border);
      background: var(--panel);
    }
    .toasts {
      position: fixed;
      right: 12px;
      bottom: 30px;
      display: flex;
      flex-direction: column;
      gap: 6px;
      z-index: 100;
      max-width: 420px;
    }
    .toast {
      background: var(--panel);
      border: 1px solid var(--border);
      border-left: 4px solid var(--accent);
      padding: 8px 10px;
      border-radius: 5px;
      display: flex;
      gap: 8px;
      align-items: flex-start;
      box-shadow: 0 4px 14px rgba(0, 0, 0, 0.3);
    }
    .toast.error {
      border-left-color: var(--danger);
    }
    .toast span {
      flex: 1;
      white-space: pre-wrap;
    }
    .backdrop {
      position: fixed;
      inset: 0;
      background: rgba(0, 0, 0, 0.5);
      display: flex;
      align-items: center;
      justify-content: center;
      z-index: 50;
    }
    .modal {
      background: var(--panel);
      border: 1px solid var(--border);
      border-radius: 8px;
      width: min(680px, 92vw);
      max-height: 80vh;
      display: flex;
      flex-direction: column;
    }
    .modal h2 {
      margin: 0;
      padding: 12px 16px;
      font-size: 16px;
      border-bottom: 1px solid var(--border);
    }
    .modal .body {
      padding: 12px 16px;
      overflow: auto;
    }
    .modal .foot {
      padding: 10px 16px;
      border-top: 1px solid var(--border);
      display: flex;
      justify-content: flex-end;
      gap: 8px;
    }
    .list {
      max-height: 280px;
      overflow: auto;
      border: 1px solid var(--border);
      border-radius: 5px;
    }
    .list div {
      padding: 4px 8px;
      cursor: pointer;
    }
    .list div:hover {
      background: rgba(127, 127, 127, 0.15);
    }
    input[type="text"],
    input[type="search"],
    input[type="number"],
    select,
    textarea {
      font: inherit;
      color: inherit;
      background: var(--bg);
      border: 1px solid var(--border);
      border-radius: 4px;
      padding: 4px 6px;
      box-sizing: border-box;
    }
    .field {
      margin: 8px 0;
    }
    .field label {
      display: block;
      font-size: 12px;
      color: var(--muted);
      margin-bottom: 2px;
    }
    .field input[type="text"],
    .field input[type="number"],
    .field select,
    .field textarea {
      width: 100%;
    }
    pre.log {
      background: #0b0c0e;
      color: #d0d0d0;
      padding: 8px;
      max-height: 200px;
      overflow: auto;
      font-size: 11px;
      border-radius: 4px;
      white-space: pre-wrap;
    }
    .bar {
      height: 6px;
      background: var(--border);
      border-radius: 3px;
      overflow: hidden;
    }
    .bar > div {
      height: 100%;
      background: var(--accent);
    }
    .splash {
      position: fixed;
      inset: 0;
      display: flex;
      flex-direction: column;
      align-items: center;
      justify-content: center;
      gap: 14px;
      background: var(--bg);
      z-index: 200;
    }
    .splash .logo {
      width: 56px;
      height: 56px;
      display: grid;
      grid-template-columns: repeat(3, 1fr);
      gap: 3px;
    }
    .splash .logo span {
      background: var(--accent);
      border-radius: 2px;
      animation: pulse 1.2s infinite ease-in-out;
    }
    @keyframes pulse {
      0%,
      100% {
        opacity: 0.25;
      }
      50% {
        opacity: 1;
      }
    }
    .lockpop {
      right: 0;
      left: auto;
      min-width: 260px;
      padding: 10px;
    }
    .muted {
      color: var(--muted);
    }
    .err {
      color: var(--danger);
    }
  `;

  constructor() {
    super();
    const params = new URLSearchParams(location.search);
    this.mode = "starting";
    const stored = (() => {
      try {
        return localStorage.getItem(THEME_KEY);
      } catch {
        return null;
      }
    })();
    const qTheme = params.get("theme");
    this.theme = qTheme === "light" || qTheme === "dark" ? qTheme : stored === "light" ? "light" : "dark";
    this.ready = false;
    this.splashText = "Starting Tessera…";
    this.sessions = [];
    this.currentId = null;
    this.state = null;
    this.presence = { sessions: {} };
    this.myPublic = "";
    this.view = "spatial";
    this.sidebarOpen = true;
    this.toasts = [];
    this.resources = null;
    this.dialog = null;
    this.loads = [];
    this.source = null;
    this.displays = [];
    this.dataKey = "";
    this.streamMode = "";
    this.switcherOpen = false;
    this.lockOpen = false;
    this.licenses = null;
    this.datasets = [];
    this.datasetFilter = "";
    this.readers = [];
    this.reader = "";
    this.readerParams = {};
    this.browse = null;
    this.newName = "";
    this.collection = null;
    this.embed = params.get("embed") === "1";
    this.checkpointUrl = params.get("checkpoint");
    this.cells = 0;
  }

  override disconnectedCallback(): void {
    super.disconnectedCallback();
    if (this.heartbeat) clearInterval(this.heartbeat);
    this.stream?.stop();
  }

  override connectedCallback(): void {
    super.connectedCallback();
    this.setAttribute("theme", this.theme);
    void publicId(this.clientId).then((p) => {
      this.myPublic = p;
    });
    void this.boot();
    window.addEventListener("keydown", (e) => {
      if (e.key === "Escape") {
        this.dialog = null;
        this.switcherOpen = false;
        this.lockOpen = false;
      }
    });
    window.addEventListener("pagehide", () => this.partingBeat());
  }

  // ---------------------------------------------------------------------------------------------
  // Start-up

  private async boot(): Promise<void> {
    if (this.embed) this.sidebarOpen = false;
    // The ?token= link has set the session cookie with the page; keep the token out of the address bar.
    const here = new URL(location.href);
    if (here.searchParams.has("token")) {
      here.searchParams.delete("token");
      history.replaceState(null, "", here.href);
    }
    if (this.checkpointUrl) {
      await this.openServerless(this.checkpointUrl);
      return;
    }
    // Live: probe readyz; on the first failure, probe a sibling index.json once.
    let first = true;
    for (;;) {
      try {
        const r = await fetch(this.api.url("/api/readyz"));
        if (r.ok) {
          const body = (await r.json()) as { status: string };
          if (body.status === "ready") break;
          this.splashText = "Building the function registry…";
        } else throw new Error(String(r.status));
      } catch {
        if (first) {
          first = false;
          if (await this.tryCollection()) return;
        }
        this.splashText = "Waiting for the Tessera server…";
      }
      await new Promise((res) => setTimeout(res, 500));
    }
    this.mode = "live";
    this.ready = true;
    this.stream = new EventStream(
      this.api,
      (e) => this.onEvent(e),
      (m) => {
        this.streamMode = m;
      },
    );
    this.stream.start();
    await this.refreshSessions();
    const want = new URLSearchParams(location.search).get("session");
    const pick =
      this.sessions.find((s) => s.id === want) ??
      this.sessions.find((s) => s.status === "ready") ??
      this.sessions[0] ??
      null;
    if (pick) await this.selectSession(pick.id);
    else this.dialog = "new-session";
    this.heartbeat = setInterval(() => void this.beat(), HEARTBEAT_MS);
    void this.beat();
  }

  private async tryCollection(): Promise<boolean> {
    try {
      const url = new URL("index.json", location.href).href;
      const r = await fetch(url);
      if (!r.ok) return false;
      const idx = (await r.json()) as { title?: string; checkpoints: { path: string; label?: string }[] };
      if (!Array.isArray(idx.checkpoints)) return false;
      this.collection = { ...idx, base: url };
      if (idx.checkpoints.length === 1) {
        const u = new URL(location.href);
        u.searchParams.set("checkpoint", new URL(idx.checkpoints[0]!.path, url).href);
        history.replaceState(null, "", u.href);
        this.checkpointUrl = u.searchParams.get("checkpoint");
        await this.openServerless(this.checkpointUrl!);
        return true;
      }
      this.mode = "collection";
      this.ready = true;
      return true;
    } catch {
      return false;
    }
  }

  private async openServerless(url: string): Promise<void> {
    this.mode = "serverless";
    this.sidebarOpen = false;
    this.splashText = "Opening checkpoint…";
    try {
      if (this.embed) this.setupEmbed();
      const { openCheckpointSource } = await import("../checkpoint-source.js");
      const abs = new URL(url, location.href).href;
      const src = await openCheckpointSource(
        abs,
        this.bridge ? { fetch: refreshingFetch(this.bridge, abs) } : {},
      );
      this.source = src;
      const app = await src.getAppState();
      const fields = await src.getFields();
      this.state = {
        summary: {
          id: abs,
          name: src.cp.sidecar.name,
          status: "ready",
          resident_mb: 0,
          parent_id: null,
          created_at: "",
          saved: true,
          read_only: true,
          error: null,
        },
        app_state: app,
        queue: [],
        fields,
        // The Plots view shows the figures the checkpoint holds (client.md 17.1).
        figures: Object.fromEntries(src.cp.sidecar.figures.map((f) => [f.plot_id, { ...f.formats }])),
        data_versions: {},
      };
      this.displays = this.withAutoDisplays(app.displays, fields);
      for (const d of app.displays) this.savedEncodings.set(d.id, { ...d.encoding });
      this.applyViewLink();
      this.ready = true;
      if (this.bridge) this.bridge.ready(await this.inventory());
    } catch (e) {
      this.ready = true;
      this.mode = "error";
      const msg = (e as Error).message;
      this.toast("error", `Could not open the checkpoint: ${msg}`);
      this.bridge?.error(msg);
    }
  }

  private setupEmbed(): void {
    this.bridge = new EmbedBridge({
      applyDisplay: (d) => this.applyPayload(d),
      selectDisplay: (id) => {
        const d = this.displays.find((x) => x.id === id);
        if (!d) return null;
        this.view = d.type === "embedding_canvas" ? "embeddings" : "spatial";
        this.displays = [d, ...this.displays.filter((x) => x !== d)];
        return payloadOf(d);
      },
      searchVars: async (q, limit) => (this.source ? this.source.searchVarNames(q, limit) : []),
    });
  }

  private applyPayload(p: DisplayPayload): void {
    const cur = this.displays.find((d) => d.type === p.kind);
    const spec = {
      id: cur?.id ?? uuid(),
      type: p.kind,
      encoding: p.encoding,
      viewport: p.viewport ?? { target: [], zoom: 0 },
    } as unknown as DisplaySpec;
    this.displays = cur ? this.displays.map((d) => (d === cur ? spec : d)) : [...this.displays, spec];
    this.view = p.kind === "embedding_canvas" ? "embeddings" : "spatial";
  }

  private async inventory() {
    const f = this.state?.fields;
    return {
      displays: this.displays.map((d, i) => ({
        id: d.id,
        name: `${d.type === "spatial_canvas" ? "Spatial" : "Embedding"} ${i + 1}`,
        ...payloadOf(d),
      })),
      obsColumns: (f?.obs ?? []).map((o) => ({ name: o.name, kind: o.kind })),
      images: await this.imageInventory(f?.images ?? []),
      obsmKeys: (f?.obsm ?? []).map((o) => ({ key: o.name, nComponents: o.n_components })),
    };
  }

  /** The images of the embed inventory (an image whose info cannot be read is left out). */
  private async imageInventory(names: readonly string[]) {
    const src = this.source;
    const out: {
      element: string;
      channelNames: string[];
      isRgb: boolean;
      contrastRange: [number, number][];
    }[] = [];
    if (!src) return out;
    for (const name of names) {
      try {
        const info = await src.getImageInfo(name);
        out.push({
          element: name,
          channelNames: info.channel_names,
          isRgb: info.is_rgb,
          contrastRange: info.contrast_range,
        });
      } catch {
        // Not drawable here; the host does not get it.
      }
    }
    return out;
  }

  /** Displays of the session, plus automatic ones it lacks (spatial first; an embedding once one exists). */
  private withAutoDisplays(displays: DisplaySpec[], fields: SourceFields): DisplaySpec[] {
    const missing = missingAutomaticDisplays(displays, fields, uuid);
    return [
      ...missing.filter((d) => d.type === "spatial_canvas"),
      ...displays,
      ...missing.filter((d) => d.type !== "spatial_canvas"),
    ];
  }

  private applyViewLink(): void {
    const param = new URLSearchParams(location.search).get("view");
    if (!param) {
      const bg = new URLSearchParams(location.search).get("background");
      if (bg === "light" || bg === "dark")
        this.displays = this.displays.map(
          (d) => ({ ...d, encoding: { ...d.encoding, background: bg } }) as DisplaySpec,
        );
      return;
    }
    const link = decodeViewLink(param);
    if (!link) {
      this.toast("info", "The link's view could not be read; showing the saved view.");
      return;
    }
    const apply = (type: DisplaySpec["type"], part: ViewLink["sp"]) => {
      if (!part) return;
      this.displays = this.displays.map((d) => {
        if (d.type !== type) return d;
        const vp = part.vp
          ? {
              target: part.vp.t ?? [],
              zoom: part.vp.z ?? 0,
              ...(part.vp.rx !== undefined ? { rotationX: part.vp.rx } : {}),
              ...(part.vp.ro !== undefined ? { rotationOrbit: part.vp.ro } : {}),
            }
          : d.viewport;
        return { ...d, encoding: { ...d.encoding, ...(part.enc ?? {}) }, viewport: vp } as DisplaySpec;
      });
    };
    apply("spatial_canvas", link.sp);
    apply("embedding_canvas", link.em);
    if (link.ui?.view === "embedding") this.view = "embeddings";
    else if (link.ui?.view === "plots") this.view = "plots";
  }

  /** Keep `?view=` in sync with the displays (serverless only). */
  private syncLink(): void {
    if (this.mode !== "serverless" || this.embed) return;
    if (this.linkTimer) clearTimeout(this.linkTimer);
    this.linkTimer = setTimeout(() => {
      const link: ViewLink = { v: 1 };
      // Columns local to this browser (client.md 17.5) are not in the checkpoint: a link leaves
      // their colouring out, so whoever opens it sees the saved colouring, not a missing column.
      const local = new Set(
        ((this.source as { local?: { columnNames: string[] } } | null)?.local?.columnNames ?? []).map(
          (n) => `obs:${n}`,
        ),
      );
      for (const d of this.displays) {
        const enc = encodingDiff(
          this.savedEncodings.get(d.id) ?? {},
          d.encoding as unknown as Record<string, unknown>,
        );
        if (local.has(String(enc.color_by))) {
          delete enc.color_by;
          delete enc.isolated_category;
        }
        if (enc.category_colors && typeof enc.category_colors === "object") {
          const cc = { ...(enc.category_colors as Record<string, unknown>) };
          for (const k of local) delete cc[k];
          enc.category_colors = cc;
        }
        const part = {
          enc,
          vp: {
            t: (d.viewport.target ?? []) as number[],
            z: d.viewport.zoom,
            ...("rotationX" in d.viewport
              ? { rx: d.viewport.rotationX as number, ro: d.viewport.rotationOrbit as number }
              : {}),
          },
        };
        if (d.type === "spatial_canvas" && !link.sp) link.sp = part;
        if (d.type === "embedding_canvas" && !link.em) link.em = part;
      }
      link.ui = {
        view: this.view === "embeddings" ? "embedding" : this.view === "plots" ? "plots" : "canvas",
      };
      const u = new URL(location.href);
      u.searchParams.set("view", encodeViewLink(link));
      history.replaceState(null, "", u.href);
      if (u.href.length > LINK_WARN_CHARS && !this.linkWarned) {
        this.linkWarned = true;
        this.toast(
          "info",
          `This view's link is ${u.href.length} characters long; some tools cut links past ${LINK_WARN_CHARS}.`,
        );
      }
    }, LINK_SYNC_MS);
  }

  // ---------------------------------------------------------------------------------------------
  // Live sessions

  private async refreshSessions(): Promise<void> {
    try {
      this.sessions = (await this.api.json<{ sessions: SessionSummary[] }>("/api/sessions")).sessions;
    } catch (e) {
      this.toast("error", `Could not list sessions: ${(e as Error).message}`);
    }
  }

  async selectSession(id: string): Promise<void> {
    this.switcherOpen = false;
    if (this.currentId !== id) {
      this.currentId = id;
      this.state = null;
      this.source = null;
      this.displays = [];
      const u = new URL(location.href);
      u.searchParams.set("session", id);
      history.replaceState(null, "", u.href);
      void this.beat();
    }
    await this.refreshState();
  }

  /** Re-read the current session's state; canvases re-read only the fields whose version moved. */
  private async refreshState(): Promise<void> {
    const id = this.currentId;
    if (!id) return;
    let st: SessionState;
    try {
      st = await this.api.json<SessionState>(`/api/sessions/${encodeURIComponent(id)}`);
    } catch (e) {
      if (e instanceof ApiError && e.status === 404) {
        // A read of a session gone since (a subset's parent) must not undo the switch to its child.
        if (this.currentId !== id) return;
        this.currentId = null;
        this.state = null;
        await this.refreshSessions();
        // Gone by a subset (read before its session.removed arrived): follow the child.
        const child = this.sessions.find((x) => x.parent_id === id);
        if (child && !this.currentId) await this.selectSession(child.id);
        return;
      }
      this.toast("error", (e as Error).message);
      return;
    }
    if (this.currentId !== id) return;
    const prev = this.state;
    this.state = st;
    this.sessions = this.sessions.map((s) => (s.id === id ? st.summary : s));
    if (st.summary.status !== "ready") return;
    if (!this.source || !prev || prev.summary.status !== "ready") {
      const src = new LiveDataSource(this.api, id);
      try {
        this.activeTable = (await src.getElements()).activeTable;
      } catch {
        this.activeTable = null;
      }
      this.source = src;
      this.displays = this.withAutoDisplays(st.app_state.displays, st.fields);
    } else {
      // Adopt server displays that changed (not the ones being edited here).
      const server = new Map(st.app_state.displays.map((d) => [d.id, d]));
      // A local automatic display gives way to the one the lock holder persisted (client.md 5.11).
      const merged = this.displays
        .filter(
          (d) =>
            server.has(d.id) ||
            this.persistTimers.has(d.id) ||
            !st.app_state.displays.some((x) => x.type === d.type),
        )
        .map((d) => (this.persistTimers.has(d.id) ? d : this.mergeServer(d, server.get(d.id))));
      for (const d of st.app_state.displays) if (!merged.some((x) => x.id === d.id)) merged.push(d);
      // An embedding computed since: its automatic display.
      this.displays = this.withAutoDisplays(merged, st.fields);
    }
    this.dataKey = JSON.stringify(st.data_versions);
  }

  override updated(changed: Map<PropertyKey, unknown>): void {
    if (changed.has("displays") || changed.has("presence") || changed.has("state"))
      this.persistAutoDisplays();
  }

  /**
   * Automatic displays (client.md 5.11) are added here, in the browser that opens the session; the
   * holder of the edit lock persists them (`PUT /displays/{id}`, each once), so the session and its
   * checkpoints carry them and the save dialog keeps the obsm keys they draw. Other viewers keep
   * theirs local until the holder's arrive by `display.updated`.
   */
  private persistAutoDisplays(): void {
    const st = this.state;
    const l = this.lock;
    if (this.mode !== "live" || !st || st.summary.status !== "ready" || !l || l.client_id !== this.myPublic)
      return;
    for (const d of this.displays) {
      if (this.autoSent.has(d.id) || st.app_state.displays.some((x) => x.id === d.id)) continue;
      this.autoSent.add(d.id);
      this.onDisplayChange(d, false);
    }
  }

  private autoSent = new Set<string>();

  /** A server display replaces the local one, keeping the local camera (viewports are per client). */
  private mergeServer(local: DisplaySpec, server: DisplaySpec | undefined): DisplaySpec {
    if (!server) return local;
    // Unchanged (the echo of this browser's own PUT): keep the object, so nothing redraws.
    if (server.type === local.type && JSON.stringify(server.encoding) === JSON.stringify(local.encoding))
      return local;
    return { ...server, viewport: local.viewport } as DisplaySpec;
  }

  private activeTable: string | null = null;

  private get lock(): { client_id: string; name: string } | null {
    return (this.currentId && this.presence.sessions[this.currentId]?.lock) || null;
  }

  private get viewers(): string[] {
    return (this.currentId && this.presence.sessions[this.currentId]?.viewers) || [];
  }

  /** Whether this browser may change the current session. */
  get canEdit(): boolean {
    if (this.mode !== "live" || !this.state || this.state.summary.read_only) return false;
    const l = this.lock;
    return !l || l.client_id === this.myPublic;
  }

  private async beat(): Promise<void> {
    if (this.mode !== "live") return;
    try {
      this.presence = await this.api.json<PresenceView>("/api/presence", {
        method: "POST",
        json: { client_id: this.clientId, name: this.name, session_id: this.currentId },
      });
    } catch {
      /* the stream shows the server away */
    }
  }

  private partingBeat(): void {
    if (this.mode !== "live") return;
    try {
      void fetch(this.api.url("/api/presence"), {
        method: "POST",
        keepalive: true,
        headers: { "content-type": "application/json", "x-tessera-client-id": this.clientId },
        body: JSON.stringify({ client_id: this.clientId, name: this.name, session_id: null }),
      });
    } catch {
      /* leaving anyway */
    }
  }

  private onEvent(e: AppEvent): void {
    // The analysis panels listen on the app element (one stream for everyone).
    this.dispatchEvent(new CustomEvent(APP_EVENT, { detail: e }));
    const d = e.data as Record<string, unknown> & { session_id?: string };
    const sid = d.session_id;
    switch (e.event) {
      case "resource.sample": {
        const g = d.global as { rss_pct: number; cpu_pct: number; cpu_count: number } | undefined;
        if (g) this.resources = { ram: g.rss_pct, cpu: g.cpu_count ? g.cpu_pct / g.cpu_count : g.cpu_pct };
        return;
      }
      case "presence.updated":
        this.presence = d as unknown as PresenceView;
        return;
      case "session.loading":
        this.onLoading(d);
        return;
      case "session.created":
      case "session.updated": {
        const s = d.summary as SessionSummary;
        const i = this.sessions.findIndex((x) => x.id === s.id);
        this.sessions = i >= 0 ? this.sessions.map((x) => (x.id === s.id ? s : x)) : [...this.sessions, s];
        if (s.id === this.currentId) void this.refreshState();
        return;
      }
      case "session.removed": {
        this.sessions = this.sessions.filter((x) => x.id !== sid);
        if (sid === this.currentId) {
          const child = d.child_id as string | undefined;
          this.currentId = null;
          this.state = null;
          this.source = null;
          if (child) void this.refreshSessions().then(() => this.selectSession(child));
          else this.toast("info", "The session was closed.");
        }
        return;
      }
      case "session.errored":
        if (sid === this.currentId) this.toast("error", `The session failed to load: ${String(d.error)}`);
        return;
      case "job.log": {
        const jid = String(d.job_id);
        this.jobLogs.set(jid, (this.jobLogs.get(jid) ?? "") + String(d.chunk ?? ""));
        const loadId = this.loadJobs.get(jid);
        if (loadId) this.patchLoad(loadId, { log: this.jobLogs.get(jid) ?? "" });
        else {
          const l = this.loads.find((x) => x.sessionId === sid && !x.done);
          if (l) {
            this.loadJobs.set(jid, l.loadId);
            this.patchLoad(l.loadId, { log: this.jobLogs.get(jid) ?? "" });
          }
        }
        return;
      }
      case "job.queued":
      case "job.started":
      case "job.cancelled":
        if (sid === this.currentId) void this.refreshState();
        return;
      case "job.completed":
      case "job.failed":
        this.jobLogs.delete(String(d.job_id));
        if (e.event === "job.failed" && sid === this.currentId)
          this.toast("error", `A job failed: ${String(d.error)}`);
        if (sid === this.currentId) void this.refreshState();
        return;
      case "display.updated":
        if (sid === this.currentId && !this.persistTimers.has(String(d.display_id))) {
          const spec = d.spec as DisplaySpec;
          const cur = this.displays.find((x) => x.id === spec.id);
          this.displays = cur
            ? this.displays.map((x) => (x.id === spec.id ? this.mergeServer(x, spec) : x))
            : [...this.displays, spec];
        }
        return;
      case "plot.drawn":
      case "plot.invalidated":
        if (sid === this.currentId) void this.refreshState();
        return;
      case "memory.warning":
        this.toast("error", String(d.message));
        return;
      case "events.missed":
        void this.refreshSessions().then(() => this.refreshState());
        return;
    }
  }

  private onLoading(d: Record<string, unknown>): void {
    const id = String(d.load_id);
    if (!this.loads.some((l) => l.loadId === id)) return;
    const done = Boolean(d.done);
    const error = (d.error as string | undefined) ?? null;
    this.patchLoad(id, {
      message: String(d.message ?? ""),
      pct: typeof d.pct === "number" ? d.pct : null,
      sessionId: (d.session_id as string | undefined) ?? null,
      done,
      error,
    });
    if (done) {
      if (error) this.toast("error", `Loading failed: ${error}`);
      else {
        const hash = d.hash_check ?? d.hash ?? d.checksum;
        this.toast(
          "info",
          `Loaded.${hash !== undefined ? ` Checkpoint hash check: ${typeof hash === "object" ? JSON.stringify(hash) : String(hash)}` : ""}`,
        );
      }
    }
  }

  private patchLoad(id: string, patch: Partial<LoadProgress>): void {
    this.loads = this.loads.map((l) => (l.loadId === id ? { ...l, ...patch } : l));
  }

  // ---------------------------------------------------------------------------------------------
  // Canvas host

  private hostFor(): CanvasHost {
    return {
      fieldVersion: (path) => fieldVersion(this.state?.data_versions, path, this.activeTable),
      canEdit: () => this.canEdit,
      onDisplayChange: (spec, { viewportOnly }) => this.onDisplayChange(spec, viewportOnly),
    };
  }

  private localEdits = 0;

  /**
   * A browser-local edit of the serverless viewer (client.md 17.5): bump the version of `path` (a
   * local column the canvases then re-read; null: only the hidden cells changed) and restyle every
   * display with `restyle`. Nothing is sent anywhere.
   */
  localEdit(path: string | null, restyle?: (d: DisplaySpec) => DisplaySpec): void {
    const st = this.state;
    if (this.mode !== "serverless" || !st) return;
    const dv = { ...st.data_versions, ...(path ? { [path]: (st.data_versions[path] ?? 0) + 1 } : {}) };
    this.state = { ...st, data_versions: dv };
    // Every local edit moves the data key, so the canvases refresh (hidden cells have no field).
    this.dataKey = JSON.stringify([dv, ++this.localEdits]);
    if (restyle) this.displays = this.displays.map(restyle);
  }

  private onDisplayChange(spec: DisplaySpec, viewportOnly: boolean): void {
    this.displays = this.displays.map((d) => (d.id === spec.id ? spec : d));
    if (this.bridge && !viewportOnly) this.bridge.displayChanged(payloadOf(spec));
    this.syncLink();
    if (this.mode !== "live" || !this.canEdit || !this.currentId) return;
    const sid = this.currentId;
    const old = this.persistTimers.get(spec.id);
    if (old) clearTimeout(old);
    this.persistTimers.set(
      spec.id,
      setTimeout(async () => {
        const cur = this.displays.find((d) => d.id === spec.id) ?? spec;
        try {
          await this.api.fetch(
            `/api/sessions/${encodeURIComponent(sid)}/displays/${encodeURIComponent(spec.id)}`,
            {
              method: "PUT",
              json: cur,
            },
          );
        } catch (e) {
          if (e instanceof ApiError && e.status === 423) {
            if (!this.lockWarned)
              this.toast("info", `${(e as Error).message}: your display changes stay in this browser.`);
            this.lockWarned = true;
          } else this.toast("error", `Saving the display failed: ${(e as Error).message}`);
        } finally {
          this.persistTimers.delete(spec.id);
        }
      }, PERSIST_MS),
    );
  }

  // ---------------------------------------------------------------------------------------------
  // Actions

  toast(kind: Toast["kind"], text: string): void {
    const t = { id: ++this.toastSeq, kind, text };
    this.toasts = [...this.toasts, t];
    if (kind === "info") setTimeout(() => this.dismiss(t.id), 10_000);
  }

  private dismiss(id: number): void {
    this.toasts = this.toasts.filter((t) => t.id !== id);
  }

  private setTheme(t: "light" | "dark"): void {
    this.theme = t;
    this.setAttribute("theme", t);
    try {
      localStorage.setItem(THEME_KEY, t);
    } catch {
      /* private mode */
    }
  }

  private async openAbout(): Promise<void> {
    this.dialog = "about";
    if (this.licenses) return;
    const server =
      this.mode === "live"
        ? await this.api
            .json<{ npm: { name: string; version: string; license: string }[] }>("/api/about/licenses")
            .then((r) => r.npm)
            .catch(() => [])
        : [];
    const client = await fetch(new URL("licenses.json", location.href).href)
      .then((r) => (r.ok ? (r.json() as Promise<{ name: string; version: string; license: string }[]>) : []))
      .catch(() => []);
    this.licenses = { server, client };
  }

  private async openNewSession(): Promise<void> {
    this.dialog = "new-session";
    try {
      this.datasets = (
        await this.api.json<{ datasets: { name: string; path: string }[] }>("/api/fs/datasets")
      ).datasets;
    } catch (e) {
      this.toast("error", (e as Error).message);
    }
    try {
      const f = await this.api.json<{ functions: FunctionEntry[] }>("/api/functions");
      this.readers = f.functions.filter(
        (x) => (x.namespace === "read" || x.namespace === "io") && x.effect_class === "read",
      );
    } catch {
      this.readers = [];
    }
  }

  private async createSession(source: Record<string, unknown>, name?: string): Promise<void> {
    const loadId = uuid();
    this.loads = [
      ...this.loads,
      { loadId, sessionId: null, message: "Starting…", pct: null, log: "", done: false, error: null },
    ];
    try {
      const s = await this.api.json<SessionSummary>("/api/sessions", {
        method: "POST",
        json: { source, load_id: loadId, ...(name?.trim() ? { name: name.trim() } : {}) },
      });
      this.patchLoad(loadId, { sessionId: s.id });
      if (!this.sessions.some((x) => x.id === s.id)) this.sessions = [...this.sessions, s];
      await this.selectSession(s.id);
    } catch (e) {
      this.patchLoad(loadId, { done: true, error: (e as Error).message });
      this.toast("error", `Could not create the session: ${(e as Error).message}`);
    }
  }

  private async deleteSession(id: string, save: boolean): Promise<void> {
    this.dialog = null;
    try {
      await this.api.fetch(`/api/sessions/${encodeURIComponent(id)}`, { method: "DELETE", json: { save } });
      this.sessions = this.sessions.filter((s) => s.id !== id);
      if (id === this.currentId) {
        this.currentId = null;
        this.state = null;
        this.source = null;
        const next = this.sessions.find((s) => s.status === "ready");
        if (next) await this.selectSession(next.id);
      }
    } catch (e) {
      this.toast("error", `Could not close the session: ${(e as Error).message}`);
    }
  }

  private async takeLock(): Promise<void> {
    if (!this.currentId) return;
    try {
      await this.api.fetch(`/api/sessions/${encodeURIComponent(this.currentId)}/lock`, { method: "POST" });
      await this.beat();
    } catch (e) {
      this.toast("error", (e as Error).message);
    }
  }

  private async releaseLock(): Promise<void> {
    if (!this.currentId) return;
    try {
      await this.api.fetch(`/api/sessions/${encodeURIComponent(this.currentId)}/lock`, { method: "DELETE" });
      await this.beat();
    } catch (e) {
      this.toast("error", (e as Error).message);
    }
  }

  private async browseFor(param: string, path?: string): Promise<void> {
    try {
      const r = await this.api.json<{
        path: string;
        parent: string | null;
        entries: { name: string; path: string; kind: string }[];
      }>(`/api/fs/browse?include_files=true${path ? `&path=${encodeURIComponent(path)}` : ""}`);
      this.browse = { param, ...r };
    } catch (e) {
      this.toast("error", (e as Error).message);
    }
  }

  private exportPng(): void {
    const canvas = this.renderRoot
      .querySelector(this.view === "embeddings" ? "tessera-embedding-canvas" : "tessera-spatial-canvas")
      ?.shadowRoot?.querySelector("canvas:not(.minimap)") as HTMLCanvasElement | null;
    if (!canvas) return;
    const a = document.createElement("a");
    a.download = "tessera-view.png";
    a.href = canvas.toDataURL("image/png");
    a.click();
  }

  private async copyLink(): Promise<void> {
    try {
      await navigator.clipboard.writeText(location.href);
    } catch {
      const ta = document.createElement("textarea");
      ta.value = location.href;
      document.body.append(ta);
      ta.select();
      document.execCommand("copy");
      ta.remove();
    }
    this.toast("info", "Link copied.");
  }

  // ---------------------------------------------------------------------------------------------
  // Rendering

  private renderSplash(): TemplateResult {
    return html`<div class="splash" data-testid="splash">
      <div class="logo">${Array.from({ length: 9 }, (_, i) => html`<span style=${`animation-delay:${(i % 3) * 0.15 + Math.floor(i / 3) * 0.1}s`}></span>`)}</div>
      <div class="muted">${this.splashText}</div>
    </div>`;
  }

  private renderSwitcher(): TemplateResult {
    const cur = this.sessions.find((s) => s.id === this.currentId);
    const runningIn = (id: string) =>
      id === this.currentId ? (this.state?.queue ?? []).some((q) => q.status === "running") : false;
    return html`<div style="position:relative" data-tour="session-picker">
      <button data-testid="session-switcher" @click=${() => {
        this.switcherOpen = !this.switcherOpen;
      }}>
        ${cur ? html`${cur.name} <span class=${`status-${cur.status}`}>● ${cur.status}</span>` : "No session"} ▾
      </button>
      ${
        this.switcherOpen
          ? html`<div class="dropdown">
              ${this.sessions.map((s) => {
                const p = this.presence.sessions[s.id];
                const lock = p?.lock;
                const lockText = lock
                  ? lock.client_id === this.myPublic
                    ? "locked to you"
                    : `locked: ${lock.name}`
                  : "";
                const othersLock = Boolean(lock && lock.client_id !== this.myPublic);
                return html`<div class="srow ${s.id === this.currentId ? "cur" : ""}" @click=${() => this.selectSession(s.id)}>
                  <div style="flex:1">
                    <div>${s.name} ${runningIn(s.id) ? html`<span title="a job is running" style="color:var(--accent)">●</span>` : nothing}</div>
                    <div class="meta">
                      <span class=${`status-${s.status}`}>${s.status}</span> · ${formatMb(s.resident_mb)}
                      ${lockText ? html` · ${lockText}` : nothing} · ${p?.viewers.length ?? 0} viewing
                    </div>
                  </div>
                  <button
                    title=${othersLock ? "Someone else holds this session's lock" : "Close this session"}
                    ?disabled=${othersLock}
                    @click=${(e: Event) => {
                      e.stopPropagation();
                      this.switcherOpen = false;
                      this.dialog = { kind: "delete", id: s.id };
                    }}
                  >
                    ✕
                  </button>
                </div>`;
              })}
              <div class="srow" @click=${() => {
                this.switcherOpen = false;
                void this.openNewSession();
              }}>+ New session…</div>
            </div>`
          : nothing
      }
    </div>`;
  }

  private renderLockBadge(): TemplateResult | typeof nothing {
    if (this.mode !== "live" || !this.state) return nothing;
    const l = this.lock;
    const mine = l && l.client_id === this.myPublic;
    const text = l ? (mine ? "Locked to you" : `Locked: ${l.name}`) : "Unlocked";
    return html`<div style="position:relative" data-tour="lock-badge">
      <button data-testid="lock-badge" @click=${() => {
        this.lockOpen = !this.lockOpen;
      }}>${lockIcon} ${text} · ${this.viewers.length}</button>
      ${
        this.lockOpen
          ? html`<div class="dropdown lockpop">
              <div class="row" style="display:flex;gap:6px;margin-bottom:8px">
                ${mine ? html`<button data-testid="lock-release" @click=${() => this.releaseLock()}>Unlock</button>` : html`<button data-testid="lock-take" title=${l ? `${l.name} holds the lock; it is not taken from them (409)` : "Take the edit lock"} @click=${() => this.takeLock()}>Take lock</button>`}
              </div>
              <div class="muted" data-testid="lock-state">${l ? (mine ? "You hold the edit lock." : `${l.name} holds the edit lock: you can look, not change.`) : "Nobody holds the edit lock."}</div>
              <div class="muted" style="margin-top:8px">Viewers</div>
              <div data-testid="lock-viewers">${this.viewers.map((v) => html`<div>${v}</div>`)}</div>
              <div class="muted" style="margin-top:8px">Your name (Enter to rename, Esc to cancel)</div>
              <input
                type="text"
                data-testid="lock-name"
                .value=${this.name}
                @keydown=${(e: KeyboardEvent) => {
                  const t = e.target as HTMLInputElement;
                  if (e.key === "Enter") {
                    this.name = setClientName(t.value);
                    void this.beat();
                    this.lockOpen = false;
                  } else if (e.key === "Escape") {
                    t.value = this.name;
                    e.stopPropagation();
                  }
                }}
              />
            </div>`
          : nothing
      }
    </div>`;
  }

  private renderHeader(): TemplateResult | typeof nothing {
    if (this.embed) return nothing;
    const running = (this.state?.queue ?? []).filter(
      (q) => q.status === "running" || q.status === "queued",
    ).length;
    const dirty = this.state && !this.state.summary.saved && this.mode === "live";
    return html`<header>
      <button title="Toggle sidebar" @click=${() => {
        this.sidebarOpen = !this.sidebarOpen;
      }}>☰</button>
      <span class="name">Tessera</span>
      ${
        this.mode === "live"
          ? this.renderSwitcher()
          : this.mode === "serverless"
            ? html`${
                this.collection && this.collection.checkpoints.length > 1
                  ? html`<select
                      @change=${(e: Event) => {
                        const u = new URL(location.href);
                        u.search = "";
                        u.searchParams.set("checkpoint", (e.target as HTMLSelectElement).value);
                        location.href = u.href;
                      }}
                    >
                      ${this.collection.checkpoints.map((c) => {
                        const href = new URL(c.path, this.collection!.base).href;
                        return html`<option value=${href} ?selected=${href === this.checkpointUrl}>${c.label ?? c.path}</option>`;
                      })}
                    </select>`
                  : html`<span>${this.state?.summary.name ?? ""}</span>`
              }<span class="pill">read-only</span>`
            : nothing
      }
      ${this.renderLockBadge()}
      ${this.mode === "live" && this.state && !this.canEdit ? html`<span class="pill" data-testid="read-only" title="Controls that change the session are disabled">read-only — ${this.state.summary.read_only ? "read-only session" : `locked by ${this.lock?.name ?? "another viewer"}`}</span>` : nothing}
      ${this.cells ? html`<span class="pill" data-testid="cells">${this.cells.toLocaleString()} cells</span>` : nothing}
      ${running ? html`<span class="pill run" data-testid="running">${running} running</span>` : nothing}
      <span class="spacer"></span>
      ${this.mode === "live" ? html`<button data-tour="new-session" @click=${() => this.openNewSession()}>New session</button>` : nothing}
      ${this.mode === "serverless" ? html`<button @click=${() => this.copyLink()}>Copy link to this view</button><button @click=${() => this.exportPng()}>Export PNG</button>` : nothing}
      <button title="Theme" @click=${() => this.setTheme(this.theme === "dark" ? "light" : "dark")}>${this.theme === "dark" ? "☾" : "☀"}</button>
      <button data-testid="about" @click=${() => this.openAbout()}>About${dirty ? html` <span title="unsaved changes" style="color:var(--accent)">●</span>` : nothing}</button>
    </header>`;
  }

  private renderSidebar(): TemplateResult | typeof nothing {
    if (!this.sidebarOpen || this.embed) return nothing;
    return html`<tessera-analysis-sidebar
      .app=${this}
      .state=${this.state}
      .extraTabs=${drawTabs(this.draw, [this.state, this.presence])}
      @state-stale=${() => this.refreshState()}
    ></tessera-analysis-sidebar>`;
  }

  private renderStage(): TemplateResult {
    const st = this.state;
    if (this.mode === "collection" && this.collection) {
      return html`<div class="placeholder" style="text-align:left;max-width:640px;margin:auto">
        <h2>${this.collection.title ?? "Checkpoints"}</h2>
        ${this.collection.checkpoints.map((c) => {
          const href = new URL(c.path, this.collection!.base).href;
          const u = new URL(location.href);
          u.search = "";
          u.searchParams.set("checkpoint", href);
          return html`<div style="margin:10px 0"><a href=${u.href} style="color:var(--accent)">${c.label ?? c.path}</a>${c.description ? html`<div class="muted">${c.description}</div>` : nothing}</div>`;
        })}
      </div>`;
    }
    if (!st) {
      const load = this.loads.find((l) => l.sessionId === this.currentId);
      return html`<div class="placeholder">${this.currentId ? "Loading session…" : this.mode === "error" ? "Nothing to show." : "No session open. Choose New session to open a dataset."}${load ? this.renderLoad(load) : nothing}</div>`;
    }
    if (st.summary.status === "loading") {
      const load = this.loads.find((l) => l.sessionId === st.summary.id);
      return html`<div class="placeholder" data-testid="loading">Loading ${st.summary.name}…${load ? this.renderLoad(load) : nothing}</div>`;
    }
    if (st.summary.status === "errored") {
      return html`<div class="placeholder">
        <div class="err" data-testid="session-error">This session failed to load: ${st.summary.error}</div>
        <p><button @click=${() => this.deleteSession(st.summary.id, false)}>Dispose of it</button></p>
      </div>`;
    }
    const spatial = this.displays.find((d) => d.type === "spatial_canvas") ?? null;
    const emb = this.displays.find((d) => d.type === "embedding_canvas") ?? null;
    const host = this.hostFor();
    const showPlots = (st.app_state.plots ?? []).length > 0;
    return html`
      ${
        this.embed
          ? nothing
          : html`<div class="switcher" data-tour="view-switcher">
              ${(
                [
                  ["spatial", "Spatial"],
                  ["embeddings", "Embeddings"],
                  ...(showPlots ? [["plots", "Plots"]] : []),
                  ...(this.mode === "live" ? [["tables", "Tables"]] : []),
                ] as [View, string][]
              ).map(
                ([v, label]) =>
                  html`<button aria-pressed=${this.view === v} data-view=${v} @click=${() => {
                    this.view = v;
                    this.syncLink();
                  }}>${label}</button>`,
              )}
            </div>`
      }
      ${
        this.view === "spatial"
          ? spatial
            ? html`<tessera-spatial-canvas
                .source=${this.source}
                .display=${spatial}
                .host=${host}
                .dataKey=${this.dataKey}
                .controls=${!this.embed}
                .followViewport=${this.embed || this.mode === "serverless"}
                @canvas-error=${(e: CustomEvent) => this.toast("error", String(e.detail))}
              >${this.mode === "live" || this.mode === "serverless" ? html`<tessera-canvas-overlay kind="spatial" .controller=${this.draw} .dataKey=${this.dataKey} .watch=${[this.state, this.presence]}></tessera-canvas-overlay>` : nothing}</tessera-spatial-canvas>`
            : html`<div class="placeholder">This dataset has no spatial coordinates (obsm “spatial”).</div>`
          : this.view === "embeddings"
            ? emb
              ? html`<tessera-embedding-canvas
                  .source=${this.source}
                  .display=${emb}
                  .host=${host}
                  .dataKey=${this.dataKey}
                  .controls=${!this.embed}
                  .followViewport=${this.embed || this.mode === "serverless"}
                  @canvas-error=${(e: CustomEvent) => this.toast("error", String(e.detail))}
                >${this.mode === "live" || this.mode === "serverless" ? html`<tessera-canvas-overlay kind="embedding" .controller=${this.draw} .dataKey=${this.dataKey} .watch=${[this.state, this.presence]}></tessera-canvas-overlay>` : nothing}</tessera-embedding-canvas>`
              : this.renderNoEmbedding()
            : this.view === "plots"
              ? html`<tessera-plots-view .app=${this} .state=${st}></tessera-plots-view>`
              : html`<tessera-data-inspector .app=${this} .state=${st}></tessera-data-inspector>`
      }
    `;
  }

  /** The empty state of the Embeddings view: a Create embedding view form (client.md 6.3). */
  private renderNoEmbedding(): TemplateResult {
    const obsm = (this.state?.fields.obsm ?? []).filter((o) => o.name !== "spatial");
    const obs = this.state?.fields.obs ?? [];
    const value = (id: string) =>
      (this.renderRoot.querySelector(`[data-testid=${id}]`) as HTMLSelectElement | null)?.value ?? "";
    return html`<div class="placeholder">
      <p>No embedding view configured…</p>
      ${
        obsm.length
          ? html`<p>
              <select data-testid="new-embedding-key" title="Embedding" @change=${() => this.requestUpdate()}>
                ${obsm.map((o) => html`<option value=${o.name}>${o.name}</option>`)}
              </select>
              <select data-testid="new-embedding-color" title="Colour by">
                <option value="">colour: none</option>
                ${obs.map((o) => html`<option value=${`obs:${o.name}`}>colour: ${o.name}</option>`)}
              </select>
              <button
                @click=${() => {
                  const spec: DisplaySpec = {
                    id: uuid(),
                    type: "embedding_canvas",
                    encoding: {
                      obsm_key: value("new-embedding-key") || obsm[0]!.name,
                      color_by: value("new-embedding-color") || null,
                    },
                    viewport: { target: [], zoom: 0 },
                  };
                  // Persisted when this browser may edit; local to the browser otherwise (serverless).
                  this.displays = [...this.displays, spec];
                  this.onDisplayChange(spec, false);
                }}
              >
                Create embedding view (${value("new-embedding-key") || obsm[0]!.name})
              </button>
            </p>`
          : html`<p>Run PCA or UMAP to compute an embedding.</p>`
      }
    </div>`;
  }

  private renderLoad(l: LoadProgress): TemplateResult {
    return html`<div style="max-width:520px;margin:12px auto;text-align:left" data-testid="load-progress">
      <div>${l.message}${l.pct !== null ? ` (${Math.round(l.pct)}%)` : ""}</div>
      ${l.pct !== null ? html`<div class="bar"><div style=${`width:${Math.max(0, Math.min(100, l.pct))}%`}></div></div>` : nothing}
      ${l.error ? html`<div class="err">${l.error}</div>` : nothing}
      ${l.log ? html`<pre class="log">${cleanLog(l.log)}</pre>` : nothing}
    </div>`;
  }

  private renderDialog(): TemplateResult | typeof nothing {
    const d = this.dialog;
    if (!d) return nothing;
    const close = () => {
      this.dialog = null;
    };
    let down: EventTarget | null = null;
    const wrap = (
      title: string,
      body: TemplateResult,
      foot: TemplateResult = html`<button @click=${close}>Close</button>`,
    ) =>
      html`<div
        class="backdrop"
        @pointerdown=${(e: Event) => {
          down = e.target;
        }}
        @click=${(e: Event) => {
          if (e.target === e.currentTarget && down === e.currentTarget) close();
        }}
      >
        <div class="modal" role="dialog" aria-label=${title}>
          <h2>${title}</h2>
          <div class="body">${body}</div>
          <div class="foot">${foot}</div>
        </div>
      </div>`;
    if (d === "about") {
      const l = this.licenses;
      const list = (xs: { name: string; version: string; license: string }[]) =>
        html`<div class="list">${xs.map((x) => html`<div>${x.name} ${x.version} — ${x.license}</div>`)}</div>`;
      return wrap(
        "About Tessera",
        html`<p>Tessera: spatial-omics analysis in the browser. Third-party software and its licences:</p>
          ${
            l
              ? html`${this.mode === "live" ? html`<h3>Server packages (${l.server.length})</h3>${list(l.server)}` : nothing}
                  <h3>Client packages (${l.client.length})</h3>
                  ${list(l.client)}`
              : html`<p class="muted">Loading…</p>`
          }`,
      );
    }
    if (typeof d === "object" && d.kind === "delete") {
      const s = this.sessions.find((x) => x.id === d.id);
      let save = false;
      return wrap(
        "Close session",
        html`<p>Close <b>${s?.name ?? d.id}</b>?</p>
          ${
            s?.status === "ready"
              ? html`<label><input type="checkbox" @change=${(e: Event) => {
                  save = (e.target as HTMLInputElement).checked;
                }} /> Save a checkpoint first</label>`
              : nothing
          }`,
        html`<button @click=${close}>Cancel</button><button class="primary" @click=${() => this.deleteSession(d.id, save)}>Close session</button>`,
      );
    }
    // New session
    const filter = this.datasetFilter.toLowerCase();
    const readerEntry = this.readers.find((r) => r.key === this.reader);
    const pending = this.loads.filter((l) => !l.done);
    return wrap(
      "New session",
      html`
        <h3 style="margin-top:0">Open checkpoint or dataset</h3>
        <input type="search" placeholder="Search the data folder…" style="width:100%" @input=${(e: Event) => {
          this.datasetFilter = (e.target as HTMLInputElement).value;
        }} />
        <div class="list" data-testid="datasets" style="margin-top:6px">
          ${this.datasets
            .filter((x) => !filter || x.name.toLowerCase().includes(filter))
            .map(
              (x) =>
                html`<div @click=${() => {
                  void this.createSession({ kind: "load", path: x.path }, this.newName);
                  this.dialog = null;
                }}>${x.name}</div>`,
            )}
          ${this.datasets.length ? nothing : html`<div class="muted">No datasets in the data folder.</div>`}
        </div>
        <div class="field">
          <label>Session name (optional)</label>
          <input type="text" .value=${this.newName} @input=${(e: Event) => {
            this.newName = (e.target as HTMLInputElement).value;
          }} placeholder="from the file" />
        </div>
        <h3>Import data</h3>
        <select
          data-testid="reader"
          style="width:100%"
          @change=${(e: Event) => {
            this.reader = (e.target as HTMLSelectElement).value;
            const r = this.readers.find((x) => x.key === this.reader);
            this.readerParams = Object.fromEntries(
              Object.entries(r?.json_schema.properties ?? {})
                .filter(([, s]) => s.default !== undefined)
                .map(([k, s]) => [k, s.default]),
            );
          }}
        >
          <option value="">Choose a reader…</option>
          ${this.readers.map((r) => html`<option value=${r.key} ?selected=${r.key === this.reader}>${r.key} — ${r.summary}</option>`)}
        </select>
        ${readerEntry ? this.renderReaderForm(readerEntry) : nothing}
        ${pending.map((l) => this.renderLoad(l))}
      `,
      html`<button @click=${close}>Cancel</button>
        ${
          readerEntry
            ? html`<button
                class="primary"
                @click=${() => {
                  const [namespace, ...fn] = readerEntry.key.split(".");
                  const primary = Object.entries(readerEntry.ui_schema).find(([, u]) => u.path_kind)?.[0];
                  const base = primary ? String(this.readerParams[primary] ?? "") : "";
                  const auto = base
                    .split("/")
                    .filter(Boolean)
                    .pop()
                    ?.replace(/\.(sdata\.)?(zarr\.zip|zarr|h5ad|ome\.tiff?|zip)$/i, "")
                    .replace(/-[0-9a-f]{12}$/i, "");
                  void this.createSession(
                    { kind: "read", namespace, function: fn.join("."), params: this.readerParams },
                    this.newName || auto,
                  );
                }}
              >
                Import
              </button>`
            : nothing
        }`,
    );
  }

  private renderReaderForm(r: FunctionEntry): TemplateResult {
    const props = r.json_schema.properties ?? {};
    const required = new Set(r.json_schema.required ?? []);
    return html`${Object.entries(props).map(([k, s]) => {
      const ui = r.ui_schema[k] ?? {};
      const v = this.readerParams[k];
      const set = (val: unknown) => {
        this.readerParams = { ...this.readerParams, [k]: val };
      };
      const type = Array.isArray(s.type) ? s.type.find((t) => t !== "null") : s.type;
      const label = html`<label title=${ui.tooltip ?? s.description ?? ""}>${k}${required.has(k) ? " *" : ""}</label>`;
      let input: TemplateResult;
      if (ui.path_kind || ui.bound_to) {
        input = html`<div style="display:flex;gap:6px">
          <input type="text" .value=${String(v ?? "")} @input=${(e: Event) => set((e.target as HTMLInputElement).value)} />
          <button @click=${() => {
            const bound = ui.bound_to ? String(this.readerParams[ui.bound_to] ?? "") : "";
            void this.browseFor(k, bound || undefined);
          }}>Browse…</button>
        </div>
        ${
          this.browse?.param === k
            ? html`<div class="list">
                <div class="muted">${this.browse.path}</div>
                ${this.browse.parent ? html`<div @click=${() => this.browseFor(k, this.browse!.parent!)}>..</div>` : nothing}
                ${this.browse.entries.map(
                  (en) => html`<div
                    @click=${() => {
                      if (en.kind === "dir" && ui.path_kind !== "folder" && ui.path_kind !== "either")
                        void this.browseFor(k, en.path);
                      else {
                        const bound = ui.bound_to ? String(this.readerParams[ui.bound_to] ?? "") : "";
                        set(
                          bound && en.path.startsWith(`${bound}/`)
                            ? en.path.slice(bound.length + 1)
                            : en.path,
                        );
                        this.browse = null;
                      }
                    }}
                    @dblclick=${() => en.kind !== "file" && this.browseFor(k, en.path)}
                  >
                    ${en.kind === "dir" ? "📁" : en.kind === "dataset" ? "🧬" : "📄"} ${en.name}
                  </div>`,
                )}
              </div>`
            : nothing
        }`;
      } else if (s.enum) {
        input = html`<select @change=${(e: Event) => set(JSON.parse((e.target as HTMLSelectElement).value))}>
          ${s.enum.map((o) => html`<option value=${JSON.stringify(o)} ?selected=${JSON.stringify(o) === JSON.stringify(v)}>${String(o)}</option>`)}
        </select>`;
      } else if (type === "boolean") {
        input = html`<input type="checkbox" .checked=${Boolean(v)} @change=${(e: Event) => set((e.target as HTMLInputElement).checked)} />`;
      } else if (type === "number" || type === "integer") {
        input = html`<input type="number" .value=${v === undefined ? "" : String(v)} @input=${(e: Event) => {
          const t = (e.target as HTMLInputElement).value;
          set(t === "" ? undefined : Number(t));
        }} />`;
      } else if (type === "array") {
        input = html`<input type="text" placeholder="comma-separated" .value=${Array.isArray(v) ? v.join(", ") : ""} @input=${(
          e: Event,
        ) =>
          set(
            (e.target as HTMLInputElement).value
              .split(",")
              .map((x) => x.trim())
              .filter(Boolean),
          )} />`;
      } else if (type === "object") {
        input = html`<textarea rows="3" @change=${(e: Event) => {
          try {
            set(JSON.parse((e.target as HTMLTextAreaElement).value));
          } catch {
            this.toast("error", `${k}: not valid JSON`);
          }
        }}>${v === undefined ? "" : JSON.stringify(v)}</textarea>`;
      } else {
        input = html`<input type="text" .value=${String(v ?? "")} @input=${(e: Event) => set((e.target as HTMLInputElement).value || undefined)} />`;
      }
      return html`<div class="field">${label}${input}</div>`;
    })}`;
  }

  override render(): TemplateResult {
    if (!this.ready) return this.renderSplash();
    return html`
      ${this.renderHeader()}
      <main>
        ${this.renderSidebar()}
        <div class="stage" @cells=${(e: CustomEvent) => {
          this.cells = Number(e.detail);
        }}>${this.renderStage()}</div>
      </main>
      ${
        this.embed
          ? nothing
          : html`<footer data-testid="resources">
              ${this.mode === "live" ? html`<span>RAM ${this.resources ? `${Math.round(this.resources.ram)}%` : "–"}</span><span>CPU ${this.resources ? `${Math.round(this.resources.cpu)}%` : "–"}</span><span>events: ${this.streamMode || "connecting"}</span>` : html`<span>serverless viewer</span>`}
              <span style="flex:1"></span><span>${this.name}</span>
            </footer>`
      }
      <div class="toasts">
        ${this.toasts.map((t) => html`<div class="toast ${t.kind}" data-testid="toast-${t.kind}"><span>${t.text}</span><button @click=${() => this.dismiss(t.id)}>✕</button></div>`)}
      </div>
      <tessera-job-overlay .app=${this} .state=${this.state} @state-stale=${() => this.refreshState()}></tessera-job-overlay>
      ${this.renderDialog()}
    `;
  }
}

const lockIcon = html`<svg width="10" height="12" viewBox="0 0 10 12" aria-hidden="true" style="vertical-align:-1px"><rect x="1" y="5" width="8" height="7" rx="1" fill="currentColor"/><path d="M3 5V3.5a2 2 0 0 1 4 0V5" stroke="currentColor" stroke-width="1.4" fill="none"/></svg>`;

/** Drop ANSI cursor/progress codes; keep text (colours are not rendered in this first cut). */
function cleanLog(s: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: ANSI escapes
  return s.replace(/\u001b\[[0-9;?]*[A-Za-z]/g, "").replace(/\r(?!\n)/g, "\n");
}

if (!customElements.get("tessera-app")) customElements.define("tessera-app", TesseraApp);
