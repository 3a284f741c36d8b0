/**
 * The Annotations tab (client.md 10): the creation tools (line, arrow, box, ellipse, polygon, text)
 * and select mode, the list of the session's shapes, and the selected shape's style editor. Every
 * edit goes through `…/shape-annotations` (style edits debounced per shape).
 *
 * The API's shape carries one stroke colour and width, an optional fill colour (drawn at alpha 0.25),
 * a text and a font size; an arrow is the `arrow` kind (a line with a head at its last point). The
 * spec's dash, arrow-start and z-order have no field in the API yet, so they are not offered. An
 * ellipse or a text has a rotation (degrees, counter-clockwise in world coordinates).
 */
import { html, nothing, type TemplateResult } from "lit";
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
        ? html`<label>Font size ${s.font_size} px</label>
            <input
              type="range"
              min="6"
              max="96"
              step="1"
              ?disabled=${off}
              .value=${String(s.font_size)}
              @input=${(e: Event) => set({ font_size: Number((e.target as HTMLInputElement).value) })}
            />`
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
    ${
      s.kind !== "text"
        ? html`<label>Width ${s.stroke_width} px</label>
            <input
              type="range"
              min="0.5"
              max="12"
              step="0.5"
              data-testid="shape-width"
              ?disabled=${off}
              .value=${String(s.stroke_width)}
              @input=${(e: Event) => set({ stroke_width: Number((e.target as HTMLInputElement).value) })}
            />`
        : nothing
    }
    ${
      s.kind === "line" || s.kind === "arrow"
        ? html`<label class="check"
            ><input
              type="checkbox"
              data-testid="shape-arrow"
              ?disabled=${off}
              .checked=${s.kind === "arrow"}
              @change=${(e: Event) => set({ kind: (e.target as HTMLInputElement).checked ? "arrow" : "line" })}
            />
            Arrow head at the end</label
          >`
        : nothing
    }
    ${
      closed
        ? html`<label class="check"
              ><input
                type="checkbox"
                data-testid="shape-fill"
                ?disabled=${off}
                .checked=${s.fill !== null}
                @change=${(e: Event) =>
                  set({ fill: (e.target as HTMLInputElement).checked ? (s.color ?? DEFAULT_STROKE) : null })}
              />
              Fill</label
            >
            ${
              s.fill !== null
                ? html`<input
                    type="color"
                    data-testid="shape-fill-color"
                    ?disabled=${off}
                    .value=${s.fill}
                    @change=${(e: Event) => set({ fill: (e.target as HTMLInputElement).value })}
                  />`
                : nothing
            }`
        : nothing
    }
    <div class="row" style="margin-top:8px">
      <button class="danger" data-testid="delete-shape" ?disabled=${off} @click=${() => c.deleteShape(s.id)}>
        Delete shape
      </button>
    </div>
  </div>`;
}
