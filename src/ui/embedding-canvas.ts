/**
 * `<tessera-embedding-canvas>`: an obsm embedding (UMAP, t-SNE, PCA …) in 2D under an orthographic
 * view or in 3D under an orbit view (point cloud), with component pickers, colour by and legend
 * (client.md 6). The deck is rebuilt when 2D/3D is toggled.
 */
import { Deck, OrbitView, OrthographicView } from "@deck.gl/core";
import { ScatterplotLayer } from "@deck.gl/layers";
import { html, nothing, type PropertyValues } from "lit";
import { withEmbeddingDefaults } from "../sdk/display/encoding.js";
import type { EmbeddingEncoding } from "../sdk/io/checkpoint/app-state.js";
import { CanvasBase, MAX_ZOOM, MIN_ZOOM } from "./canvas-base.js";
import { fieldCache } from "./field-cache.js";

type Enc = ReturnType<typeof withEmbeddingDefaults<EmbeddingEncoding>>;

interface EmbViewState {
  target: [number, number, number];
  zoom: number;
  rotationX: number;
  rotationOrbit: number;
}

/** The embedding canvas element. */
export class EmbeddingCanvas extends CanvasBase {
  positions: Float32Array | null = null;
  private center: [number, number, number] = [0, 0, 0];
  private extent = 1;
  private geomKey = "";
  /** Source and obsm key the geometry was read from (a change refits the camera). */
  private geomPath = "";
  private is3dView = false;
  private viewState: EmbViewState = { target: [0, 0, 0], zoom: 0, rotationX: 25, rotationOrbit: 0 };
  private viewportTimer: ReturnType<typeof setTimeout> | null = null;
  private lastAppliedViewport = "";
  frames = 0;

  protected get enc(): Enc {
    return withEmbeddingDefaults((this.display?.encoding ?? { obsm_key: "" }) as EmbeddingEncoding);
  }

  // biome-ignore lint/suspicious/noExplicitAny: see CanvasBase.deck
  protected createDeck(container: HTMLDivElement): Deck<any> {
    this.is3dView = Boolean(this.enc.is_3d);
    return new Deck({
      parent: container,
      views: [
        this.is3dView
          ? new OrbitView({ id: "orbit", orbitAxis: "Y", fovy: 50 })
          : new OrthographicView({ id: "emb", flipY: false }),
      ],
      viewState: this.deckViewState() as never,
      controller: this.enc.lock_view ? false : { dragPan: true, dragRotate: this.is3dView },
      onViewStateChange: ({ viewState }) => {
        const vs = viewState as Partial<EmbViewState> & { target: number[]; zoom: number };
        this.viewState = {
          target: [vs.target[0] ?? 0, vs.target[1] ?? 0, vs.target[2] ?? 0],
          zoom: Math.max(MIN_ZOOM, Math.min(MAX_ZOOM, Number(vs.zoom))),
          rotationX: Math.max(-180, Math.min(180, vs.rotationX ?? this.viewState.rotationX)),
          rotationOrbit: vs.rotationOrbit ?? this.viewState.rotationOrbit,
        };
        this.deck?.setProps({ viewState: this.deckViewState() as never });
        this.notifyView();
        if (this.viewportTimer) clearTimeout(this.viewportTimer);
        this.viewportTimer = setTimeout(() => {
          const v = this.viewport;
          this.lastAppliedViewport = JSON.stringify(v);
          this.editViewport(v);
        }, 500);
      },
      onAfterRender: () => {
        this.frames++;
        // What the last drawn frame showed (tests and the bench wait for it).
        const k = this.dataset.colorKey;
        if (k && this.dataset.ready === "1" && this.dataset.drawnKey !== k) this.dataset.drawnKey = k;
      },
      layers: [],
    });
  }

  private deckViewState(): Record<string, unknown> {
    const v = this.viewState;
    return this.is3dView
      ? { ...v, minZoom: MIN_ZOOM, maxZoom: MAX_ZOOM, minRotationX: -180, maxRotationX: 180 }
      : { target: [v.target[0], v.target[1], 0], zoom: v.zoom, minZoom: MIN_ZOOM, maxZoom: MAX_ZOOM };
  }

  /** The camera in embedding coordinates (client.md: `{target, zoom, rotationX, rotationOrbit}`). */
  get viewport() {
    const v = this.viewState;
    return this.is3dView
      ? { target: [...v.target], zoom: v.zoom, rotationX: v.rotationX, rotationOrbit: v.rotationOrbit }
      : { target: [v.target[0], v.target[1]], zoom: v.zoom };
  }

  override get is3d(): boolean {
    return this.is3dView;
  }

  /** 2D: orthographic, y up; 3D: through the deck's orbit viewport (the live camera). */
  project(p: readonly number[]): [number, number] | null {
    const w = this.clientWidth;
    const h = this.clientHeight;
    if (!w || !h) return null;
    const v = this.viewState;
    if (this.is3dView) {
      try {
        const vp = this.deck?.getViewports()[0];
        if (!vp) return null;
        const [x, y] = vp.project([p[0]!, p[1]!, p[2] ?? 0]) as number[];
        return [x!, y!];
      } catch {
        return null;
      }
    }
    const s = 2 ** v.zoom;
    return [(p[0]! - v.target[0]) * s + w / 2, h / 2 - (p[1]! - v.target[1]) * s];
  }

  unproject(px: number, py: number): [number, number] | null {
    const w = this.clientWidth;
    const h = this.clientHeight;
    if (!w || !h || this.is3dView) return null;
    const v = this.viewState;
    const s = 2 ** v.zoom;
    return [(px - w / 2) / s + v.target[0], (h / 2 - py) / s + v.target[1]];
  }

  get scale(): number {
    return 2 ** this.viewState.zoom;
  }

  /** Frame the points with about 10% margin. */
  fitToData(): void {
    const w = Math.max(1, this.clientWidth);
    const h = Math.max(1, this.clientHeight);
    const zoom = Math.log2(Math.min(w, h) / (this.extent * 1.2));
    this.viewState = { ...this.viewState, target: [...this.center], zoom };
    this.deck?.setProps({ viewState: this.deckViewState() as never });
    this.notifyView();
  }

  protected async loadGeometry(changed: PropertyValues<this>): Promise<void> {
    const src = this.source!;
    const e = this.enc;
    if (!e.obsm_key) {
      this.positions = null;
      this.n = 0;
      return;
    }
    const path = e.obsm_key.startsWith("obsm:") ? e.obsm_key : `obsm:${e.obsm_key}`;
    const version = this.host.fieldVersion(path);
    const is3d = Boolean(e.is_3d);
    const key = JSON.stringify([
      src.id,
      path,
      version,
      e.x_component,
      e.y_component,
      is3d ? e.z_component : -1,
    ]);
    if (is3d !== this.is3dView && this.deck) {
      // Remount on a 2D/3D toggle.
      this.deck.finalize();
      this.deck = this.createDeck(this.renderRoot.querySelector(".deck") as HTMLDivElement);
      this.focusable();
      this.geomKey = "";
    }
    if (key !== this.geomKey) {
      this.status = "Loading cells…";
      const f = await fieldCache.get(src, path, version);
      this.status = "";
      const c = f.components ?? [];
      const xs = c[e.x_component] ?? c[0];
      const ys = c[e.y_component] ?? c[1] ?? c[0];
      const zs = is3d ? (c[e.z_component] ?? null) : null;
      if (!xs || !ys) throw new Error(`${path} has no components`);
      const n = f.n;
      const dim = is3d ? 3 : 2;
      const pos = new Float32Array(n * dim);
      const lo = [Infinity, Infinity, Infinity];
      const hi = [-Infinity, -Infinity, -Infinity];
      for (let i = 0; i < n; i++) {
        const v = [xs[i]!, ys[i]!, zs ? zs[i]! : 0];
        for (let d = 0; d < dim; d++) {
          pos[i * dim + d] = v[d]!;
          if (v[d]! < lo[d]!) lo[d] = v[d]!;
          if (v[d]! > hi[d]!) hi[d] = v[d]!;
        }
      }
      this.positions = pos;
      this.n = n;
      this.center = [(lo[0]! + hi[0]!) / 2, (lo[1]! + hi[1]!) / 2, is3d ? (lo[2]! + hi[2]!) / 2 : 0];
      this.extent = Math.max(hi[0]! - lo[0]!, hi[1]! - lo[1]!, is3d ? hi[2]! - lo[2]! : 0, 1e-6);
      const first = !this.geomKey || changed.has("source");
      // Another embedding (client.md 6.1): its coordinates have nothing in common with the last
      // one's, so the camera frames the new points and that framing becomes the display's start.
      const switched = !first && this.geomPath !== `${src.id}\u0000${path}`;
      this.geomKey = key;
      this.geomPath = `${src.id}\u0000${path}`;
      if (switched) {
        this.fitToData();
        const v = this.viewport;
        this.lastAppliedViewport = JSON.stringify(v);
        this.editViewport(v);
      } else if (first) {
        const vp = this.display?.viewport as Partial<EmbViewState> | undefined;
        this.lastAppliedViewport = JSON.stringify(vp);
        if (vp && Array.isArray(vp.target) && vp.target.length >= 2 && Number.isFinite(vp.zoom)) {
          this.viewState = {
            target: [vp.target[0]!, vp.target[1]!, vp.target[2] ?? 0],
            zoom: vp.zoom!,
            rotationX: vp.rotationX ?? 25,
            rotationOrbit: vp.rotationOrbit ?? 0,
          };
          this.deck?.setProps({ viewState: this.deckViewState() as never });
        } else {
          this.fitToData();
          requestAnimationFrame(() => this.fitToData());
        }
      }
    } else if (changed.has("display") && this.followViewport) {
      const vp = this.display?.viewport as Partial<EmbViewState> | undefined;
      const k = JSON.stringify(vp);
      if (vp && k !== this.lastAppliedViewport) {
        this.lastAppliedViewport = k;
        if (Array.isArray(vp.target) && vp.target.length >= 2) {
          this.viewState = {
            target: [vp.target[0]!, vp.target[1]!, vp.target[2] ?? 0],
            zoom: vp.zoom ?? 0,
            rotationX: vp.rotationX ?? 25,
            rotationOrbit: vp.rotationOrbit ?? 0,
          };
          this.deck?.setProps({ viewState: this.deckViewState() as never });
        } else this.fitToData();
      }
    }
    this.deck?.setProps({ controller: e.lock_view ? false : { dragPan: true, dragRotate: is3d } });
  }

  protected redraw(): void {
    if (!this.deck) return;
    const e = this.enc;
    const colors = this.color.colors;
    const layers = [];
    if (this.positions && colors) {
      // Point size in screen pixels here: embedding units have no physical size.
      layers.push(
        new ScatterplotLayer({
          id: `emb-${this.is3dView ? "3d" : "2d"}`,
          data: {
            length: this.n,
            attributes: {
              getPosition: { value: this.positions, size: this.is3dView ? 3 : 2 },
              getFillColor: { value: colors.rgba, size: 4, normalized: true },
            },
          },
          getRadius: e.point_size / 2,
          radiusUnits: "pixels",
          billboard: true,
          opacity: e.opacity,
          stroked: false,
          updateTriggers: { getFillColor: this.color.key },
          parameters: { depthTest: this.is3dView },
        } as never),
      );
    }
    this.deck.setProps({ layers });
    this.dataset.cells = String(this.n);
    this.dataset.colorBy = this.color.path ?? "";
    this.dataset.colorKey = this.color.key;
    this.dataset.mode = this.is3dView ? "3d" : "2d";
    this.dataset.ready = this.positions && colors ? "1" : "0";
    this.notifyView();
  }

  override updated(changed: PropertyValues<this>): void {
    super.updated(changed);
    if (changed.has("display") && (this.enc.color_by ?? null) === this.color.path) this.redraw();
  }

  private renderEmbeddingControls() {
    const e = this.enc;
    const obsm = (this.fields?.obsm ?? []).filter((o) => o.name !== "spatial");
    const cur = obsm.find((o) => `obsm:${o.name}` === e.obsm_key || o.name === e.obsm_key);
    const nComp = cur?.n_components ?? 2;
    const pick = (
      k: "x_component" | "y_component" | "z_component",
      label: string,
    ) => html`<label>${label}</label>
      <select @change=${(ev: Event) => this.editEncoding({ [k]: Number((ev.target as HTMLSelectElement).value) })}>
        ${Array.from({ length: nComp }, (_, i) => html`<option value=${i} ?selected=${e[k] === i}>${i + 1}</option>`)}
      </select>`;
    return html`
      <label>Embedding</label>
      <select
        data-testid="obsm-key"
        @change=${(ev: Event) => {
          const key = (ev.target as HTMLSelectElement).value;
          const n = obsm.find((o) => o.name === key)?.n_components ?? 2;
          this.editEncoding({
            obsm_key: key,
            x_component: 0,
            y_component: 1,
            z_component: 2,
            is_3d: e.is_3d && n >= 3,
          });
        }}
      >
        ${obsm.map((o) => html`<option ?selected=${cur?.name === o.name}>${o.name}</option>`)}
      </select>
      <div class="row">${pick("x_component", "X")} ${pick("y_component", "Y")} ${e.is_3d ? pick("z_component", "Z") : nothing}</div>
      ${
        nComp >= 3
          ? html`<label
              ><input
                type="checkbox"
                data-testid="is-3d"
                .checked=${e.is_3d}
                @change=${(ev: Event) => this.editEncoding({ is_3d: (ev.target as HTMLInputElement).checked })}
              />
              3D</label
            >`
          : nothing
      }
      ${this.renderCellControls()}
    `;
  }

  override render() {
    const e = this.enc;
    const bg = e.background === "light" ? "#f4f4f2" : "#0d0e11";
    return html`
      <div class="deck" style=${`background:${bg}`} @contextmenu=${(ev: Event) => ev.preventDefault()}></div>
      <slot></slot>
      ${this.status ? html`<div class="overlay status">${this.status}</div>` : nothing}
      ${this.renderLegend()} ${this.renderDataState()}
      ${
        this.controls
          ? html`<div class="overlay zoombar"><button @click=${() => this.fitToData()}>Fit</button></div>
              <div class="overlay panel ${this.panelOpen ? "" : "min"}">
                <button @click=${() => {
                  this.panelOpen = !this.panelOpen;
                }}>
                  ${this.panelOpen ? "Minimize controls" : "Show controls"}
                </button>
                ${this.panelOpen ? this.renderEmbeddingControls() : nothing}
              </div>`
          : nothing
      }
    `;
  }
}

if (!customElements.get("tessera-embedding-canvas"))
  customElements.define("tessera-embedding-canvas", EmbeddingCanvas);

declare global {
  interface HTMLElementTagNameMap {
    "tessera-embedding-canvas": EmbeddingCanvas;
  }
}
