/** Tool 14: `run_function`, one function call through the SDK's dispatch, optionally awaited. */
import { S, tool } from "../tool.js";
import { awaitJob, logTail } from "../wait.js";

/** The arguments of `run_function`. */
interface RunArgs {
  session_id?: string;
  namespace: string;
  function: string;
  params: Record<string, unknown>;
  wait: boolean;
  timeout_s: number;
}

/** `run_function`: queue one call (the edit lock the agent holds, memory admission); wait for it when asked. */
export const runFunction = tool<RunArgs>({
  name: "run_function",
  description:
    "Runs one registry function on the session (params exactly as describe_function's json_schema gives them). Computes change the data in place — there is no undo. With wait (default) it returns when the job ends or timeout_s passes: status, structural_diff, and the log tail on failure; otherwise it returns the job id at once (poll get_job). Needs the edit lock (set_active_session with take_control).",
  inputSchema: {
    type: "object",
    required: ["namespace", "function"],
    additionalProperties: false,
    properties: {
      session_id: S.session,
      namespace: S.str("The function's namespace (sc.pp, sc.tl, sq.gr, custom …).", {
        minLength: 1,
        maxLength: 64,
      }),
      function: S.str("The function's name within its namespace (pca, leiden …).", {
        minLength: 1,
        maxLength: 128,
      }),
      params: {
        type: "object",
        default: {},
        description: "The function's params (checked against its schema).",
      },
      wait: S.bool("Wait for the job to end (bounded by timeout_s).", true),
      timeout_s: S.int("Longest wait in seconds; the job keeps running past it.", 600, 1, 86_400),
    },
  },
  async run(a, ctx) {
    const key = `${a.namespace}.${a.function}`;
    const session = ctx.agent.mutable(a.session_id, { work: key });
    const ticket = await session.submit({ namespace: a.namespace, function: a.function, params: a.params });
    if (!ticket.immediate && !a.wait) return { structured: { job_id: ticket.job_id, status: ticket.status } };
    const out = await awaitJob(ticket, a.timeout_s, ctx);
    if (!out) {
      const now = ctx.service.job(session.id, ticket.job_id);
      return {
        structured: {
          job_id: ticket.job_id,
          status: now.status,
          timed_out: true,
          hint: "poll get_job with this job_id",
        },
      };
    }
    const result = (out.result ?? null) as Record<string, unknown> | null;
    return {
      structured: {
        job_id: out.job_id,
        status: out.status,
        ...(out.kind === "compute" ? { structural_diff: result?.structural_diff ?? null } : { result }),
        ...(out.status !== "completed"
          ? { error: out.error ?? null, log_tail: logTail(ctx.service.job(session.id, out.job_id).log) }
          : {}),
      },
    };
  },
});
