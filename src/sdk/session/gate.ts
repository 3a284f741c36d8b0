/**
 * The mutation gate every face shares (HTTP routes, MCP tools, the CLI, the web app through HTTP):
 * before a call changes a session, the caller must hold or be able to take the session's edit lock
 * (423 while another viewer holds it), new work must fit under memory admission (503 past
 * `TESSERA_ADMISSION_PCT`), and an edit of the data needs a loaded object (409). One function, so no
 * adapter decides any of it again; `Service.mutableSession` applies it.
 */
import type { ResourceMonitor } from "../resources/monitor.js";
import type { Presence } from "./presence.js";
import { type ReadinessView, requireReady } from "./readiness.js";

/**
 * Who asks for a change. A caller with a client id (a browser tab, an MCP agent) holds the edit lock
 * or takes a free one; a caller without one (a script, the CLI, a test harness) passes only while
 * nobody holds it.
 */
export interface Caller {
  /** The caller's secret client id (it identifies a lock holder); absent for scripts. */
  readonly clientId?: string | undefined;
  /** The caller's display name, shown to other viewers as the lock holder. */
  readonly clientName?: string | undefined;
}

/** What the gate checks besides the edit lock. */
export interface GateOptions {
  /**
   * Names new work this call starts ("POST /api/sessions/{id}/jobs", "sc.pp.pca"): it is refused
   * with a 503 past the memory admission threshold. Absent for calls that free or cost nothing
   * (deletions, edits of app state) and for saving, which is how a user gets out of a full server.
   */
  readonly work?: string;
  /** Names the call when it needs the loaded object (409 while loading or after a failed load). */
  readonly ready?: string;
}

/** Apply the gate to `session` (see the module comment); throws the typed error of the first refusal. */
export function passGate(
  session: ReadinessView,
  presence: Pick<Presence, "assertMutable">,
  resources: Pick<ResourceMonitor, "admit">,
  caller: Caller,
  opts: GateOptions,
): void {
  presence.assertMutable(session.id, caller.clientId, caller.clientName);
  if (opts.work !== undefined) resources.admit(opts.work);
  if (opts.ready !== undefined) requireReady(session, opts.ready);
}
