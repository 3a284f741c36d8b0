/**
 * `<tessera-recipes-dialog>`: the recipe gallery (client.md 4). A searchable list of the server's
 * catalog (`GET /api/recipes`); the chosen recipe shows its description, readme and provenance, its
 * parameter form (the same generated form as a function's, built from the recipe's params), and the
 * preflight checklist the server computes for the current values (`POST …/recipe/preflight`): an
 * unknown function blocks the recipe, a key no earlier step produces is only a warning. **Run**
 * queues every step, **Stage** adds them as pending steps (`POST …/recipe/run`). Fires `close`.
 */
import { html, LitElement, nothing, type TemplateResult } from "lit";
import type { FormSubmit } from "../function-form.js";
import "../function-form.js";
import { type AppHost, editBlockedReason, type PanelSessionState, sessionPath } from "./host.js";
import { modal } from "./modal.js";
import { type CatalogRecipe, type Preflight, recipeFormEntry } from "./recipe-model.js";

/** Provenance as `key: value` lines (an object), or its text. */
function provenanceLines(p: unknown): string[] {
  if (p === null || p === undefined) return [];
  if (typeof p !== "object") return [String(p)];
  return Object.entries(p as Record<string, unknown>).map(
    ([k, v]) => `${k.replace(/_/g, " ")}: ${typeof v === "object" ? JSON.stringify(v) : String(v)}`,
  );
}

/** The gallery element. */
export class TesseraRecipesDialog extends LitElement {
  static override properties = {
    app: { attribute: false },
    state: { attribute: false },
    recipes: { state: true },
    query: { state: true },
    chosen: { state: true },
    values: { state: true },
    check: { state: true },
    checkError: { state: true },
    busy: { state: true },
  };

  declare app: AppHost | null;
  declare state: PanelSessionState | null;
  declare recipes: CatalogRecipe[] | null;
  declare query: string;
  declare chosen: CatalogRecipe | null;
  /** The form's current values (sent as the recipe's `values`). */
  declare values: Record<string, unknown>;
  declare check: Preflight | null;
  declare checkError: string | null;
  declare busy: boolean;

  private checkSeq = 0;
  private checkTimer: ReturnType<typeof setTimeout> | null = null;

  constructor() {
    super();
    this.app = null;
    this.state = null;
    this.recipes = null;
    this.query = "";
    this.chosen = null;
    this.values = {};
    this.check = null;
    this.checkError = null;
    this.busy = false;
  }

  protected override createRenderRoot(): HTMLElement {
    return this;
  }

  override connectedCallback(): void {
    super.connectedCallback();
    void this.load();
  }

  private async load(): Promise<void> {
    if (!this.app) return;
    try {
      this.recipes = (await this.app.api.json<{ recipes: CatalogRecipe[] }>("/api/recipes")).recipes;
    } catch (e) {
      this.recipes = [];
      this.app.toast("error", `Could not list the recipes: ${(e as Error).message}`);
    }
  }

  private choose(r: CatalogRecipe): void {
    this.chosen = r;
    this.values = {};
    this.check = null;
    void this.preflight();
  }

  /** Ask the server's preflight for the chosen recipe with the current values (latest answer wins). */
  private async preflight(): Promise<void> {
    const r = this.chosen;
    const sid = this.app?.currentId;
    if (!r || !sid || !this.app) return;
    const seq = ++this.checkSeq;
    try {
      const out = await this.app.api.json<Preflight>(sessionPath(sid, "/recipe/preflight"), {
        method: "POST",
        json: { ...r, values: this.values },
      });
      if (seq !== this.checkSeq) return;
      this.check = out;
      this.checkError = null;
    } catch (e) {
      if (seq !== this.checkSeq) return;
      this.check = null;
      this.checkError = (e as Error).message;
    }
  }

  private async run(stage: boolean, values: Record<string, unknown>): Promise<void> {
    const r = this.chosen;
    const sid = this.app?.currentId;
    const app = this.app;
    if (!r || !sid || !app) return;
    this.busy = true;
    try {
      const out = await app.api.json<{ queued?: number; staged?: number }>(sessionPath(sid, "/recipe/run"), {
        method: "POST",
        json: { ...r, values, mode: stage ? "stage" : "run" },
      });
      app.toast(
        "info",
        stage
          ? `${r.name}: ${out.staged} pending step(s) to review.`
          : `${r.name}: ${out.queued} step(s) queued.`,
      );
      this.dispatchEvent(new CustomEvent("state-stale", { bubbles: true, composed: true }));
      this.dispatchEvent(new CustomEvent("close"));
    } catch (e) {
      app.toast("error", `${r.name}: ${(e as Error).message}`);
    } finally {
      this.busy = false;
    }
  }

  private renderChecklist(): TemplateResult {
    const c = this.check;
    if (this.checkError) return html`<div class="err" data-testid="preflight-error">${this.checkError}</div>`;
    if (!c) return html`<div class="muted">Checking…</div>`;
    return html`<ul class="checklist" data-testid="preflight">
      ${c.unknown_functions.map((f) => html`<li class="bad" data-check="unknown">✕ Unknown function <code>${f}</code>: the recipe cannot run here.</li>`)}
      ${c.unresolved.map((k) => html`<li class="warn" data-check="unresolved">⚠ <code>${k}</code> has no value; set it above.</li>`)}
      ${this.unproduced().map((k) => html`<li class="warn" data-check="unproduced">⚠ <code>${k}</code> is read before any step writes it (fine if the data already has it).</li>`)}
      ${c.produced.length ? html`<li class="ok" data-check="produced">✓ Writes ${c.produced.join(", ")}</li>` : nothing}
      ${!c.unknown_functions.length && !c.unresolved.length ? html`<li class="ok" data-check="ready">✓ Every function is registered.</li>` : nothing}
    </ul>`;
  }

  /**
   * Keys a step reads that no earlier step writes and the session's fields do not hold: a warning,
   * since the key may still exist in data the fields list does not cover. Read from the step params
   * the recipe names literally (`key`, `obsm_key`, `cluster_key`…) against what preflight produces.
   */
  private unproduced(): string[] {
    const r = this.chosen;
    const c = this.check;
    const f = this.state?.fields;
    if (!r || !c || !f) return [];
    const have = new Set([
      ...c.produced.map((p) => p.replace(/^[a-z]+:/, "")),
      ...f.obs.map((o) => o.name),
      ...f.obsm.map((o) => o.name),
      ...((f as { obsp?: string[] }).obsp ?? []),
      ...((f as { layers?: string[] }).layers ?? []),
    ]);
    const out = new Set<string>();
    for (const s of r.steps)
      for (const [k, v] of Object.entries(s.params ?? {}))
        if (/(^|_)key$/.test(k) && typeof v === "string" && !have.has(v)) out.add(v);
    return [...out];
  }

  override render(): TemplateResult {
    const close = () => this.dispatchEvent(new CustomEvent("close"));
    const app = this.app;
    const blocked = app ? editBlockedReason(app) : "No session";
    const q = this.query.toLowerCase();
    const list = (this.recipes ?? []).filter(
      (r) => !q || r.name.toLowerCase().includes(q) || (r.description ?? "").toLowerCase().includes(q),
    );
    const r = this.chosen;
    const blocks = (this.check?.unknown_functions.length ?? 0) > 0;
    const reason =
      blocked ??
      (blocks ? "An unknown function blocks this recipe." : null) ??
      (this.busy ? "Working…" : null);
    const entry = r ? recipeFormEntry(r) : null;
    const body = html`<style>${CSS}</style><div class="recipes" style="display:flex;gap:12px;min-height:360px">
      <div style="flex:0 0 250px;display:flex;flex-direction:column;gap:6px">
        <input type="search" data-testid="recipe-search" placeholder="Search recipes…" .value=${this.query}
          @input=${(e: Event) => {
            this.query = (e.target as HTMLInputElement).value;
          }} />
        <div class="list" data-testid="recipe-list" style="flex:1;max-height:60vh">
          ${list.map(
            (x) => html`<div data-recipe=${x.name} aria-selected=${x === r}
              style=${x === r ? "background:rgba(80,140,255,.18)" : ""}
              @click=${() => this.choose(x)}>
              <div>${x.name}</div>
              <div class="muted" style="font-size:11px">${x.steps.length} step(s)</div>
            </div>`,
          )}
          ${this.recipes === null ? html`<div class="muted">Loading…</div>` : list.length ? nothing : html`<div class="muted">No recipe matches.</div>`}
        </div>
      </div>
      <div style="flex:1;min-width:0" data-testid="recipe-detail">
        ${
          r && entry
            ? html`<h3 style="margin-top:0">${r.name}</h3>
                <p>${r.description ?? ""}</p>
                ${
                  provenanceLines(r.provenance).length
                    ? html`<div class="muted" data-testid="recipe-provenance" style="font-size:12px">${provenanceLines(r.provenance).map((l) => html`<div>${l}</div>`)}</div>`
                    : nothing
                }
                ${r.readme ? html`<details open><summary>Readme</summary><div class="readme" data-testid="recipe-readme" style="white-space:pre-wrap">${r.readme}</div></details>` : nothing}
                <details><summary>Steps (${r.steps.length})</summary>
                  <ol style="margin:4px 0;padding-left:20px">${r.steps.map((s) => html`<li><code>${s.namespace}.${s.function}</code></li>`)}</ol>
                </details>
                <h4 style="margin:10px 0 4px">Preflight</h4>
                ${this.renderChecklist()}
                <h4 style="margin:10px 0 4px">Parameters</h4>
                <tessera-function-form
                  .entry=${entry}
                  .fields=${this.state?.fields ?? null}
                  .errors=${{}}
                  .disabledReason=${reason}
                  @input=${() => this.schedulePreflight()}
                  @change=${() => this.schedulePreflight()}
                  @form-submit=${(e: CustomEvent<FormSubmit>) => this.run(e.detail.stage, e.detail.params)}
                ></tessera-function-form>`
            : html`<div class="muted">Choose a recipe.</div>`
        }
      </div>
    </div>`;
    return modal("Recipes", body, close, html`<button @click=${close}>Close</button>`, true);
  }

  /** The form's values changed: re-run preflight on them shortly after typing stops. */
  private schedulePreflight(): void {
    if (this.checkTimer) clearTimeout(this.checkTimer);
    this.checkTimer = setTimeout(() => {
      const form = this.querySelector("tessera-function-form") as
        | (HTMLElement & { values: Record<string, unknown> })
        | null;
      if (!form || !this.chosen) return;
      const entry = recipeFormEntry(this.chosen);
      const props = entry.json_schema.properties ?? {};
      this.values = Object.fromEntries(
        Object.entries(form.values).filter(([k, v]) => props[k] && v !== undefined && v !== ""),
      );
      void this.preflight();
    }, 350);
  }
}

const CSS = `
.checklist { list-style: none; padding: 0; margin: 0; font-size: 12px; }
.checklist li { padding: 2px 0; }
.checklist .bad { color: var(--danger); }
.checklist .warn { color: #d49b3a; }
.checklist .ok { color: #4caf50; }
`;

if (!customElements.get("tessera-recipes-dialog"))
  customElements.define("tessera-recipes-dialog", TesseraRecipesDialog);
