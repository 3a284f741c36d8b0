/**
 * The job runner's parts that do not hold session state: a job's record and its promise, the hooks an
 * operation reports through (throttled `job.progress`, `job.log`), the pool task of a call, and what a
 * job's result means for the session (a plot's figures; the new object, diff and touched fields of a
 * compute or a reader). `Session` queues jobs, runs them with these and commits the result in one
 * synchronous step.
 */
import { applyChange, type Change } from "../data/change.js";
import { ELEMENT_KINDS, type SpatialData } from "../data/spatialdata.js";
import type { PlotResult } from "../jobs/operation.js";
import type { WorkerTask } from "../jobs/task.js";
import type { Descriptor } from "./app-state-machine.js";
import type { EngineFunction, JobKind, JobOutcome, JobStatus } from "./types.js";

/** The figure bytes of a drawn plot. */
export interface FigureSet {
  svg?: Uint8Array;
  png?: Uint8Array;
  pdf?: Uint8Array;
}

/** A job's bookkeeping. */
export interface JobRecord {
  readonly id: string;
  readonly kind: JobKind;
  readonly descriptor: Descriptor | null;
  /** History entry or plot this job drives (`id` itself, or the plot of a redraw). */
  readonly entryId: string | null;
  /** A redraw of a plot that had been drawn before. */
  readonly redraw: boolean;
  status: JobStatus;
  log: string[];
  error?: string;
  /** What `job.completed` carried beyond the ids (save: `{path, export}`; compute: `{structural_diff}` …). */
  result?: Record<string, unknown>;
  readonly done: Promise<JobOutcome>;
  settle(outcome: JobOutcome): void;
}

/** A new, queued job record whose `done` resolves when `settle` is called. */
export function makeJobRecord(
  id: string,
  kind: JobKind,
  descriptor: Descriptor | null,
  entryId: string | null,
  redraw: boolean,
): JobRecord {
  let settle!: (o: JobOutcome) => void;
  const done = new Promise<JobOutcome>((r) => {
    settle = r;
  });
  return { id, kind, descriptor, entryId, redraw, status: "queued", log: [], done, settle };
}

/** Emits a session event (the session adds its id). */
type Emit = (event: string, data: object) => void;

/**
 * The progress hook of a job: `job.progress` events, at most every 250 ms unless the message changes or
 * the job reaches the end, so a kernel reporting per row does not flood the event stream.
 */
export function progressHook(rec: JobRecord, emit: Emit): (fraction: number, message?: string) => void {
  let last = 0;
  let lastMessage: string | undefined;
  return (fraction, message) => {
    const now = Date.now();
    const f = Number.isFinite(fraction) ? Math.min(1, Math.max(0, fraction)) : 0;
    if (now - last < 250 && message === lastMessage && f < 1) return;
    last = now;
    lastMessage = message;
    emit("job.progress", { job_id: rec.id, fraction: f, ...(message ? { message } : {}) });
  };
}

/** The log hook of a job: lines kept on the record and sent as `job.log`. */
export function logHook(rec: JobRecord, emit: Emit): (text: string) => void {
  return (text: string) => {
    rec.log.push(text);
    emit("job.log", { job_id: rec.id, chunk: `${text}\n` });
  };
}

/** The seed of a job: the params' `random_state` or `seed` when an integer, else 0. */
export function seedOf(params: Record<string, unknown>): number {
  for (const k of ["random_state", "seed"]) {
    const v = params[k];
    if (typeof v === "number" && Number.isInteger(v)) return v;
  }
  return 0;
}

/** The worker-pool task of one call of `entry` on `sdata`. */
export function poolTask(
  entry: EngineFunction,
  sdata: SpatialData,
  params: Record<string, unknown>,
  table: string | null,
  threads: number,
): WorkerTask {
  return {
    module: entry.module,
    export: entry.export,
    sdata,
    params,
    table: table ?? "",
    seed: seedOf(params),
    threads,
    effect: entry.effect_class,
  };
}

/** Whether a value is a SpatialData object (what a reader returns). */
export function isSpatialData(v: unknown): v is SpatialData {
  return typeof v === "object" && v !== null && (v as SpatialData).kind === "spatialdata";
}

/** A plot's figures from its result; throws when it returned none. */
export function plotFigures(
  entry: EngineFunction,
  result: unknown,
): { figures: FigureSet; references: string[] } {
  const p = result as PlotResult;
  if (typeof p !== "object" || p === null || p.kind !== "plot" || typeof p.svg !== "string")
    throw new Error(`${entry.key} returned no figure (a plot returns {kind: "plot", svg, references})`);
  const figures: FigureSet = { svg: new TextEncoder().encode(p.svg) };
  if (p.png) figures.png = p.png;
  if (p.pdf) figures.pdf = p.pdf;
  return { figures, references: [...(p.references ?? [])] };
}

/** Every element of an object as field paths (what a whole replacement touches). */
function elementPaths(sd: SpatialData): string[] {
  return ELEMENT_KINDS.flatMap((k) => Object.keys(sd[k]).map((n) => `${k}:${n}`));
}

/** What a reader's object replaces: every element of the new object and the old one; its diff lists the new. */
export function readerResult(
  entry: EngineFunction,
  committed: SpatialData,
  result: unknown,
): { sdata: SpatialData; diff: Record<string, string[]>; touched: string[] } {
  if (!isSpatialData(result)) throw new Error(`${entry.key} returned no SpatialData object`);
  return {
    sdata: result,
    touched: [...new Set([...elementPaths(committed), ...elementPaths(result)])],
    diff: Object.fromEntries(
      ELEMENT_KINDS.map((k) => [k, Object.keys(result[k])]).filter(([, v]) => v.length),
    ),
  };
}

/** What a compute's result makes of the committed object (`applyChange`; no result is no change). */
export function computeResult(
  committed: SpatialData,
  result: unknown,
): { sdata: SpatialData; diff: Record<string, string[]>; touched: string[] } {
  return applyChange(committed, (result ?? {}) as Change);
}
