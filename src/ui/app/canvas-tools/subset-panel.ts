/**
 * The Subset tab (client.md 11): draw region(s) as on the Regions tab, then **Only keep cells in
 * region (n=…)** or **Remove cells in region (n=…)** (`invert:true`) — `POST …/subset`, which makes a
 * child session; the app follows it there. The spatial canvas sends world-space rings (the server
 * keeps the cells whose geometry intersects them, so the child may hold a few more than the centroid
 * count shown), the embedding canvas the row indices. Also the draw buttons both tabs share.
 */
import { html, nothing, type TemplateResult } from "lit";
import type { DrawController } from "./draw-controller.js";

/** Draw / Finish region / Clear, and what is drawn so far. */
export function renderDrawButtons(c: DrawController): TemplateResult {
  const d = c.drawing;
  const ro = c.tabReadOnlyReason;
  const where = d
    ? d.canvas === "spatial"
      ? "spatial canvas"
      : d.screen
        ? "3D embedding (screen)"
        : "embedding"
    : null;
  return html`<div class="row draw">
      <button
        aria-pressed=${c.armed && !ro}
        data-testid="draw-toggle"
        ?disabled=${Boolean(ro)}
        title="Clicks on a canvas add vertices while this is on (panning is paused; the wheel still zooms)"
        @click=${() => {
          c.armed = !c.armed;
          c.changed();
        }}
      >
        ✎ Draw
      </button>
      <button data-testid="finish-region" ?disabled=${!d || d.current.length < 3} @click=${() => c.finishRing()}>
        Finish region
      </button>
      <button data-testid="clear-region" ?disabled=${!d} @click=${() => c.clearDrawing()}>Clear</button>
    </div>
    <div class="muted small" data-testid="drawing-status">
      ${
        d
          ? html`${d.rings.length} region${d.rings.length === 1 ? "" : "s"} on the ${where}${d.current.length ? html`, ${d.current.length} vertices in progress` : nothing}`
          : "Click on a canvas to add vertices; Finish region closes the ring. Several regions are unioned."
      }
    </div>`;
}

/** The Subset tab's body. */
export function renderSubsetPanel(c: DrawController): TemplateResult {
  const ro = c.readOnlyReason;
  const n = c.count ?? 0;
  const off = Boolean(ro) || !n || Boolean(c.busy);
  const title = ro ? `Unavailable — ${ro}` : !n ? "Draw a region holding cells first" : "";
  return html`
    ${renderDrawButtons(c)}
    <div class="col">
      <button class="primary wide" data-testid="subset-keep" ?disabled=${off} title=${title} @click=${() => c.subset(false)}>
        Only keep cells in region (n=${n})
      </button>
      <button class="wide" data-testid="subset-remove" ?disabled=${off} title=${title} @click=${() => c.subset(true)}>
        Remove cells in region (n=${n})
      </button>
    </div>
    <p class="muted small">
      The subset becomes a new session and this one is closed. n counts the cells whose centre is
      inside; on the spatial canvas the server also keeps cells whose outline touches the region, so
      the new session can hold a few more.
    </p>
    ${c.busy ? html`<div class="busy" data-testid="subset-busy"><span class="spinner"></span> ${c.busy}</div>` : nothing}
  `;
}
