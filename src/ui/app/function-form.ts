/**
 * `<tessera-function-form>`: a function's parameter form generated from its `json_schema` and
 * `ui_schema` (spec client §3.4) — one input per parameter from the closed widget set, defaults
 * filled, the parameter documentation as tooltip, obs/obsm/obsp/layer pickers fed from the
 * session's `fields`, gene names searched on the server. It sends `form-submit` with
 * `{params, stage}`; the host posts the job and hands back field errors through `errors`.
 * Rendered in the light DOM so the app's stylesheet applies.
 */
import { html, LitElement, nothing, type TemplateResult } from "lit";
import {
  baseType,
  defaultsOf,
  enumOf,
  type FunctionEntry,
  nullable,
  type ParamSchema,
  paramsToSend,
  type UiField,
  widgetOf,
} from "./form-model.js";
import "./obs-value-map-editor.js";

/** What the session offers to the key pickers (the `fields` block of SessionState). */
export interface FormFields {
  obs: { name: string; kind: "categorical" | "numeric" }[];
  obsm: { name: string; n_components: number }[];
  obsp?: string[];
  layers?: string[];
}

/** Detail of the `form-submit` event. */
export interface FormSubmit {
  entry: FunctionEntry;
  params: Record<string, unknown>;
  /** Stage a pending step instead of running. */
  stage: boolean;
}

/** The generated form element. */
export class TesseraFunctionForm extends LitElement {
  static override properties = {
    entry: { attribute: false },
    fields: { attribute: false },
    errors: { attribute: false },
    disabledReason: { attribute: false },
    searchVarNames: { attribute: false },
    loadCategories: { attribute: false },
    initial: { attribute: false },
    labels: { attribute: false },
    values: { state: true },
    jsonDrafts: { state: true },
    geneOptions: { state: true },
    libraryIds: { state: true },
  };

  declare entry: FunctionEntry | null;
  declare fields: FormFields | null;
  /** Messages per parameter (`""`: not tied to one) from the server's last answer. */
  declare errors: Record<string, string>;
  /** Why Run/Stage are disabled (someone else holds the lock, read-only); null: enabled. */
  declare disabledReason: string | null;
  declare searchVarNames: ((q: string) => Promise<string[]>) | null;
  /** The categories of an obs column (for `obs_value_map`); null: edited as JSON. */
  declare loadCategories: ((column: string) => Promise<string[]>) | null;
  /** Values that replace the defaults when a function is shown (re-run or edit of a step's params). */
  declare initial: Record<string, unknown> | null;
  /** The two buttons' labels (default Run and Stage; an edited pending step says Save and Save & run). */
  declare labels: { run: string; stage: string } | null;
  declare values: Record<string, unknown>;
  declare jsonDrafts: Record<string, string>;
  declare geneOptions: Record<string, string[]>;
  /** The values of the obs column `library_id`, when the table has one (the `library_id` picker). */
  declare libraryIds: string[] | null;

  private shownKey: string | null = null;

  constructor() {
    super();
    this.entry = null;
    this.fields = null;
    this.errors = {};
    this.disabledReason = null;
    this.searchVarNames = null;
    this.loadCategories = null;
    this.initial = null;
    this.labels = null;
    this.values = {};
    this.jsonDrafts = {};
    this.geneOptions = {};
    this.libraryIds = null;
  }

  protected override createRenderRoot(): HTMLElement {
    return this;
  }

  protected override willUpdate(): void {
    // A new function: start again from its defaults.
    if (this.entry && this.entry.key !== this.shownKey) {
      this.shownKey = this.entry.key;
      this.values = { ...defaultsOf(this.entry), ...(this.initial ?? {}) };
      this.jsonDrafts = {};
      this.geneOptions = {};
      this.loadLibraryIds(this.entry);
    }
  }

  /** Read the library ids once per function shown, when it has a `library_id` parameter. */
  private loadLibraryIds(entry: FunctionEntry): void {
    this.libraryIds = null;
    const wants = Object.values(entry.ui_schema).some((u) => u.widget === "library_id");
    if (!wants || !this.loadCategories || !this.fields?.obs.some((o) => o.name === "library_id")) return;
    void this.loadCategories("library_id").then(
      (ids) => {
        if (this.entry?.key === entry.key) this.libraryIds = ids;
      },
      () => {},
    );
  }

  private set(k: string, v: unknown): void {
    this.values = { ...this.values, [k]: v };
  }

  private submit(stage: boolean): void {
    const entry = this.entry;
    if (!entry || this.disabledReason) return;
    const detail: FormSubmit = { entry, params: paramsToSend(entry, this.values), stage };
    this.dispatchEvent(new CustomEvent("form-submit", { detail, bubbles: true, composed: true }));
  }

  private keyPicker(k: string, s: ParamSchema, options: string[]): TemplateResult {
    const v = this.values[k];
    const current = typeof v === "string" ? v : "";
    const opts = current && !options.includes(current) ? [current, ...options] : options;
    return html`<select data-param=${k} @change=${(e: Event) => {
      const t = (e.target as HTMLSelectElement).value;
      this.set(k, t === "" ? (nullable(s) ? null : undefined) : t);
    }}>
      <option value="" ?selected=${current === ""}>${s.default === undefined || s.default === null ? "—" : `default (${String(s.default)})`}</option>
      ${opts.map((o) => html`<option value=${o} ?selected=${o === current}>${o}</option>`)}
    </select>`;
  }

  private input(k: string, s: ParamSchema, ui: UiField | undefined): TemplateResult {
    const v = this.values[k];
    const f = this.fields;
    const widget = widgetOf(s, ui);
    switch (widget) {
      case "checkbox":
        return html`<input type="checkbox" data-param=${k} .checked=${Boolean(v)} @change=${(e: Event) =>
          this.set(k, (e.target as HTMLInputElement).checked)} />`;
      case "number": {
        const integer = baseType(s) === "integer";
        return html`<input type="number" data-param=${k} step=${integer ? "1" : "any"}
          placeholder=${v === null ? "default" : ""}
          .value=${typeof v === "number" ? String(v) : ""}
          @input=${(e: Event) => {
            const t = (e.target as HTMLInputElement).value.trim();
            this.set(k, t === "" ? (nullable(s) ? null : undefined) : Number(t));
          }} />`;
      }
      case "select": {
        const opts = enumOf(s);
        return html`<select data-param=${k} @change=${(e: Event) => this.set(k, JSON.parse((e.target as HTMLSelectElement).value))}>
          ${nullable(s) && !opts.includes(null) ? html`<option value="null" ?selected=${v === null}>—</option>` : nothing}
          ${opts.map((o) => html`<option value=${JSON.stringify(o)} ?selected=${JSON.stringify(o) === JSON.stringify(v)}>${String(o)}</option>`)}
        </select>`;
      }
      case "multitext":
        return html`<input type="text" data-param=${k} placeholder="comma-separated"
          .value=${Array.isArray(v) ? v.join(", ") : ""}
          @input=${(e: Event) => {
            const items = (e.target as HTMLInputElement).value
              .split(",")
              .map((x) => x.trim())
              .filter(Boolean);
            const numeric = baseType(s.items ?? {}) === "number" || baseType(s.items ?? {}) === "integer";
            this.set(k, items.length ? (numeric ? items.map(Number) : items) : undefined);
          }} />`;
      case "obs_value_map":
        if (ui?.bound_to && this.loadCategories) {
          const col = this.values[ui.bound_to];
          return html`<tessera-obs-value-map
            .param=${k}
            .column=${typeof col === "string" && col ? col : null}
            .value=${v && typeof v === "object" ? (v as Record<string, string>) : undefined}
            .loadCategories=${this.loadCategories}
            @value-change=${(e: CustomEvent<Record<string, string> | undefined>) => this.set(k, e.detail)}
          ></tessera-obs-value-map>`;
        }
        return this.jsonInput(k, v, ui?.bound_to);
      case "json":
        return this.jsonInput(k, v, null);
      case "obs_key":
        return this.keyPicker(
          k,
          s,
          (f?.obs ?? []).map((o) => o.name),
        );
      case "obs_categorical":
        return this.keyPicker(
          k,
          s,
          (f?.obs ?? []).filter((o) => o.kind === "categorical").map((o) => o.name),
        );
      case "obsm_key":
        return this.keyPicker(
          k,
          s,
          (f?.obsm ?? []).map((o) => o.name),
        );
      case "obsp_key":
        return this.keyPicker(k, s, f?.obsp ?? []);
      case "layer_key":
        return this.keyPicker(k, s, f?.layers ?? []);
      case "var_names":
        return this.geneInput(k, s, v);
      case "library_id":
        if (this.libraryIds?.length) return this.keyPicker(k, s, this.libraryIds);
        return this.textInput(k, s, v);
      default:
        return this.textInput(k, s, v);
    }
  }

  /** Free text: `text`, unknown widgets, and `library_id` when the table has no `library_id` column. */
  private textInput(k: string, s: ParamSchema, v: unknown): TemplateResult {
    return html`<input type="text" data-param=${k} .value=${v == null ? "" : String(v)}
      @input=${(e: Event) => {
        const t = (e.target as HTMLInputElement).value;
        this.set(k, t === "" ? (nullable(s) ? null : undefined) : t);
      }} />`;
  }

  /** A JSON value; an obs_value_map names its source column (a sibling field) in the placeholder. */
  private jsonInput(k: string, v: unknown, source: string | null | undefined): TemplateResult {
    const draft = this.jsonDrafts[k] ?? (v === undefined || v === null ? "" : JSON.stringify(v));
    const col = source ? this.values[source] : undefined;
    return html`<textarea rows="3" data-param=${k}
      placeholder=${source ? `{"old category of ${typeof col === "string" ? col : source}": "new name"}` : "JSON"}
      .value=${draft}
      @input=${(e: Event) => {
        const t = (e.target as HTMLTextAreaElement).value;
        this.jsonDrafts = { ...this.jsonDrafts, [k]: t };
        if (t.trim() === "") {
          this.set(k, undefined);
          return;
        }
        try {
          this.set(k, JSON.parse(t));
          this.errors = { ...this.errors, [k]: "" };
        } catch {
          this.errors = { ...this.errors, [k]: "not valid JSON" };
        }
      }}></textarea>`;
  }

  /** Gene names: type to search on the server; an array schema takes a comma-separated list. */
  private geneInput(k: string, s: ParamSchema, v: unknown): TemplateResult {
    const list = baseType(s) === "array";
    const id = `genes-${k}`;
    return html`<input type="text" data-param=${k} list=${id}
      placeholder=${list ? "genes, comma-separated" : "gene"}
      .value=${Array.isArray(v) ? v.join(", ") : v == null ? "" : String(v)}
      @input=${(e: Event) => {
        const t = (e.target as HTMLInputElement).value;
        const items = t
          .split(",")
          .map((x) => x.trim())
          .filter(Boolean);
        this.set(k, list ? (items.length ? items : undefined) : t.trim() || (nullable(s) ? null : undefined));
        const last = t.split(",").pop()?.trim() ?? "";
        if (last && this.searchVarNames)
          void this.searchVarNames(last).then(
            (names) => {
              this.geneOptions = { ...this.geneOptions, [k]: names };
            },
            () => {},
          );
      }} />
      <datalist id=${id}>${(this.geneOptions[k] ?? []).map((g) => html`<option value=${g}></option>`)}</datalist>`;
  }

  override render(): TemplateResult | typeof nothing {
    const e = this.entry;
    if (!e) return nothing;
    const props = e.json_schema.properties ?? {};
    const required = new Set(e.json_schema.required ?? []);
    const general = this.errors[""];
    return html`<form class="function-form" data-function=${e.key} @submit=${(ev: Event) => {
      ev.preventDefault();
      this.submit(false);
    }}>
      ${Object.entries(props).map(([k, s]) => {
        const ui = e.ui_schema[k];
        const err = this.errors[k];
        return html`<div class="field" data-field=${k}>
          <label title=${ui?.tooltip ?? s.description ?? ""}>${k}${required.has(k) ? " *" : ""}</label>
          ${this.input(k, s, ui)}
          ${err ? html`<div class="err" data-error-for=${k}>${err}</div>` : nothing}
        </div>`;
      })}
      ${Object.keys(props).length === 0 ? html`<div class="muted">No parameters.</div>` : nothing}
      ${(e.unsupported_params ?? []).length ? html`<div class="muted">Locked to their defaults: ${e.unsupported_params!.join(", ")}</div>` : nothing}
      ${general ? html`<div class="err" data-error-for="">${general}</div>` : nothing}
      <div class="foot" style="display:flex;gap:6px;justify-content:flex-end;margin-top:8px">
        <button type="button" data-action="stage" ?disabled=${!!this.disabledReason} title=${this.disabledReason ?? "Add as a pending step"} @click=${() => this.submit(true)}>${this.labels?.stage ?? "Stage"}</button>
        <button type="submit" class="primary" data-action="run" ?disabled=${!!this.disabledReason} title=${this.disabledReason ?? "Run now"}>${this.labels?.run ?? "Run"}</button>
      </div>
    </form>`;
  }
}

if (!customElements.get("tessera-function-form"))
  customElements.define("tessera-function-form", TesseraFunctionForm);
