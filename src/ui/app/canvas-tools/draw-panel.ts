/**
 * `<tessera-draw-panel>`: the body of one of the canvas tools' sidebar tabs — Regions, Annotations or
 * Subset (client.md 1.1, 9–11) — over the app's one `DrawController`. The sidebar owns the tab strip;
 * `drawTabs` gives it the three tabs. When this browser may not edit, the panel's first line reads
 * "<Tab> (unavailable — <reason>)" (client.md 12.2; the sidebar's one-line tab strip has no room for
 * it) and the controls stay visible but disabled. Showing a tab's panel arms
 * its tool on the canvases; leaving it (another tab, the sidebar closed) disarms them.
 */
import { css, html, LitElement, nothing, type PropertyValues, type TemplateResult } from "lit";
import { renderAnnotationsPanel } from "./annotations-panel.js";
import type { DrawController, ToolTab } from "./draw-controller.js";
import { renderRegionsPanel } from "./regions-panel.js";
import { spinnerStyles } from "./spinner-style.js";
import { renderSubsetPanel } from "./subset-panel.js";

/** The canvas tools' tabs, in sidebar order. */
export const TOOL_TABS: readonly [ToolTab, string][] = [
  ["regions", "Regions"],
  ["annotations", "Annotations"],
  ["subset", "Subset"],
];

/** A sidebar tab as the sidebar takes it (`extraTabs`). */
export interface ToolSidebarTab {
  id: string;
  label: string;
  render: () => unknown;
}

/**
 * The three tabs for the sidebar. `watch` is passed to the panel so that a change of the app's
 * session state or presence re-renders it.
 */
export function drawTabs(controller: DrawController, watch: unknown): ToolSidebarTab[] {
  // The sidebar's tab strip is one line: the "(unavailable — <reason>)" label is the panel's first line.
  return TOOL_TABS.map(([id, name]) => ({
    id,
    label: name,
    render: () =>
      html`<tessera-draw-panel .controller=${controller} .tab=${id} .watch=${watch}></tessera-draw-panel>`,
  }));
}

/** The panel element. */
export class DrawPanel extends LitElement {
  static override properties = {
    controller: { attribute: false },
    tab: { attribute: false },
    watch: { attribute: false },
  };

  static override styles = [
    spinnerStyles,
    css`
    :host {
      display: block;
      margin-top: 6px;
      font-size: 12.5px;
    }
    button {
      font: inherit;
      color: inherit;
      background: transparent;
      border: 1px solid var(--border, #2c3038);
      border-radius: 5px;
      padding: 3px 8px;
      cursor: pointer;
    }
    button:hover:not([disabled]) {
      border-color: var(--accent, #4c9ffe);
    }
    button[aria-pressed="true"],
    button.primary {
      background: var(--accent, #4c9ffe);
      border-color: var(--accent, #4c9ffe);
      color: #fff;
    }
    button[disabled] {
      opacity: 0.5;
      cursor: default;
    }
    button.danger {
      border-color: var(--danger, #ff6b6b);
      color: var(--danger, #ff6b6b);
    }
    button.wide {
      width: 100%;
      margin-top: 6px;
    }
    button.link {
      border: none;
      padding: 0 4px;
      color: var(--accent, #4c9ffe);
      text-decoration: underline;
    }
    .note {
      border: 1px solid var(--border, #2c3038);
      border-left: 3px solid var(--danger, #ff6b6b);
      padding: 5px 8px;
      border-radius: 4px;
      margin-bottom: 8px;
      color: var(--muted, #9aa0a6);
    }
    label {
      display: block;
      margin: 8px 0 2px;
      font-size: 11px;
      color: var(--muted, #9aa0a6);
    }
    label.check {
      display: flex;
      gap: 6px;
      align-items: center;
      color: inherit;
      font-size: 12px;
    }
    input[type="text"],
    input[type="number"] {
      width: 100%;
      box-sizing: border-box;
      font: inherit;
      background: rgba(127, 127, 127, 0.12);
      color: inherit;
      border: 1px solid var(--border, #2c3038);
      border-radius: 4px;
      padding: 3px 6px;
    }
    input[type="range"] {
      width: 100%;
    }
    input[type="color"] {
      width: 28px;
      height: 20px;
      padding: 0;
      border: none;
      background: none;
    }
    .row {
      display: flex;
      gap: 5px;
      align-items: center;
      flex-wrap: wrap;
      margin-top: 8px;
    }
    .col {
      display: flex;
      flex-direction: column;
    }
    .tools {
      display: flex;
      flex-wrap: wrap;
      gap: 3px;
    }
    .swatch-row {
      display: flex;
      gap: 4px;
      align-items: center;
      flex-wrap: wrap;
    }
    .swatch {
      width: 16px;
      height: 16px;
      border-radius: 3px;
      cursor: pointer;
      box-sizing: border-box;
    }
    .swatch.on {
      outline: 2px solid var(--fg, #fff);
      outline-offset: 1px;
    }
    .muted {
      color: var(--muted, #9aa0a6);
    }
    .small {
      font-size: 11px;
    }
    .section {
      margin-top: 14px;
      border-top: 1px solid var(--border, #2c3038);
      padding-top: 8px;
    }
    .rset {
      margin: 6px 0;
    }
    .rset-name {
      font-weight: 600;
    }
    .rcat,
    .shape-row {
      display: flex;
      align-items: center;
      gap: 6px;
      padding: 2px 4px;
      border-radius: 3px;
      cursor: pointer;
    }
    .rcat:hover,
    .shape-row:hover,
    .shape-row.on {
      background: rgba(127, 127, 127, 0.18);
    }
    .rcat.dim {
      opacity: 0.45;
    }
    .dot {
      width: 10px;
      height: 10px;
      border-radius: 50%;
      flex: none;
    }
    .count {
      margin-left: auto;
      color: var(--muted, #9aa0a6);
    }
    .busy {
      margin-top: 10px;
      padding: 8px;
      border: 1px solid var(--accent, #4c9ffe);
      border-radius: 6px;
    }
  `,
  ];

  declare controller: DrawController | null;
  /** Which tab's body this is. */
  declare tab: ToolTab;
  /** Anything of the app's that should re-render this (its session state, presence): compared by identity. */
  declare watch: unknown;
  private readonly onChange = () => this.requestUpdate();

  constructor() {
    super();
    this.controller = null;
    this.tab = "regions";
  }

  override connectedCallback(): void {
    super.connectedCallback();
    this.controller?.addEventListener("change", this.onChange);
  }

  override disconnectedCallback(): void {
    super.disconnectedCallback();
    this.controller?.removeEventListener("change", this.onChange);
    // The tab is no longer shown: its tool is disarmed.
    const c = this.controller;
    if (c?.tab === this.tab) queueMicrotask(() => !this.isConnected && c.tab === this.tab && c.openTab(null));
  }

  override willUpdate(changed: PropertyValues<this>): void {
    if (changed.has("controller")) {
      (changed.get("controller") as DrawController | null | undefined)?.removeEventListener(
        "change",
        this.onChange,
      );
      if (this.isConnected) this.controller?.addEventListener("change", this.onChange);
    }
    if ((changed.has("tab") || changed.has("controller")) && this.controller?.tab !== this.tab) {
      const c = this.controller;
      const t = this.tab;
      // Not during this update: the controller's change re-renders this element.
      queueMicrotask(() => c?.openTab(t));
    }
  }

  override render(): TemplateResult {
    const c = this.controller;
    if (!c) return html``;
    const ro = c.tabReadOnlyReason;
    return html`${
      ro
        ? html`<div class="note" data-testid="unavailable">
          ${TOOL_TABS.find(([t]) => t === this.tab)?.[1]} (unavailable — ${ro}). You can look, not change.
        </div>`
        : nothing
    }
      ${this.tab === "regions" ? renderRegionsPanel(c) : this.tab === "annotations" ? renderAnnotationsPanel(c) : renderSubsetPanel(c)}`;
  }
}

if (!customElements.get("tessera-draw-panel")) customElements.define("tessera-draw-panel", DrawPanel);

declare global {
  interface HTMLElementTagNameMap {
    "tessera-draw-panel": DrawPanel;
  }
}
