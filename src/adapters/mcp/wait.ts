/**
 * `wait` and `timeout_s` of the long tools: await a queued job's end, bounded, forwarding its
 * `job.progress` events to the client's progress token. A job still running at the timeout is left
 * running (the answer says so); the agent polls it with get_job.
 */
import type { JobOutcome, JobTicket } from "../../sdk/session/types.js";
import type { ToolContext } from "./tool.js";

/** The job's outcome, or null when `timeoutS` passed (or the request was aborted) first. */
export async function awaitJob(
  ticket: JobTicket,
  timeoutS: number,
  ctx: ToolContext,
): Promise<JobOutcome | null> {
  const stop = ctx.service.bus.subscribe((e) => {
    if (e.event !== "job.progress") return;
    const d = e.data as { job_id: string; fraction: number; message?: string };
    if (d.job_id === ticket.job_id) void ctx.progress(d.fraction, d.message);
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
