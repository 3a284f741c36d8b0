/**
 * `<tessera-function-picker>`: the function picker (spec client §3.3) — a search box over the
 * registry's functions (key and summary), grouped by namespace with custom functions first, badges
 * "custom" and "partial"; the selected function shows its summary, citation, documentation link and
 * its generated form (`<tessera-function-form>`). `kinds` restricts the effect classes listed
 * (compute and extract on the Compute tab, plot on the Plots tab). Light DOM, like the form.
 */
import { html, LitElement, nothing, type TemplateResult } from "lit";
import { docsOf, type FunctionEntry, isCustom } from "./form-model.js";
import { groupFunctions } from "./function-groups.js";
import "./function-form.js";
import type { FormFields } from "./function-form.js";

/** The picker element. */
export class TesseraFunctionPicker extends LitElement {
  static override properties = {
    functions: { attribute: false },
    kinds: { attribute: false },
    fields: { attribute: false },
    errors: { attribute: false },
    disabledReason: { attribute: false },
    searchVarNames: { attribute: false },
    loadCategories: { attribute: false },
    query: { state: true },
    selected: { state: true },
  };

  declare functions: FunctionEntry[];
  declare kinds: string[];
  declare fields: FormFields | null;
  declare errors: Record<string, string>;
  declare disabledReason: string | null;
  declare searchVarNames: ((q: string) => Promise<string[]>) | null;
  declare loadCategories: ((column: string) => Promise<string[]>) | null;
  declare query: string;
  declare selected: string | null;

  constructor() {
    super();
    this.functions = [];
    this.kinds = ["compute", "extract"];
    this.fields = null;
    this.errors = {};
    this.disabledReason = null;
    this.searchVarNames = null;
    this.loadCategories = null;
    this.query = "";
    this.selected = null;
  }

  protected override createRenderRoot(): HTMLElement {
    return this;
  }

  private select(key: string): void {
    this.selected = key;
    this.dispatchEvent(new CustomEvent("function-selected", { detail: key, bubbles: true, composed: true }));
  }

  override render(): TemplateResult {
    const groups = groupFunctions(this.functions, this.query, this.kinds);
    const entry = this.functions.find((f) => f.key === this.selected) ?? null;
    const doc = entry ? docsOf(entry) : null;
    return html`<div class="function-picker" style="display:flex;gap:12px;min-height:320px">
      <div style="flex:0 0 260px;display:flex;flex-direction:column;gap:6px">
        <div class="switcher" role="tablist" style="display:flex;gap:4px">
          ${(
            [
              ["Compute", ["compute", "extract"]],
              ["Plots", ["plot"]],
            ] as const
          ).map(
            ([label, kinds]) => html`<button type="button" role="tab" data-tab=${label.toLowerCase()}
              aria-pressed=${kinds.every((k) => this.kinds.includes(k))}
              @click=${() => {
                this.kinds = [...kinds];
              }}>${label}</button>`,
          )}
        </div>
        <input type="search" data-testid="function-search" placeholder="Search functions…" .value=${this.query}
          @input=${(e: Event) => {
            this.query = (e.target as HTMLInputElement).value;
          }} />
        <div class="list" data-testid="function-list" style="flex:1;overflow:auto;max-height:55vh">
          ${groups.map(
            ([ns, fs]) => html`<div class="muted" style="margin-top:6px;font-weight:600">${ns}</div>
              ${fs.map(
                (f) => html`<div data-function=${f.key} aria-selected=${f.key === this.selected}
                  style=${f.key === this.selected ? "background:var(--accent-bg, rgba(80,140,255,.18))" : ""}
                  title=${f.summary}
                  @click=${() => this.select(f.key)}>
                  ${f.function}
                  ${isCustom(f) ? html`<span class="pill" data-badge="custom">custom</span>` : nothing}
                  ${f.partially_supported ? html`<span class="pill" data-badge="partial" title=${`not settable: ${(f.unsupported_params ?? []).join(", ")}`}>partial</span>` : nothing}
                </div>`,
              )}`,
          )}
          ${groups.length ? nothing : html`<div class="muted">No function matches.</div>`}
        </div>
      </div>
      <div style="flex:1;min-width:0" data-testid="function-detail">
        ${
          entry
            ? html`<h3 style="margin-top:0">${entry.key}</h3>
                <p>${entry.summary}</p>
                ${doc ? html`<p class="muted" data-testid="citation">${doc.citation} <a href=${doc.docs} target="_blank" rel="noopener noreferrer" style="color:var(--accent)">Documentation</a></p>` : nothing}
                <tessera-function-form
                  .entry=${entry}
                  .fields=${this.fields}
                  .errors=${this.errors}
                  .disabledReason=${this.disabledReason}
                  .searchVarNames=${this.searchVarNames}
                  .loadCategories=${this.loadCategories}
                ></tessera-function-form>`
            : html`<div class="muted">Choose a function.</div>`
        }
      </div>
    </div>`;
  }
}

if (!customElements.get("tessera-function-picker"))
  customElements.define("tessera-function-picker", TesseraFunctionPicker);
