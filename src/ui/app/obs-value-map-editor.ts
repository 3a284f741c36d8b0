/**
 * `<tessera-obs-value-map>`: the `obs_value_map` widget (spec client §3.4) — one row per category of
 * the source obs column (a sibling field of the form, `ui_schema.bound_to`), each with a box for its
 * new value (a new name, or a colour); categories left blank are not in the map. Sends `value-change`
 * with the map (undefined when empty). Light DOM, like the form.
 */
import { html, LitElement, nothing, type TemplateResult } from "lit";

/** The editor element. */
export class TesseraObsValueMap extends LitElement {
  static override properties = {
    param: { attribute: false },
    column: { attribute: false },
    value: { attribute: false },
    loadCategories: { attribute: false },
    categories: { state: true },
    failure: { state: true },
  };

  /** The parameter edited (for test ids). */
  declare param: string;
  /** The source obs column (null: not chosen yet). */
  declare column: string | null;
  declare value: Record<string, string> | undefined;
  declare loadCategories: ((column: string) => Promise<string[]>) | null;
  declare categories: string[] | null;
  declare failure: string | null;

  private loadedFor: string | null = null;

  constructor() {
    super();
    this.param = "";
    this.column = null;
    this.value = undefined;
    this.loadCategories = null;
    this.categories = null;
    this.failure = null;
  }

  protected override createRenderRoot(): HTMLElement {
    return this;
  }

  protected override willUpdate(): void {
    const col = this.column;
    if (col === this.loadedFor) return;
    this.loadedFor = col;
    this.categories = null;
    this.failure = null;
    if (!col || !this.loadCategories) return;
    void this.loadCategories(col).then(
      (cats) => {
        if (this.loadedFor === col) this.categories = cats;
      },
      (e: Error) => {
        if (this.loadedFor === col) this.failure = e.message;
      },
    );
  }

  private edit(category: string, to: string): void {
    const next = { ...(this.value ?? {}) };
    if (to.trim() === "") delete next[category];
    else next[category] = to;
    const detail = Object.keys(next).length ? next : undefined;
    this.dispatchEvent(new CustomEvent("value-change", { detail }));
  }

  override render(): TemplateResult {
    if (!this.column) return html`<div class="muted">Choose the column first.</div>`;
    if (this.failure) return html`<div class="err">${this.failure}</div>`;
    if (!this.categories) return html`<div class="muted">Loading the categories of ${this.column}…</div>`;
    return html`<div class="list" data-map=${this.param} style="max-height:200px;overflow:auto">
      ${this.categories.map(
        (c) => html`<div style="display:flex;gap:6px;align-items:center">
          <span style="flex:1;min-width:0;overflow:hidden;text-overflow:ellipsis">${c}</span>
          <span aria-hidden="true">→</span>
          <input type="text" data-category=${c} style="flex:1" placeholder="unchanged"
            .value=${this.value?.[c] ?? ""}
            @input=${(e: Event) => this.edit(c, (e.target as HTMLInputElement).value)} />
        </div>`,
      )}
      ${this.categories.length ? nothing : html`<div class="muted">No categories.</div>`}
    </div>`;
  }
}

if (!customElements.get("tessera-obs-value-map"))
  customElements.define("tessera-obs-value-map", TesseraObsValueMap);
