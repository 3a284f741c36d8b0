/**
 * What the spatial and the embedding canvas share: the `CanvasHost` contract, the display they draw,
 * the colour field (read through the field cache keyed by data version), the colour legend, the
 * colour-by picker (obs column or gene, genes searched on the server, debounced) and the point
 * controls. Each canvas wraps one imperative deck.gl `Deck`.
 */
import type { Deck } from "@deck.gl/core";
import { css, html, LitElement, nothing, type PropertyValues, type TemplateResult } from "lit";
import { CATEGORICAL_PALETTE } from "../sdk/display/encoding.js";
import type { DisplaySpec } from "../sdk/io/checkpoint/app-state.js";
import { type CellColors, cellColors, colormapGradient, fieldLabel, type Legend } from "./colors.js";
import type { DataSource, FieldData, SourceFields } from "./data-source.js";
import { fieldCache } from "./field-cache.js";

/** What a page embedding a canvas provides (client.md 19.1). */
export interface CanvasHost {
  /** The data version of a field path (API form, `obs:x`): part of the field cache key. */
  fieldVersion(path: string): number;
  /** Whether display edits are persisted (the caller holds the lock and the source is writable). */
  canEdit(): boolean;
  /** A display edit, already applied to the canvas. `viewportOnly`: only the camera moved. */
  onDisplayChange(spec: DisplaySpec, opts: { viewportOnly: boolean }): void;
  /** The current spec of a display, when the host owns it. */
  currentSpec?(id: string): DisplaySpec | undefined;
}

/** A host that persists nothing (a canvas used alone). */
export const LOCAL_HOST: CanvasHost = {
  fieldVersion: () => 0,
  canEdit: () => false,
  onDisplayChange: () => {},
};

/** Zoom limits and step (client.md 5.2). */
export const MIN_ZOOM = -8;
export const MAX_ZOOM = 8;
export const ZOOM_STEP = 0.5;

/** The canvases' shared look: CSS custom properties with fallbacks, so a host can theme them. */
export const canvasStyles = css`
  :host {
    display: block;
    position: relative;
    overflow: hidden;
    font: 13px/1.35 var(--tessera-font, system-ui, sans-serif);
    color: var(--tessera-fg, #e6e6e6);
    --panel-bg: var(--tessera-panel-bg, rgba(24, 26, 31, 0.92));
    --panel-fg: var(--tessera-panel-fg, #e6e6e6);
    --accent: var(--tessera-accent, #4c9ffe);
  }
  .deck {
    position: absolute;
    inset: 0;
  }
  :host([data-state="STALE"]) .deck {
    opacity: 0.55;
  }
  .overlay {
    position: absolute;
    pointer-events: none;
    z-index: 2;
  }
  .overlay > * {
    pointer-events: auto;
  }
  .status {
    top: 50%;
    left: 50%;
    transform: translate(-50%, -50%);
    background: var(--panel-bg);
    color: var(--panel-fg);
    padding: 8px 14px;
    border-radius: 6px;
  }
  .badge {
    top: 8px;
    right: 8px;
    background: var(--panel-bg);
    color: var(--panel-fg);
    padding: 2px 8px;
    border-radius: 10px;
    font-size: 11px;
  }
  .legend {
    right: 10px;
    bottom: 10px;
    background: var(--panel-bg);
    color: var(--panel-fg);
    padding: 8px 10px;
    border-radius: 6px;
    max-height: 45%;
    overflow: auto;
    transform-origin: bottom right;
    min-width: 140px;
  }
  .legend .title {
    font-weight: 600;
    margin-bottom: 4px;
  }
  .legend .bar {
    height: 10px;
    border-radius: 2px;
    width: 160px;
  }
  .legend .range {
    display: flex;
    justify-content: space-between;
    font-size: 11px;
  }
  .legend .item {
    display: flex;
    align-items: center;
    gap: 6px;
    cursor: pointer;
    padding: 1px 2px;
    border-radius: 3px;
  }
  .legend .item.dim {
    opacity: 0.4;
  }
  .legend .sw {
    width: 11px;
    height: 11px;
    border-radius: 2px;
    flex: none;
  }
  .legend .count {
    margin-left: auto;
    opacity: 0.6;
    font-size: 11px;
  }
  .zoombar {
    left: 10px;
    bottom: 10px;
    display: flex;
    gap: 4px;
    align-items: center;
    background: var(--panel-bg);
    color: var(--panel-fg);
    padding: 4px;
    border-radius: 6px;
  }
  button {
    font: inherit;
    background: rgba(255, 255, 255, 0.08);
    color: inherit;
    border: 1px solid rgba(255, 255, 255, 0.15);
    border-radius: 4px;
    padding: 2px 8px;
    cursor: pointer;
  }
  button:hover {
    border-color: var(--accent);
  }
  button[aria-pressed="true"] {
    background: var(--accent);
    color: #fff;
  }
  .panel {
    top: 10px;
    right: 10px;
    width: 260px;
    max-height: calc(100% - 220px);
    overflow: auto;
    background: var(--panel-bg);
    color: var(--panel-fg);
    border-radius: 8px;
    padding: 8px 10px;
    box-sizing: border-box;
  }
  .panel.min {
    width: auto;
  }
  .panel .tabs {
    display: flex;
    gap: 4px;
    margin-bottom: 6px;
  }
  .panel label {
    display: block;
    margin: 6px 0 2px;
    font-size: 11px;
    opacity: 0.8;
  }
  .panel .row {
    display: flex;
    gap: 6px;
    align-items: center;
    flex-wrap: wrap;
  }
  .panel select,
  .panel input[type="text"],
  .panel input[type="search"] {
    width: 100%;
    box-sizing: border-box;
    font: inherit;
    background: rgba(0, 0, 0, 0.3);
    color: inherit;
    border: 1px solid rgba(255, 255, 255, 0.2);
    border-radius: 4px;
    padding: 3px 5px;
  }
  .panel input[type="range"] {
    width: 100%;
  }
  .genes {
    list-style: none;
    margin: 2px 0 0;
    padding: 0;
    max-height: 140px;
    overflow: auto;
  }
  .genes li {
    padding: 2px 4px;
    cursor: pointer;
    border-radius: 3px;
  }
  .genes li:hover {
    background: rgba(255, 255, 255, 0.1);
  }
  .swatches {
    display: grid;
    grid-template-columns: repeat(5, 16px);
    gap: 3px;
  }
  .panel .row.cat {
    cursor: pointer;
    border-radius: 3px;
  }
  .panel .row.cat.on {
    outline: 1px solid var(--accent);
  }
  .swatches span {
    width: 16px;
    height: 16px;
    border-radius: 3px;
    cursor: pointer;
  }
  .progress {
    left: 10px;
    top: 10px;
    background: var(--panel-bg);
    color: var(--panel-fg);
    font-size: 11px;
    padding: 2px 8px;
    border-radius: 4px;
  }
`;

/** A field whose load is in flight or done. */
interface ColorState {
  path: string | null;
  version: number;
  field: FieldData | null;
  colors: CellColors | null;
  /** Key of what the colour buffer encodes (path, version, overrides, isolation). */
  key: string;
}

/** The shared canvas element. Subclasses draw. */
export abstract class CanvasBase extends LitElement {
  static override properties = {
    source: { attribute: false },
    display: { attribute: false },
    host: { attribute: false },
    controls: { type: Boolean },
    followViewport: { type: Boolean, attribute: "follow-viewport" },
    dataKey: { attribute: false },
    status: { state: true },
    legend: { state: true },
    panelOpen: { state: true },
    panelTab: { state: true },
    swatchTarget: { state: true },
    stale: { state: true },
    fields: { state: true },
    geneHits: { state: true },
    zoomReadout: { state: true },
    pointsTransformEditable: { type: Boolean, attribute: false },
  };

  static override styles = canvasStyles;

  /** Where the data comes from. */
  declare source: DataSource | null;
  /** The display drawn (a DisplaySpec of this canvas's kind). */
  declare display: DisplaySpec | null;
  /** The host contract (default: a local one). */
  declare host: CanvasHost;
  /** Show the in-canvas controls (off in embed mode). */
  declare controls: boolean;
  /** Move the camera when an applied display carries a viewport (embed mode, share links). */
  declare followViewport: boolean;
  /** Changes when the host's data versions change (re-read what changed). */
  declare dataKey: string;
  protected declare status: string;
  protected declare legend: Legend | null;
  protected declare panelOpen: boolean;
  protected declare panelTab: string;
  /** The category the 3×5 swatch grid colours (client.md 5.5), chosen by clicking its row. */
  protected declare swatchTarget: string | null;
  /** The colour field is being read again after a version change (STALE). */
  protected declare stale: boolean;
  protected declare fields: SourceFields | null;
  protected declare geneHits: string[];
  protected declare zoomReadout: number;
  /**
   * Offer "Edit points transform" in the View tab (a host that can set it, the live app, turns it
   * on); pressing it dispatches `edit-points-transform` on the canvas.
   */
  declare pointsTransformEditable: boolean;

  // biome-ignore lint/suspicious/noExplicitAny: the canvases hold decks of different view types
  protected deck: Deck<any> | null = null;
  protected color: ColorState = { path: null, version: -1, field: null, colors: null, key: "" };
  /** Number of cells. */
  protected n = 0;
  /** The colour field that could not be resolved (MISSING), null when the colouring is current. */
  protected missing: string | null = null;
  /** The last failure reported to the host (not repeated while it persists). */
  private lastError = "";
  private geneTimer: ReturnType<typeof setTimeout> | null = null;
  private resizeObs: ResizeObserver | null = null;

  constructor() {
    super();
    this.source = null;
    this.display = null;
    this.host = LOCAL_HOST;
    this.controls = true;
    this.followViewport = false;
    this.dataKey = "";
    this.status = "";
    this.legend = null;
    this.panelOpen = false;
    this.panelTab = "cells";
    this.swatchTarget = null;
    this.stale = false;
    this.fields = null;
    this.geneHits = [];
    this.zoomReadout = 0;
    this.pointsTransformEditable = false;
  }

  /**
   * CSS pixel position, relative to the canvas's top-left corner, of a point given in the canvas's
   * coordinates (spatial: world; embedding: the chosen components, 3 in 3D); null before the first
   * layout. Overlays (regions, shape annotations) draw and hit-test with it.
   */
  abstract project(p: readonly number[]): [number, number] | null;
  /** The canvas coordinates (2D) under a CSS pixel position; null in 3D or before the first layout. */
  abstract unproject(px: number, py: number): [number, number] | null;
  /** Whether the canvas shows a 3D view (points are then projected through the live camera). */
  get is3d(): boolean {
    return false;
  }
  /** Screen pixels per canvas unit at the current zoom (2^zoom). */
  abstract get scale(): number;
  /**
   * Let the deck's canvas take the keyboard focus (a click focuses it), so the arrow keys pan and
   * +/− zoom (deck's keyboard controller; `lock_view` turns it off with the rest).
   */
  protected focusable(): void {
    const cv = this.renderRoot.querySelector(".deck canvas");
    if (cv && !cv.hasAttribute("tabindex")) {
      cv.setAttribute("tabindex", "0");
      (cv as HTMLElement).style.outline = "none";
    }
  }

  /** Tell overlays the camera moved (`view-change`, not bubbling: overlays listen on the canvas). */
  protected notifyView(): void {
    this.dispatchEvent(new Event("view-change"));
  }

  /** The encoding with defaults filled (subclass). */
  protected abstract get enc(): {
    color_by?: string | null;
    category_colors?: Record<string, Record<string, string>>;
    isolated_category?: string | null;
    legend_visible: boolean;
    legend_title?: string | null;
    legend_scale: number;
    point_size: number;
    opacity: number;
    colormap: string;
  };

  /** Build the deck (subclass). */
  // biome-ignore lint/suspicious/noExplicitAny: see `deck`
  protected abstract createDeck(container: HTMLDivElement): Deck<any>;
  /** Push the current layers to the deck (subclass). */
  protected abstract redraw(): void;
  /** (Re)load the geometry of the cells when the source, display geometry or data version changes. */
  protected abstract loadGeometry(changed: PropertyValues<this>): Promise<void>;

  override firstUpdated(): void {
    const container = this.renderRoot.querySelector(".deck") as HTMLDivElement;
    this.deck = this.createDeck(container);
    this.focusable();
    this.resizeObs = new ResizeObserver(() => this.redraw());
    this.resizeObs.observe(this);
  }

  override disconnectedCallback(): void {
    super.disconnectedCallback();
    this.resizeObs?.disconnect();
    this.deck?.finalize();
    this.deck = null;
  }

  override connectedCallback(): void {
    super.connectedCallback();
    if (this.hasUpdated && !this.deck) {
      const container = this.renderRoot.querySelector(".deck") as HTMLDivElement | null;
      if (container) this.deck = this.createDeck(container);
      this.focusable();
    }
  }

  override updated(changed: PropertyValues<this>): void {
    if (changed.has("source")) {
      this.fields = null;
      this.color = { path: null, version: -1, field: null, colors: null, key: "" };
      if (this.source)
        void this.source
          .getFields()
          .then((f) => {
            this.fields = f;
          })
          .catch(() => {});
    } else if (changed.has("dataKey") && this.source) {
      void this.source
        .getFields()
        .then((f) => {
          this.fields = f;
        })
        .catch(() => {});
    }
    if (changed.has("source") || changed.has("display") || changed.has("dataKey")) void this.refresh(changed);
  }

  /** Reload what changed: geometry, then colours. */
  private async refresh(changed: PropertyValues<this>): Promise<void> {
    if (!this.source || !this.display) return;
    try {
      await this.loadGeometry(changed);
      this.dispatchEvent(new CustomEvent("cells", { detail: this.n, bubbles: true, composed: true }));
      await this.loadColors();
      this.redraw();
      this.lastError = "";
    } catch (e) {
      const msg = String((e as Error).message);
      this.status = `Error: ${msg}`;
      // Every camera move or data event refreshes: the same failure is reported once, not per frame.
      if (msg !== this.lastError) this.notify(msg);
      this.lastError = msg;
    }
  }

  /** The colour layer's data state (client.md 5.7), shown as `data-state` on the canvas. */
  private setDataState(s: "FRESH" | "LOADING" | "STALE" | "MISSING"): void {
    this.dataset.state = s;
    this.stale = s === "STALE";
  }

  /** The "updating" badge of a STALE colour layer (the deck is dimmed by the stylesheet meanwhile). */
  protected renderDataState(): TemplateResult | typeof nothing {
    return this.stale
      ? html`<div
          class="overlay badge"
          data-testid="updating"
          style="top:auto;right:auto;bottom:10px;left:50%;transform:translateX(-50%)"
        >
          updating
        </div>`
      : nothing;
  }

  /** Report a problem to the host once (`canvas-error`; the app shows it as a toast). */
  private notify(message: string): void {
    this.dispatchEvent(new CustomEvent("canvas-error", { detail: message, bubbles: true, composed: true }));
  }

  /** Read the colour field (through the cache) and rebuild the colour buffer when its key changed. */
  protected async loadColors(): Promise<void> {
    const src = this.source;
    if (!src || !this.n) return;
    const e = this.enc;
    const path = e.color_by ?? null;
    const version = path ? this.host.fieldVersion(path) : 0;
    const overrides = path ? (e.category_colors?.[path] ?? null) : null;
    const key = JSON.stringify([
      src.id,
      path,
      version,
      overrides,
      e.isolated_category ?? null,
      e.legend_title ?? null,
      this.n,
      src.hiddenCells?.version ?? 0,
    ]);
    if (key === this.color.key) return;
    let field: FieldData | null = null;
    if (path) {
      if (this.color.path !== path || this.color.version !== version || !this.color.field) {
        // A new version of the field drawn (a recompute): the old colours stay, dimmed, with an
        // "updating" badge (STALE, client.md 5.7); a field not drawn yet says "Loading colors…".
        const stale = this.color.path === path && this.color.field !== null;
        this.setDataState(stale ? "STALE" : "LOADING");
        if (!stale) this.status = "Loading colors…";
        try {
          field = await fieldCache.get(src, path, version);
        } catch (err) {
          if (!isMissingField(err)) throw err;
          field = null;
        } finally {
          this.status = "";
        }
      } else field = this.color.field;
      if (field && field.n !== this.n) field = null;
    }
    if ((this.enc.color_by ?? null) !== path) return; // superseded while loading
    const colors = cellColors(this.n, field, {
      title: e.legend_title ?? null,
      colormap: e.colormap,
      overrides,
      isolated: e.isolated_category ?? null,
    });
    // MISSING (client.md 5.7): the column is gone (a later step renamed or dropped it). The cells
    // take the default colouring, the legend names the unresolved field, and the host hears it once
    // for this (field, version) — the key caches the outcome, so redraws do not ask again.
    this.missing = path && !field ? path : null;
    this.setDataState(this.missing ? "MISSING" : "FRESH");
    if (this.missing) this.dataset.missing = this.missing;
    else delete this.dataset.missing;
    if (this.missing)
      this.notify(
        `Colour by ${fieldLabel(this.missing)}: the field is not in the data any more; the cells take the default colouring.`,
      );
    // Cells hidden in this browser (serverless viewer) are drawn fully transparent.
    const hidden = src.hiddenCells?.rows;
    if (hidden && hidden.length === this.n)
      for (let i = 0; i < this.n; i++) if (hidden[i]) colors.rgba[i * 4 + 3] = 0;
    this.color = { path, version, field, colors, key };
    this.legend = this.missing
      ? {
          kind: "none",
          title: fieldLabel(this.missing),
          note: `“${fieldLabel(this.missing)}” is not in the data: default colouring`,
        }
      : colors.legend;
  }

  /** Settings shown right after the point size (a subclass's marker glyph select); none here. */
  protected renderPointSizeExtras(): unknown {
    return nothing;
  }

  /** Apply an encoding edit: optimistic locally, then handed to the host. */
  protected editEncoding(patch: Record<string, unknown>): void {
    if (!this.display) return;
    const spec = { ...this.display, encoding: { ...this.display.encoding, ...patch } } as DisplaySpec;
    this.display = spec;
    this.host.onDisplayChange(spec, { viewportOnly: false });
  }

  /** Hand a camera change to the host (persisted debounced there; never broadcast). */
  protected editViewport(viewport: DisplaySpec["viewport"]): void {
    if (!this.display) return;
    const spec = { ...this.display, viewport } as DisplaySpec;
    this.display = spec;
    this.host.onDisplayChange(spec, { viewportOnly: true });
  }

  /** The display's encoding (defaults filled): colour by, category colours, isolation … */
  get encoding(): CanvasBase["enc"] {
    return this.enc;
  }

  /** Colour by the categorical `path` and isolate `category` in it (null: show all). */
  isolate(path: string, category: string | null): void {
    this.editEncoding({ color_by: path, isolated_category: category });
  }

  /** Colour by `path` (null: none). Switching resets the isolation. */
  setColorBy(path: string | null): void {
    this.editEncoding({ color_by: path, isolated_category: null, legend_title: null });
  }

  private onGeneInput(q: string): void {
    if (this.geneTimer) clearTimeout(this.geneTimer);
    this.geneTimer = setTimeout(async () => {
      if (!this.source || !q.trim()) {
        this.geneHits = [];
        return;
      }
      try {
        this.geneHits = await this.source.searchVarNames(q.trim(), 20);
      } catch {
        this.geneHits = [];
      }
    }, 200);
  }

  protected renderLegend(): TemplateResult | typeof nothing {
    const lg = this.legend;
    const e = this.enc;
    if (!lg || !e.legend_visible || (lg.kind === "none" && !lg.note)) return nothing;
    const scale = e.legend_scale;
    const iso = e.isolated_category ?? null;
    return html`<div class="overlay legend" part="legend" style=${`transform: scale(${scale})`}>
      <div class="title">${lg.title}</div>
      ${
        lg.kind === "numeric"
          ? html`<div class="bar" style=${`background: ${colormapGradient(lg.colormap)}`}></div>
              <div class="range"><span>${fmt(lg.min)}</span><span>${fmt(lg.max)}</span></div>`
          : lg.kind === "categorical"
            ? lg.items.map(
                (it) => html`<div
                  class="item ${iso !== null && iso !== it.value ? "dim" : ""}"
                  title="Click to isolate"
                  @click=${() => this.editEncoding({ isolated_category: iso === it.value ? null : it.value })}
                >
                  <span class="sw" style=${`background:${it.color}`}></span><span>${it.value}</span
                  ><span class="count">${it.count}</span>
                </div>`,
              )
            : html`<div>${lg.note}</div>`
      }
    </div>`;
  }

  /** The colour-by, legend and point controls (the Cells tab). */
  protected renderCellControls(): TemplateResult {
    const e = this.enc;
    const f = this.fields;
    const cb = e.color_by ?? "";
    const isGene = cb.startsWith("X:");
    const lg = this.legend;
    const overrides = (cb && e.category_colors?.[cb]) || {};
    return html`
      <label>Colour by (obs)</label>
      <select
        data-testid="color-by"
        @change=${(ev: Event) => this.setColorBy((ev.target as HTMLSelectElement).value || null)}
      >
        <option value="" ?selected=${!cb}>None</option>
        ${(f?.obs ?? []).map(
          (o) =>
            html`<option value=${`obs:${o.name}`} ?selected=${cb === `obs:${o.name}`}>${o.name} (${o.kind})</option>`,
        )}
        ${isGene ? html`<option value=${cb} selected>gene ${fieldLabel(cb)}</option>` : nothing}
        ${this.missing && this.missing === cb && !isGene ? html`<option value=${cb} selected>${fieldLabel(cb)} (missing)</option>` : nothing}
      </select>
      ${
        f?.has_x
          ? html`<label>Colour by gene</label>
              <input
                type="search"
                data-testid="gene-search"
                placeholder="Search genes…"
                @input=${(ev: Event) => this.onGeneInput((ev.target as HTMLInputElement).value)}
                @keydown=${(ev: KeyboardEvent) => {
                  if (ev.key === "Enter" && this.geneHits[0]) {
                    this.setColorBy(`X:${this.geneHits[0]}`);
                    this.geneHits = [];
                  }
                }}
              />
              <ul class="genes">
                ${this.geneHits.map(
                  (g) => html`<li
                    @click=${() => {
                      this.setColorBy(`X:${g}`);
                      this.geneHits = [];
                    }}
                  >
                    ${g}
                  </li>`,
                )}
              </ul>`
          : nothing
      }
      <label>Point size ${e.point_size}</label>
      <input
        type="range"
        min="0.1"
        max="20"
        step="0.1"
        .value=${String(e.point_size)}
        @change=${(ev: Event) => this.editEncoding({ point_size: Number((ev.target as HTMLInputElement).value) })}
      />
      ${this.renderPointSizeExtras()}
      <label>Opacity ${e.opacity}</label>
      <input
        type="range"
        min="0.05"
        max="1"
        step="0.05"
        .value=${String(e.opacity)}
        @change=${(ev: Event) => this.editEncoding({ opacity: Number((ev.target as HTMLInputElement).value) })}
      />
      <div class="row">
        <label
          ><input
            type="checkbox"
            .checked=${e.legend_visible}
            @change=${(ev: Event) => this.editEncoding({ legend_visible: (ev.target as HTMLInputElement).checked })}
          />
          Legend</label
        >
      </div>
      <label>Legend title</label>
      <input
        type="text"
        .value=${e.legend_title ?? ""}
        placeholder=${fieldLabel(cb)}
        @change=${(ev: Event) => this.editEncoding({ legend_title: (ev.target as HTMLInputElement).value || null })}
      />
      ${
        lg?.kind === "categorical"
          ? html`<label>Category colours</label>
              ${lg.items.slice(0, 100).map(
                (it) => html`<div
                  class="row cat ${this.swatchTarget === it.value ? "on" : ""}"
                  data-category=${it.value}
                  title="Select, then pick a swatch below"
                  @click=${() => {
                    this.swatchTarget = it.value;
                  }}
                >
                  <input
                    type="color"
                    .value=${it.color}
                    @change=${(ev: Event) =>
                      this.editEncoding({
                        category_colors: {
                          ...(e.category_colors ?? {}),
                          [cb]: { ...overrides, [it.value]: (ev.target as HTMLInputElement).value },
                        },
                      })}
                  />
                  <span>${it.value}</span>
                </div>`,
              )}
              <div class="swatches">
                ${CATEGORICAL_PALETTE.map(
                  (c) => html`<span
                    style=${`background:${c}`}
                    title=${this.swatchTarget === null ? `${c}: select a category above first` : `${c} for ${this.swatchTarget}`}
                    data-swatch=${c}
                    @click=${() => {
                      const target = this.swatchTarget;
                      if (target === null || !lg.items.some((x) => x.value === target)) return;
                      this.editEncoding({
                        category_colors: {
                          ...(e.category_colors ?? {}),
                          [cb]: { ...overrides, [target]: c },
                        },
                      });
                    }}
                  ></span>`,
                )}
              </div>
              <button
                @click=${() => {
                  const cc = { ...(e.category_colors ?? {}) };
                  delete cc[cb];
                  this.editEncoding({ category_colors: cc });
                }}
              >
                Reset colours
              </button>`
          : nothing
      }
    `;
  }
}

/**
 * Whether a field read failed because the field is not in the data (the live API answers 404 or
 * 400 naming it; the checkpoint reader throws without a status), as opposed to a passing failure
 * (503 admission, 423, the network) that a later refresh may get past.
 */
export function isMissingField(err: unknown): boolean {
  const status = (err as { status?: unknown } | null)?.status;
  return status === undefined || status === 404 || status === 400;
}

/** A number for the legend: 3 significant digits. */
export function fmt(v: number): string {
  if (!Number.isFinite(v)) return String(v);
  if (v === 0) return "0";
  const a = Math.abs(v);
  return a >= 1e4 || a < 1e-2 ? v.toExponential(2) : String(Number(v.toPrecision(3)));
}
