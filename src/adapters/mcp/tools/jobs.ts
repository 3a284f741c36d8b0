/** Tools 15–16: a session's queue, history and plots, and one job with its full log. */
import { S, tool } from "../tool.js";

/** `list_jobs`: the queue, the most recent history entries and the plots. */
export const listJobs = tool<{ session_id?: string; limit: number }>({
  name: "list_jobs",
  description:
    "Returns a session's job queue (running and queued), its most recent history entries and its plots.",
  inputSchema: {
    type: "object",
    additionalProperties: false,
    properties: {
      session_id: S.session,
      limit: S.int("Most history entries and plots returned.", 30, 1, 1000),
    },
  },
  async run(a, { service, agent }) {
    const s = service.session(agent.sessionId(a.session_id));
    const { compute_history: hist, plots } = s.appState;
    return {
      structured: {
        queue: s.queueView(),
        history: hist.slice(Math.max(0, hist.length - a.limit)),
        plots: plots.slice(Math.max(0, plots.length - a.limit)),
      },
    };
  },
});

/** `get_job`: one job (or history entry: they share ids) with its status, result and full log. */
export const getJob = tool<{ session_id?: string; job_id: string }>({
  name: "get_job",
  description:
    "Returns one job of a session — status, result (structural_diff of a compute), error and full log — with its history entry when it has one.",
  inputSchema: {
    type: "object",
    required: ["job_id"],
    additionalProperties: false,
    properties: {
      session_id: S.session,
      job_id: S.str("The job (or history entry) id.", { minLength: 1, maxLength: 200 }),
    },
  },
  async run(a, { service, agent }) {
    const sid = agent.sessionId(a.session_id);
    const job = service.job(sid, a.job_id);
    const open = service.sessions().find((s) => s.id === sid);
    const entry =
      open &&
      [...open.appState.compute_history, ...open.appState.plots].find(
        (e) => (e as { id: string }).id === a.job_id,
      );
    return { structured: { ...job, entry: entry ?? null } };
  },
});
