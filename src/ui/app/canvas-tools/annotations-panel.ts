/**
 * The Annotations tab (client.md 10): the creation tools (line, arrow, box, ellipse, polygon, text)
 * and select mode, the list of the session's shapes, and the selected shape's style editor. Every
 * edit goes through `…/shape-annotations` (style edits debounced per shape).
 *
 * The editor offers the style of client.md 10.2–10.3: stroke colour (8 presets and a picker), width,
 * dash (solid, dashed, dotted), arrow heads at either end of a line with their size, the stroke's
 * z-order, and fill on/off, colour, alpha and z-order (below 0 a part lies beneath the cells). An
 * ellipse or a text has a rotation (degrees, counter-clockwise in world coordinates). A line with a
 * head is stored as the `arrow` kind, without one as `line`.
 */
import { html, nothing, type TemplateResult } from "lit";
import { SHAPE_DEFAULTS } from "../../../sdk/data/shape-annotations.js";
import { DEFAULT_STROKE, type DrawController, PRESET_COLORS, type ShapeTool } from "./draw-controller.js";
import type { Shape } from "./shape-geometry.js";

const TOOLS: [ShapeTool, string][] = [
  ["select", "Select"],
  ["line", "Line"],
  ["arrow", "Arrow"],
  ["box", "Box"],
  ["ellipse", "Ellipse"],
  ["polygon", "Polygon"],
  ["text", "Text"],
];

/** What the list shows for a shape: its label, else its kind. */
function label(s: Shape): string {
  return s.text?.trim() || s.kind;
}

/** The Annotations tab's body. */
export function renderAnnotationsPanel(c: DrawController): TemplateResult {
  const ro = c.readOnlyReason;
  const sel = c.shapes.find((s) => s.id === c.selectedId);
  return html`
    <div class="tools" role="toolbar">
      ${TOOLS.map(
        ([t, name]) => html`<button
          aria-pressed=${c.tool === t}
          data-tool=${t}
          ?disabled=${Boolean(ro) && t !== "select"}
          @click=${() => c.setTool(t)}
        >
          ${name}
        </button>`,
      )}
    </div>
    ${
      c.tool === "polygon"
        ? html`<div class="row">
            <button data-testid="close-shape" ?disabled=${c.polygonDraft.length < 3} @click=${() => c.closePolygon()}>
              Close shape
            </button>
            <span class="muted small">${c.polygonDraft.length} vertices</span>
          </div>`
        : nothing
    }
    <div class="section">
      <div class="muted">Shapes</div>
      ${c.shapes.length ? nothing : html`<div class="muted small">No shapes yet.</div>`}
      <div class="shape-list" data-testid="shape-list">
        ${c.shapes.map(
          (s) => html`<div
            class="shape-row ${s.id === c.selectedId ? "on" : ""}"
            data-shape-row=${s.id}
            data-kind=${s.kind}
            @click=${() => {
              c.setTool("select");
              c.select(s.id === c.selectedId ? null : s.id);
            }}
          >
            <span class="dot" style=${`background:${s.color}`}></span>${label(s)}
            ${s.text?.trim() ? html`<span class="muted small">${s.kind}</span>` : nothing}
          </div>`,
        )}
      </div>
    </div>
    ${sel ? renderEditor(c, sel, ro) : nothing}
  `;
}

/** The per-shape editor. */
function renderEditor(c: DrawController, s: Shape, ro: string | null): TemplateResult {
  const set = (patch: Partial<Omit<Shape, "id">>) => c.updateShape(s.id, patch);
  const off = Boolean(ro);
  const closed = s.kind === "box" || s.kind === "ellipse" || s.kind === "polygon";
  return html`<div class="section editor" data-testid="shape-editor" data-shape=${s.id}>
    <div class="muted">Edit ${s.kind}</div>
    <label for="shape-text">${s.kind === "text" ? "Text" : "Label"}</label>
    <input
      id="shape-text"
      type="text"
      data-testid="shape-text"
      ?disabled=${off}
      .value=${s.text ?? ""}
      @input=${(e: Event) => {
        const v = (e.target as HTMLInputElement).value;
        // A text shape must keep some text (the API's rule); an empty label is none.
        if (s.kind === "text" && !v.trim()) return;
        set({ text: v.trim() ? v : null });
      }}
    />
    ${
      s.kind === "text"
        ? html`<label for="shape-font-size"
              >Font size (world units; ≈ ${Math.round(s.font_size * (c.canvas("spatial")?.scale ?? 1))} px at this zoom)</label
            >
            <input
              id="shape-font-size"
              type="number"
              min="0"
              step="any"
              data-testid="shape-font-size"
              ?disabled=${off}
              .value=${String(Number(s.font_size.toPrecision(4)))}
              @change=${(e: Event) => {
                const v = Number((e.target as HTMLInputElement).value);
                if (Number.isFinite(v) && v > 0) set({ font_size: v });
              }}
            />
            <div class="row">
              <label for="shape-stroke-z" title="Paint order among the shapes (a text is always over the cells)">z</label>
              ${zInput("shape-stroke-z", s.stroke_z ?? 1, off, (z) => set({ stroke_z: z }))}
            </div>`
        : nothing
    }
    ${
      s.kind === "ellipse" || s.kind === "text"
        ? html`<label for="shape-rotation">Rotation (°, or drag the blue handle)</label>
            <input
              id="shape-rotation"
              type="number"
              min="-360"
              max="360"
              step="1"
              data-testid="shape-rotation"
              ?disabled=${off}
              .value=${String(s.rotation ?? 0)}
              @change=${(e: Event) => {
                const v = Number((e.target as HTMLInputElement).value);
                if (Number.isFinite(v) && Math.abs(v) <= 360) set({ rotation: v });
              }}
            />`
        : nothing
    }
    <label>Stroke</label>
    <div class="swatch-row">
      ${PRESET_COLORS.map(
        (col) => html`<span
          class="swatch ${s.color === col ? "on" : ""}"
          style=${`background:${col}`}
          title=${col}
          @click=${() => !off && set({ color: col })}
        ></span>`,
      )}
      <input
        type="color"
        data-testid="shape-color"
        ?disabled=${off}
        .value=${s.color}
        @change=${(e: Event) => set({ color: (e.target as HTMLInputElement).value })}
      />
    </div>
    ${s.kind !== "text" ? renderStroke(s, set, off) : nothing}
    ${s.kind === "line" || s.kind === "arrow" ? renderArrows(s, set, off) : nothing}
    ${closed ? renderFill(s, set, off) : nothing}
    <div class="row" style="margin-top:8px">
      <button class="danger" data-testid="delete-shape" ?disabled=${off} @click=${() => c.deleteShape(s.id)}>
        Delete shape
      </button>
    </div>
  </div>`;
}

type Set = (patch: Partial<Omit<Shape, "id">>) => void;

/** A labelled slider (`label` shows the current value) that calls `onSet` with the number chosen. */
function slider(
  label: string,
  testId: string,
  range: { min: number; max: number; step: number },
  value: number,
  off: boolean,
  onSet: (v: number) => void,
): TemplateResult {
  return html`<label>${label}</label>
    <input
      type="range"
      min=${range.min}
      max=${range.max}
      step=${range.step}
      data-testid=${testId}
      ?disabled=${off}
      .value=${String(value)}
      @input=${(e: Event) => onSet(Number((e.target as HTMLInputElement).value))}
    />`;
}

/** A z-order field: an integer, below 0 beneath the cells. */
function zInput(id: string, value: number, off: boolean, onSet: (z: number) => void): TemplateResult {
  return html`<input
    id=${id}
    type="number"
    min="-1000"
    max="1000"
    step="1"
    style="width:5em"
    data-testid=${id}
    ?disabled=${off}
    .value=${String(value)}
    @change=${(e: Event) => {
      const v = Number((e.target as HTMLInputElement).value);
      if (Number.isInteger(v) && Math.abs(v) <= 1000) onSet(v);
    }}
  />`;
}

/** Width, dash and z-order of the stroke. */
function renderStroke(s: Shape, set: Set, off: boolean): TemplateResult {
  return html`${slider(`Width ${s.stroke_width} px`, "shape-width", { min: 0.5, max: 12, step: 0.5 }, s.stroke_width, off, (v) => set({ stroke_width: v }))}
    <div class="row">
      <label for="shape-dash">Dash</label>
      <select
        id="shape-dash"
        data-testid="shape-dash"
        ?disabled=${off}
        @change=${(e: Event) => set({ dash: (e.target as HTMLSelectElement).value as Shape["dash"] })}
      >
        ${(["solid", "dashed", "dotted"] as const).map(
          (d) => html`<option value=${d} ?selected=${(s.dash ?? "solid") === d}>${d}</option>`,
        )}
      </select>
      <label for="shape-stroke-z" title="Paint order; below 0 the stroke lies beneath the cells">z</label>
      ${zInput("shape-stroke-z", s.stroke_z ?? 1, off, (z) => set({ stroke_z: z }))}
    </div>`;
}

/** Arrow heads at the start and end of a line, and their size (a head makes the line an `arrow`). */
function renderArrows(s: Shape, set: Set, off: boolean): TemplateResult {
  const arrowSize = s.arrow_size ?? SHAPE_DEFAULTS.arrow_size;
  const heads = (start: boolean, end: boolean) =>
    set({ arrow_start: start, arrow_end: end, kind: start || end ? "arrow" : "line" });
  return html`<div class="row">
      <label class="check"
        ><input
          type="checkbox"
          data-testid="shape-arrow-start"
          ?disabled=${off}
          .checked=${Boolean(s.arrow_start)}
          @change=${(e: Event) => heads((e.target as HTMLInputElement).checked, Boolean(s.arrow_end))}
        />
        Arrow at start</label
      >
      <label class="check"
        ><input
          type="checkbox"
          data-testid="shape-arrow"
          ?disabled=${off}
          .checked=${Boolean(s.arrow_end)}
          @change=${(e: Event) => heads(Boolean(s.arrow_start), (e.target as HTMLInputElement).checked)}
        />
        Arrow at end</label
      >
    </div>
    ${
      s.arrow_start || s.arrow_end
        ? slider(
            `Arrow size ${arrowSize} px`,
            "shape-arrow-size",
            { min: 4, max: 60, step: 1 },
            arrowSize,
            off,
            (v) => set({ arrow_size: v }),
          )
        : nothing
    }`;
}

/** The last fill colour of each shape whose fill was turned off, offered again when it is turned on. */
const lastFill = new Map<string, string>();

/** Fill on/off, colour, alpha and z-order. */
function renderFill(s: Shape, set: Set, off: boolean): TemplateResult {
  const fillAlpha = s.fill_alpha ?? SHAPE_DEFAULTS.fill_alpha;
  return html`<label class="check"
      ><input
        type="checkbox"
        data-testid="shape-fill"
        ?disabled=${off}
        .checked=${s.fill !== null}
        @change=${(e: Event) => {
          if ((e.target as HTMLInputElement).checked)
            set({ fill: lastFill.get(s.id) ?? s.color ?? DEFAULT_STROKE });
          else {
            if (s.fill) lastFill.set(s.id, s.fill);
            set({ fill: null });
          }
        }}
      />
      Fill</label
    >
    ${
      s.fill !== null
        ? html`<div class="row">
              <input
                type="color"
                data-testid="shape-fill-color"
                ?disabled=${off}
                .value=${s.fill}
                @change=${(e: Event) => set({ fill: (e.target as HTMLInputElement).value })}
              />
              <label for="shape-fill-z" title="Paint order; below 0 the fill lies beneath the cells">z</label>
              ${zInput("shape-fill-z", s.fill_z ?? 0, off, (z) => set({ fill_z: z }))}
            </div>
            ${slider(`Fill alpha ${fillAlpha.toFixed(2)}`, "shape-fill-alpha", { min: 0, max: 1, step: 0.05 }, fillAlpha, off, (v) => set({ fill_alpha: v }))}`
        : nothing
    }`;
}
