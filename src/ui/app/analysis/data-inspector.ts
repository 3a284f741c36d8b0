/**
 * `<tessera-data-inspector>`: the Tables view (client.md 8). A navigator over the element inventory
 * (`GET …/elements`): the obs and var of every table, shapes (geometry as WKT), points, images
 * (metadata and a server-composited thumbnail) and labels (metadata). A table-like element shows 50
 * rows a page from `GET …/table`. When the session's `data_versions` change the inventory and the
 * page on screen are read again in place (same element, same page).
 */
import { html, LitElement, nothing, type PropertyValues, type TemplateResult } from "lit";
import { type AppHost, type PanelSessionState, sessionPath } from "./host.js";

/** Rows per page (the spec's page size). */
export const PAGE_ROWS = 50;

interface Inventory {
  tables: { name: string; n_obs: number; n_vars: number; active: boolean }[];
  shapes: { name: string; n: number; geometry: string; coordinate_systems: string[] }[];
  points: {
    name: string;
    n: number;
    columns: string[];
    feature_key: string | null;
    coordinate_systems: string[];
  }[];
  images: {
    name: string;
    levels: { level: number; width: number; height: number }[];
    channels: string[];
    dtype: string;
    coordinate_systems: string[];
  }[];
  labels: {
    name: string;
    levels: { level: number; width: number; height: number }[];
    dtype: string;
    coordinate_systems: string[];
  }[];
}

interface TablePage {
  total_rows: number;
  offset: number;
  limit: number;
  index_name: string | null;
  index: unknown[];
  columns: { name: string; dtype: string }[];
  rows: unknown[][];
}

/** What the navigator selected: a table path (`tables:<t>:obs`, `shapes:<s>`, `points:<p>`) or a raster. */
type Pick = { kind: "table"; path: string; label: string } | { kind: "image" | "labels"; name: string };

/** A cell as text (long WKT shortened; the full text is the tooltip). */
function cellText(v: unknown): string {
  if (v === null || v === undefined) return "";
  if (typeof v === "number") return Number.isInteger(v) ? String(v) : v.toPrecision(6).replace(/\.?0+$/, "");
  return typeof v === "object" ? JSON.stringify(v) : String(v);
}

/** The inspector element. */
export class TesseraDataInspector extends LitElement {
  static override properties = {
    app: { attribute: false },
    state: { attribute: false },
    inv: { state: true },
    pick: { state: true },
    page: { state: true },
    offset: { state: true },
    error: { state: true },
  };

  declare app: AppHost | null;
  declare state: PanelSessionState | null;
  declare inv: Inventory | null;
  declare pick: Pick | null;
  declare page: TablePage | null;
  declare offset: number;
  declare error: string | null;

  private versionsKey = "";
  private seq = 0;

  constructor() {
    super();
    this.app = null;
    this.state = null;
    this.inv = null;
    this.pick = null;
    this.page = null;
    this.offset = 0;
    this.error = null;
  }

  protected override createRenderRoot(): HTMLElement {
    return this;
  }

  protected override updated(changed: PropertyValues): void {
    if (!changed.has("state") || !this.state) return;
    const key = `${this.state.summary.id}|${JSON.stringify(this.state.data_versions)}`;
    if (key === this.versionsKey) return;
    const sameSession = this.versionsKey.startsWith(`${this.state.summary.id}|`);
    this.versionsKey = key;
    if (!sameSession) {
      this.pick = null;
      this.page = null;
      this.offset = 0;
    }
    void this.refresh();
  }

  /** Read the inventory and the page on screen again (after a data change). */
  private async refresh(): Promise<void> {
    const app = this.app;
    const sid = app?.currentId;
    if (!app || !sid) return;
    try {
      this.inv = await app.api.json<Inventory>(sessionPath(sid, "/elements"));
      if (!this.pick) {
        const t = this.inv.tables.find((x) => x.active) ?? this.inv.tables[0];
        if (t) this.pick = { kind: "table", path: `tables:${t.name}:obs`, label: `${t.name} · obs` };
      }
      if (this.pick?.kind === "table") await this.loadPage(this.pick.path, this.offset);
    } catch (e) {
      this.error = (e as Error).message;
    }
  }

  private async loadPage(path: string, offset: number): Promise<void> {
    const app = this.app;
    const sid = app?.currentId;
    if (!app || !sid) return;
    const seq = ++this.seq;
    try {
      const page = await app.api.json<TablePage>(
        sessionPath(sid, `/table?path=${encodeURIComponent(path)}&offset=${offset}&limit=${PAGE_ROWS}`),
      );
      if (seq !== this.seq) return;
      // A page past the end (rows went away): back to the last page there is.
      if (page.rows.length === 0 && offset > 0 && page.total_rows > 0) {
        await this.loadPage(path, Math.floor((page.total_rows - 1) / PAGE_ROWS) * PAGE_ROWS);
        return;
      }
      this.page = page;
      this.offset = page.offset;
      this.error = null;
    } catch (e) {
      if (seq !== this.seq) return;
      this.page = null;
      this.error = (e as Error).message;
    }
  }

  private choose(p: Pick): void {
    this.pick = p;
    this.page = null;
    this.offset = 0;
    this.error = null;
    if (p.kind === "table") void this.loadPage(p.path, 0);
  }

  private navItem(p: Pick, label: string, meta: string): TemplateResult {
    const cur = this.pick;
    const on =
      cur !== null &&
      cur.kind === p.kind &&
      (p.kind === "table"
        ? (cur as { path: string }).path === p.path
        : (cur as { name: string }).name === (p as { name: string }).name);
    const id = p.kind === "table" ? p.path : `${p.kind}:${p.name}`;
    return html`<div class="nitem ${on ? "on" : ""}" data-inspect=${id} @click=${() => this.choose(p)}>
      <span>${label}</span><span class="muted">${meta}</span>
    </div>`;
  }

  private renderNav(inv: Inventory): TemplateResult {
    const group = (title: string, items: TemplateResult[]) =>
      items.length ? html`<div class="nhead">${title}</div>${items}` : nothing;
    return html`<nav class="inav" data-testid="inspector-nav">
      ${group(
        "Tables",
        inv.tables.flatMap((t) => [
          this.navItem(
            { kind: "table", path: `tables:${t.name}:obs`, label: `${t.name} · obs` },
            `${t.name} · obs${t.active ? " ★" : ""}`,
            `${t.n_obs.toLocaleString()} rows`,
          ),
          this.navItem(
            { kind: "table", path: `tables:${t.name}:var`, label: `${t.name} · var` },
            `${t.name} · var`,
            `${t.n_vars.toLocaleString()} rows`,
          ),
        ]),
      )}
      ${group(
        "Shapes",
        inv.shapes.map((s) =>
          this.navItem(
            { kind: "table", path: `shapes:${s.name}`, label: s.name },
            s.name,
            `${s.n.toLocaleString()} ${s.geometry}`,
          ),
        ),
      )}
      ${group(
        "Points",
        inv.points.map((s) =>
          this.navItem(
            { kind: "table", path: `points:${s.name}`, label: s.name },
            s.name,
            `${s.n.toLocaleString()} points`,
          ),
        ),
      )}
      ${group(
        "Images",
        inv.images.map((s) =>
          this.navItem(
            { kind: "image", name: s.name },
            s.name,
            `${s.levels[0]?.width ?? "?"} × ${s.levels[0]?.height ?? "?"}`,
          ),
        ),
      )}
      ${group(
        "Labels",
        inv.labels.map((s) =>
          this.navItem(
            { kind: "labels", name: s.name },
            s.name,
            `${s.levels[0]?.width ?? "?"} × ${s.levels[0]?.height ?? "?"}`,
          ),
        ),
      )}
    </nav>`;
  }

  private renderTable(p: TablePage, label: string): TemplateResult {
    const last = Math.min(p.offset + p.rows.length, p.total_rows);
    const pages = Math.max(1, Math.ceil(p.total_rows / PAGE_ROWS));
    const pageNo = Math.floor(p.offset / PAGE_ROWS) + 1;
    const path = (this.pick as { path: string }).path;
    return html`<div class="ihead">
        <b>${label}</b>
        <span class="muted" data-testid="inspector-range">rows ${p.total_rows ? p.offset + 1 : 0}–${last} of ${p.total_rows.toLocaleString()}</span>
        <span style="flex:1"></span>
        <button data-action="prev-page" ?disabled=${p.offset === 0} @click=${() => this.loadPage(path, Math.max(0, p.offset - PAGE_ROWS))}>‹ Prev</button>
        <span class="muted">page ${pageNo} / ${pages}</span>
        <button data-action="next-page" ?disabled=${last >= p.total_rows} @click=${() => this.loadPage(path, p.offset + PAGE_ROWS)}>Next ›</button>
      </div>
      <div class="iscroll">
        <table class="itable" data-testid="inspector-table">
          <thead><tr><th>${p.index_name ?? ""}</th>${p.columns.map((c) => html`<th title=${c.dtype}>${c.name}<div class="dtype">${c.dtype}</div></th>`)}</tr></thead>
          <tbody>${p.rows.map(
            (r, i) =>
              html`<tr><th>${cellText(p.index[i])}</th>${r.map((v) => {
                const t = cellText(v);
                return html`<td title=${t.length > 60 ? t : ""}>${t.length > 60 ? `${t.slice(0, 60)}…` : t}</td>`;
              })}</tr>`,
          )}</tbody>
        </table>
      </div>`;
  }

  private renderRaster(kind: "image" | "labels", name: string, inv: Inventory): TemplateResult {
    const app = this.app!;
    const sid = app.currentId!;
    const img = kind === "image" ? inv.images.find((x) => x.name === name) : undefined;
    const lab = kind === "labels" ? inv.labels.find((x) => x.name === name) : undefined;
    const e = img ?? lab;
    if (!e) return html`<div class="muted">${name} is gone.</div>`;
    return html`<div class="ihead"><b>${name}</b><span class="muted">${kind === "image" ? "image" : "labels"} · ${e.dtype}</span></div>
      <div class="iraster" data-testid="inspector-raster">
        <table class="itable meta">
          <tr><th>Levels</th><td>${e.levels.map((l) => `${l.width} × ${l.height}`).join(", ")}</td></tr>
          ${img ? html`<tr><th>Channels</th><td>${img.channels.join(", ") || "—"}</td></tr>` : nothing}
          <tr><th>Coordinate systems</th><td>${e.coordinate_systems.join(", ")}</td></tr>
        </table>
        ${
          img
            ? html`<img class="ithumb" data-testid="inspector-thumbnail" alt=${`${name} thumbnail`}
                src=${app.api.url(sessionPath(sid, `/image/${encodeURIComponent(name)}/thumbnail?max_px=512`))} />`
            : nothing
        }
      </div>`;
  }

  override render(): TemplateResult | typeof nothing {
    const inv = this.inv;
    const p = this.pick;
    return html`<style>${CSS}</style>
      <div class="inspector" data-testid="data-inspector">
        ${inv ? this.renderNav(inv) : html`<nav class="inav muted">Reading the elements…</nav>`}
        <section class="imain">
          ${this.error ? html`<div class="err">${this.error}</div>` : nothing}
          ${
            p?.kind === "table"
              ? this.page
                ? this.renderTable(this.page, p.label)
                : html`<div class="muted">Loading…</div>`
              : p && inv
                ? this.renderRaster(p.kind, p.name, inv)
                : html`<div class="muted">Choose an element.</div>`
          }
        </section>
      </div>`;
  }
}

const CSS = `
tessera-data-inspector { position: absolute; inset: 0; }
.inspector { position: absolute; inset: 0; display: flex; padding-top: 48px; box-sizing: border-box; }
.inav { width: 230px; flex: 0 0 230px; overflow: auto; border-right: 1px solid var(--border); padding: 6px; box-sizing: border-box; }
.nhead { font-size: 11px; text-transform: uppercase; letter-spacing: .04em; color: var(--muted); margin: 8px 4px 2px; }
.nitem { display: flex; justify-content: space-between; gap: 6px; padding: 3px 6px; border-radius: 4px; cursor: pointer; font-size: 12px; }
.nitem:hover, .nitem.on { background: rgba(127,127,127,.15); }
.nitem.on { box-shadow: inset 2px 0 0 var(--accent); }
.imain { flex: 1; min-width: 0; display: flex; flex-direction: column; padding: 6px 10px; box-sizing: border-box; }
.ihead { display: flex; align-items: center; gap: 10px; padding: 4px 0 8px; }
.iscroll { flex: 1; overflow: auto; border: 1px solid var(--border); border-radius: 4px; }
.itable { border-collapse: collapse; font-size: 12px; font-variant-numeric: tabular-nums; }
.itable th, .itable td { border-bottom: 1px solid var(--border); padding: 3px 8px; text-align: left; white-space: nowrap; }
.itable thead th { position: sticky; top: 0; background: var(--panel); z-index: 1; }
.itable tbody th { color: var(--muted); font-weight: normal; }
.dtype { font-size: 10px; color: var(--muted); font-weight: normal; }
.iraster { display: flex; gap: 16px; align-items: flex-start; flex-wrap: wrap; }
.ithumb { max-width: 512px; max-height: 60vh; border: 1px solid var(--border); background: #000; }
`;

if (!customElements.get("tessera-data-inspector"))
  customElements.define("tessera-data-inspector", TesseraDataInspector);
