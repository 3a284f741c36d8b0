/**
 * `<tessera-canvas-overlay>`: what the canvas tools draw over a canvas, as SVG in screen space,
 * re-projected whenever the camera moves: the region being drawn (Regions and Subset tabs, either
 * canvas), the session's shape annotations (spatial canvas, on every viewer's canvas whatever tab is
 * open), the selected shape's handles, and the hint banner of an armed tool (client.md 5.10, 9, 10, 11).
 *
 * It is placed as a child of a canvas element (the canvases render a `<slot>` over their deck) and
 * reads the camera through the canvas's `project`/`unproject`. While a tool is armed it covers the
 * canvas, so the deck gets no drag (pan is suppressed); wheel events are handed on to the deck so
 * zooming still works. In select mode only the shapes and handles take the pointer.
 */
import type { Layer } from "@deck.gl/core";
import { css, html, LitElement, nothing, type PropertyValues, svg, type TemplateResult } from "lit";
import type { CanvasBase } from "../../canvas-base.js";
import type { CanvasKind, DrawController } from "./draw-controller.js";
import { DEFAULT_STROKE } from "./draw-controller.js";
import "./points-transform-dialog.js";
import { mid, type Pt, rotateAbout, type Shape, shapeOutline, translated } from "./shape-geometry.js";
import { arrowedPath, dashPattern, paintOrder, type ShapePart } from "./shape-style.js";
import { underlayLayers } from "./shape-underlay.js";

/** Screen size of a new text at the zoom it is placed at (client.md 10.3). */
const TEXT_PX = 16;
/** A pointer press shorter than this many px is a click. */
const CLICK_PX = 4;

/** A drag in progress. */
type Drag =
  | { kind: "draw"; tool: "line" | "arrow" | "box" | "ellipse"; a: Pt; b: Pt }
  | { kind: "move"; id: string; start: Pt; points: Pt[]; moved: boolean }
  | { kind: "vertex"; id: string; index: number; points: Pt[] }
  | { kind: "rotate"; id: string; pivot: Pt }
  | { kind: "press"; x: number; y: number };

/** The overlay element. */
export class CanvasOverlay extends LitElement {
  static override properties = {
    controller: { attribute: false },
    watch: { attribute: false },
    kind: {},
    dataKey: { attribute: false },
    transformOpen: { state: true },
  };

  static override styles = css`
    :host {
      position: absolute;
      inset: 0;
      z-index: 1;
      pointer-events: none;
    }
    svg {
      position: absolute;
      inset: 0;
      width: 100%;
      height: 100%;
      overflow: visible;
    }
    .capture {
      pointer-events: all;
      cursor: crosshair;
    }
    .shape {
      pointer-events: none;
    }
    .live .shape {
      pointer-events: visiblePainted;
      cursor: move;
    }
    .live .shape .hit {
      pointer-events: stroke;
    }
    .handle {
      pointer-events: all;
      cursor: grab;
    }
    .hint {
      position: absolute;
      top: 48px;
      left: 50%;
      transform: translateX(-50%);
      background: rgba(20, 22, 26, 0.88);
      color: #fff;
      padding: 4px 12px;
      border-radius: 12px;
      font: 12px/1.4 system-ui, sans-serif;
      white-space: nowrap;
      pointer-events: none;
    }
  `;

  declare controller: DrawController | null;
  /** Anything of the app's that should re-render this (its session state, presence): compared by identity. */
  declare watch: unknown;
  /** Which canvas this overlay sits on. */
  declare kind: CanvasKind;
  /** The app's data-version key: shapes and region sets are re-read when it changes. */
  declare dataKey: string;
  declare transformOpen: boolean;

  private canvasEl: CanvasBase | null = null;
  private drag: Drag | null = null;
  private lastCamera = "";
  /** The parts beneath the cells last sent to the canvas, and the zoom they were laid out at. */
  private underlay: { parts: readonly ShapePart[]; scale: number } = { parts: [], scale: Number.NaN };

  private readonly onChange = () => this.requestUpdate();
  private readonly onView = () => {
    const c = this.controller;
    const cv = this.canvasEl;
    // A 3D ring is in screen space: moving the camera discards it (client.md 6.2).
    if (c?.drawing?.screen && c.drawing.canvas === this.kind && cv?.is3d) {
      if (this.camera() !== this.lastCamera) c.clearDrawing();
    }
    this.requestUpdate();
  };
  /** Esc cancels a half-drawn region or polygon (one overlay answers: the spatial one, or the only one). */
  private readonly onKey = (e: KeyboardEvent) => {
    if (e.key !== "Escape" || e.defaultPrevented || this.transformOpen) return;
    const t = e.composedPath()[0] as HTMLElement | undefined;
    if (t && /^(INPUT|TEXTAREA|SELECT)$/.test(t.tagName)) return;
    this.controller?.cancel();
  };
  private readonly onEditTransform = () => {
    this.transformOpen = true;
  };

  constructor() {
    super();
    this.controller = null;
    this.kind = "spatial";
    this.dataKey = "";
    this.transformOpen = false;
  }

  override connectedCallback(): void {
    super.connectedCallback();
    this.canvasEl = this.parentElement as CanvasBase | null;
    this.canvasEl?.addEventListener("view-change", this.onView);
    this.canvasEl?.addEventListener("edit-points-transform", this.onEditTransform);
    this.controller?.addEventListener("change", this.onChange);
    this.controller?.attach(this.kind, this.canvasEl);
    window.addEventListener("keydown", this.onKey);
  }

  override disconnectedCallback(): void {
    super.disconnectedCallback();
    window.removeEventListener("keydown", this.onKey);
    this.canvasEl?.removeEventListener("view-change", this.onView);
    this.canvasEl?.removeEventListener("edit-points-transform", this.onEditTransform);
    this.controller?.removeEventListener("change", this.onChange);
    if (this.controller?.canvas(this.kind) === this.canvasEl) this.controller?.attach(this.kind, null);
    if (this.underlay.parts.length) this.syncUnderlay([]);
    this.canvasEl = null;
  }

  override willUpdate(changed: PropertyValues<this>): void {
    if (changed.has("controller")) {
      const prev = changed.get("controller") as DrawController | null | undefined;
      prev?.removeEventListener("change", this.onChange);
      if (this.isConnected) {
        this.controller?.addEventListener("change", this.onChange);
        this.controller?.attach(this.kind, this.canvasEl);
      }
    }
    const c = this.controller;
    // `watch` too: the serverless viewer's shapes come from its source, set with the app's state.
    if (c && (changed.has("dataKey") || changed.has("controller") || changed.has("watch"))) {
      if (this.kind === "spatial") void c.syncShapes(this.dataKey);
      void c.syncRegionSets(this.dataKey);
    }
    if (this.canvasEl)
      this.canvasEl.pointsTransformEditable = Boolean(
        c && this.kind === "spatial" && c.host.mode === "live" && c.host.state,
      );
  }

  // ------------------------------------------------------------------------------------- coordinates

  private local(e: PointerEvent | MouseEvent): Pt {
    const r = this.getBoundingClientRect();
    return [e.clientX - r.left, e.clientY - r.top];
  }

  private world(e: PointerEvent | MouseEvent): Pt | null {
    const [x, y] = this.local(e);
    return this.canvasEl?.unproject(x, y) ?? null;
  }

  private camera(): string {
    return JSON.stringify((this.canvasEl as unknown as { viewport?: unknown } | null)?.viewport ?? null);
  }

  private proj(p: readonly number[]): Pt | null {
    return this.canvasEl?.project(p) ?? null;
  }

  private pts(points: readonly (readonly number[])[]): string {
    return points
      .map((p) => this.proj(p))
      .filter((q): q is Pt => q !== null)
      .map(([x, y]) => `${x.toFixed(1)},${y.toFixed(1)}`)
      .join(" ");
  }

  // ------------------------------------------------------------------------------------- pointer: capture layer

  private onCaptureDown(e: PointerEvent): void {
    const c = this.controller;
    if (!c || e.button !== 0) return;
    (e.currentTarget as Element).setPointerCapture(e.pointerId);
    const tool = c.tool;
    if (
      c.tab === "annotations" &&
      (tool === "line" || tool === "arrow" || tool === "box" || tool === "ellipse")
    ) {
      const w = this.world(e);
      if (w) this.drag = { kind: "draw", tool, a: w, b: w };
      return;
    }
    const [x, y] = this.local(e);
    this.drag = { kind: "press", x, y };
  }

  private onCaptureMove(e: PointerEvent): void {
    const d = this.drag;
    if (d?.kind === "draw") {
      const w = this.world(e);
      if (w) {
        d.b = w;
        this.requestUpdate();
      }
    }
  }

  private onCaptureUp(e: PointerEvent): void {
    const c = this.controller;
    const d = this.drag;
    this.drag = null;
    if (!c || !d) return;
    if (d.kind === "draw") {
      const a = this.proj(d.a);
      const b = this.proj(d.b);
      this.requestUpdate();
      if (!a || !b || Math.hypot(a[0] - b[0], a[1] - b[1]) < CLICK_PX) return;
      void c.createShape({ kind: d.tool, points: [d.a, d.b] }).then(() => c.setTool("select"));
      return;
    }
    if (d.kind !== "press") return;
    const [x, y] = this.local(e);
    if (Math.hypot(x - d.x, y - d.y) >= CLICK_PX) return;
    this.onClick(e, [x, y]);
  }

  private onClick(e: PointerEvent, screen: Pt): void {
    const c = this.controller!;
    const cv = this.canvasEl;
    if (!cv) return;
    if (c.tab === "regions" || c.tab === "subset") {
      if (cv.is3d) {
        // The camera the ring is drawn under: moving it discards the ring.
        this.lastCamera = this.camera();
        c.addVertex(this.kind, screen, true);
      } else {
        const w = this.world(e);
        if (w) c.addVertex(this.kind, w, false);
      }
      return;
    }
    if (c.tab !== "annotations") return;
    const w = this.world(e);
    if (!w) return;
    if (c.tool === "text") {
      void c
        .createShape({
          kind: "text",
          points: [w],
          text: "Text",
          color: DEFAULT_STROKE,
          // client.md 10.3: 16 px at the zoom of creation, stored in world units.
          font_size: TEXT_PX / (cv.scale || 1),
        })
        .then(() => c.setTool("select"));
    } else if (c.tool === "polygon") {
      const d = c.polygonDraft;
      const first = d[0] ? this.proj(d[0]) : null;
      if (first && d.length >= 3 && Math.hypot(first[0] - screen[0], first[1] - screen[1]) < 8)
        void c.closePolygon();
      else c.addPolygonVertex(w);
    }
  }

  /** The deck zooms under the wheel even while a tool covers it. */
  private forwardWheel(e: WheelEvent): void {
    const target = this.canvasEl?.shadowRoot?.querySelector(".deck canvas");
    if (!target) return;
    e.preventDefault();
    target.dispatchEvent(new WheelEvent(e.type, e));
  }

  // ------------------------------------------------------------------------------------- pointer: shapes and handles

  private onShapeDown(e: PointerEvent, s: Shape): void {
    const c = this.controller;
    if (!c || e.button !== 0) return;
    e.stopPropagation();
    c.select(s.id);
    const w = this.world(e);
    if (!w) return;
    (this.renderRoot.querySelector("svg") as SVGSVGElement).setPointerCapture(e.pointerId);
    this.drag = { kind: "move", id: s.id, start: w, points: s.points as Pt[], moved: false };
  }

  private onHandleDown(e: PointerEvent, s: Shape, index: number): void {
    if (e.button !== 0) return;
    e.stopPropagation();
    (this.renderRoot.querySelector("svg") as SVGSVGElement).setPointerCapture(e.pointerId);
    this.drag = { kind: "vertex", id: s.id, index, points: s.points as Pt[] };
  }

  /** The pivot of a rotatable shape: an ellipse's centre, a text's anchor. */
  private pivot(s: Shape): Pt {
    return s.kind === "ellipse" ? mid(s.points[0]!, s.points[1]!) : (s.points[0] as Pt);
  }

  private onRotateDown(e: PointerEvent, s: Shape): void {
    if (e.button !== 0) return;
    e.stopPropagation();
    (this.renderRoot.querySelector("svg") as SVGSVGElement).setPointerCapture(e.pointerId);
    this.drag = { kind: "rotate", id: s.id, pivot: this.pivot(s) };
  }

  /** The screen angle (SVG degrees) of a world direction `deg` at world point `p`. */
  private screenAngle(p: Pt, deg: number, len: number): number {
    const a = this.proj(p);
    const b = this.proj(rotateAbout([p[0] + len, p[1]], p, deg));
    return a && b ? (Math.atan2(b[1] - a[1], b[0] - a[0]) * 180) / Math.PI : 0;
  }

  private onSvgMove(e: PointerEvent): void {
    const d = this.drag;
    const c = this.controller;
    if (!c || !d || (d.kind !== "move" && d.kind !== "vertex" && d.kind !== "rotate")) return;
    const w = this.world(e);
    if (!w) return;
    if (d.kind === "rotate") {
      const deg = (Math.atan2(w[1] - d.pivot[1], w[0] - d.pivot[0]) * 180) / Math.PI;
      c.updateShape(d.id, { rotation: Math.round(deg * 10) / 10 });
    } else if (d.kind === "move") {
      d.moved = true;
      c.updateShape(d.id, { points: translated(d.points, w[0] - d.start[0], w[1] - d.start[1]) });
    } else {
      // A rotated ellipse's corner handles sit on the turned box: undo the turn about the centre.
      const s = c.shapes.find((x) => x.id === d.id);
      const rot = s?.kind === "ellipse" ? (s.rotation ?? 0) : 0;
      const to = rot ? rotateAbout(w, mid(d.points[0]!, d.points[1]!), -rot) : w;
      const pts = d.points.map((p, i) => (i === d.index ? to : p));
      c.updateShape(d.id, { points: pts });
    }
  }

  private onSvgUp(): void {
    const d = this.drag;
    const c = this.controller;
    if (!c || !d || (d.kind !== "move" && d.kind !== "vertex" && d.kind !== "rotate")) return;
    this.drag = null;
    const s = c.shapes.find((x) => x.id === d.id);
    if (s && d.kind === "rotate") c.updateShape(d.id, { rotation: s.rotation ?? 0 }, true);
    else if (s && (d.kind === "vertex" || (d.kind === "move" && d.moved)))
      c.updateShape(d.id, { points: s.points }, true);
  }

  // ------------------------------------------------------------------------------------- rendering

  /**
   * One painted part of a shape (its fill or its stroke, client.md 10.3), in paint order. The stroke
   * part carries `data-shape` (the shape's element for tests and picking), the fill `data-shape-fill`.
   * A part beneath the cells (z < 0) is painted by the canvas's deck; here it is only a transparent
   * target for the pointer (`hitOnly`).
   */
  private renderPart(s: Shape, part: "fill" | "stroke", live: boolean, selected: boolean, hitOnly: boolean) {
    const { points, closed } = shapeOutline(s);
    const stroke = s.color;
    const width = s.stroke_width;
    const down = (e: PointerEvent) => this.onShapeDown(e, s);
    if (s.kind === "text") {
      const p = this.proj(points[0]!);
      if (!p) return svg``;
      const angle = s.rotation
        ? this.screenAngle(points[0]!, s.rotation, 1 / (this.canvasEl?.scale ?? 1))
        : 0;
      return svg`<text class="shape" data-shape=${s.id} data-kind="text" x=${p[0]} y=${p[1]}
        transform=${angle ? `rotate(${angle.toFixed(2)} ${p[0].toFixed(1)} ${p[1].toFixed(1)})` : ""}
        fill=${stroke} font-size=${(s.font_size * (this.canvasEl?.scale ?? 1)).toFixed(2)} dominant-baseline="hanging"
        font-family="system-ui, sans-serif" paint-order="stroke" stroke="rgba(0,0,0,0.6)" stroke-width="2"
        style=${selected ? "text-decoration: underline" : ""}
        @pointerdown=${live ? down : null}>${s.text ?? ""}</text>`;
    }
    const d = this.pts(points);
    if (part === "fill") {
      return svg`<polygon class="shape" data-shape-fill=${s.id} data-z=${s.fill_z} points=${d}
        fill=${hitOnly ? "transparent" : (s.fill ?? stroke)} fill-opacity=${hitOnly ? 0 : s.fill_alpha} stroke="none"
        @pointerdown=${live ? down : null}></polygon>`;
    }
    // A wide transparent stroke makes thin lines easy to pick.
    const hit = closed
      ? svg`<polygon class="hit" points=${d} fill="none" stroke="transparent" stroke-width=${width + 10}></polygon>`
      : svg`<polyline class="hit" points=${d} fill="none" stroke="transparent" stroke-width=${width + 10}></polyline>`;
    const head = (h: Pt[]) =>
      svg`<polygon class="arrow-head" points=${h.map(([x, y]) => `${x.toFixed(1)},${y.toFixed(1)}`).join(" ")} fill=${stroke}></polygon>`;
    let body: TemplateResult | typeof nothing = nothing;
    if (!hitOnly) {
      const dash = dashPattern(s.dash, width);
      const dasharray = dash ? dash.map((v) => v.toFixed(1)).join(" ") : nothing;
      const cap = s.dash === "dotted" ? "round" : "butt";
      if (closed)
        body = svg`<polygon points=${d} fill="none" stroke=${stroke} stroke-width=${width}
          stroke-dasharray=${dasharray} stroke-linecap=${cap}></polygon>`;
      else {
        const screen = points.map((p) => this.proj(p)).filter((q): q is Pt => q !== null);
        const { path, heads } = arrowedPath(screen, s);
        body = svg`<polyline points=${path.map(([x, y]) => `${x.toFixed(1)},${y.toFixed(1)}`).join(" ")}
          fill="none" stroke=${stroke} stroke-width=${width} stroke-dasharray=${dasharray}
          stroke-linecap=${cap} stroke-linejoin="round"></polyline>${heads.map(head)}`;
      }
    }
    return svg`<g class="shape" data-shape=${s.id} data-kind=${s.kind} data-z=${s.stroke_z}
      data-under=${hitOnly ? "1" : nothing} @pointerdown=${live ? down : null}>${body}${hit}</g>`;
  }

  /** Send the parts beneath the cells to the spatial canvas's deck (rebuilt when they or the zoom change). */
  private syncUnderlay(below: readonly ShapePart[]): void {
    const cv = this.canvasEl as (CanvasBase & { setUnderlay?: (l: Layer[]) => void }) | null;
    if (!cv?.setUnderlay) return;
    // Shapes are replaced, never mutated, on an edit: the same objects at the same zoom draw the same.
    const prev = this.underlay;
    const same =
      prev.scale === cv.scale &&
      prev.parts.length === below.length &&
      below.every((p, i) => p.shape === prev.parts[i]!.shape && p.part === prev.parts[i]!.part);
    if (same || (!below.length && !prev.parts.length)) return;
    this.underlay = { parts: below, scale: cv.scale };
    cv.setUnderlay(below.length ? underlayLayers(below, cv) : []);
  }

  private renderHandles(s: Shape): TemplateResult {
    // Box and ellipse: their two defining corners (on the turned box of a rotated ellipse); line,
    // arrow, polygon: every vertex; text: its anchor. Ellipse and text: a rotate handle too.
    const rot = s.rotation ?? 0;
    const c = s.kind === "ellipse" ? mid(s.points[0]!, s.points[1]!) : null;
    let rotHandle: Pt | null = null;
    if (s.kind === "ellipse" || s.kind === "text") {
      const pivot = this.pivot(s);
      const pp = this.proj(pivot);
      const unit = this.proj(rotateAbout([pivot[0] + 1, pivot[1]], pivot, rot));
      if (pp && unit) {
        const len = Math.hypot(unit[0] - pp[0], unit[1] - pp[1]) || 1;
        const [ux, uy] = [(unit[0] - pp[0]) / len, (unit[1] - pp[1]) / len];
        const reach =
          s.kind === "ellipse"
            ? Math.abs((s.points[1]![0]! - s.points[0]![0]!) / 2) * (this.canvasEl?.scale ?? 1) + 22
            : (s.text?.length ?? 4) * s.font_size * (this.canvasEl?.scale ?? 1) * 0.6 + 18;
        rotHandle = [pp[0] + ux * reach, pp[1] + uy * reach];
      }
    }
    return svg`${
      rotHandle
        ? svg`<circle class="handle rotate" data-handle="rotate" cx=${rotHandle[0]} cy=${rotHandle[1]} r="6" fill="#4c9ffe" stroke="#fff" stroke-width="1.5"
            @pointerdown=${(e: PointerEvent) => this.onRotateDown(e, s)}><title>Drag to rotate</title></circle>`
        : nothing
    }${(s.points as Pt[]).map((p0, i) => {
      const p = c && rot ? rotateAbout(p0, c, rot) : p0;
      const q = this.proj(p);
      return q
        ? svg`<circle class="handle" data-handle=${i} cx=${q[0]} cy=${q[1]} r="5" fill="#fff" stroke="#000" stroke-width="1"
            @pointerdown=${(e: PointerEvent) => this.onHandleDown(e, s, i)}></circle>`
        : nothing;
    })}`;
  }

  private renderDrawing(): TemplateResult | typeof nothing {
    const c = this.controller;
    const d = c?.drawing;
    if (!c || !d || d.canvas !== this.kind) return nothing;
    const toScreen = (r: Pt[]) => (d.screen ? r.map(([x, y]) => `${x},${y}`).join(" ") : this.pts(r));
    const color = c.tab === "subset" ? "#ffffff" : c.color;
    return svg`<g class="region" data-testid="region-drawing">
      ${d.rings.map(
        (r) =>
          svg`<polygon points=${toScreen(r)} fill=${color} fill-opacity="0.18" stroke=${color} stroke-width="2"></polygon>`,
      )}
      ${
        d.current.length
          ? svg`<polyline points=${toScreen(d.current)} fill="none" stroke=${color} stroke-width="2" stroke-dasharray="5 4"></polyline>
            ${d.current.map((p) => {
              const q = d.screen ? p : this.proj(p);
              return q ? svg`<circle cx=${q[0]} cy=${q[1]} r="3.5" fill=${color}></circle>` : nothing;
            })}`
          : nothing
      }
    </g>`;
  }

  private renderDraft(): TemplateResult | typeof nothing {
    const c = this.controller;
    const d = this.drag;
    if (d?.kind === "draw") {
      const s = { id: "draft", kind: d.tool, points: [d.a, d.b] } as Shape;
      const { points, closed } = shapeOutline(s);
      return closed
        ? svg`<polygon points=${this.pts(points)} fill="none" stroke=${DEFAULT_STROKE} stroke-width="2" stroke-dasharray="5 4"></polygon>`
        : svg`<polyline points=${this.pts(points)} fill="none" stroke=${DEFAULT_STROKE} stroke-width="2" stroke-dasharray="5 4"></polyline>`;
    }
    if (c?.tab === "annotations" && c.tool === "polygon" && c.polygonDraft.length)
      return svg`<polyline points=${this.pts(c.polygonDraft)} fill="none" stroke=${DEFAULT_STROKE} stroke-width="2" stroke-dasharray="5 4"></polyline>
        ${c.polygonDraft.map((p) => {
          const q = this.proj(p);
          return q ? svg`<circle cx=${q[0]} cy=${q[1]} r="3.5" fill=${DEFAULT_STROKE}></circle>` : nothing;
        })}`;
    return nothing;
  }

  override render(): TemplateResult {
    const c = this.controller;
    if (!c || !this.canvasEl) return html``;
    const capturing = c.capturing;
    // Shapes take the pointer in the Annotations tab's select mode, for whoever may edit.
    const live = c.tab === "annotations" && c.tool === "select" && !c.readOnlyReason;
    const shapes = this.kind === "spatial" ? c.shapes : [];
    const selected = live ? shapes.find((s) => s.id === c.selectedId) : undefined;
    const hint = c.tab && (c.tab !== "annotations" || this.kind === "spatial") ? c.hint : null;
    const { below, above } = paintOrder(shapes);
    if (this.kind === "spatial") this.syncUnderlay(below);
    return html`
      <svg
        class=${live ? "live" : ""}
        data-testid=${`overlay-${this.kind}`}
        data-shapes=${shapes.length}
        @pointermove=${(e: PointerEvent) => this.onSvgMove(e)}
        @pointerup=${() => this.onSvgUp()}
        @pointercancel=${() => this.onSvgUp()}
      >
        ${
          capturing && (c.tab !== "annotations" || this.kind === "spatial")
            ? svg`<rect class="capture" data-testid="draw-capture" x="0" y="0" width="100%" height="100%" fill="transparent"
                @pointerdown=${(e: PointerEvent) => this.onCaptureDown(e)}
                @pointermove=${(e: PointerEvent) => this.onCaptureMove(e)}
                @pointerup=${(e: PointerEvent) => this.onCaptureUp(e)}
                @wheel=${(e: WheelEvent) => this.forwardWheel(e)}></rect>`
            : nothing
        }
        ${below.map((p) => this.renderPart(p.shape, p.part, live, false, true))}
        ${above.map((p) => this.renderPart(p.shape, p.part, live, p.shape.id === selected?.id, false))}
        ${selected ? this.renderHandles(selected) : nothing}
        ${this.renderDrawing()} ${this.renderDraft()}
      </svg>
      ${hint ? html`<div class="hint" data-testid="draw-hint">${hint}</div>` : nothing}
      ${
        this.transformOpen
          ? html`<tessera-points-transform-dialog
              .controller=${c}
              @close=${() => {
                this.transformOpen = false;
              }}
            ></tessera-points-transform-dialog>`
          : nothing
      }
    `;
  }
}

if (!customElements.get("tessera-canvas-overlay"))
  customElements.define("tessera-canvas-overlay", CanvasOverlay);

declare global {
  interface HTMLElementTagNameMap {
    "tessera-canvas-overlay": CanvasOverlay;
  }
}
