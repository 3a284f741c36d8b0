/**
 * Types of the session layer: the resources the specification names (SessionSummary, SessionState,
 * session sources, save requests) and the parts of the engine a session uses (registry, worker pool,
 * event bus), described structurally so a session depends on what it calls, not on a class.
 */

import type { AppState } from "../io/checkpoint/app-state.js";
import type { EffectClass, Operation } from "../jobs/operation.js";
import type { WorkerTask } from "../jobs/task.js";
import type { ShapeVariables } from "../resources/peak-memory.js";
import type { Descriptor } from "./app-state-machine.js";
import type { DataVersions } from "./versions.js";

/** Status of a session. */
export type SessionStatus = "loading" | "ready" | "errored";

/** The spec's SessionSummary. */
export interface SessionSummary {
  id: string;
  name: string;
  status: SessionStatus;
  resident_mb: number;
  parent_id: string | null;
  /** ISO 8601. */
  created_at: string;
  saved: boolean;
  read_only: boolean;
  /** Failure message when status is `errored`. */
  error: string | null;
}

/** Where a session's data comes from (the body of `POST /api/sessions`). */
export type SessionSource =
  | { kind: "read"; namespace: "read" | "io"; function: string; params: Record<string, unknown> }
  | { kind: "load"; path: string };

/** What `createSession` takes. */
export interface CreateSessionRequest {
  name?: string;
  source: SessionSource;
  /** Client-minted id routing the `session.loading` events. */
  load_id?: string;
}

/** A job in the session's queue view. */
export interface QueueItem {
  job_id: string;
  descriptor: Descriptor | null;
  status: "queued" | "running";
  position: number;
}

/** The fields a session's active table offers (SessionState.fields). */
export interface SessionFields {
  obs: { name: string; kind: "categorical" | "numeric" }[];
  obsm: { name: string; n_components: number }[];
  has_x: boolean;
  var_names_count: number;
  obsp: string[];
  layers: string[];
  images: string[];
  shapes: string[];
}

/** The spec's SessionState (`GET /api/sessions/{id}`). */
export interface SessionState {
  summary: SessionSummary;
  app_state: AppState;
  queue: QueueItem[];
  fields: SessionFields;
  /** Byte length per format of each drawn plot's figure. */
  figures: Record<string, { svg?: number; pdf?: number; png?: number }>;
  data_versions: DataVersions;
}

/** Kind of a job: an effect class, or one of the session's own jobs. */
export type JobKind = EffectClass | "load" | "save" | "subset" | "shape_annotation" | "points_transform";

/** Status of a job. */
export type JobStatus = "pending" | "queued" | "running" | "completed" | "failed" | "cancelled";

/** How a job ended. */
export interface JobOutcome {
  job_id: string;
  kind: JobKind;
  status: "completed" | "failed" | "cancelled";
  /** Failure message. */
  error?: string;
  /** Extract: the value. Save: `{path}`. Compute: `{structural_diff}`. Plot: `{plot_id}`. */
  result?: unknown;
}

/** A job accepted by the session: its id, its state now, and its end. */
export interface JobTicket {
  job_id: string;
  status: JobStatus;
  /** Resolves (never rejects) when the job ends. */
  done: Promise<JobOutcome>;
  /** Set when the job runs at once, outside the queue and history (an extract): `done` carries its value. */
  immediate?: true;
}

/**
 * How every face answers a submitted call (`Session.dispatch`): a queued job's id and status, or an
 * extract's id, final status, value and error.
 */
export interface JobAnswer {
  job_id: string;
  status: JobStatus;
  /** An extract's value (null when it failed); absent for a queued job. */
  result?: unknown;
  /** An extract's error (null when it completed); absent for a queued job. */
  error?: string | null;
}

/**
 * The body of `POST /save`. Without `include`, `levels` and `slots` the whole object is saved and
 * becomes the session's checkpoint; with any of them the save is an export (see `export-selection.ts`).
 */
export interface SaveOptions {
  /** Folder under the data dir (relative or absolute), created if absent. */
  folder?: string;
  /** File name stem; `-<content hash>.sdata.zarr.zip` is appended. Default: the session's name. */
  prefix?: string;
  /** Renames the session; recorded as `app_state.name`. */
  name?: string;
  /** Exact output path under the data dir (no hash); not combinable with folder/prefix. */
  path?: string;
  /** Ids of drawn plots whose figures the file carries (default all, `[]` none). */
  figures?: string[];
  /** Facet (`images`, `labels`, `points`, `shapes`, `tables`) → element names to keep. */
  include?: Partial<Record<"images" | "labels" | "points" | "shapes" | "tables", string[]>>;
  /** Image name → index of the finest pyramid level to write (coarser levels are kept). */
  levels?: Record<string, number>;
  /** Table name → slot paths to write (`X`, `obs`, `var`, `uns`, `raw`, `<mapping>/<key>`). */
  slots?: Record<string, string[]>;
}

/** A registry entry as the session uses it (the registry's `FunctionEntry`). */
export interface EngineFunction {
  key: string;
  namespace: string;
  function: string;
  effect_class: EffectClass;
  summary: string;
  json_schema: object;
  ui_schema: Record<
    string,
    {
      widget: string | null;
      bound_to: string | null;
      tooltip: string | null;
      path_kind: "folder" | "file" | "either" | null;
    }
  >;
  library: string;
  module: string;
  export: string;
}

/** What a session needs of the registry. */
export interface EngineRegistry {
  get(key: string): EngineFunction | undefined;
  validate(key: string, params: unknown): Record<string, unknown>;
  readonly libraryVersions: Record<string, string>;
  load(key: string): Promise<Operation>;
  /** Bytes `key` is expected to take at its peak (see sdk/resources/peak-memory.ts); absent: not estimated. */
  peakMemory?(key: string, shape: ShapeVariables, params: Readonly<Record<string, unknown>>): number;
}

/** Hooks of one pool run. */
export interface EngineRunHooks {
  signal?: AbortSignal;
  onProgress?(fraction: number, message?: string): void;
  onLog?(text: string): void;
  name?: string;
  /** Serves the job's `ctx.mirrorGene` (genes from the session's column mirror). */
  geneReader?(table: string, gene: string): Promise<Float32Array | null>;
}

/** What a session needs of the worker pool. */
export interface EnginePool {
  run(task: WorkerTask, hooks?: EngineRunHooks): Promise<unknown>;
}

/** What a session needs of the event bus. */
export interface EngineBus {
  emit(event: string, data: object): unknown;
}
