/**
 * The Plots main view (client.md 7): `<tessera-plots-view>`, a thumbnail grid of the session's
 * plots — a drawn plot shows its figure, a stale or failed one offers **Redraw** (`POST
 * …/plots/{id}/redraw`) — and `<tessera-plot-lightbox>`, the fullscreen viewer: prev/next buttons and
 * the ←/→ keys (wrapping), Esc to close, a white plate behind the figure, SVG/PNG/PDF downloads of
 * the formats that exist; it closes when its plot is invalidated.
 */
import { html, LitElement, nothing, type PropertyValues, type TemplateResult } from "lit";
import type { PlotEntry } from "../../../sdk/io/checkpoint/app-state.js";
import { type AppHost, editBlockedReason, type PanelSessionState, sessionPath } from "./host.js";

/** Object URLs of figures read from a checkpoint (serverless viewer), by source, plot and format. */
const checkpointFigures = new Map<string, string | Promise<void>>();

/**
 * The URL of a plot's figure (the byte length busts the browser cache after a redraw). In the
 * serverless viewer the figure is one range read of the checkpoint, served as an object URL: empty
 * until it has been read, then `onReady` is called so the caller renders again.
 */
export function figureUrl(
  app: AppHost,
  state: PanelSessionState,
  plotId: string,
  fmt: string,
  onReady?: () => void,
): string {
  const v = state.figures[plotId]?.[fmt] ?? 0;
  const src = app.source;
  if (app.mode === "serverless" && src) {
    const key = `${src.id}\u0000${plotId}\u0000${fmt}`;
    const have = checkpointFigures.get(key);
    if (typeof have === "string") return have;
    if (!have)
      checkpointFigures.set(
        key,
        src
          .getPlotFigure(plotId, fmt as "svg" | "png" | "pdf")
          .then((blob) => {
            if (blob) checkpointFigures.set(key, URL.createObjectURL(blob));
            else checkpointFigures.delete(key);
            onReady?.();
          })
          .catch((e) => {
            checkpointFigures.delete(key);
            app.toast("error", `Could not read the figure of ${plotId}: ${(e as Error).message}`);
          }),
      );
    return "";
  }
  return app.api.url(
    sessionPath(state.summary.id, `/plots/${encodeURIComponent(plotId)}/figure?fmt=${fmt}&v=${v}`),
  );
}

/** The plots that have a figure, in history order. */
export function drawnPlots(state: PanelSessionState | null): PlotEntry[] {
  if (!state) return [];
  return state.app_state.plots.filter((p) => p.status === "drawn" && state.figures[p.id]);
}

/** The format a thumbnail shows: SVG when drawn as SVG, else PNG. */
function shownFormat(state: PanelSessionState, id: string): string | null {
  const f = state.figures[id] ?? {};
  return f.svg ? "svg" : f.png ? "png" : null;
}

/** The lightbox element; fires `close`. */
export class TesseraPlotLightbox extends LitElement {
  static override properties = {
    app: { attribute: false },
    state: { attribute: false },
    plotId: { attribute: false },
  };

  declare app: AppHost | null;
  declare state: PanelSessionState | null;
  declare plotId: string | null;

  private onKey = (e: KeyboardEvent) => {
    if (!this.plotId) return;
    if (e.key === "Escape") {
      e.stopImmediatePropagation();
      this.close();
    } else if (e.key === "ArrowRight") this.step(1);
    else if (e.key === "ArrowLeft") this.step(-1);
  };

  constructor() {
    super();
    this.app = null;
    this.state = null;
    this.plotId = null;
  }

  protected override createRenderRoot(): HTMLElement {
    return this;
  }

  override connectedCallback(): void {
    super.connectedCallback();
    // Capture: Esc closes the lightbox before anything under it.
    window.addEventListener("keydown", this.onKey, true);
  }

  override disconnectedCallback(): void {
    super.disconnectedCallback();
    window.removeEventListener("keydown", this.onKey, true);
  }

  protected override updated(changed: PropertyValues): void {
    // The plot went stale (or away): its figure is unreachable, so the lightbox closes.
    if (changed.has("state") && this.plotId && !drawnPlots(this.state).some((p) => p.id === this.plotId))
      this.close();
  }

  private close(): void {
    this.dispatchEvent(new CustomEvent("close"));
  }

  private step(d: number): void {
    const list = drawnPlots(this.state);
    const i = list.findIndex((p) => p.id === this.plotId);
    if (!list.length || i < 0) return;
    this.plotId = list[(i + d + list.length) % list.length]!.id;
    this.dispatchEvent(new CustomEvent("plot-change", { detail: this.plotId }));
  }

  override render(): TemplateResult | typeof nothing {
    const app = this.app;
    const st = this.state;
    const list = drawnPlots(st);
    const i = list.findIndex((p) => p.id === this.plotId);
    const p = list[i];
    if (!app || !st || !p) return nothing;
    const fmt = shownFormat(st, p.id);
    const fmts = (["svg", "png", "pdf"] as const).filter((f) => st.figures[p.id]?.[f]);
    return html`<style>${LIGHTBOX_CSS}</style><div class="lightbox" data-testid="lightbox" data-plot=${p.id}
      @click=${(e: Event) => {
        if (e.target === e.currentTarget) this.close();
      }}>
      <div class="lb-bar">
        <span><b>${p.namespace}.${p.function}</b> <span class="muted">${i + 1} / ${list.length}</span></span>
        <span style="flex:1"></span>
        ${fmts.map((f) => html`<a class="dl" data-download=${f} href=${figureUrl(app, st, p.id, f, () => this.requestUpdate())} download=${`${p.function}.${f}`}>${f.toUpperCase()}</a>`)}
        <button data-action="close-lightbox" title="Close (Esc)" @click=${() => this.close()}>✕</button>
      </div>
      <button class="lb-nav lb-prev" data-action="prev" title="Previous (←)" @click=${() => this.step(-1)}>‹</button>
      <div class="lb-plate">${fmt ? html`<img data-testid="lightbox-figure" alt=${p.function} src=${figureUrl(app, st, p.id, fmt, () => this.requestUpdate())} />` : nothing}</div>
      <button class="lb-nav lb-next" data-action="next" title="Next (→)" @click=${() => this.step(1)}>›</button>
    </div>`;
  }
}

/** The Plots view element. */
export class TesseraPlotsView extends LitElement {
  static override properties = {
    app: { attribute: false },
    state: { attribute: false },
    open: { state: true },
  };

  declare app: AppHost | null;
  declare state: PanelSessionState | null;
  /** The plot shown in the lightbox. */
  declare open: string | null;

  constructor() {
    super();
    this.app = null;
    this.state = null;
    this.open = null;
  }

  protected override createRenderRoot(): HTMLElement {
    return this;
  }

  private async redraw(p: PlotEntry): Promise<void> {
    const app = this.app;
    const sid = app?.currentId;
    if (!app || !sid) return;
    try {
      await app.api.fetch(sessionPath(sid, `/plots/${encodeURIComponent(p.id)}/redraw`), { method: "POST" });
    } catch (e) {
      app.toast("error", `Redraw ${p.function}: ${(e as Error).message}`);
    }
  }

  override render(): TemplateResult | typeof nothing {
    const app = this.app;
    const st = this.state;
    if (!app || !st) return nothing;
    const blocked = editBlockedReason(app);
    const plots = st.app_state.plots;
    return html`<style>${CSS}</style>
      <div class="plots-view" data-testid="plots-view">
        ${plots.length ? nothing : html`<div class="placeholder">No plots yet: add one from the Plots tab.</div>`}
        <div class="pgrid">
          ${plots.map((p) => {
            const fmt = st.figures[p.id] && p.status === "drawn" ? shownFormat(st, p.id) : null;
            return html`<figure class="ptile" data-plot=${p.id} data-status=${p.status}>
              ${
                fmt
                  ? html`<button class="pthumb" title="Open" @click=${() => {
                      this.open = p.id;
                    }}><img alt=${p.function} src=${figureUrl(app, st, p.id, fmt, () => this.requestUpdate())} loading="lazy" /></button>`
                  : html`<div class="pthumb pempty">
                      <span class="muted">${p.status === "invalidated" ? "Out of date" : p.status === "drawn" ? "No saved figure" : p.status}</span>
                      ${
                        ["invalidated", "failed", "drawn"].includes(p.status)
                          ? html`<button data-action="redraw" ?disabled=${!!blocked} title=${blocked ?? "Draw it again"} @click=${() => this.redraw(p)}>Redraw</button>`
                          : nothing
                      }
                    </div>`
              }
              <figcaption>${p.function} <span class="hbadge hb-${p.status}">${p.status}</span></figcaption>
            </figure>`;
          })}
        </div>
      </div>
      ${
        this.open
          ? html`<tessera-plot-lightbox .app=${app} .state=${st} .plotId=${this.open}
              @plot-change=${(e: CustomEvent<string>) => {
                this.open = e.detail;
              }}
              @close=${() => {
                this.open = null;
              }}></tessera-plot-lightbox>`
          : nothing
      }`;
  }
}

const CSS = `
tessera-plots-view { position: absolute; inset: 0; overflow: auto; }
.plots-view { padding: 56px 16px 16px; }
.pgrid { display: grid; grid-template-columns: repeat(auto-fill, minmax(220px, 1fr)); gap: 14px; }
.ptile { margin: 0; background: var(--panel); border: 1px solid var(--border); border-radius: 6px; padding: 8px; display: flex; flex-direction: column; gap: 6px; }
.pthumb { display: flex; align-items: center; justify-content: center; height: 180px; background: #fff; border-radius: 4px; padding: 4px; border: none; cursor: zoom-in; }
.pthumb img { max-width: 100%; max-height: 100%; }
.pthumb.pempty { background: rgba(127,127,127,.1); flex-direction: column; gap: 8px; cursor: default; }
.ptile figcaption { display: flex; gap: 6px; align-items: center; justify-content: space-between; }
`;

const LIGHTBOX_CSS = `
.lightbox { position: fixed; inset: 0; background: rgba(0,0,0,.82); z-index: 120; display: flex; align-items: center; justify-content: center; }
.lb-bar { position: absolute; top: 0; left: 0; right: 0; display: flex; gap: 8px; align-items: center; padding: 10px 14px; background: var(--panel); border-bottom: 1px solid var(--border); }
.lb-plate { background: #fff; border-radius: 6px; padding: 12px; max-width: 84vw; max-height: 80vh; display: flex; margin-top: 40px; }
.lb-plate img { width: min(76vw, 1200px); height: calc(78vh - 24px); object-fit: contain; }
.lb-nav { font-size: 28px; line-height: 1; padding: 8px 14px; margin: 0 14px; background: var(--panel); }
`;

if (!customElements.get("tessera-plot-lightbox"))
  customElements.define("tessera-plot-lightbox", TesseraPlotLightbox);
if (!customElements.get("tessera-plots-view")) customElements.define("tessera-plots-view", TesseraPlotsView);
