/** Tools 2, 3, 5, 6: list and read sessions, point the agent at one, take and release control. */
import { S, tool } from "../tool.js";

/** `list_sessions`: every session with its viewers and lock holder, the agent's active session, the app URL. */
export const listSessions = tool<Record<string, never>>({
  name: "list_sessions",
  description:
    "Lists all open sessions with their viewers and edit-lock holder, the agent's active session and the app URL.",
  inputSchema: { type: "object", additionalProperties: false, properties: {} },
  async run(_a, { service, agent }) {
    const view = service.presence.view();
    const sessions = service.list().map((s) => ({
      ...s,
      viewers: view.sessions[s.id]?.viewers ?? [],
      lock: view.sessions[s.id]?.lock ?? null,
      agent_holds_lock: agent.holds(s.id),
    }));
    return {
      structured: { sessions, active_session_id: agent.activeSession, app_url: service.config.appUrl },
    };
  },
});

/** `get_session`: fields, queue, displays, plots, recent history and active table of one session. */
export const getSession = tool<{ session_id?: string; history_limit: number }>({
  name: "get_session",
  description:
    "Returns a session's summary, fields (obs/var columns, embeddings, layers), job queue, displays, plots, the most recent history entries and the active table.",
  inputSchema: {
    type: "object",
    additionalProperties: false,
    properties: {
      session_id: S.session,
      history_limit: S.int("How many of the most recent history entries to return.", 25, 0, 1000),
    },
  },
  async run(a, { service, agent }) {
    const s = service.session(agent.sessionId(a.session_id));
    const st = s.state();
    const hist = st.app_state.compute_history;
    return {
      structured: {
        summary: st.summary,
        active_table: s.activeTable,
        lock: service.presence.lockOf(s.id),
        fields: st.fields,
        queue: st.queue,
        displays: st.app_state.displays,
        plots: st.app_state.plots,
        history: hist.slice(Math.max(0, hist.length - a.history_limit)),
        history_total: hist.length,
      },
    };
  },
});

/** `set_active_session`: point the agent at a session, optionally taking its edit lock. */
export const setActiveSession = tool<{ session_id: string; take_control: boolean }>({
  name: "set_active_session",
  description:
    "Points the agent at a session (it appears there as a viewer named 'the assistant'). With take_control true the agent takes the session's edit lock; this fails while a human viewer holds it.",
  inputSchema: {
    type: "object",
    required: ["session_id"],
    additionalProperties: false,
    properties: {
      session_id: { type: "string", minLength: 1, maxLength: 200, description: "The session to work on." },
      take_control: S.bool("Take the session's edit lock (needed before any change).", false),
    },
  },
  async run(a, { service, agent }) {
    agent.attach(a.session_id, a.take_control);
    return {
      structured: {
        active_session_id: a.session_id,
        has_control: agent.holds(a.session_id),
        lock: service.presence.lockOf(a.session_id),
      },
    };
  },
});

/** `release_control`: detach from the active session and release the agent's locks. */
export const releaseControl = tool<Record<string, never>>({
  name: "release_control",
  description: "Detaches the agent from its active session and releases every edit lock it holds.",
  inputSchema: { type: "object", additionalProperties: false, properties: {} },
  async run(_a, { agent }) {
    return { structured: { released: true, previous_session_id: agent.detach() } };
  },
});
