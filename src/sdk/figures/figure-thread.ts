/**
 * The figure thread: one worker thread that draws figures off the server's event loop. The render
 * core's per-cell passes (colours, the in-view test, point and polygon rasters, the SVG text) and
 * pdfkit's SVG → PDF are plain JavaScript that held the main thread for about a second at a million
 * cells; here they run on their own thread, reading the cell arrays on shared memory (no copy).
 *
 * `onFigureThread(op, input, run)` sends one op and resolves with its answer. Called from a thread that is
 * not the main one (a job worker drawing a plot), it runs the op in place: that thread is already off
 * the event loop. The worker starts on first use and stops after `IDLE_MS` without work; while it
 * has nothing to do it does not keep the process alive.
 */
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { isMainThread, Worker } from "node:worker_threads";
import { BadRequestError } from "../errors.js";
import { tsxWorkerImport } from "../jobs/entry.js";
import type { DrawInputs } from "./draw.js";
import type { PdfOptions } from "./export.js";
import type { RenderedFigure } from "./render.js";
import type { SnapshotFilesInput, SnapshotFilesOutput } from "./snapshot-files.js";

/** The ops the figure thread runs: `[input, output]`. */
export interface FigureOps {
  draw: [DrawInputs, RenderedFigure];
  pdf: [{ svg: string; options: PdfOptions }, Uint8Array];
  snapshot: [SnapshotFilesInput, SnapshotFilesOutput];
  preview: [{ draw: DrawInputs; dpi: number }, Uint8Array];
}

/** A request to the figure thread. */
export interface ToFigureThread {
  readonly id: number;
  readonly op: keyof FigureOps;
  readonly input: unknown;
}

/** The figure thread's answer. */
export type FromFigureThread =
  | { readonly id: number; readonly ok: true; readonly value: unknown; readonly threadId: number }
  | {
      readonly id: number;
      readonly ok: false;
      readonly error: { name: string; message: string; stack?: string | undefined };
      readonly threadId: number;
    };

/** Idle time after which the figure thread stops, ms (a preview burst reuses one thread). */
const IDLE_MS = 30_000;

/** What has run on the figure thread (for tests and the bench: proof the work left the main thread). */
export interface FigureThreadStats {
  /** Ops answered by the figure thread since the process started. */
  readonly ops: number;
  /** Thread id of the figure thread that answered last (never the main thread's 0), or null. */
  readonly lastThreadId: number | null;
}

let stats: FigureThreadStats = { ops: 0, lastThreadId: null };

/** Ops answered by the figure thread so far. */
export function figureThreadStats(): FigureThreadStats {
  return stats;
}

/** How to start the worker: the TypeScript source under tsx/vitest, the built file from dist. */
function workerEntry(): { url: URL; execArgv: string[] } {
  const here = import.meta.url;
  if (/\.[mc]?ts$/.test(here))
    return { url: new URL("./figure-worker.ts", here), execArgv: ["--import", tsxWorkerImport()] };
  const candidates = ["./figures/figure-worker.js", "../figures/figure-worker.js", "./figure-worker.js"].map(
    (rel) => new URL(rel, here),
  );
  const found = candidates.find((u) => existsSync(fileURLToPath(u)));
  if (!found) throw new Error("figure worker not found (was figures/figure-worker built by tsup?)");
  return { url: found, execArgv: [] };
}

interface Pending {
  resolve(v: unknown): void;
  reject(e: Error): void;
}

let worker: Worker | null = null;
const pending = new Map<number, Pending>();
let nextId = 1;
let idleTimer: NodeJS.Timeout | null = null;

function failAll(err: Error): void {
  for (const p of pending.values()) p.reject(err);
  pending.clear();
}

function thread(): Worker {
  if (worker) return worker;
  const { url, execArgv } = workerEntry();
  const w = new Worker(url, { execArgv });
  w.on("message", (m: FromFigureThread) => {
    const p = pending.get(m.id);
    if (!p) return;
    pending.delete(m.id);
    stats = { ops: stats.ops + 1, lastThreadId: m.threadId };
    if (m.ok) p.resolve(m.value);
    else {
      // a client's mistake found while drawing stays a 400; anything else is the server's
      const e =
        m.error.name === "BadRequestError"
          ? new BadRequestError(m.error.message)
          : new Error(m.error.message);
      if (m.error.stack) e.stack = m.error.stack;
      p.reject(e);
    }
    settleIdle();
  });
  w.on("error", (err) => {
    if (worker === w) worker = null;
    failAll(new Error(`figure thread failed: ${err.message}`));
  });
  w.on("exit", (code) => {
    if (worker === w) worker = null;
    if (pending.size) failAll(new Error(`figure thread exited (code ${code}) while drawing`));
  });
  worker = w;
  return w;
}

/** Keeps the process alive while ops are in flight; stops the thread after `IDLE_MS` without any. */
function settleIdle(): void {
  if (!worker) return;
  if (pending.size) {
    worker.ref();
    if (idleTimer) clearTimeout(idleTimer);
    idleTimer = null;
    return;
  }
  worker.unref();
  if (idleTimer) clearTimeout(idleTimer);
  const w = worker;
  idleTimer = setTimeout(() => {
    if (worker === w && pending.size === 0) {
      worker = null;
      void w.terminate();
    }
  }, IDLE_MS);
  idleTimer.unref();
}

/** Runs `op` on the figure thread (in place when this is not the main thread). */
export async function onFigureThread<K extends keyof FigureOps>(
  op: K,
  input: FigureOps[K][0],
  run: (input: FigureOps[K][0]) => Promise<FigureOps[K][1]>,
): Promise<FigureOps[K][1]> {
  if (!isMainThread) return run(input);
  const w = thread();
  const id = nextId++;
  const answer = new Promise<FigureOps[K][1]>((resolve, reject) => {
    pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
  });
  settleIdle();
  w.postMessage({ id, op, input } satisfies ToFigureThread);
  return answer;
}
