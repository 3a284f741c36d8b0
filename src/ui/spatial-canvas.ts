/**
 * `<tessera-spatial-canvas>`: cells as an instanced scatter (deck.gl ScatterplotLayer fed binary
 * attributes straight from the Arrow columns), coloured by an obs column or a gene, with the cell
 * boundaries past the zoom gate (client.md 5.4), the image layer (`RasterTileLayer`), flips applied
 * at the camera, zoom controls, fit, a minimap and the display settings panel (client.md 5).
 */
import {
  Deck,
  type Layer,
  LinearInterpolator,
  OrthographicView,
  type OrthographicViewState,
} from "@deck.gl/core";
import { PathLayer, ScatterplotLayer, SolidPolygonLayer } from "@deck.gl/layers";
import { html, nothing, type PropertyValues } from "lit";
import {
  BOUNDARY_POLYGON_CAP,
  boundaryZoomGate,
  CHANNEL_PALETTE,
  DEFAULT_CHANNEL_COLORS,
  MAX_VISIBLE_CHANNELS,
  type SPATIAL_ENCODING_DEFAULTS,
  withSpatialDefaults,
} from "../sdk/display/encoding.js";
import type { SpatialEncoding } from "../sdk/io/checkpoint/app-state.js";
import { CanvasBase, MAX_ZOOM, MIN_ZOOM, ZOOM_STEP } from "./canvas-base.js";
import type { ImageLoader, PolygonData, ShapesInfo } from "./data-source.js";
import { fieldCache } from "./field-cache.js";
import { type LayerChannel, RasterTileLayer } from "./image-layer.js";
import { MARKER_GLYPHS } from "./layers/marker-glyph.js";
import { markerGlyphExtensions } from "./layers/marker-glyph-extension.js";

type Enc = ReturnType<typeof withSpatialDefaults<SpatialEncoding>>;

/** Boundary requests: bbox cache size, settle delay, padding (client.md 5.4). */
const BBOX_CACHE = 48;
const SETTLE_MS = 180;
const BBOX_PAD = 0.5;
/** Minimap: at most this many cells drawn, at most this many CSS px. */
const MINIMAP_CELLS = 4000;
const MINIMAP_PX = 160;

interface ViewState {
  target: [number, number, number];
  zoom: number;
}

/** The spatial canvas element. */
export class SpatialCanvas extends CanvasBase {
  static override properties = {
    ...CanvasBase.properties,
    tileProgress: { state: true },
  };
  protected declare tileProgress: string;

  /** Interleaved x, y of every cell (canvas world space). */
  positions: Float32Array | null = null;
  /** `[minx, miny, maxx, maxy]` of the cells. */
  bounds: [number, number, number, number] | null = null;
  private viewState: ViewState = { target: [0, 0, 0], zoom: 0 };
  private geomKey = "";
  private polygons: PolygonData | null = null;
  private polygonsKey = "";
  private bboxCache = new Map<string, Promise<PolygonData>>();
  private boundaryTimer: ReturnType<typeof setTimeout> | null = null;
  private viewportTimer: ReturnType<typeof setTimeout> | null = null;
  private shapes: readonly ShapesInfo[] = [];
  private imageKey = "";
  private loader: ImageLoader | null = null;
  private lastAppliedViewport = "";
  private minimap: HTMLCanvasElement | null = null;
  /** Frames rendered (tests and the bench read it). */
  frames = 0;
  /**
   * Layers drawn between the image and the cells (shape annotation parts with z < 0, set by the canvas
   * tools' overlay), in canvas world coordinates; the canvas applies its flips.
   */
  private underlay: Layer[] = [];
  /** The image and cell layers of the last redraw, reused when only the underlay changes. */
  private baseLayers: { image: Layer[]; cells: Layer[] } = { image: [], cells: [] };

  constructor() {
    super();
    this.tileProgress = "";
  }

  protected get enc(): Enc {
    return withSpatialDefaults((this.display?.encoding ?? { coords: "obsm:spatial" }) as SpatialEncoding);
  }

  private get flip(): [number, number] {
    const e = this.enc;
    return [e.invert_x ? -1 : 1, e.invert_y ? -1 : 1];
  }

  // biome-ignore lint/suspicious/noExplicitAny: see CanvasBase.deck
  protected createDeck(container: HTMLDivElement): Deck<any> {
    return new Deck({
      parent: container,
      views: [new OrthographicView({ id: "spatial", flipY: true })],
      viewState: this.deckViewState() as never,
      controller: !this.enc.lock_view,
      onViewStateChange: ({ viewState, interactionState }) => {
        const vs = viewState as OrthographicViewState;
        this.setViewState(
          {
            target: [...(vs.target as number[]), 0].slice(0, 3) as ViewState["target"],
            zoom: Number(vs.zoom),
          },
          false,
          Boolean(
            interactionState?.isZooming || interactionState?.isPanning || interactionState?.inTransition,
          ),
        );
      },
      onAfterRender: () => {
        this.frames++;
        // What the last drawn frame showed (tests and the bench wait for it).
        const k = this.dataset.colorKey;
        if (k && this.dataset.ready === "1" && this.dataset.drawnKey !== k) this.dataset.drawnKey = k;
      },
      layers: [],
      getCursor: ({ isDragging }) => (isDragging ? "grabbing" : "grab"),
    });
  }

  private deckViewState(transition = false): OrthographicViewState & Record<string, unknown> {
    const vs: OrthographicViewState & Record<string, unknown> = {
      target: this.viewState.target,
      zoom: this.viewState.zoom,
      minZoom: MIN_ZOOM,
      maxZoom: MAX_ZOOM,
    };
    if (transition) {
      vs.transitionDuration = 250;
      vs.transitionEasing = (t: number) => t * (2 - t);
      vs.transitionInterpolator = new LinearInterpolator({ transitionProps: ["target", "zoom"] });
    }
    return vs;
  }

  /** The camera in canvas world space (`target` un-mirrored). */
  get viewport(): { target: [number, number]; zoom: number } {
    const [sx, sy] = this.flip;
    return {
      target: [this.viewState.target[0] * sx, this.viewState.target[1] * sy],
      zoom: this.viewState.zoom,
    };
  }

  /** Orthographic, y down (`flipY`), flips applied at the camera: world → CSS px. */
  project(p: readonly number[]): [number, number] | null {
    const w = this.clientWidth;
    const h = this.clientHeight;
    if (!w || !h) return null;
    const [sx, sy] = this.flip;
    const s = 2 ** this.viewState.zoom;
    const [tx, ty] = this.viewState.target;
    return [(p[0]! * sx - tx) * s + w / 2, (p[1]! * sy - ty) * s + h / 2];
  }

  unproject(px: number, py: number): [number, number] | null {
    const w = this.clientWidth;
    const h = this.clientHeight;
    if (!w || !h) return null;
    const [sx, sy] = this.flip;
    const s = 2 ** this.viewState.zoom;
    const [tx, ty] = this.viewState.target;
    return [((px - w / 2) / s + tx) * sx, ((py - h / 2) / s + ty) * sy];
  }

  get scale(): number {
    return 2 ** this.viewState.zoom;
  }

  /** Move the camera (display coordinates); `push` sends it to the deck. */
  private setViewState(vs: ViewState, push: boolean, _interacting = false, transition = false): void {
    vs.zoom = Math.max(MIN_ZOOM, Math.min(MAX_ZOOM, vs.zoom));
    this.viewState = vs;
    this.zoomReadout = Math.round(vs.zoom * 10) / 10;
    if (push || transition) this.deck?.setProps({ viewState: this.deckViewState(transition) as never });
    else this.deck?.setProps({ viewState: this.deckViewState() as never });
    this.drawMinimap();
    this.scheduleBoundaries();
    this.notifyView();
    if (this.viewportTimer) clearTimeout(this.viewportTimer);
    this.viewportTimer = setTimeout(() => {
      const v = this.viewport;
      this.lastAppliedViewport = JSON.stringify(v);
      this.editViewport(v);
    }, 500);
  }

  /** Camera at world point `(x, y)` and `zoom`. */
  setView(x: number, y: number, zoom: number, transition = false): void {
    const [sx, sy] = this.flip;
    this.setViewState({ target: [x * sx, y * sy, 0], zoom }, true, false, transition);
  }

  /** Pan by screen pixels (the bench drives this). */
  panBy(dx: number, dy: number): void {
    const s = 2 ** this.viewState.zoom;
    const [x, y] = this.viewState.target;
    this.setViewState({ target: [x + dx / s, y + dy / s, 0], zoom: this.viewState.zoom }, true);
  }

  zoomBy(step: number): void {
    this.setViewState({ target: this.viewState.target, zoom: this.viewState.zoom + step }, true, false, true);
  }

  /** Frame the cells (and image) with about 10% margin. */
  fitToData(transition = false): void {
    const b = this.dataBounds();
    if (!b) return;
    const w = Math.max(1, this.clientWidth);
    const h = Math.max(1, this.clientHeight);
    const bw = Math.max(b[2] - b[0], 1e-6);
    const bh = Math.max(b[3] - b[1], 1e-6);
    const zoom = Math.log2(Math.min(w / (bw * 1.2), h / (bh * 1.2)));
    this.setView((b[0] + b[2]) / 2, (b[1] + b[3]) / 2, zoom, transition);
  }

  private dataBounds(): [number, number, number, number] | null {
    let b = this.bounds;
    const info = this.loader?.info;
    if (info && this.enc.show_image && this.enc.image_layer) {
      const ib = info.bounds;
      b = b
        ? [Math.min(b[0], ib[0]), Math.min(b[1], ib[1]), Math.max(b[2], ib[2]), Math.max(b[3], ib[3])]
        : ib;
    }
    return b;
  }

  protected async loadGeometry(changed: PropertyValues<this>): Promise<void> {
    const src = this.source!;
    const e = this.enc;
    const version = this.host.fieldVersion(e.coords);
    const key = JSON.stringify([src.id, e.coords, version]);
    if (key !== this.geomKey) {
      this.status = "Loading cells…";
      const f = await fieldCache.get(src, e.coords, version);
      const c = f.components ?? [];
      if (c.length < 2) throw new Error(`${e.coords} has fewer than 2 components`);
      const n = f.n;
      const pos = new Float32Array(n * 2);
      const xs = c[0]!;
      const ys = c[1]!;
      let x0 = Number.POSITIVE_INFINITY;
      let y0 = Number.POSITIVE_INFINITY;
      let x1 = Number.NEGATIVE_INFINITY;
      let y1 = Number.NEGATIVE_INFINITY;
      for (let i = 0; i < n; i++) {
        const x = xs[i]!;
        const y = ys[i]!;
        pos[i * 2] = x;
        pos[i * 2 + 1] = y;
        if (x < x0) x0 = x;
        if (x > x1) x1 = x;
        if (y < y0) y0 = y;
        if (y > y1) y1 = y;
      }
      // A new source (another session, e.g. a subset's child) starts from its display's camera, or fits.
      const first = !this.positions || changed.has("source");
      this.positions = pos;
      this.n = n;
      this.bounds = n ? [x0, y0, x1, y1] : null;
      this.geomKey = key;
      this.status = "";
      this.bboxCache.clear();
      this.polygonsKey = "";
      try {
        this.shapes = (await src.getElements()).shapes.filter(
          (s) => s.name !== "annotations" && /polygon/i.test(s.geometry),
        );
      } catch {
        this.shapes = [];
      }
      if (first) this.applyInitialViewport();
    } else if (changed.has("display") && this.followViewport) {
      const vp = this.display?.viewport;
      const k = JSON.stringify(vp);
      if (vp && k !== this.lastAppliedViewport) {
        this.lastAppliedViewport = k;
        if (Array.isArray(vp.target) && vp.target.length >= 2)
          this.setView(vp.target[0]!, vp.target[1]!, vp.zoom);
        else this.fitToData();
      }
    }
    await this.loadImage();
    this.deck?.setProps({ controller: !e.lock_view });
    this.scheduleBoundaries(true);
  }

  private applyInitialViewport(): void {
    const vp = this.display?.viewport;
    this.lastAppliedViewport = JSON.stringify(vp);
    if (vp && Array.isArray(vp.target) && vp.target.length >= 2 && Number.isFinite(vp.zoom)) {
      const [sx, sy] = this.flip;
      this.setViewState({ target: [vp.target[0]! * sx, vp.target[1]! * sy, 0], zoom: vp.zoom }, true);
    } else {
      // Wait a frame for the element to have its size.
      this.fitToData();
      requestAnimationFrame(() => this.fitToData());
    }
  }

  private async loadImage(): Promise<void> {
    const e = this.enc;
    const el = e.image_layer ?? null;
    const key = `${this.source?.id}|${el}`;
    if (key === this.imageKey) return;
    this.imageKey = key;
    this.loader = null;
    if (!el || !this.source) return;
    try {
      this.loader = await this.source.openImageLoader(el);
    } catch (err) {
      this.loader = null;
      this.dispatchEvent(
        new CustomEvent("canvas-error", {
          detail: `image ${el}: ${(err as Error).message}`,
          bubbles: true,
          composed: true,
        }),
      );
    }
  }

  /** The visible channels of the image (encoding settings over the image's defaults). */
  imageChannels(): LayerChannel[] {
    const info = this.loader?.info;
    if (!info) return [];
    const set = this.enc.channels ?? {};
    const out: LayerChannel[] = [];
    for (let c = 0; c < info.channels; c++) {
      const s = set[String(c)] ?? {};
      const def = info.is_rgb
        ? (["#ff0000", "#00ff00", "#0000ff"][c] ?? "#ffffff")
        : DEFAULT_CHANNEL_COLORS[c % 6]!;
      const visible = s.visible ?? (info.is_rgb ? c < 3 : c < Math.min(3, MAX_VISIBLE_CHANNELS));
      if (!visible) continue;
      out.push({
        index: c,
        color: s.color ?? def,
        limits: (s.contrast_limits ?? info.contrast_limits[c] ?? [0, 255]) as [number, number],
      });
    }
    return out.slice(0, MAX_VISIBLE_CHANNELS);
  }

  /** Boundary element drawn, if any. */
  private boundaryElement(): ShapesInfo | null {
    const e = this.enc;
    if (e.render_mode === "points") return null;
    const name = e.shapes_layer ?? this.shapes[0]?.name ?? null;
    return this.shapes.find((s) => s.name === name) ?? null;
  }

  private scheduleBoundaries(now = false): void {
    if (this.boundaryTimer) clearTimeout(this.boundaryTimer);
    this.boundaryTimer = setTimeout(() => void this.loadBoundaries(), now ? 0 : SETTLE_MS);
  }

  /** The boundary fetch gate and bbox cache (client.md 5.4). */
  private async loadBoundaries(): Promise<void> {
    const el = this.boundaryElement();
    const src = this.source;
    if (!el || !src || !this.bounds || !this.n) {
      if (this.polygons) {
        this.polygons = null;
        this.redraw();
      }
      return;
    }
    const version = this.host.fieldVersion(`shapes:${el.name}`);
    let bbox: number[] | null = null;
    if (el.n > BOUNDARY_POLYGON_CAP) {
      const [bx0, by0, bx1, by1] = this.bounds;
      const spacing = Math.sqrt(Math.max((bx1 - bx0) * (by1 - by0), 1e-9) / this.n);
      if (this.viewState.zoom < boundaryZoomGate(spacing)) {
        if (this.polygons) {
          this.polygons = null;
          this.polygonsKey = "";
          this.redraw();
        }
        return;
      }
      const vp = this.currentViewport();
      if (!vp) return;
      let [x0, y0, x1, y1] = vp.getBounds() as number[] as [number, number, number, number];
      const [sx, sy] = this.flip;
      if (sx < 0) [x0, x1] = [-x1, -x0];
      if (sy < 0) [y0, y1] = [-y1, -y0];
      const pw = (x1 - x0) * BBOX_PAD;
      const ph = (y1 - y0) * BBOX_PAD;
      // Snap to a grid of the padding so small pans reuse a cached answer.
      const snap = (v: number, s: number) => Math.round(v / s) * s;
      bbox = [snap(x0 - pw, pw), snap(y0 - ph, ph), snap(x1 + pw, pw), snap(y1 + ph, ph)];
    }
    const key = JSON.stringify([src.id, el.name, version, bbox]);
    if (key === this.polygonsKey) return;
    let p = this.bboxCache.get(key);
    if (!p) {
      this.status = "Loading cell boundaries…";
      p = src.getShapesGeoArrow(el.name, bbox, BOUNDARY_POLYGON_CAP + 1);
      this.bboxCache.set(key, p);
      p.catch(() => this.bboxCache.delete(key));
      while (this.bboxCache.size > BBOX_CACHE)
        this.bboxCache.delete(this.bboxCache.keys().next().value as string);
    }
    try {
      const got = await p;
      this.polygons = got.features > BOUNDARY_POLYGON_CAP ? null : got;
      this.polygonsKey = key;
    } finally {
      this.status = "";
    }
    this.redraw();
  }

  protected redraw(): void {
    if (!this.deck) return;
    const e = this.enc;
    const [sx, sy] = this.flip;
    const modelMatrix = [sx, 0, 0, 0, 0, sy, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1] as never;
    const layers: Layer[] = [];
    if (this.loader && e.show_image && e.image_layer) {
      layers.push(
        new RasterTileLayer({
          id: `image-${e.image_layer}`,
          loader: this.loader,
          channels: this.imageChannels(),
          flip: [sx, sy],
          modelMatrix,
          onTileProgress: (done: number, req: number) => {
            this.tileProgress = req ? `tiles ${done}/${req}` : "";
            if (req && done === req)
              setTimeout(() => {
                this.tileProgress = "";
              }, 1000);
          },
          onTileDrawn: () => {
            this.dataset.imageTiles = String(Number(this.dataset.imageTiles ?? 0) + 1);
          },
        }),
      );
    }
    const image = layers.splice(0);
    const colors = this.color.colors;
    if (this.positions && colors && e.show_points) {
      layers.push(
        new ScatterplotLayer({
          id: "cells",
          data: {
            length: this.n,
            attributes: {
              getPosition: { value: this.positions, size: 2 },
              getFillColor: { value: colors.rgba, size: 4, normalized: true },
            },
          },
          getRadius: e.point_size / 2,
          radiusUnits: "common",
          radiusMinPixels: 0.5,
          extensions: markerGlyphExtensions(e.point_marker),
          opacity: e.opacity,
          stroked: false,
          modelMatrix,
          updateTriggers: { getFillColor: this.color.key },
          parameters: { depthTest: false },
        } as never),
      );
    }
    const poly = this.polygons;
    if (poly?.length && colors) {
      const nv = poly.positions.length / 2;
      const vcol = new Uint8Array(nv * 4);
      for (let r = 0; r < poly.length; r++) {
        const cell = poly.cellIndex[r]!;
        const o = cell >= 0 && cell < this.n ? cell * 4 : -1;
        for (let v = poly.startIndices[r]!; v < poly.startIndices[r + 1]!; v++) {
          if (o >= 0) vcol.set(colors.rgba.subarray(o, o + 4), v * 4);
          else vcol.set([150, 150, 150, 255], v * 4);
        }
      }
      const data = {
        length: poly.length,
        startIndices: poly.startIndices,
        attributes: {
          [e.boundary_style === "outline" ? "getPath" : "getPolygon"]: { value: poly.positions, size: 2 },
          getFillColor: { value: vcol, size: 4, normalized: true },
          getColor: { value: vcol, size: 4, normalized: true },
        },
      };
      layers.push(
        e.boundary_style === "outline"
          ? new PathLayer({
              id: "boundaries-outline",
              data,
              _pathType: "loop",
              widthUnits: "pixels",
              getWidth: e.boundary_line_width,
              opacity: e.opacity,
              modelMatrix,
              updateTriggers: { getColor: `${this.color.key}|${this.polygonsKey}` },
            } as never)
          : new SolidPolygonLayer({
              id: "boundaries-filled",
              data,
              _normalize: false,
              opacity: e.opacity * 0.8,
              modelMatrix,
              updateTriggers: { getFillColor: `${this.color.key}|${this.polygonsKey}` },
            } as never),
      );
    }
    this.baseLayers = { image, cells: layers };
    this.pushLayers();
    this.dataset.cells = String(this.n);
    this.dataset.colorBy = this.color.path ?? "";
    this.dataset.colorKey = this.color.key;
    this.dataset.boundaries = String(poly?.length ?? 0);
    this.dataset.ready = this.positions && colors ? "1" : "0";
    this.drawMinimap(true);
    this.notifyView();
  }

  /** Draw these layers beneath the cells (and above the image); the last redraw's layers are reused. */
  setUnderlay(layers: Layer[]): void {
    this.underlay = layers;
    this.pushLayers();
  }

  private pushLayers(): void {
    if (!this.deck) return;
    const [sx, sy] = this.flip;
    const modelMatrix = [sx, 0, 0, 0, 0, sy, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1] as never;
    const under = this.underlay.map((l) => l.clone({ modelMatrix }));
    this.deck.setProps({ layers: [...this.baseLayers.image, ...under, ...this.baseLayers.cells] });
  }

  /** The deck's viewport, or null before the deck has initialised its views. */
  private currentViewport() {
    try {
      return this.deck?.getViewports()[0] ?? null;
    } catch {
      return null;
    }
  }

  /** The minimap: strided scatter of at most 4,000 cells, and the viewport rectangle. */
  private drawMinimap(data = false): void {
    const cv = this.minimap ?? (this.renderRoot.querySelector("canvas.minimap") as HTMLCanvasElement | null);
    this.minimap = cv;
    if (!cv || !this.bounds || !this.positions) return;
    const b = this.bounds;
    const bw = b[2] - b[0] || 1;
    const bh = b[3] - b[1] || 1;
    const s = MINIMAP_PX / Math.max(bw, bh);
    const W = Math.max(1, Math.round(bw * s));
    const H = Math.max(1, Math.round(bh * s));
    if (cv.width !== W || cv.height !== H) {
      cv.width = W;
      cv.height = H;
      data = true;
    }
    const ctx = cv.getContext("2d");
    if (!ctx) return;
    const [sx, sy] = this.flip;
    const mx = (x: number) => (sx > 0 ? (x - b[0]) * s : (b[2] - x) * s);
    const my = (y: number) => (sy > 0 ? (y - b[1]) * s : (b[3] - y) * s);
    ctx.clearRect(0, 0, W, H);
    ctx.fillStyle = "rgba(0,0,0,0.55)";
    ctx.fillRect(0, 0, W, H);
    const step = Math.max(1, Math.ceil(this.n / MINIMAP_CELLS));
    const rgba = this.color.colors?.rgba;
    for (let i = 0; i < this.n; i += step) {
      ctx.fillStyle = rgba ? `rgb(${rgba[i * 4]},${rgba[i * 4 + 1]},${rgba[i * 4 + 2]})` : "#999";
      ctx.fillRect(mx(this.positions[i * 2]!), my(this.positions[i * 2 + 1]!), 1.5, 1.5);
    }
    void data;
    const vp = this.currentViewport();
    if (vp) {
      const [x0, y0, x1, y1] = vp.getBounds() as number[] as [number, number, number, number];
      const rx = sx > 0 ? (x0 - b[0]) * s : (b[2] + x0) * s;
      const ry = sy > 0 ? (y0 - b[1]) * s : (b[3] + y0) * s;
      ctx.strokeStyle = "#fff";
      ctx.lineWidth = 1.5;
      ctx.strokeRect(rx, ry, (x1 - x0) * s, (y1 - y0) * s);
    }
  }

  private onMinimapPointer(ev: PointerEvent): void {
    if (ev.type === "pointermove" && !(ev.buttons & 1)) return;
    const cv = ev.currentTarget as HTMLCanvasElement;
    const b = this.bounds;
    if (!b) return;
    const r = cv.getBoundingClientRect();
    const fx = (ev.clientX - r.left) / r.width;
    const fy = (ev.clientY - r.top) / r.height;
    const [sx, sy] = this.flip;
    const x = sx > 0 ? b[0] + fx * (b[2] - b[0]) : b[2] - fx * (b[2] - b[0]);
    const y = sy > 0 ? b[1] + fy * (b[3] - b[1]) : b[3] - fy * (b[3] - b[1]);
    this.setView(x, y, this.viewState.zoom);
  }

  override updated(changed: PropertyValues<this>): void {
    super.updated(changed);
    if (changed.has("display")) {
      const prev = changed.get("display") as this["display"] | undefined;
      const pe = prev?.encoding as SpatialEncoding | undefined;
      const e = this.enc;
      if (pe && (Boolean(pe.invert_x) !== e.invert_x || Boolean(pe.invert_y) !== e.invert_y)) {
        // Keep looking at the same world point after a flip.
        const psx = pe.invert_x ? -1 : 1;
        const psy = pe.invert_y ? -1 : 1;
        const [tx, ty] = this.viewState.target;
        this.setView(tx * psx, ty * psy, this.viewState.zoom);
      }
      // A new colour field is drawn once its colours are ready (refresh), not with the old ones first.
      if ((e.color_by ?? null) === this.color.path) this.redraw();
    }
  }

  private renderImageControls() {
    const e = this.enc;
    const info = this.loader?.info;
    const images = this.fields?.images ?? [];
    const set = e.channels ?? {};
    const shown = new Set(this.imageChannels().map((c) => c.index));
    return html`
      <label>Backdrop</label>
      <select @change=${(ev: Event) => this.editEncoding({ background: (ev.target as HTMLSelectElement).value })}>
        ${["dark", "light"].map((b) => html`<option ?selected=${e.background === b}>${b}</option>`)}
      </select>
      <label>Image</label>
      <select
        data-testid="image-layer"
        @change=${(ev: Event) => {
          const v = (ev.target as HTMLSelectElement).value || null;
          this.editEncoding({ image_layer: v, channels: {}, show_image: true });
        }}
      >
        <option value="" ?selected=${!e.image_layer}>None</option>
        ${images.map((i) => html`<option ?selected=${e.image_layer === i}>${i}</option>`)}
      </select>
      ${
        info
          ? html`<div class="row">
                <label
                  ><input
                    type="checkbox"
                    .checked=${e.show_channel_legend}
                    @change=${(ev: Event) =>
                      this.editEncoding({ show_channel_legend: (ev.target as HTMLInputElement).checked })}
                  />
                  Channel legend</label
                >
              </div>
              ${Array.from({ length: info.channels }, (_, c) => {
                const s = set[String(c)] ?? {};
                const ch = this.imageChannels().find((x) => x.index === c);
                const range = info.contrast_range[c] ?? [0, 255];
                const lim = (s.contrast_limits ?? info.contrast_limits[c] ?? range) as [number, number];
                const patch = (p: Record<string, unknown>) =>
                  this.editEncoding({ channels: { ...set, [String(c)]: { ...s, ...p } } });
                return html`<div class="channel">
                  <div class="row">
                    <input
                      type="checkbox"
                      .checked=${shown.has(c)}
                      ?disabled=${!shown.has(c) && shown.size >= MAX_VISIBLE_CHANNELS}
                      @change=${(ev: Event) => patch({ visible: (ev.target as HTMLInputElement).checked })}
                    />
                    <input
                      type="color"
                      .value=${ch?.color ?? s.color ?? CHANNEL_PALETTE[c % 8]!}
                      @change=${(ev: Event) => patch({ color: (ev.target as HTMLInputElement).value })}
                    />
                    <span>${s.name ?? info.channel_names[c] ?? `channel ${c}`}</span>
                  </div>
                  <div class="row">
                    <input
                      type="range"
                      min=${range[0]}
                      max=${range[1]}
                      .value=${String(lim[0])}
                      @change=${(ev: Event) =>
                        patch({ contrast_limits: [Number((ev.target as HTMLInputElement).value), lim[1]] })}
                    />
                    <input
                      type="range"
                      min=${range[0]}
                      max=${range[1]}
                      .value=${String(lim[1])}
                      @change=${(ev: Event) =>
                        patch({ contrast_limits: [lim[0], Number((ev.target as HTMLInputElement).value)] })}
                    />
                  </div>
                </div>`;
              })}`
          : nothing
      }
    `;
  }

  private renderViewControls() {
    const e = this.enc;
    const toggle = (k: keyof typeof SPATIAL_ENCODING_DEFAULTS, label: string) =>
      html`<label
        ><input
          type="checkbox"
          .checked=${Boolean(e[k])}
          @change=${(ev: Event) => this.editEncoding({ [k]: (ev.target as HTMLInputElement).checked })}
        />
        ${label}</label
      >`;
    return html`
      ${toggle("show_points", "Show cells")} ${e.image_layer ? toggle("show_image", "Show image") : nothing}
      ${toggle("invert_x", "Invert X")} ${toggle("invert_y", "Invert Y")} ${toggle("show_minimap", "Minimap")}
      <div class="row"><button @click=${() => this.fitToData(true)}>Fit to data</button></div>
      ${
        this.pointsTransformEditable
          ? html`<div class="row" style="margin-top:6px">
              <button
                data-testid="edit-points-transform"
                @click=${() => this.dispatchEvent(new CustomEvent("edit-points-transform"))}
              >
                Edit points transform…
              </button>
            </div>`
          : nothing
      }
    `;
  }

  /** The cells' marker glyph (client.md 5.8 "geometry"), next to the point size. */
  protected override renderPointSizeExtras(): unknown {
    const marker = this.enc.point_marker;
    return html`
      <label>Marker</label>
      <select
        data-testid="point-marker"
        @change=${(ev: Event) => this.editEncoding({ point_marker: (ev.target as HTMLSelectElement).value })}
      >
        ${MARKER_GLYPHS.map((g) => html`<option value=${g} ?selected=${marker === g}>${g}</option>`)}
      </select>
    `;
  }

  private renderShapeControls() {
    const e = this.enc;
    if (!this.shapes.length) return nothing;
    const mode = e.render_mode === "shapes" ? "points+shapes" : e.render_mode;
    return html`
      <label>Render</label>
      <select
        data-testid="render-mode"
        @change=${(ev: Event) => this.editEncoding({ render_mode: (ev.target as HTMLSelectElement).value })}
      >
        <option value="points" ?selected=${mode === "points"}>points</option>
        <option value="points+shapes" ?selected=${mode === "points+shapes"}>points + boundaries</option>
      </select>
      ${
        mode !== "points"
          ? html`<label>Shape set</label>
              <select @change=${(ev: Event) => this.editEncoding({ shapes_layer: (ev.target as HTMLSelectElement).value })}>
                ${this.shapes.map((s) => html`<option ?selected=${(e.shapes_layer ?? this.shapes[0]?.name) === s.name}>${s.name}</option>`)}
              </select>
              <label>Boundary style</label>
              <select @change=${(ev: Event) => this.editEncoding({ boundary_style: (ev.target as HTMLSelectElement).value })}>
                ${["filled", "outline"].map((b) => html`<option ?selected=${e.boundary_style === b}>${b}</option>`)}
              </select>
              ${
                e.boundary_style === "outline"
                  ? html`<label>Line width ${e.boundary_line_width} px</label>
                      <input
                        type="range"
                        min="0.5"
                        max="6"
                        step="0.5"
                        .value=${String(e.boundary_line_width)}
                        @change=${(ev: Event) =>
                          this.editEncoding({
                            boundary_line_width: Number((ev.target as HTMLInputElement).value),
                          })}
                      />`
                  : nothing
              }`
          : nothing
      }
    `;
  }

  private renderChannelLegend() {
    const e = this.enc;
    const info = this.loader?.info;
    if (!info || !e.show_image || !e.show_channel_legend || !e.image_layer) return nothing;
    const chans = this.imageChannels();
    return html`<div class="overlay legend" style="bottom:auto;top:${e.show_minimap ? 190 : 10}px;left:10px;right:auto">
      ${chans.map(
        (c) =>
          html`<div class="item"><span class="sw" style=${`background:${c.color}`}></span>${
            e.channels?.[String(c.index)]?.name ?? info.channel_names[c.index] ?? c.index
          }</div>`,
      )}
    </div>`;
  }

  override render() {
    const e = this.enc;
    const bg = e.background === "light" ? "#f4f4f2" : "#0d0e11";
    return html`
      <div class="deck" style=${`background:${bg}`}></div>
      <slot></slot>
      ${this.status ? html`<div class="overlay status">${this.status}</div>` : nothing}
      ${this.tileProgress ? html`<div class="overlay progress" style="top:auto;bottom:50px">${this.tileProgress}</div>` : nothing}
      ${
        e.show_minimap && this.controls
          ? html`<div class="overlay" style="left:10px;top:10px">
              <canvas
                class="minimap"
                style="max-width:160px;max-height:160px;border-radius:4px;cursor:crosshair;display:block"
                @pointerdown=${(ev: PointerEvent) => this.onMinimapPointer(ev)}
                @pointermove=${(ev: PointerEvent) => this.onMinimapPointer(ev)}
              ></canvas>
            </div>`
          : nothing
      }
      ${this.renderChannelLegend()} ${this.renderLegend()} ${this.renderDataState()}
      ${
        this.controls
          ? html`<div class="overlay zoombar">
                <button title="Zoom out" @click=${() => this.zoomBy(-ZOOM_STEP)} ?disabled=${e.lock_view}>−</button>
                <span data-testid="zoom">${this.zoomReadout.toFixed(1)}</span>
                <button title="Zoom in" @click=${() => this.zoomBy(ZOOM_STEP)} ?disabled=${e.lock_view}>+</button>
                <button title="Fit to data" @click=${() => this.fitToData(true)}>Fit</button>
              </div>
              <div class="overlay panel ${this.panelOpen ? "" : "min"}" data-tour="display-settings">
                <button @click=${() => {
                  this.panelOpen = !this.panelOpen;
                }}>
                  ${this.panelOpen ? "Minimize controls" : "Show controls"}
                </button>
                ${
                  this.panelOpen
                    ? html`<div class="tabs">
                          ${["view", "cells", "image"].map(
                            (t) => html`<button aria-pressed=${this.panelTab === t} @click=${() => {
                              this.panelTab = t;
                            }}>
                              ${t[0]!.toUpperCase() + t.slice(1)}
                            </button>`,
                          )}
                        </div>
                        ${
                          this.panelTab === "view"
                            ? this.renderViewControls()
                            : this.panelTab === "cells"
                              ? html`${this.renderShapeControls()}${this.renderCellControls()}`
                              : this.renderImageControls()
                        }`
                    : nothing
                }
              </div>`
          : nothing
      }
    `;
  }
}

if (!customElements.get("tessera-spatial-canvas"))
  customElements.define("tessera-spatial-canvas", SpatialCanvas);

declare global {
  interface HTMLElementTagNameMap {
    "tessera-spatial-canvas": SpatialCanvas;
  }
}
