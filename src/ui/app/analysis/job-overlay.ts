/**
 * `<tessera-job-overlay>`: the full-screen blocking overlay shown while a save, subset or points
 * transform job of the current session is queued or running (client.md 1.3). It reads the session
 * state's queue (the frame re-reads it on every job event), shows the job's label, and its **Stop**
 * button cancels the job (`DELETE …/jobs/{id}`) only while it is still queued.
 */
import { html, LitElement, nothing, type TemplateResult } from "lit";
import { blockingLabel } from "./history-model.js";
import { type AppHost, type PanelSessionState, sessionPath } from "./host.js";

/** The overlay element. */
export class TesseraJobOverlay extends LitElement {
  static override properties = {
    app: { attribute: false },
    state: { attribute: false },
    stopping: { state: true },
  };

  declare app: AppHost | null;
  declare state: PanelSessionState | null;
  declare stopping: boolean;

  constructor() {
    super();
    this.app = null;
    this.state = null;
    this.stopping = false;
  }

  protected override createRenderRoot(): HTMLElement {
    return this;
  }

  private async stop(jobId: string): Promise<void> {
    const app = this.app;
    const sid = app?.currentId;
    if (!app || !sid) return;
    this.stopping = true;
    try {
      await app.api.fetch(sessionPath(sid, `/jobs/${encodeURIComponent(jobId)}`), { method: "DELETE" });
      this.dispatchEvent(new CustomEvent("state-stale", { bubbles: true, composed: true }));
    } catch (e) {
      app.toast("error", `Stop: ${(e as Error).message}`);
    } finally {
      this.stopping = false;
    }
  }

  override render(): TemplateResult | typeof nothing {
    const q = this.state?.queue ?? [];
    const item = q.find((x) => blockingLabel(x) !== null);
    if (!item) return nothing;
    const queued = item.status === "queued";
    return html`<div class="backdrop" data-testid="job-overlay" data-job=${item.job_id} style="z-index:150;cursor:wait">
      <div class="modal" style="width:min(420px,90vw);padding:18px;align-items:center;gap:12px;text-align:center">
        <div class="bar" style="width:100%"><div style="width:100%;animation:hpulse 1.2s infinite ease-in-out"></div></div>
        <div data-testid="job-overlay-label">${blockingLabel(item)}</div>
        <div class="muted">${queued ? `Queued behind ${item.position ?? 0} job(s).` : "Running; it cannot be stopped now."}</div>
        <button data-testid="job-overlay-stop" ?disabled=${!queued || this.stopping}
          title=${queued ? "Cancel this job before it starts" : "Only a queued job can be stopped"}
          @click=${() => this.stop(item.job_id)}>Stop</button>
      </div>
    </div>`;
  }
}

if (!customElements.get("tessera-job-overlay"))
  customElements.define("tessera-job-overlay", TesseraJobOverlay);
