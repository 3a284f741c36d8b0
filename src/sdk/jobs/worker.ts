/**
 * The worker-thread entry of the job pool (piscina loads it; its default export runs one task).
 *
 * It imports the operation's module (cached by the module loader after the first job), builds the
 * `OpContext`, runs the operation and posts the result back with its private buffers moved. Progress
 * and log lines go to the main thread on the job's own MessagePort, followed by an `end` message, so
 * the pool can deliver all of them before it settles the job.
 *
 * Cancellation is cooperative first: the main thread sets a shared abort flag and posts `abort`.
 * `ctx.signal.aborted` reads the flag directly, so even a synchronous loop sees it; the signal's
 * `abort` event fires when the message arrives (an operation awaiting something). An operation that
 * ignores it is stopped by terminating its thread after a grace period (see `WorkerPool`).
 */
import { Piscina } from "piscina";
import type { DeferredMatrix } from "../data/deferred.js";
import { Rng } from "../math/rng.js";
import type { OpContext } from "./operation.js";
import {
  ABORT_INDEX,
  type ControlMessage,
  type JobMessage,
  type TaskEnvelope,
  type TaskOutcome,
} from "./task.js";
import { packResult, restoreInWorker } from "./transfer.js";

/** The real `aborted` getter (the instance's own one is shadowed below). */
const ABORTED = Object.getOwnPropertyDescriptor(AbortSignal.prototype, "aborted")!.get!;

/** An AbortSignal that also reports aborted as soon as the shared flag is set. */
function cooperativeSignal(flag: Int32Array, controller: AbortController): AbortSignal {
  const signal = controller.signal;
  const check = () => {
    if (!ABORTED.call(signal) && Atomics.load(flag, ABORT_INDEX) !== 0) {
      controller.abort(new DOMException("job cancelled", "AbortError"));
    }
  };
  // Shadow the prototype's members on this instance: synchronous code polling `aborted` or calling
  // `throwIfAborted()` sees the flag without an event-loop turn.
  Object.defineProperty(signal, "aborted", {
    get() {
      check();
      return ABORTED.call(signal) as boolean;
    },
  });
  Object.defineProperty(signal, "throwIfAborted", {
    value() {
      check();
      AbortSignal.prototype.throwIfAborted.call(signal);
    },
  });
  return signal;
}

function errorInfo(e: unknown): { name: string; message: string; stack?: string } {
  if (e instanceof Error) return { name: e.name, message: e.message, ...(e.stack ? { stack: e.stack } : {}) };
  return { name: "Error", message: typeof e === "string" ? e : (JSON.stringify(e) ?? String(e)) };
}

/** Run one task (piscina's handler). */
export default async function runTask(env: TaskEnvelope): Promise<unknown> {
  const { task, port, abortFlag, name } = env;
  const post = (m: JobMessage) => port.postMessage(m);
  const controller = new AbortController();
  const signal = cooperativeSignal(abortFlag, controller);
  const genes = new Map<number, (v: Float32Array | null) => void>();
  let nextGene = 1;
  const onControl = (m: ControlMessage) => {
    if (m?.type === "abort" && !ABORTED.call(signal)) {
      controller.abort(new DOMException(m.reason || "job cancelled", "AbortError"));
    } else if (m?.type === "gene") {
      genes.get(m.id)?.(m.values);
      genes.delete(m.id);
    }
  };
  port.on("message", onControl);
  post({ type: "start" });
  let outcome: TaskOutcome;
  let transfer: ArrayBuffer[] = [];
  try {
    const mod = (await import(task.module)) as Record<string, unknown>;
    const fn = mod[task.export];
    if (typeof fn !== "function") {
      throw new Error(`${name}: module ${task.module} has no exported function "${task.export}"`);
    }
    const ctx: OpContext = {
      table: task.table,
      signal,
      rng: new Rng(task.seed),
      threads: task.threads,
      progress(fraction: number, message?: string) {
        const f = Number.isFinite(fraction) ? Math.min(1, Math.max(0, fraction)) : 0;
        post(
          message === undefined
            ? { type: "progress", fraction: f }
            : { type: "progress", fraction: f, message: String(message) },
        );
      },
      log(text: string) {
        post({ type: "log", text: String(text) });
      },
      mirrorGene(table: string, gene: string) {
        const id = nextGene++;
        return new Promise<Float32Array | null>((resolve) => {
          genes.set(id, resolve);
          post({ type: "gene", id, table: String(table), gene: String(gene) });
        });
      },
    };
    const deferred: DeferredMatrix[] = [];
    const sdata = restoreInWorker(task.sdata, { threads: task.threads, deferred });
    const value: unknown = await fn(sdata, task.params, ctx);
    const packed = await packResult(value, `result of ${name}`);
    // Deferred values the job wrote out go back with the result (shared memory: no copy), so the main
    // thread's matrices keep them and the next job does not write them out again.
    const written = deferred.flatMap((d) => {
      const m = d.loaded();
      return m ? [{ id: d.id, matrix: m }] : [];
    });
    outcome = written.length ? { ok: true, value: packed.value, written } : { ok: true, value: packed.value };
    transfer = packed.transfer;
  } catch (e) {
    outcome = { ok: false, error: errorInfo(e) };
  } finally {
    for (const resolve of genes.values()) resolve(null);
    genes.clear();
    port.off("message", onControl);
    post({ type: "end" });
  }
  return Piscina.move({ [Piscina.transferableSymbol]: transfer, [Piscina.valueSymbol]: outcome } as never);
}
