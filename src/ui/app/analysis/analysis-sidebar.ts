/**
 * `<tessera-analysis-sidebar>`: the left sidebar (client.md 1.1, 3): the Compute and Plots tabs
 * as operation logs with status badges, the detail panel docked to their right (params, timing,
 * library versions, the live then full log; edit a pending step, run it, re-run, edit & rerun,
 * cancel a queued job, delete a pending step; a plot's figure with redraw and downloads), and the
 * footer actions (run all pending, run a function, recipes, load and export a recipe, save). Other
 * tabs (Regions, Annotations, Subset) are given by the frame through `extraTabs`.
 *
 * Every action is one call of the HTTP API; the lists re-render from the session state the frame
 * re-reads on each job event. Rendered in the light DOM, inside the frame's shadow root, so the
 * frame's stylesheet (buttons, pills, modals, fields) applies.
 */
import { html, LitElement, nothing, type PropertyValues, type TemplateResult } from "lit";
import type { HistEntry, PlotEntry } from "../../../sdk/io/checkpoint/app-state.js";
import { ApiError } from "../../http.js";
import type { AppEvent } from "../events.js";
import { type FunctionEntry, fieldErrorsOf } from "../form-model.js";
import type { FormSubmit } from "../function-form.js";
import "../function-picker.js";
import "../function-form.js";
import {
  badgeText,
  cancellable,
  clock,
  deletable,
  drivingJob,
  duration,
  elapsed,
  type HistoryRow,
  isPlot,
} from "./history-model.js";
import { type AppHost, editBlockedReason, onAppEvent, type PanelSessionState, sessionPath } from "./host.js";
import { modal } from "./modal.js";
import { formatMb } from "./save-model.js";
import "./plots-view.js";
import "./recipes-dialog.js";
import "./save-dialog.js";

/** A tab the frame adds to the sidebar (Regions, Annotations, Subset). */
export interface SidebarTab {
  id: string;
  label: string;
  render: () => unknown;
}

/** The function dialog: a new call (picker) or a form prefilled from a step. */
type FnDialog =
  | { kind: "pick"; kinds: string[] }
  | { kind: "edit"; row: HistoryRow }
  | { kind: "rerun"; row: HistoryRow };

const COMPUTE_KINDS = ["compute", "extract"];
const PLOT_KINDS = ["plot"];

/** The sidebar element. */
export class TesseraAnalysisSidebar extends LitElement {
  static override properties = {
    app: { attribute: false },
    state: { attribute: false },
    extraTabs: { attribute: false },
    tab: { state: true },
    selected: { state: true },
    fnDialog: { state: true },
    functions: { state: true },
    fnErrors: { state: true },
    logs: { state: true },
    fullLogs: { state: true },
    now: { state: true },
    dialog: { state: true },
    expanded: { state: true },
  };

  declare app: AppHost | null;
  /** The session state (passed so a new state re-renders the lists). */
  declare state: PanelSessionState | null;
  declare extraTabs: SidebarTab[];
  declare tab: string;
  /** Id of the row whose detail panel is open. */
  declare selected: string | null;
  declare fnDialog: FnDialog | null;
  declare functions: FunctionEntry[];
  declare fnErrors: Record<string, string>;
  /** Live log buffers of running jobs (from `job.log`), by job id. */
  declare logs: Record<string, string>;
  /** Full logs fetched once a job has finished, by entry id. */
  declare fullLogs: Record<string, string>;
  declare now: number;
  declare dialog: null | "recipes" | "save";
  /** The plot shown fullscreen (the detail panel's Expand). */
  declare expanded: string | null;

  /** The redraw job last seen driving each plot (its live and full log are the job's). */
  private plotJobs: Record<string, string> = {};
  private unsubscribe: (() => void) | null = null;
  private ticker: ReturnType<typeof setInterval> | null = null;
  /** Esc closes the topmost thing: a dialog, else the detail panel. */
  private onKey = (e: KeyboardEvent) => {
    if (e.key !== "Escape") return;
    if (this.fnDialog) this.fnDialog = null;
    else if (this.dialog) this.dialog = null;
    else this.selected = null;
  };

  constructor() {
    super();
    this.app = null;
    this.state = null;
    this.extraTabs = [];
    this.tab = "compute";
    this.selected = null;
    this.fnDialog = null;
    this.functions = [];
    this.fnErrors = {};
    this.logs = {};
    this.fullLogs = {};
    this.now = Date.now();
    this.dialog = null;
    this.expanded = null;
  }

  protected override createRenderRoot(): HTMLElement {
    return this;
  }

  override connectedCallback(): void {
    super.connectedCallback();
    window.addEventListener("keydown", this.onKey);
    // The running badge shows the elapsed time.
    this.ticker = setInterval(() => {
      if (this.rows().some((r) => r.status === "running")) this.now = Date.now();
    }, 1000);
  }

  override disconnectedCallback(): void {
    super.disconnectedCallback();
    window.removeEventListener("keydown", this.onKey);
    if (this.ticker) clearInterval(this.ticker);
    this.unsubscribe?.();
    this.unsubscribe = null;
  }

  protected override updated(changed: PropertyValues): void {
    if (changed.has("app")) {
      this.unsubscribe?.();
      this.unsubscribe = this.app ? onAppEvent(this.app, (e) => this.onEvent(e)) : null;
    }
    if (changed.has("state")) {
      const prev = changed.get("state") as PanelSessionState | null | undefined;
      if (prev && this.state && prev.summary.id !== this.state.summary.id) {
        this.selected = null;
        this.fullLogs = {};
        this.plotJobs = {};
      }
      for (const p of this.state?.app_state.plots ?? []) {
        const jid = drivingJob(p, this.state?.queue ?? []);
        if (jid && this.plotJobs[p.id] !== jid) {
          this.plotJobs = { ...this.plotJobs, [p.id]: jid };
          // A new draw: the last one's full log is not this one's.
          const { [p.id]: _old, ...rest } = this.fullLogs;
          this.fullLogs = rest;
        }
      }
      // The open entry finished meanwhile: its full log replaces the live buffer.
      const sel = this.selected ? this.findRow(this.selected) : undefined;
      if (sel) void this.fullLog(sel);
    }
  }

  private onEvent(e: AppEvent): void {
    const d = e.data as { session_id?: string; job_id?: string; chunk?: string };
    if (!this.app || d.session_id !== this.app.currentId || !d.job_id) return;
    const jid = d.job_id;
    if (e.event === "job.log") this.logs = { ...this.logs, [jid]: (this.logs[jid] ?? "") + (d.chunk ?? "") };
    else if (e.event === "job.completed" || e.event === "job.failed" || e.event === "job.cancelled") {
      // The buffer goes; the full log is fetched once the entry is shown.
      const { [jid]: _gone, ...rest } = this.logs;
      this.logs = rest;
      const { [jid]: _stale, ...full } = this.fullLogs;
      for (const [plot, job] of Object.entries(this.plotJobs)) if (job === jid) delete full[plot];
      this.fullLogs = full;
    }
  }

  private findRow(id: string): HistoryRow | undefined {
    const a = this.state?.app_state;
    return [...(a?.compute_history ?? []), ...(a?.plots ?? [])].find((r) => r.id === id);
  }

  private rows(): HistoryRow[] {
    const a = this.state?.app_state;
    if (!a) return [];
    return this.tab === "plots" ? a.plots : a.compute_history;
  }

  private get sid(): string | null {
    return this.app?.currentId ?? null;
  }

  /** One API call; errors become a toast. Returns whether it succeeded. */
  private async call(path: string, init: RequestInit & { json?: unknown }, what: string): Promise<boolean> {
    const app = this.app;
    if (!app) return false;
    try {
      await app.api.fetch(path, init);
      return true;
    } catch (e) {
      app.toast("error", `${what}: ${(e as Error).message}`);
      return false;
    }
  }

  private async loadFunctions(): Promise<void> {
    if (this.functions.length || !this.app) return;
    try {
      this.functions = (await this.app.api.json<{ functions: FunctionEntry[] }>("/api/functions")).functions;
    } catch (e) {
      this.app.toast("error", `Could not list the functions: ${(e as Error).message}`);
    }
  }

  private async openFn(d: FnDialog): Promise<void> {
    this.fnErrors = {};
    this.fnDialog = d;
    await this.loadFunctions();
  }

  private async fullLog(row: HistoryRow): Promise<void> {
    const sid = this.sid;
    if (!sid || !this.app || this.fullLogs[row.id] !== undefined || this.app.mode === "serverless") return;
    if (["pending", "queued", "running"].includes(row.status)) return;
    const own = (row as HistEntry).log;
    if (typeof own === "string" && own) {
      this.fullLogs = { ...this.fullLogs, [row.id]: own };
      return;
    }
    try {
      const job = this.plotJobs[row.id] ?? row.id;
      const r = await this.app.api.json<{ log: string }>(
        sessionPath(sid, `/jobs/${encodeURIComponent(job)}/log`),
      );
      this.fullLogs = { ...this.fullLogs, [row.id]: r.log };
    } catch {
      // A step of a loaded checkpoint has no job in this server; its log is what the entry kept.
      this.fullLogs = { ...this.fullLogs, [row.id]: "" };
    }
  }

  // ------------------------------------------------------------------------------------ actions

  private async runAllPending(): Promise<void> {
    const sid = this.sid;
    if (sid) await this.call(sessionPath(sid, "/pending/run-all"), { method: "POST" }, "Run all pending");
  }

  private async runPending(row: HistoryRow): Promise<void> {
    const sid = this.sid;
    if (sid)
      await this.call(
        sessionPath(sid, `/pending/${encodeURIComponent(row.id)}/run`),
        { method: "POST" },
        `Run ${row.function}`,
      );
  }

  private async rerun(row: HistoryRow): Promise<void> {
    const sid = this.sid;
    if (!sid) return;
    await this.call(
      sessionPath(sid, "/jobs"),
      { method: "POST", json: { namespace: row.namespace, function: row.function, params: row.params } },
      `Re-run ${row.function}`,
    );
  }

  private async redraw(row: PlotEntry): Promise<void> {
    const sid = this.sid;
    if (sid)
      await this.call(
        sessionPath(sid, `/plots/${encodeURIComponent(row.id)}/redraw`),
        { method: "POST" },
        `Redraw ${row.function}`,
      );
  }

  private async cancel(row: HistoryRow): Promise<void> {
    const sid = this.sid;
    if (sid)
      await this.call(
        sessionPath(sid, `/jobs/${encodeURIComponent(row.id)}`),
        { method: "DELETE" },
        `Cancel ${row.function}`,
      );
  }

  private async deleteRow(row: HistoryRow): Promise<void> {
    const sid = this.sid;
    if (!sid) return;
    const ok = await this.call(
      sessionPath(sid, `/history/${encodeURIComponent(row.id)}`),
      { method: "DELETE" },
      `Delete ${row.function}`,
    );
    if (ok && this.selected === row.id) this.selected = null;
    // Deleting a pending step emits no job event: ask the frame to read the state again.
    if (ok) this.dispatchEvent(new CustomEvent("state-stale", { bubbles: true, composed: true }));
  }

  /** A form's Run/Stage: a new call, a re-run with edited params, or a pending step's edit. */
  private async submitForm(d: FormSubmit): Promise<void> {
    const sid = this.sid;
    const app = this.app;
    const dlg = this.fnDialog;
    if (!sid || !app || !dlg) return;
    this.fnErrors = {};
    try {
      if (dlg.kind === "edit") {
        const step = encodeURIComponent(dlg.row.id);
        await app.api.fetch(sessionPath(sid, `/pending/${step}`), {
          method: "PUT",
          json: { params: d.params },
        });
        // The form's "Save & run" is its Run button; "Save" (its Stage button) keeps the step pending.
        if (!d.stage) await app.api.fetch(sessionPath(sid, `/pending/${step}/run`), { method: "POST" });
      } else {
        const r = await app.api.json<{ status: string; result?: unknown; error?: string | null }>(
          sessionPath(sid, d.stage ? "/jobs/stage" : "/jobs"),
          {
            method: "POST",
            json: { namespace: d.entry.namespace, function: d.entry.function, params: d.params },
          },
        );
        // A queued or staged step shows in the list; an extract answers at once with its value.
        if (!d.stage && r.status !== "queued")
          app.toast(
            r.error ? "error" : "info",
            `${d.entry.key}: ${r.error ?? JSON.stringify(r.result ?? r.status).slice(0, 400)}`,
          );
      }
      this.fnDialog = null;
      this.dispatchEvent(new CustomEvent("state-stale", { bubbles: true, composed: true }));
    } catch (e) {
      const msg = (e as Error).message;
      if (e instanceof ApiError && e.status === 400) this.fnErrors = fieldErrorsOf(d.entry, msg);
      else app.toast("error", `${d.entry.key}: ${msg}`);
    }
  }

  /** Export the session's history as a recipe file (`GET …/recipe`). */
  private async exportRecipe(): Promise<void> {
    const sid = this.sid;
    const app = this.app;
    if (!sid || !app) return;
    try {
      const recipe = await app.api.json<{ meta?: { name?: string } }>(sessionPath(sid, "/recipe"));
      const text = JSON.stringify(recipe, null, 2);
      const a = document.createElement("a");
      a.download = `${(recipe.meta?.name ?? "recipe").replace(/[^\w.-]+/g, "_")}.json`;
      a.href = URL.createObjectURL(new Blob([text], { type: "application/json" }));
      a.dataset.testid = "recipe-export-link";
      a.click();
      setTimeout(() => URL.revokeObjectURL(a.href), 30_000);
      app.toast("info", `Exported ${a.download} (${text.length.toLocaleString()} bytes).`);
    } catch (e) {
      app.toast("error", `Export recipe: ${(e as Error).message}`);
    }
  }

  /** Load a recipe file's steps as pending steps (`POST …/recipe/run` with mode stage). */
  private async loadRecipe(file: File): Promise<void> {
    const sid = this.sid;
    const app = this.app;
    if (!sid || !app) return;
    let recipe: Record<string, unknown>;
    try {
      recipe = JSON.parse(await file.text()) as Record<string, unknown>;
    } catch {
      app.toast("error", `${file.name} is not JSON.`);
      return;
    }
    try {
      const r = await app.api.json<{ staged: number }>(sessionPath(sid, "/recipe/run"), {
        method: "POST",
        json: { ...recipe, mode: "stage" },
      });
      app.toast("info", `${file.name}: ${r.staged} pending step(s) to review.`);
      this.dispatchEvent(new CustomEvent("state-stale", { bubbles: true, composed: true }));
    } catch (e) {
      app.toast("error", `${file.name}: ${(e as Error).message}`);
    }
  }

  // ------------------------------------------------------------------------------------ rendering

  private badge(row: HistoryRow): TemplateResult {
    const running = row.status === "running";
    const since = running && !isPlot(row) ? elapsed(row.started_at, this.now) : "";
    return html`<span class="hbadge hb-${row.status}" data-status=${row.status}>${badgeText(row.status)}${since ? ` ${since}` : ""}</span>`;
  }

  private renderRow(row: HistoryRow, blocked: string | null): TemplateResult {
    const finished = isPlot(row) ? "" : clock(row.finished_at);
    return html`<div
      class="hrow ${this.selected === row.id ? "sel" : ""}"
      data-entry=${row.id}
      data-function=${`${row.namespace}.${row.function}`}
      @click=${() => {
        this.selected = this.selected === row.id ? null : row.id;
        void this.fullLog(row);
      }}
    >
      <span class="hname" title=${`${row.namespace}.${row.function}`}>${row.function}</span>
      ${this.badge(row)}
      <span class="htime">${finished}</span>
      ${
        deletable(row)
          ? html`<button class="hdel" title=${blocked ?? "Delete from history"} aria-label="Delete from history"
              ?disabled=${!!blocked}
              @click=${(e: Event) => {
                e.stopPropagation();
                void this.deleteRow(row);
              }}>✕</button>`
          : nothing
      }
    </div>`;
  }

  private renderLists(blocked: string | null): TemplateResult {
    const rows = this.rows();
    const plots = this.tab === "plots";
    const all = [...(this.state?.app_state.compute_history ?? []), ...(this.state?.app_state.plots ?? [])];
    const pending = all.filter((r) => r.status === "pending").length;
    return html`<div class="hlist" data-testid=${plots ? "plot-history" : "compute-history"}>
        ${rows.length ? rows.map((r) => this.renderRow(r, blocked)) : html`<div class="muted">${plots ? "No plots yet." : "No analysis steps yet."}</div>`}
      </div>
      ${this.app?.mode === "serverless" ? nothing : this.renderFooter(blocked, plots, pending)}`;
  }

  private renderFooter(blocked: string | null, plots: boolean, pending: number): TemplateResult {
    return html`<div class="hfoot">
        ${
          pending
            ? html`<button data-testid="run-all-pending" ?disabled=${!!blocked} title=${blocked ?? "Queue every pending step"}
                @click=${() => this.runAllPending()}>Run all pending (${pending})</button>`
            : nothing
        }
        <button data-tour="run-function" data-testid="run-function"
          @click=${() => this.openFn({ kind: "pick", kinds: plots ? PLOT_KINDS : COMPUTE_KINDS })}>
          ${plots ? "+ Add plot function" : "+ Run function"}</button>
        <button data-testid="browse-recipes" @click=${() => {
          this.dialog = "recipes";
        }}>Browse recipes</button>
        <label class="filebtn" title=${blocked ?? "Import a recipe file's steps as pending steps"}>
          Load recipe
          <input type="file" accept=".json,application/json" data-testid="load-recipe" ?disabled=${!!blocked}
            @change=${(e: Event) => {
              const input = e.target as HTMLInputElement;
              const f = input.files?.[0];
              if (f)
                void this.loadRecipe(f).finally(() => {
                  input.value = "";
                });
            }} />
        </label>
        <button data-testid="export-recipe" @click=${() => this.exportRecipe()}>Export recipe</button>
      </div>`;
  }

  private renderDetail(row: HistoryRow, blocked: string | null): TemplateResult {
    const sid = this.sid!;
    // A compute step's job has its id; a plot's draw is the job last seen driving it.
    const liveJob = this.logs[row.id] !== undefined ? row.id : this.plotJobs[row.id];
    const live = liveJob !== undefined ? this.logs[liveJob] : undefined;
    const log = live ?? this.fullLogs[row.id] ?? (row as HistEntry).log ?? "";
    const plot = isPlot(row) ? row : null;
    const step = plot ? null : (row as HistEntry);
    const figs = plot ? (this.state?.figures[plot.id] ?? {}) : {};
    const fmts = (["svg", "png", "pdf"] as const).filter((f) => figs[f]);
    const figUrl = (fmt: string) =>
      this.app!.api.url(
        sessionPath(sid, `/plots/${encodeURIComponent(row.id)}/figure?fmt=${fmt}&v=${figs[fmt] ?? 0}`),
      );
    const act = (label: string, testid: string, fn: () => void, title?: string) =>
      html`<button data-action=${testid} ?disabled=${!!blocked} title=${blocked ?? title ?? label} @click=${fn}>${label}</button>`;
    return html`<section class="hdetail" data-testid="history-detail" data-entry=${row.id}>
      <div class="hd-head">
        <b>${row.namespace}.${row.function}</b> ${this.badge(row)}
        <span style="flex:1"></span>
        <button title="Close (Esc)" @click=${() => {
          this.selected = null;
        }}>✕</button>
      </div>
      ${
        plot
          ? html`${
              plot.status === "drawn" && fmts.length
                ? html`<div class="plate"><img data-testid="detail-figure" alt=${plot.function}
                    src=${figUrl(fmts.includes("svg") ? "svg" : "png")} /></div>
                  <div class="hd-actions">
                    <button data-action="expand" @click=${() => {
                      this.expanded = plot.id;
                    }}>Expand</button>
                    ${fmts.map((f) => html`<a class="dl" data-download=${f} href=${figUrl(f)} download=${`${plot.function}.${f}`}>${f.toUpperCase()}</a>`)}
                  </div>`
                : nothing
            }
            ${plot.status === "pending" ? html`<p class="muted">Staged: run it to draw the figure.</p>` : nothing}
            ${plot.status === "invalidated" ? html`<p class="muted" data-testid="invalidated-note">A field this plot read has changed since it was drawn; redraw it.</p>` : nothing}
            ${plot.status === "drawn" && !fmts.length ? html`<p class="muted">The checkpoint was saved without figures; redraw to see it.</p>` : nothing}`
          : nothing
      }
      <div class="hd-section">Parameters</div>
      <pre class="params" data-testid="detail-params">${JSON.stringify(row.params, null, 2)}</pre>
      ${
        step
          ? html`<div class="hd-grid">
              <span class="muted">Started</span><span>${clock(step.started_at) || "—"}</span>
              <span class="muted">Finished</span><span>${clock(step.finished_at) || "—"}</span>
              <span class="muted">Took</span><span data-testid="detail-duration">${duration(step.started_at, step.finished_at) || (step.status === "running" ? elapsed(step.started_at, this.now) : "—")}</span>
            </div>
            ${
              Object.keys(step.structural_diff ?? {}).length
                ? html`<div class="hd-section">Wrote</div>
                    <div>${Object.entries(step.structural_diff).map(([slot, keys]) => html`<div><span class="muted">${slot}</span> ${keys.join(", ")}</div>`)}</div>`
                : nothing
            }
            ${step.error ? html`<div class="err" data-testid="detail-error">${step.error}</div>` : nothing}`
          : nothing
      }
      ${
        Object.keys(row.library_versions ?? {}).length
          ? html`<div class="hd-section">Library versions</div>
              <div data-testid="detail-versions">${Object.entries(row.library_versions).map(([k, v]) => html`<div><span class="muted">${k}</span> ${v}</div>`)}</div>`
          : nothing
      }
      <div class="hd-actions">
        ${
          row.status === "pending"
            ? html`${act("Edit params", "edit-params", () => this.openFn({ kind: "edit", row }))}
                ${act("Run", "run-step", () => this.runPending(row))}`
            : nothing
        }
        ${cancellable(row) ? act("Cancel", "cancel-job", () => this.cancel(row), "Cancel this queued job") : nothing}
        ${
          plot && ["invalidated", "failed", "drawn"].includes(plot.status)
            ? act("Redraw", "redraw", () => this.redraw(plot))
            : nothing
        }
        ${
          ["completed", "failed", "cancelled", "drawn", "invalidated"].includes(row.status)
            ? html`${act("Re-run", "rerun", () => this.rerun(row), "Run again with the same params (a new step)")}
                ${act("Edit & rerun", "edit-rerun", () => this.openFn({ kind: "rerun", row }))}`
            : nothing
        }
        ${deletable(row) ? act("Delete", "delete", () => this.deleteRow(row), "Delete from history") : nothing}
      </div>
      <div class="hd-section">Log ${live !== undefined ? html`<span class="pulse" data-testid="live-log">live</span>` : nothing}</div>
      <pre class="log" data-testid="detail-log">${log || (row.status === "pending" ? "Not run yet." : row.status === "queued" ? "Waiting in the queue…" : "(empty)")}</pre>
    </section>`;
  }

  private renderFnDialog(blocked: string | null): TemplateResult | typeof nothing {
    const d = this.fnDialog;
    if (!d) return nothing;
    const close = () => {
      this.fnDialog = null;
    };
    const fields = this.state?.fields ?? null;
    const searchVarNames = (q: string) =>
      this.app && this.sid
        ? this.app.api
            .json<{ names: string[] }>(
              sessionPath(this.sid, `/var-names?q=${encodeURIComponent(q)}&limit=20`),
            )
            .then((r) => r.names)
        : Promise.resolve([]);
    const loadCategories = async (column: string) => {
      if (!this.app || !this.sid) return [];
      const r = await this.app.api.json<{ values: { value: unknown }[] }>(
        sessionPath(this.sid, `/obs/${encodeURIComponent(column)}/values`),
      );
      return r.values.map((v) => String(v.value));
    };
    let body: TemplateResult;
    let title: string;
    if (d.kind === "pick") {
      title = "Run a function";
      body = html`<tessera-function-picker
        .functions=${this.functions}
        .kinds=${d.kinds}
        .fields=${fields}
        .errors=${this.fnErrors}
        .disabledReason=${blocked}
        .searchVarNames=${searchVarNames}
        .loadCategories=${loadCategories}
        @function-selected=${() => {
          this.fnErrors = {};
        }}
        @form-submit=${(e: CustomEvent<FormSubmit>) => this.submitForm(e.detail)}
      ></tessera-function-picker>`;
    } else {
      const key = `${d.row.namespace}.${d.row.function}`;
      const entry = this.functions.find((f) => f.key === key) ?? null;
      title = d.kind === "edit" ? `Edit pending step: ${key}` : `Edit & rerun: ${key}`;
      body = entry
        ? html`<tessera-function-form
            .entry=${entry}
            .initial=${d.row.params}
            .labels=${d.kind === "edit" ? { run: "Save & run", stage: "Save" } : null}
            .fields=${fields}
            .errors=${this.fnErrors}
            .disabledReason=${blocked}
            .searchVarNames=${searchVarNames}
            .loadCategories=${loadCategories}
            @form-submit=${(e: CustomEvent<FormSubmit>) => this.submitForm(e.detail)}
          ></tessera-function-form>`
        : html`<p class="muted">${this.functions.length ? `${key} is not in the function registry.` : "Loading…"}</p>`;
    }
    return modal(title, body, close, html`<button @click=${close}>Close</button>`);
  }

  override render(): TemplateResult | typeof nothing {
    const app = this.app;
    const st = this.state;
    if (!app) return nothing;
    const blocked = editBlockedReason(app);
    // The serverless viewer (client.md 17.1): the compute history to read, and the Regions tab
    // labelling into browser-local columns (17.5); nothing else there can change anything.
    const local = app.mode === "serverless";
    const tabs: SidebarTab[] = local
      ? [
          { id: "compute", label: "Compute", render: () => this.renderLists(blocked) },
          ...this.extraTabs.filter((t) => t.id === "regions"),
        ]
      : [
          { id: "compute", label: "Compute", render: () => this.renderLists(blocked) },
          { id: "plots", label: "Plots", render: () => this.renderLists(blocked) },
          ...this.extraTabs,
        ];
    const cur = tabs.find((t) => t.id === this.tab) ?? tabs[0]!;
    const row = this.selected
      ? [...(st?.app_state.compute_history ?? []), ...(st?.app_state.plots ?? [])].find(
          (r) => r.id === this.selected,
        )
      : undefined;
    return html`<style>${SIDEBAR_CSS}</style>
      <aside data-tour="sidebar">
        <div class="stabs" role="tablist">
          ${tabs.map(
            (t) =>
              html`<button role="tab" data-sidebar-tab=${t.id} aria-pressed=${t.id === cur.id} @click=${() => {
                this.tab = t.id;
              }}>${t.label}</button>`,
          )}
        </div>
        ${st ? cur.render() : html`<div class="muted">No session open.</div>`}
        ${
          st && !local
            ? html`<div class="ssession">
                <div>${st.summary.name}</div>
                <div class="muted">${st.summary.status} · ${formatMb(st.summary.resident_mb)} · ${st.summary.saved ? "saved" : "unsaved changes"}</div>
                ${st.summary.error ? html`<div class="err">${st.summary.error}</div>` : nothing}
                <button data-testid="open-save" ?disabled=${!!blocked} title=${blocked ?? "Save the session as a checkpoint"}
                  @click=${() => {
                    this.dialog = "save";
                  }}>Save session…</button>
              </div>`
            : nothing
        }
      </aside>
      ${row && st ? this.renderDetail(row, blocked) : nothing}
      ${this.renderFnDialog(blocked)}
      ${
        this.expanded
          ? html`<tessera-plot-lightbox .app=${app} .state=${st} .plotId=${this.expanded}
              @plot-change=${(e: CustomEvent<string>) => {
                this.expanded = e.detail;
              }}
              @close=${() => {
                this.expanded = null;
              }}></tessera-plot-lightbox>`
          : nothing
      }
      ${
        this.dialog === "recipes"
          ? html`<tessera-recipes-dialog .app=${app} .state=${st} @close=${() => {
              this.dialog = null;
            }}></tessera-recipes-dialog>`
          : nothing
      }
      ${
        this.dialog === "save"
          ? html`<tessera-save-dialog .app=${app} .state=${st} @close=${() => {
              this.dialog = null;
            }}></tessera-save-dialog>`
          : nothing
      }`;
  }
}

const SIDEBAR_CSS = `
tessera-analysis-sidebar { display: flex; min-height: 0; flex: 0 0 auto; }
tessera-analysis-sidebar > aside { display: flex; flex-direction: column; gap: 6px; width: 290px; }
.stabs { display: flex; gap: 1px; margin-bottom: 4px; }
.stabs button { flex: 1 1 auto; border: none; padding: 3px 2px; font-size: 11.5px; white-space: nowrap; }
.stabs button[aria-pressed="true"] { background: var(--accent); color: #fff; }
.hlist { display: flex; flex-direction: column; gap: 1px; }
.hrow { display: flex; align-items: center; gap: 6px; padding: 4px 6px; border-radius: 4px; cursor: pointer; }
.hrow:hover, .hrow.sel { background: rgba(127,127,127,.15); }
.hrow .hname { flex: 1; min-width: 0; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
.hrow .htime { color: var(--muted); font-size: 11px; font-variant-numeric: tabular-nums; }
.hrow .hdel { visibility: hidden; padding: 0 5px; font-size: 11px; }
.hrow:hover .hdel { visibility: visible; }
.hbadge { font-size: 11px; padding: 0 6px; border-radius: 9px; border: 1px solid var(--border); color: var(--muted); white-space: nowrap; }
.hb-pending { border-style: dashed; }
.hb-queued { color: #f0ad4e; border-color: #f0ad4e; }
.hb-running { color: var(--accent); border-color: var(--accent); animation: hpulse 1.2s infinite ease-in-out; }
.hb-completed, .hb-drawn { color: #4caf50; border-color: #4caf50; }
.hb-failed { color: var(--danger); border-color: var(--danger); }
.hb-invalidated { color: #d49b3a; border-color: #d49b3a; font-style: italic; }
.hb-cancelled { text-decoration: line-through; }
@keyframes hpulse { 0%,100% { opacity: .45 } 50% { opacity: 1 } }
.pulse { color: var(--accent); font-size: 11px; animation: hpulse 1.2s infinite ease-in-out; }
.hfoot { display: flex; flex-wrap: wrap; gap: 4px; margin-top: 6px; }
.hfoot button, .filebtn { font-size: 12px; }
.filebtn { border: 1px solid var(--border); border-radius: 5px; padding: 3px 9px; cursor: pointer; }
.filebtn:hover { border-color: var(--accent); }
.filebtn input { display: none; }
.ssession { margin-top: auto; padding-top: 10px; border-top: 1px solid var(--border); display: flex; flex-direction: column; gap: 3px; }
.ssession button { align-self: flex-start; margin-top: 4px; }
.hdetail { width: 340px; flex: 0 0 340px; box-sizing: border-box; border-right: 1px solid var(--border); background: var(--panel); overflow: auto; padding: 8px 10px; }
.hd-head { display: flex; align-items: center; gap: 6px; }
.hd-section { margin: 10px 0 3px; color: var(--muted); font-size: 11px; text-transform: uppercase; letter-spacing: .04em; }
.hd-grid { display: grid; grid-template-columns: auto 1fr; gap: 1px 10px; margin-top: 6px; }
.hd-actions { display: flex; flex-wrap: wrap; gap: 4px; margin-top: 8px; align-items: center; }
pre.params { background: rgba(127,127,127,.1); padding: 6px; border-radius: 4px; font-size: 11px; max-height: 180px; overflow: auto; margin: 0; white-space: pre-wrap; word-break: break-all; }
.plate { background: #fff; border-radius: 4px; padding: 4px; margin-top: 6px; }
.plate img { width: 100%; display: block; }
a.dl { color: var(--accent); font-size: 12px; border: 1px solid var(--border); border-radius: 5px; padding: 2px 7px; text-decoration: none; }
`;

if (!customElements.get("tessera-analysis-sidebar"))
  customElements.define("tessera-analysis-sidebar", TesseraAnalysisSidebar);
