/**
 * The events of the service spec's Events table, with their payloads. `EventMap` is the single source
 * of truth for event names: `EventBus.emit` checks a known name's payload against it, and SSE / polling
 * adapters serialise these payloads verbatim.
 *
 * Payload fields use the spec's snake_case names, since they go on the wire unchanged.
 */

/** A call: which registered function with which params (the spec's Descriptor). */
export interface EventDescriptor {
  readonly namespace: string;
  readonly function: string;
  readonly params: Readonly<Record<string, unknown>>;
}

/** The spec's SessionSummary, as `session.created` / `session.updated` carry it. */
export interface EventSessionSummary {
  readonly id: string;
  readonly name: string;
  readonly status: "loading" | "ready" | "errored";
  readonly resident_mb: number;
  readonly parent_id: string | null;
  /** ISO 8601. */
  readonly created_at: string;
  readonly saved: boolean;
  readonly read_only: boolean;
  readonly error: string | null;
}

/** The spec's PresenceView: per watched or locked session, its lock holder and viewer names. */
export interface EventPresenceView {
  readonly sessions: Readonly<
    Record<
      string,
      {
        readonly lock?: { readonly client_id: string; readonly name: string } | null;
        readonly viewers: readonly string[];
      }
    >
  >;
}

/** The spec's DisplaySpec, loosely typed (its encoding and viewport are owned by the display code). */
export interface EventDisplaySpec {
  readonly id: string;
  readonly type: "spatial_canvas" | "embedding_canvas";
  readonly encoding: Readonly<Record<string, unknown>>;
  readonly viewport: Readonly<Record<string, unknown>>;
}

/** The spec's upload row. */
export interface EventUploadRow {
  readonly id: string;
  readonly dataset_name: string;
  readonly state: "pending" | "uploading" | "completed" | "failed";
  readonly error: string | null;
}

/** Global figures of a resource sample. */
export interface ResourceGlobal {
  /** Resident set size of the process (API and workers), MB. */
  readonly rss_mb: number;
  /** Working-dir usage when RAM-backed, else 0, MB. */
  readonly work_dir_mb: number;
  /** RSS plus RAM-backed working set, percent of the memory limit. */
  readonly rss_pct: number;
  /** CPU use summed over the API process and its workers; 100 = one full core. */
  readonly cpu_pct: number;
  readonly cpu_count: number;
  /** Total size of all sessions' raster caches, MB. */
  readonly rasters_mb: number;
}

/** Every event name with its payload. */
export interface EventMap {
  "job.queued": { session_id: string; job_id: string; descriptor: EventDescriptor; position: number };
  "job.started": { session_id: string; job_id: string };
  /**
   * Beyond the spec: what a running operation reports through `ctx.progress` (`fraction` in [0, 1]),
   * at most a few times a second.
   */
  "job.progress": { session_id: string; job_id: string; fraction: number; message?: string };
  /** `kind` is the effect class (`compute`, `plot`, `extract`, `read` …); more fields may follow. */
  "job.completed": { session_id: string; job_id: string; kind: string; [extra: string]: unknown };
  "job.failed": { session_id: string; job_id: string; error: string };
  "job.log": { session_id: string; job_id: string; chunk: string };
  "plot.drawn": { session_id: string; plot_id: string };
  "plot.invalidated": { session_id: string; plot_ids: string[] };
  "display.updated": { session_id: string; display_id: string; spec: EventDisplaySpec };
  /** Routed by the client-minted `load_id`, not by session id. Milestones and a terminal `done` may add fields. */
  "session.loading": {
    load_id: string;
    message: string;
    pct: number;
    session_id?: string;
    done?: boolean;
    [extra: string]: unknown;
  };
  "session.created": { session_id: string; summary: EventSessionSummary };
  "session.updated": { session_id: string; summary: EventSessionSummary };
  /** `reason` is `closed` or `subset` (then `child_id` may name the new session). */
  "session.removed": { session_id: string; reason: string; [extra: string]: unknown };
  "presence.updated": EventPresenceView;
  "session.errored": { session_id: string; error: string };
  "resource.sample": { global: ResourceGlobal; per_session: Record<string, number> };
  "memory.warning": { session_id?: string; message: string };
  "platform.upload.state": { uploads: EventUploadRow[] };
  "platform.upload.completed": EventUploadRow;
  "platform.upload.failed": EventUploadRow;
}

/** A known event name. */
export type EventName = keyof EventMap;

/** The payload an event of name `K` carries: checked for known names, any object otherwise. */
export type EventData<K extends string> = K extends EventName ? EventMap[K] : object;

/** An event as the bus stores and delivers it (and as SSE / polling serialise it). */
export interface TesseraEvent<T = unknown> {
  /** Monotonic id, from 1; SSE's `id:` and polling's cursor. */
  readonly id: number;
  readonly event: string;
  readonly data: T;
}

/** The names of every event of the spec's table, for adapters and tests. */
export const EVENT_NAMES = [
  "job.queued",
  "job.started",
  "job.progress",
  "job.completed",
  "job.failed",
  "job.log",
  "plot.drawn",
  "plot.invalidated",
  "display.updated",
  "session.loading",
  "session.created",
  "session.updated",
  "session.removed",
  "presence.updated",
  "session.errored",
  "resource.sample",
  "memory.warning",
  "platform.upload.state",
  "platform.upload.completed",
  "platform.upload.failed",
] as const satisfies readonly EventName[];
