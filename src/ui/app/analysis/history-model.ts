/**
 * The history lists' rules (client.md 3.1), as pure functions tested without a browser: the badge a
 * status shows, which rows may be deleted or cancelled, the elapsed time of a running step, and the
 * save/subset/transform jobs that block the app behind the overlay (client.md 1.3).
 */
import type { HistEntry, PlotEntry } from "../../../sdk/io/checkpoint/app-state.js";
import type { QueueItem } from "./host.js";

/** A row of either list. */
export type HistoryRow = HistEntry | PlotEntry;

/** Whether a row is a plot (plots have `references`, compute steps have `structural_diff`). */
export function isPlot(row: HistoryRow): row is PlotEntry {
  return "references" in row;
}

/** The badge text of a status. */
export function badgeText(status: string): string {
  return status === "pending" ? "draft" : status;
}

/** Whether the row may be deleted from history: pending, failed and cancelled rows changed nothing. */
export function deletable(row: HistoryRow): boolean {
  return row.status === "pending" || row.status === "failed" || row.status === "cancelled";
}

/** Whether the row's job can still be cancelled (queued only; a running job runs to its end). */
export function cancellable(row: HistoryRow): boolean {
  return row.status === "queued";
}

/** `m:ss` (or `h:mm:ss`) from `since` (ISO) to `now` (ms); empty when unknown. */
export function elapsed(since: string | null | undefined, now: number): string {
  if (!since) return "";
  const t = Date.parse(since);
  if (!Number.isFinite(t)) return "";
  const s = Math.max(0, Math.floor((now - t) / 1000));
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const ss = String(s % 60).padStart(2, "0");
  return h ? `${h}:${String(m).padStart(2, "0")}:${ss}` : `${m}:${ss}`;
}

/** The duration between two ISO times, e.g. `1.3 s`; empty when either is missing. */
export function duration(start: string | null | undefined, end: string | null | undefined): string {
  if (!start || !end) return "";
  const ms = Date.parse(end) - Date.parse(start);
  if (!Number.isFinite(ms)) return "";
  return ms < 60_000 ? `${(ms / 1000).toFixed(1)} s` : elapsed(start, Date.parse(end));
}

/** The local time of day of an ISO timestamp (`14:02:31`), empty when absent. */
export function clock(iso: string | null | undefined): string {
  if (!iso) return "";
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? "" : d.toLocaleTimeString([], { hour12: false });
}

/** The service's own jobs that block the app while queued or running (save, subset, points transform). */
const BLOCKING = new Set(["save", "subset", "points_transform"]);

/** The label of a blocking job, or null for any other job. */
export function blockingLabel(item: QueueItem): string | null {
  const d = item.descriptor;
  if (!d || d.namespace !== "session" || !BLOCKING.has(d.function)) return null;
  return d.function === "save"
    ? "Saving the session…"
    : d.function === "subset"
      ? "Creating the subset session…"
      : "Applying the points transform…";
}

/**
 * The job that drives a row now. A compute step's job has the step's id; a plot's redraw runs as a
 * job of its own id (`POST …/plots/{id}/redraw`), and `job.log` names only the job — but the queue is
 * serial, so a running plot is driven by the queue's running job of the same function.
 */
export function drivingJob(row: HistoryRow, queue: readonly QueueItem[]): string | null {
  if (!isPlot(row) || row.status !== "running") return null;
  const run = queue.find(
    (q) =>
      q.status === "running" &&
      q.descriptor?.namespace === row.namespace &&
      q.descriptor?.function === row.function,
  );
  return run && run.job_id !== row.id ? run.job_id : null;
}
