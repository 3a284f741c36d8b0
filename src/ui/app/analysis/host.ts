/**
 * What the analysis panels (history, recipes, plots view, data inspector, save dialog, job overlay)
 * need from the app frame: its API client, the current session's id and state, whether this browser
 * may edit, toasts, and the event stream. `<tessera-app>` satisfies this interface structurally; the
 * panels receive it as `.app` and listen for `tessera-event` on it (every event of the stream, as
 * the frame received it), so the frame keeps one EventSource for everyone.
 */
import type { AppState } from "../../../sdk/io/checkpoint/app-state.js";
import type { DataSource, SourceFields } from "../../data-source.js";
import type { ApiClient } from "../../http.js";
import type { AppEvent } from "../events.js";

/** A session's summary (`SessionSummary`). */
export interface SessionSummary {
  id: string;
  name: string;
  status: "loading" | "ready" | "errored";
  resident_mb: number;
  saved: boolean;
  read_only: boolean;
  error: string | null;
}

/** One running or queued job of `SessionState.queue`. */
export interface QueueItem {
  job_id: string;
  status: string;
  descriptor?: { namespace: string; function: string; params?: Record<string, unknown> } | null;
  position?: number;
}

/** The parts of `GET /api/sessions/{id}` the panels read. */
export interface PanelSessionState {
  summary: SessionSummary;
  app_state: AppState;
  queue: QueueItem[];
  fields: SourceFields;
  figures: Record<string, Record<string, number>>;
  data_versions: Record<string, number>;
}

/** The presence picture (`PresenceView`). */
export interface PanelPresence {
  sessions: Record<string, { lock?: { client_id: string; name: string } | null; viewers: string[] }>;
}

/** The app frame as the panels see it. */
export interface AppHost extends EventTarget {
  readonly api: ApiClient;
  currentId: string | null;
  state: PanelSessionState | null;
  presence: PanelPresence;
  myPublic: string;
  readonly canEdit: boolean;
  /** `live`, or `serverless` for a checkpoint read in the browser (read-only; no API). */
  readonly mode?: string;
  /** Where the canvases read from (the serverless viewer's figures come from it). */
  readonly source?: DataSource | null;
  toast(kind: "info" | "error", text: string): void;
  selectSession(id: string): Promise<void>;
}

/** The DOM event carrying one stream event on the app element. */
export const APP_EVENT = "tessera-event";

/** Subscribe to the app's stream events; returns the unsubscribe function. */
export function onAppEvent(app: AppHost, fn: (e: AppEvent) => void): () => void {
  const listener = (ev: Event) => fn((ev as CustomEvent<AppEvent>).detail);
  app.addEventListener(APP_EVENT, listener);
  return () => app.removeEventListener(APP_EVENT, listener);
}

/** Why this browser may not change the session (read-only, or who holds the lock); null: it may. */
export function editBlockedReason(app: AppHost): string | null {
  const st = app.state;
  if (!st) return "No session is open.";
  if (st.summary.read_only) return "The session is read-only.";
  if (app.canEdit) return null;
  const lock = app.currentId ? app.presence.sessions[app.currentId]?.lock : null;
  return `${lock?.name ?? "Someone else"} holds the edit lock.`;
}

/** `/api/sessions/{id}` plus a sub-path, with the id encoded. */
export function sessionPath(id: string, sub = ""): string {
  return `/api/sessions/${encodeURIComponent(id)}${sub}`;
}
