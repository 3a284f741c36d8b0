/**
 * `wait` and `timeout_s` of the long tools: await a queued job's end, bounded, forwarding its
 * `job.progress` events to the client's progress token. A job still running at the timeout is left
 * running (the answer says so); the agent polls it with get_job.
 */
import type { JobOutcome, JobTicket } from "../../sdk/session/types.js";
import type { ToolContext } from "./tool.js";

/**
 * The job's outcome, or null when `timeoutS` passed (or the request was aborted) first. The job's
 * progress is reported as the part `span` of the tool's whole progress (a recipe's step i of n
 * reports within `[i/n, (i+1)/n]`).
 */
export async function awaitJob(
  ticket: JobTicket,
  timeoutS: number,
  ctx: ToolContext,
  span: readonly [number, number] = [0, 1],
): Promise<JobOutcome | null> {
  const [from, to] = span;
  const stop = ctx.service.bus.subscribe((e) => {
    if (e.event !== "job.progress") return;
    const d = e.data as { job_id: string; fraction: number; message?: string };
    if (d.job_id === ticket.job_id) void ctx.progress(from + (to - from) * d.fraction, d.message);
  }, ctx.service.bus.lastId);
  let timer: ReturnType<typeof setTimeout> | undefined;
  let onAbort: (() => void) | undefined;
  try {
    return await Promise.race([
      ticket.done,
      new Promise<null>((resolve) => {
        timer = setTimeout(() => resolve(null), timeoutS * 1000);
        onAbort = () => resolve(null);
        ctx.signal.addEventListener("abort", onAbort, { once: true });
      }),
    ]);
  } finally {
    stop();
    clearTimeout(timer);
    if (onAbort) ctx.signal.removeEventListener("abort", onAbort);
  }
}

/** The last `n` lines of a log. */
export function logTail(log: string, n = 30): string {
  const lines = log.split("\n");
  return lines.slice(Math.max(0, lines.length - n)).join("\n");
}
