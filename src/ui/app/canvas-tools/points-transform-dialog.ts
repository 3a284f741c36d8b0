/**
 * `<tessera-points-transform-dialog>`: the "Edit points transform" dialog (client.md 5.9). It edits
 * the points→global affine of the active table's region element, either as scale / rotation /
 * translation or as the raw 2×3 matrix, reads it with `GET …/points-transform` and saves it with
 * `POST …/points-transform` (a job that also writes the checkpoint) behind a blocking spinner.
 * Fires `close` when done or dismissed.
 */
import { css, html, LitElement, nothing, type TemplateResult } from "lit";
import type { DrawController } from "./draw-controller.js";
import { spinnerStyles } from "./spinner-style.js";

/** `[a, b, c, d, e, f]`: `x' = a·x + b·y + c`, `y' = d·x + e·y + f`. */
export type Affine6 = [number, number, number, number, number, number];

/** Scale (per axis, signed), rotation (degrees, counter-clockwise) and translation. */
export interface Similarity {
  sx: number;
  sy: number;
  rotation: number;
  tx: number;
  ty: number;
}

/** The affine of a scale, then a rotation, then a translation. */
export function composeAffine(p: Similarity): Affine6 {
  const t = (p.rotation * Math.PI) / 180;
  const cos = Math.cos(t);
  const sin = Math.sin(t);
  return [p.sx * cos, -p.sy * sin, p.tx, p.sx * sin, p.sy * cos, p.ty];
}

/**
 * Scale, rotation and translation of an affine, and whether they reproduce it (false when the
 * matrix shears: only the raw matrix can say it).
 */
export function decomposeAffine(m: Affine6): { parts: Similarity; exact: boolean } {
  const [a, b, c, d, e, f] = m;
  const sx = Math.hypot(a, d);
  const rotation = (Math.atan2(d, a) * 180) / Math.PI;
  const sy = sx ? (a * e - b * d) / sx : 0;
  const parts = { sx, sy, rotation, tx: c, ty: f };
  const back = composeAffine(parts);
  const exact = back.every((v, i) => Math.abs(v - m[i]!) <= 1e-9 * Math.max(1, Math.abs(m[i]!)));
  return { parts, exact };
}

/** The dialog element. */
export class PointsTransformDialog extends LitElement {
  static override properties = {
    controller: { attribute: false },
    affine: { state: true },
    element: { state: true },
    system: { state: true },
    tab: { state: true },
    busy: { state: true },
    error: { state: true },
  };

  static override styles = [
    spinnerStyles,
    css`
    .backdrop {
      position: fixed;
      inset: 0;
      background: rgba(0, 0, 0, 0.5);
      display: flex;
      align-items: center;
      justify-content: center;
      z-index: 60;
      pointer-events: auto;
      font: 13px/1.4 system-ui, sans-serif;
      color: var(--fg, #e6e6e6);
    }
    .modal {
      background: var(--panel, #1c1f25);
      border: 1px solid var(--border, #2c3038);
      border-radius: 8px;
      padding: 14px 16px;
      width: 420px;
      max-height: 80vh;
      overflow: auto;
    }
    h3 {
      margin: 0 0 8px;
    }
    .grid {
      display: grid;
      grid-template-columns: 1fr 1fr 1fr;
      gap: 6px;
    }
    label {
      display: flex;
      flex-direction: column;
      font-size: 11px;
      opacity: 0.9;
    }
    input {
      font: inherit;
      background: rgba(0, 0, 0, 0.3);
      color: inherit;
      border: 1px solid rgba(127, 127, 127, 0.4);
      border-radius: 4px;
      padding: 3px 5px;
      width: 100%;
      box-sizing: border-box;
    }
    button {
      font: inherit;
      color: inherit;
      background: transparent;
      border: 1px solid rgba(127, 127, 127, 0.5);
      border-radius: 5px;
      padding: 3px 10px;
      cursor: pointer;
    }
    button[aria-pressed="true"],
    button.primary {
      background: #4c9ffe;
      border-color: #4c9ffe;
      color: #fff;
    }
    .tabs,
    .foot {
      display: flex;
      gap: 6px;
      margin: 8px 0;
    }
    .foot {
      justify-content: flex-end;
    }
    .muted {
      opacity: 0.7;
      font-size: 12px;
    }
    .err {
      color: #ff6b6b;
    }
  `,
  ];

  declare controller: DrawController | null;
  declare affine: Affine6 | null;
  declare element: string | null;
  declare system: string;
  declare tab: "parts" | "matrix";
  declare busy: boolean;
  declare error: string | null;

  constructor() {
    super();
    this.controller = null;
    this.affine = null;
    this.element = null;
    this.system = "";
    this.tab = "parts";
    this.busy = false;
    this.error = null;
  }

  private get path(): string | null {
    const id = this.controller?.host.currentId;
    return id ? `/api/sessions/${encodeURIComponent(id)}/points-transform` : null;
  }

  override connectedCallback(): void {
    super.connectedCallback();
    void this.load();
    window.addEventListener("keydown", this.onKey);
  }

  override disconnectedCallback(): void {
    super.disconnectedCallback();
    window.removeEventListener("keydown", this.onKey);
  }

  private readonly onKey = (e: KeyboardEvent) => {
    if (e.key === "Escape" && !this.busy) this.close();
  };

  private async load(): Promise<void> {
    const path = this.path;
    if (!path || !this.controller) return;
    try {
      const r = await this.controller.host.api.json<{
        affine: Affine6;
        element: string | null;
        coordinate_system?: string;
      }>(path);
      this.affine = r.affine;
      this.element = r.element;
      this.system = r.coordinate_system ?? "";
    } catch (e) {
      this.error = (e as Error).message;
    }
  }

  private close(): void {
    this.dispatchEvent(new Event("close"));
  }

  private setPart(k: keyof Similarity, v: number): void {
    if (!this.affine || !Number.isFinite(v)) return;
    const { parts } = decomposeAffine(this.affine);
    this.affine = composeAffine({ ...parts, [k]: v });
  }

  private setCell(i: number, v: number): void {
    if (!this.affine || !Number.isFinite(v)) return;
    const m = [...this.affine] as Affine6;
    m[i] = v;
    this.affine = m;
  }

  private async save(): Promise<void> {
    const c = this.controller;
    const path = this.path;
    if (!c || !path || !this.affine) return;
    this.busy = true;
    this.error = null;
    try {
      const r = await c.host.api.json<{ job_id: string }>(path, {
        method: "POST",
        json: { affine: this.affine },
      });
      const jobPath = `/api/sessions/${encodeURIComponent(c.host.currentId!)}/jobs/${encodeURIComponent(r.job_id)}`;
      for (;;) {
        const j = await c.host.api.json<{ status: string; error?: string }>(jobPath);
        if (j.status === "completed") break;
        if (j.status === "failed" || j.status === "cancelled")
          throw new Error(`the job ${j.status}${j.error ? `: ${j.error}` : ""}`);
        await new Promise((res) => setTimeout(res, 300));
      }
      c.host.toast("info", "Points transform saved.");
      this.close();
    } catch (e) {
      this.error = (e as Error).message;
    } finally {
      this.busy = false;
    }
  }

  private num(label: string, value: number, set: (v: number) => void, testid: string): TemplateResult {
    return html`<label
      >${label}<input
        type="number"
        step="any"
        data-testid=${testid}
        .value=${String(Number(value.toPrecision(10)))}
        @change=${(e: Event) => set(Number((e.target as HTMLInputElement).value))}
    /></label>`;
  }

  override render(): TemplateResult {
    const m = this.affine;
    const reason = this.controller?.readOnlyReason ?? null;
    const dec = m ? decomposeAffine(m) : null;
    let down: EventTarget | null = null;
    return html`<div
      class="backdrop"
      @pointerdown=${(e: Event) => {
        down = e.target;
      }}
      @click=${(e: Event) => {
        if (e.target === e.currentTarget && down === e.currentTarget && !this.busy) this.close();
      }}
    >
      <div class="modal" role="dialog" aria-label="Edit points transform" data-testid="points-transform-dialog">
        <h3>Edit points transform</h3>
        <div class="muted">
          Points → ${this.system || "global"} affine${this.element ? html` of <b>${this.element}</b>` : nothing}.
        </div>
        <div class="tabs">
          <button aria-pressed=${this.tab === "parts"} @click=${() => {
            this.tab = "parts";
          }}>Scale / rotation / translation</button>
          <button aria-pressed=${this.tab === "matrix"} data-testid="matrix-tab" @click=${() => {
            this.tab = "matrix";
          }}>Matrix</button>
        </div>
        ${
          !m || !dec
            ? html`<p class="muted">${this.error ? "" : "Loading…"}</p>`
            : this.tab === "parts"
              ? html`<div class="grid">
                    ${this.num("Scale X", dec.parts.sx, (v) => this.setPart("sx", v), "pt-sx")}
                    ${this.num("Scale Y", dec.parts.sy, (v) => this.setPart("sy", v), "pt-sy")}
                    ${this.num("Rotation (°)", dec.parts.rotation, (v) => this.setPart("rotation", v), "pt-rot")}
                    ${this.num("Translate X", dec.parts.tx, (v) => this.setPart("tx", v), "pt-tx")}
                    ${this.num("Translate Y", dec.parts.ty, (v) => this.setPart("ty", v), "pt-ty")}
                  </div>
                  ${dec.exact ? nothing : html`<p class="muted">This matrix also shears: edit it as a matrix to keep the shear.</p>`}`
              : html`<div class="grid">
                  ${(["a", "b", "c", "d", "e", "f"] as const).map((k, i) =>
                    this.num(k, m[i]!, (v) => this.setCell(i, v), `pt-m${i}`),
                  )}
                </div>
                <p class="muted">x′ = a·x + b·y + c, y′ = d·x + e·y + f</p>`
        }
        ${this.error ? html`<p class="err" data-testid="pt-error">${this.error}</p>` : nothing}
        ${reason ? html`<p class="muted">Read-only: ${reason}.</p>` : nothing}
        <div class="foot">
          ${this.busy ? html`<span><span class="spinner"></span> Saving the points transform…</span>` : nothing}
          <button @click=${() => this.close()} ?disabled=${this.busy}>Cancel</button>
          <button class="primary" data-testid="pt-save" ?disabled=${this.busy || !m || Boolean(reason)} @click=${() => this.save()}>
            Save
          </button>
        </div>
      </div>
    </div>`;
  }
}

if (!customElements.get("tessera-points-transform-dialog"))
  customElements.define("tessera-points-transform-dialog", PointsTransformDialog);
