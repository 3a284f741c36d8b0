/**
 * The Regions tab (client.md 9): pick or create a region set, type a category, choose a colour, draw
 * rings on either canvas, and **Apply label (n=…)** sends `POST …/annotate`; the region sets list
 * shows each set's categories with their colour and count, and a click isolates one.
 */
import { html, nothing, type TemplateResult } from "lit";
import { categoryColors } from "../../../sdk/display/encoding.js";
import { type DrawController, PRESET_COLORS } from "./draw-controller.js";
import { hideInRegion, localEditsOf, showAllCells } from "./regions-local.js";
import { renderDrawButtons } from "./subset-panel.js";

/** The Regions tab's body. */
export function renderRegionsPanel(c: DrawController): TemplateResult {
  const ro = c.tabReadOnlyReason;
  const obsCats = (c.host.state?.fields.obs ?? []).filter((o) => o.kind === "categorical").map((o) => o.name);
  const onEmbedding = c.drawing?.canvas === "embedding";
  const n = c.count;
  return html`
    <label for="region-set">Region set</label>
    <input
      id="region-set"
      type="text"
      list="region-set-options"
      data-testid="region-set"
      .value=${c.regionSet}
      @input=${(e: Event) => {
        c.regionSet = (e.target as HTMLInputElement).value;
        c.changed();
      }}
    />
    <datalist id="region-set-options">
      ${[...new Set([...c.regionSets.map((r) => r.name), ...obsCats])].map((v) => html`<option value=${v}></option>`)}
    </datalist>
    <label for="region-category">Category</label>
    <input
      id="region-category"
      type="text"
      data-testid="region-category"
      .value=${c.category}
      @input=${(e: Event) => {
        c.category = (e.target as HTMLInputElement).value;
        c.changed();
      }}
    />
    <label>Colour</label>
    <div class="swatch-row">
      ${PRESET_COLORS.map(
        (col) => html`<span
          class="swatch ${c.color === col ? "on" : ""}"
          style=${`background:${col}`}
          title=${col}
          @click=${() => {
            c.color = col;
            c.changed();
          }}
        ></span>`,
      )}
      <input
        type="color"
        data-testid="region-color"
        .value=${c.color}
        @change=${(e: Event) => {
          c.color = (e.target as HTMLInputElement).value;
          c.changed();
        }}
      />
    </div>
    ${renderDrawButtons(c)}
    ${
      c.regionsLocal
        ? nothing
        : html`<label class="check" title=${onEmbedding ? "Only a region drawn on the spatial canvas can be outlined" : ""}>
      <input
        type="checkbox"
        data-testid="annotate-region"
        .checked=${c.annotateRegion && !onEmbedding}
        ?disabled=${onEmbedding}
        @change=${(e: Event) => {
          c.annotateRegion = (e.target as HTMLInputElement).checked;
          c.changed();
        }}
      />
      Annotate region (outline and label as shapes)
    </label>`
    }
    <button
      class="primary wide"
      data-testid="apply-label"
      ?disabled=${Boolean(ro) || !n || !c.regionSet.trim() || !c.category.trim()}
      title=${ro ? `Unavailable — ${ro}` : ""}
      @click=${() => c.applyLabel()}
    >
      Apply label (n=${n ?? 0})
    </button>
    ${c.regionsLocal ? renderLocalTools(c) : nothing}
    ${renderRegionSets(c)}
  `;
}

/** Serverless viewer: labels stay in this browser; cells in the region can be hidden and shown. */
function renderLocalTools(c: DrawController): TemplateResult {
  const hidden = localEditsOf(c.host.source)?.hiddenCount ?? 0;
  return html`<div class="muted small" data-testid="regions-local-note">
      Labels become columns in this browser only: colour by them, they are lost on reload.
    </div>
    <div class="row">
      <button data-testid="hide-cells" ?disabled=${!c.count} @click=${() => hideInRegion(c)}>
        Hide cells in region
      </button>
      <button data-testid="show-cells" ?disabled=${!hidden} @click=${() => showAllCells(c)}>
        Show all${hidden ? ` (${hidden.toLocaleString()} hidden)` : ""}
      </button>
    </div>`;
}

/** The region sets with their categories, colours and counts; a click isolates a category. */
function renderRegionSets(c: DrawController): TemplateResult {
  const sets = c.regionSets;
  const cv = c.canvas("spatial") ?? c.canvas("embedding");
  const enc = cv?.encoding;
  return html`<div class="section" data-testid="region-sets">
    <div class="muted">Region sets</div>
    ${sets.length ? nothing : html`<div class="muted small">None yet: label a drawn region to make one.</div>`}
    ${sets.map((rs) => {
      const path = `obs:${rs.name}`;
      const values = rs.categories.map((x) => x.value);
      const colors = categoryColors(values, enc?.category_colors?.[path] ?? null) ?? [];
      const iso = enc?.color_by === path ? (enc?.isolated_category ?? null) : null;
      return html`<div class="rset" data-region-set=${rs.name}>
        <div class="rset-name">
          ${rs.name}
          ${iso !== null ? html`<button class="link" @click=${() => cv?.isolate(path, null)}>show all</button>` : nothing}
        </div>
        ${rs.categories.map(
          (cat, i) => html`<div
            class="rcat ${iso !== null && iso !== cat.value ? "dim" : ""}"
            data-category=${cat.value}
            title="Click to isolate"
            @click=${() => cv?.isolate(path, iso === cat.value ? null : cat.value)}
          >
            <span class="dot" style=${`background:${colors[i] ?? "#999"}`}></span>
            <span>${cat.value}</span><span class="count" data-testid="n-cells">${cat.count}</span>
          </div>`,
        )}
      </div>`;
    })}
  </div>`;
}
