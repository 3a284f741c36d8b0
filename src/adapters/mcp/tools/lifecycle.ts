/** Tools 4, 7, 8: open a session (checkpoint or reader), save a checkpoint, close a session. */
import { S, tool } from "../tool.js";
import { awaitJob } from "../wait.js";

/** The arguments of `create_session`. */
interface CreateArgs {
  checkpoint_path?: string;
  reader?: { namespace: "io" | "read"; function: string; params?: Record<string, unknown> };
  name?: string;
  wait: boolean;
  timeout_s: number;
}

/** `create_session`: a session from a checkpoint or a reader; it becomes the agent's active session. */
export const createSession = tool<CreateArgs>({
  name: "create_session",
  description:
    "Opens a session from a checkpoint (checkpoint_path, see list_datasets) or through a reader ({namespace, function, params}, see list_readers). The new session becomes the agent's active session (without the lock). With wait (default) it returns once loaded or timeout_s passes.",
  inputSchema: {
    type: "object",
    additionalProperties: false,
    properties: {
      checkpoint_path: S.str("A .zarr / .zarr.zip checkpoint inside the data dir.", {
        minLength: 1,
        maxLength: 4096,
      }),
      reader: {
        type: "object",
        required: ["namespace", "function"],
        additionalProperties: false,
        properties: {
          namespace: { type: "string", enum: ["io", "read"] },
          function: { type: "string", minLength: 1, maxLength: 128 },
          params: { type: "object" },
        },
        description: "A reader call (list_readers).",
      },
      name: S.str("The session's name.", { minLength: 1, maxLength: 500 }),
      wait: S.bool("Wait until the data is loaded (bounded by timeout_s).", true),
      timeout_s: S.int("Longest wait in seconds.", 900, 1, 86_400),
    },
    oneOf: [{ required: ["checkpoint_path"] }, { required: ["reader"] }],
  },
  async run(a, ctx) {
    const source = a.checkpoint_path
      ? { kind: "load", path: a.checkpoint_path }
      : {
          kind: "read",
          namespace: a.reader!.namespace,
          function: a.reader!.function,
          params: a.reader!.params ?? {},
        };
    const session = await ctx.service.createSessionFromBody({ source, ...(a.name ? { name: a.name } : {}) });
    ctx.agent.attach(session.id, false);
    if (a.wait) {
      // The load's progress (`session.loading`: a reader's phases, pct 0–100) goes to the client's
      // progress token meanwhile.
      const stop = ctx.service.bus.subscribe((e) => {
        if (e.event !== "session.loading") return;
        const d = e.data as { session_id?: string; pct: number; message?: string };
        if (d.session_id === session.id) void ctx.progress(d.pct / 100, d.message);
      }, ctx.service.bus.lastId);
      let timer: ReturnType<typeof setTimeout> | undefined;
      let onAbort: (() => void) | undefined;
      try {
        await Promise.race([
          session.ready,
          new Promise<void>((r) => {
            timer = setTimeout(r, a.timeout_s * 1000);
            onAbort = () => r();
            ctx.signal.addEventListener("abort", onAbort, { once: true });
          }),
        ]);
      } finally {
        stop();
        clearTimeout(timer);
        if (onAbort) ctx.signal.removeEventListener("abort", onAbort);
      }
    }
    return { structured: { ...session.summary(), active_session_id: session.id } };
  },
});

/** `save_checkpoint`: queue a save (default a content-hashed name in the data dir). */
export const saveCheckpoint = tool<{ session_id?: string; path?: string; wait: boolean; timeout_s: number }>({
  name: "save_checkpoint",
  description:
    "Saves the session as a checkpoint (a queued job behind every change queued before it). Default: a content-hashed name in the data dir; path gives an exact file under the data dir. Needs the edit lock.",
  inputSchema: {
    type: "object",
    additionalProperties: false,
    properties: {
      session_id: S.session,
      path: S.str("Exact output path under the data dir (…/name.sdata.zarr.zip).", {
        minLength: 1,
        maxLength: 4096,
      }),
      wait: S.bool("Wait until the save ends (bounded by timeout_s).", true),
      timeout_s: S.int("Longest wait in seconds.", 600, 1, 86_400),
    },
  },
  async run(a, ctx) {
    // Never refused for memory: saving is how work is kept on a full server.
    const session = ctx.agent.mutable(a.session_id);
    const ticket = await session.save(a.path ? { path: a.path } : {});
    const base = { job_id: ticket.job_id, path: ticket.path };
    if (!a.wait) return { structured: { ...base, status: ticket.status } };
    const out = await awaitJob(ticket, a.timeout_s, ctx);
    if (!out)
      return {
        structured: { ...base, status: ctx.service.job(session.id, ticket.job_id).status, timed_out: true },
      };
    return {
      structured: {
        ...base,
        status: out.status,
        ...((out.result as { path?: string } | undefined)?.path
          ? { path: (out.result as { path: string }).path }
          : {}),
        ...(out.error ? { error: out.error } : {}),
      },
    };
  },
});

/** `close_session`: close a session, saving it first when asked (a failed save leaves it open). */
export const closeSession = tool<{ session_id: string; save: boolean }>({
  name: "close_session",
  description:
    "Closes a session for every viewer, optionally saving it first (if that save fails the session stays open). Needs the edit lock.",
  inputSchema: {
    type: "object",
    required: ["session_id"],
    additionalProperties: false,
    properties: {
      session_id: { type: "string", minLength: 1, maxLength: 200, description: "The session to close." },
      save: S.bool("Save a checkpoint first.", false),
    },
  },
  async run(a, { service, agent }) {
    agent.mutable(a.session_id);
    await service.deleteSession(a.session_id, { save: a.save });
    return { structured: { closed: a.session_id, saved: a.save } };
  },
});
