/**
 * `<tessera-save-dialog>`: the save checkpoint dialog (client.md 13). The session name stored in the
 * file, the destination folder under the data dir with a browser over `GET /api/fs/browse`, the
 * filename prefix and the preview of the written path; the element checklist grouped as Tables /
 * Images / Labels / Points / Shapes / Plot figures with each item's size, a resolution slider per
 * image, a table's slots (required ones locked), and the running total. Save posts `POST …/save`
 * (a queued job; the frame's overlay shows it) and closes. Fires `close`.
 */
import { html, LitElement, nothing, type TemplateResult } from "lit";
import type { DisplaySpec } from "../../../sdk/io/checkpoint/app-state.js";
import { type AppHost, editBlockedReason, type PanelSessionState, sessionPath } from "./host.js";
import { modal } from "./modal.js";
import {
  displayedObsmSlots,
  FACETS,
  type Facet,
  fileNamePreview,
  formatMb,
  fullSelection,
  imageCost,
  prefixProblem,
  runningTotal,
  type SaveSelection,
  type SizedInventory,
  saveBody,
  tableCost,
} from "./save-model.js";

const LABELS: Record<Facet, string> = {
  tables: "Tables",
  images: "Images",
  labels: "Labels",
  points: "Points",
  shapes: "Shapes",
};

/** The dialog element. */
export class TesseraSaveDialog extends LitElement {
  static override properties = {
    app: { attribute: false },
    state: { attribute: false },
    inv: { state: true },
    sel: { state: true },
    name: { state: true },
    folder: { state: true },
    prefix: { state: true },
    browse: { state: true },
    error: { state: true },
    busy: { state: true },
  };

  declare app: AppHost | null;
  declare state: PanelSessionState | null;
  declare inv: SizedInventory | null;
  declare sel: SaveSelection;
  declare name: string;
  declare folder: string;
  declare prefix: string;
  declare browse: {
    path: string;
    parent: string | null;
    entries: { name: string; path: string; kind: string }[];
  } | null;
  declare error: string | null;
  declare busy: boolean;

  constructor() {
    super();
    this.app = null;
    this.state = null;
    this.inv = null;
    this.sel = fullSelection();
    this.name = "";
    this.folder = "";
    this.prefix = "";
    this.browse = null;
    this.error = null;
    this.busy = false;
  }

  protected override createRenderRoot(): HTMLElement {
    return this;
  }

  override connectedCallback(): void {
    super.connectedCallback();
    const n = this.state?.summary.name ?? "";
    this.name = n;
    this.prefix = n.replace(/[/\\]/g, "_").replace(/^\.+/, "");
    void this.load();
  }

  /** obsm slots of the active table a display draws from (locked in the checklist). */
  private drawn = new Set<string>();

  private async load(): Promise<void> {
    const sid = this.app?.currentId;
    if (!sid || !this.app) return;
    try {
      const [inv, st] = await Promise.all([
        this.app.api.json<SizedInventory>(sessionPath(sid, "/elements?sizes=1")),
        // The displays as the server holds them now (display edits do not re-read the session state).
        this.app.api.json<{ app_state: { displays: DisplaySpec[] } }>(sessionPath(sid)),
      ]);
      this.drawn = displayedObsmSlots(st.app_state.displays);
      this.inv = inv;
    } catch (e) {
      this.error = `Could not list the elements: ${(e as Error).message}`;
    }
  }

  private async browseTo(path?: string): Promise<void> {
    if (!this.app) return;
    try {
      this.browse = await this.app.api.json(
        `/api/fs/browse${path ? `?path=${encodeURIComponent(path)}` : ""}`,
      );
    } catch (e) {
      this.app.toast("error", `Browse: ${(e as Error).message}`);
    }
  }

  /** Figure bytes per drawn plot (all formats). */
  private figureSizes(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const [id, fmts] of Object.entries(this.state?.figures ?? {}))
      out[id] = Object.values(fmts).reduce((a, b) => a + b, 0);
    return out;
  }

  private toggle(f: Facet, name: string, keep: boolean): void {
    const next = new Set(this.sel.dropped[f]);
    if (keep) next.delete(name);
    else next.add(name);
    this.sel = { ...this.sel, dropped: { ...this.sel.dropped, [f]: next } };
  }

  private async save(): Promise<void> {
    const app = this.app;
    const sid = app?.currentId;
    if (!app || !sid || !this.inv) return;
    const body = saveBody(this.inv, Object.keys(this.figureSizes()), this.sel, {
      name: this.name,
      folder: this.folder,
      prefix: this.prefix,
    });
    this.busy = true;
    this.error = null;
    try {
      const r = await app.api.json<{ job_id: string; path: string | null; pattern?: string }>(
        sessionPath(sid, "/save"),
        { method: "POST", json: body },
      );
      app.toast("info", `Saving to ${r.path ?? r.pattern ?? "the data folder"}…`);
      this.dispatchEvent(new CustomEvent("state-stale", { bubbles: true, composed: true }));
      this.dispatchEvent(new CustomEvent("close"));
    } catch (e) {
      this.error = (e as Error).message;
    } finally {
      this.busy = false;
    }
  }

  private renderItem(f: Facet, e: { name: string; size_mb?: number | null }): TemplateResult {
    const inv = this.inv!;
    const dropped = this.sel.dropped[f].has(e.name);
    const table = f === "tables" ? inv.tables.find((t) => t.name === e.name) : undefined;
    const image = f === "images" ? inv.images.find((i) => i.name === e.name) : undefined;
    const locked = table?.active === true;
    const size =
      image !== undefined
        ? imageCost(image, this.sel.levels[e.name] ?? 0)
        : table !== undefined
          ? tableCost(table, this.sel.droppedSlots[e.name])
          : (e.size_mb ?? null);
    return html`<div class="sitem" data-save-item=${`${f}:${e.name}`}>
      <label>
        <input type="checkbox" .checked=${!dropped} ?disabled=${locked}
          title=${locked ? "The active table cannot be dropped" : ""}
          @change=${(ev: Event) => this.toggle(f, e.name, (ev.target as HTMLInputElement).checked)} />
        ${e.name}${locked ? html` <span class="muted">(active)</span>` : nothing}
      </label>
      <span class="ssize" data-size>${formatMb(size)}</span>
      ${image && image.levels.length > 1 && !dropped ? this.renderLevels(image) : nothing}
      ${table?.slots && !dropped ? this.renderSlots(table) : nothing}
    </div>`;
  }

  private renderLevels(img: SizedInventory["images"][number]): TemplateResult {
    const cur = this.sel.levels[img.name] ?? 0;
    const l = img.levels[cur] ?? img.levels[0]!;
    const top = img.levels.length - 1;
    return html`<div class="slevels">
      <input type="range" min="0" max=${top} step="1" .value=${String(top - cur)}
        data-levels=${img.name} title="Finest level written (right: full resolution)"
        @input=${(ev: Event) => {
          // Right is the finest level (0): the slider reads as resolution, not as level index.
          const v = top - Number((ev.target as HTMLInputElement).value);
          this.sel = { ...this.sel, levels: { ...this.sel.levels, [img.name]: v } };
        }} />
      <span class="muted" data-level-label>finest ${l.width} × ${l.height} px · ${formatMb(imageCost(img, cur))}</span>
    </div>`;
  }

  private renderSlots(t: SizedInventory["tables"][number]): TemplateResult {
    const drop = this.sel.droppedSlots[t.name] ?? new Set<string>();
    const drawn = t.active ? this.drawn : new Set<string>();
    return html`<details class="sslots"><summary class="muted">Slots (${t.slots!.length - drop.size} of ${t.slots!.length})</summary>
      ${t.slots!.map(
        (s) => html`<label class="sslot" data-slot=${`${t.name}:${s.path}`}>
          <input type="checkbox" .checked=${!drop.has(s.path)} ?disabled=${s.required || drawn.has(s.path)}
            title=${s.required || drawn.has(s.path) ? "Required (obs, var, uns, or an obsm key a display draws)" : ""}
            @change=${(ev: Event) => {
              const next = new Set(drop);
              if ((ev.target as HTMLInputElement).checked) next.delete(s.path);
              else next.add(s.path);
              this.sel = { ...this.sel, droppedSlots: { ...this.sel.droppedSlots, [t.name]: next } };
            }} />
          ${s.path} <span class="muted">${formatMb(s.size_mb)}</span>
        </label>`,
      )}
    </details>`;
  }

  override render(): TemplateResult {
    const close = () => this.dispatchEvent(new CustomEvent("close"));
    const app = this.app;
    const blocked = app ? editBlockedReason(app) : "No session";
    const inv = this.inv;
    const figs = this.figureSizes();
    const plots = this.state?.app_state.plots ?? [];
    const tot = inv ? runningTotal(inv, figs, this.sel) : null;
    const bad = prefixProblem(this.prefix) ?? (this.name.trim() ? null : "The name must not be blank.");
    const reason = blocked ?? bad ?? (this.busy ? "Saving…" : null) ?? (inv ? null : "Loading…");
    const body = html`<style>${CSS}</style>
      <div class="field"><label>Session name (stored in the file)</label>
        <input type="text" data-testid="save-name" .value=${this.name} @input=${(e: Event) => {
          this.name = (e.target as HTMLInputElement).value;
        }} /></div>
      <div class="field"><label>Folder (under the data folder; created if missing)</label>
        <div style="display:flex;gap:6px">
          <input type="text" data-testid="save-folder" placeholder="the data folder" .value=${this.folder} @input=${(
            e: Event,
          ) => {
            this.folder = (e.target as HTMLInputElement).value;
          }} />
          <button data-testid="save-browse" @click=${() => this.browseTo(this.folder || undefined)}>Browse…</button>
        </div>
        ${
          this.browse
            ? html`<div class="list" data-testid="save-browser">
                <div class="muted">${this.browse.path}</div>
                ${this.browse.parent ? html`<div @click=${() => this.browseTo(this.browse!.parent!)}>..</div>` : nothing}
                ${this.browse.entries
                  .filter((en) => en.kind === "dir")
                  .map(
                    (en) =>
                      html`<div data-dir=${en.name} @click=${() => this.browseTo(en.path)}>📁 ${en.name}</div>`,
                  )}
                <div style="display:flex;justify-content:flex-end;gap:6px;padding:4px">
                  <button data-testid="save-browse-choose" @click=${() => {
                    this.folder = this.browse!.path;
                    this.browse = null;
                  }}>Choose this folder</button>
                </div>
              </div>`
            : nothing
        }
      </div>
      <div class="field"><label>File name prefix</label>
        <input type="text" data-testid="save-prefix" .value=${this.prefix} @input=${(e: Event) => {
          this.prefix = (e.target as HTMLInputElement).value;
        }} /></div>
      <div class="muted">Writes <code data-testid="save-preview">${fileNamePreview(this.folder, this.prefix)}</code></div>
      ${bad ? html`<div class="err">${bad}</div>` : nothing}
      <h3 style="margin:12px 0 4px">Contents</h3>
      ${
        inv
          ? html`${FACETS.map((f) =>
              (inv[f] as { name: string }[]).length
                ? html`<div class="sgroup"><div class="sghead">${LABELS[f]}</div>${(inv[f] as { name: string; size_mb?: number | null }[]).map((e) => this.renderItem(f, e))}</div>`
                : nothing,
            )}
            ${
              Object.keys(figs).length
                ? html`<div class="sgroup"><div class="sghead">Plot figures</div>
                    ${Object.entries(figs).map(([id, bytes]) => {
                      const p = plots.find((x) => x.id === id);
                      return html`<div class="sitem" data-save-item=${`figures:${id}`}><label>
                        <input type="checkbox" .checked=${!this.sel.droppedFigures.has(id)} @change=${(
                          ev: Event,
                        ) => {
                          const next = new Set(this.sel.droppedFigures);
                          if ((ev.target as HTMLInputElement).checked) next.delete(id);
                          else next.add(id);
                          this.sel = { ...this.sel, droppedFigures: next };
                        }} /> ${p ? `${p.namespace}.${p.function}` : id}</label>
                        <span class="ssize">${formatMb(bytes / 1048576)}</span></div>`;
                    })}</div>`
                : nothing
            }`
          : html`<div class="muted">${this.error ?? "Reading sizes…"}</div>`
      }
      ${this.error && inv ? html`<div class="err" data-testid="save-error">${this.error}</div>` : nothing}`;
    const foot = html`<span class="muted" data-testid="save-total" style="margin-right:auto">${
      tot ? `${tot.kept} of ${tot.total} items · ${formatMb(tot.mb, tot.unknown)}` : ""
    }</span>
      <button @click=${close}>Cancel</button>
      <button class="primary" data-testid="save-submit" ?disabled=${!!reason} title=${reason ?? "Save as a checkpoint (a queued job)"}
        @click=${() => this.save()}>Save</button>`;
    return modal("Save session", body, close, foot);
  }
}

const CSS = `
.sgroup { margin: 6px 0; }
.sghead { font-size: 11px; text-transform: uppercase; letter-spacing: .04em; color: var(--muted); margin-bottom: 2px; }
.sitem { display: flex; flex-wrap: wrap; align-items: center; gap: 4px 10px; padding: 2px 0; }
.sitem > label { flex: 1; }
.ssize { color: var(--muted); font-variant-numeric: tabular-nums; font-size: 12px; }
.slevels, .sslots { flex-basis: 100%; padding-left: 22px; display: flex; align-items: center; gap: 8px; font-size: 12px; }
.sslots { display: block; }
.sslot { display: block; padding: 1px 0; }
`;

if (!customElements.get("tessera-save-dialog"))
  customElements.define("tessera-save-dialog", TesseraSaveDialog);
