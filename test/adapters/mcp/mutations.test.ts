/**
 * The agent's changes over real HTTP with the SDK's MCP client: taking and releasing control, the edit
 * lock against a human viewer, `run_function` with and without `wait`, its timeout and failure answers,
 * and the agent's jobs in the event stream a browser reads.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AGENT_NAME } from "../../../src/adapters/mcp/agent.js";
import { startTestServer, type TestServer } from "../http/harness.js";
import { openSse } from "../http/sse.js";
import { connectMcp, type McpTestClient } from "./harness.js";

let t: TestServer;
let mcp: McpTestClient;
let sid: string;
const HUMAN = { clientId: "human-browser-tab-0001", clientName: "Ada" };
beforeAll(async () => {
  t = await startTestServer();
  sid = await t.openDemo();
  mcp = await connectMcp(t.url);
});
afterAll(async () => {
  await mcp?.close();
  await t?.close();
});

const text = (r: { content: unknown[] }) => (r.content[0] as { text: string }).text;
const lock = () => t.server.service.presence.lockOf(sid);

describe("control and the edit lock", () => {
  it("run_function before taking control is refused (423) and changes nothing", async () => {
    const before = t.server.service.session(sid).appState.compute_history.length;
    const r = await mcp.call("run_function", { session_id: sid, namespace: "custom", function: "noop" });
    expect(r.isError).toBe(true);
    expect(r.structuredContent).toMatchObject({ status: 423 });
    expect(text(r)).toMatch(/take_control/);
    expect(t.server.service.session(sid).appState.compute_history.length).toBe(before);
  });

  it("set_active_session without take_control makes the agent a viewer, not the lock holder", async () => {
    const r = await mcp.ok<{ active_session_id: string; has_control: boolean }>("set_active_session", {
      session_id: sid,
    });
    expect(r).toMatchObject({ active_session_id: sid, has_control: false });
    expect(lock()).toBeNull();
    const view = t.server.service.presence.view();
    expect(view.sessions[sid]?.viewers).toContain(AGENT_NAME);
  });

  it("while a human holds the lock, take_control is a 409 and run_function a 423 naming the holder", async () => {
    expect((await t.api(`/api/sessions/${sid}/lock`, { method: "POST", ...HUMAN })).status).toBe(200);
    const take = await mcp.call("set_active_session", { session_id: sid, take_control: true });
    expect(take.isError).toBe(true);
    expect(take.structuredContent).toMatchObject({ status: 409 });
    expect(text(take)).toMatch(/Ada/);
    const run = await mcp.call("run_function", { namespace: "custom", function: "noop" });
    expect(run.structuredContent).toMatchObject({ status: 423 });
    expect(text(run)).toMatch(/locked by Ada/);
    expect((await t.api(`/api/sessions/${sid}/lock`, { method: "DELETE", ...HUMAN })).status).toBe(200);
  });

  it("take_control takes the lock as 'the assistant'; the human is then refused with the lock error", async () => {
    const r = await mcp.ok<{ has_control: boolean }>("set_active_session", {
      session_id: sid,
      take_control: true,
    });
    expect(r.has_control).toBe(true);
    expect(lock()?.name).toBe(AGENT_NAME);
    const human = await t.api(`/api/sessions/${sid}/jobs`, {
      method: "POST",
      json: { namespace: "custom", function: "noop" },
      ...HUMAN,
    });
    expect(human.status).toBe(423);
    expect(((await human.json()) as { detail: string }).detail).toMatch(/the assistant/);
  });
});

describe("run_function", () => {
  it("runs a small pipeline with wait: normalize_total → log1p → pca, the diff names X_pca", async () => {
    for (const [fn, params] of [
      ["normalize_total", { target_sum: 10_000 }],
      ["log1p", {}],
    ] as const) {
      const r = await mcp.ok<{ status: string }>("run_function", {
        namespace: "sc.pp",
        function: fn,
        params,
      });
      expect(r.status).toBe("completed");
    }
    const pca = await mcp.ok<{ status: string; structural_diff: Record<string, unknown> }>("run_function", {
      namespace: "sc.pp",
      function: "pca",
      params: { n_comps: 5 },
    });
    expect(pca.status).toBe("completed");
    expect(JSON.stringify(pca.structural_diff)).toMatch(/X_pca/);
    const s = t.server.service.session(sid);
    const table = s.data.tables[s.activeTable!]!;
    const emb = table.obsm.X_pca as unknown as { shape: number[] };
    expect(emb.shape).toEqual([table.obs.index.values.length, 5]);
    const hist = s.appState.compute_history.map((h) => h.function);
    expect(hist.slice(-3)).toEqual(["normalize_total", "log1p", "pca"]);
  });

  it("without wait answers {job_id, status:'queued'} at once; the job completes", async () => {
    const r = await mcp.ok<{ job_id: string; status: string }>("run_function", {
      namespace: "custom",
      function: "sleep",
      params: { ms: 300 },
      wait: false,
    });
    expect(r.status).toBe("queued");
    expect((await t.waitJob(sid, r.job_id)).status).toBe("completed");
  });

  it("a wait past timeout_s answers timed_out with the job still running; get_job follows it", async () => {
    const r = await mcp.ok<{ job_id: string; status: string; timed_out: boolean }>("run_function", {
      namespace: "custom",
      function: "sleep",
      params: { ms: 2500 },
      timeout_s: 1,
    });
    expect(r.timed_out).toBe(true);
    expect(["queued", "running"]).toContain(r.status);
    expect((await t.waitJob(sid, r.job_id)).status).toBe("completed");
    expect((await mcp.ok<{ status: string }>("get_job", { job_id: r.job_id })).status).toBe("completed");
  });

  it("a failing job answers failed with its error and the log tail", async () => {
    const r = await mcp.ok<{ status: string; error: string; log_tail: string }>("run_function", {
      namespace: "custom",
      function: "fail",
      params: {},
    });
    expect(r.status).toBe("failed");
    expect(r.error.length).toBeGreaterThan(0);
    expect(typeof r.log_tail).toBe("string");
  });

  it("bad params are a 400 tool error naming the param; an unknown function too", async () => {
    const bad = await mcp.call("run_function", {
      namespace: "sc.pp",
      function: "pca",
      params: { n_comps: "five" },
    });
    expect(bad.isError).toBe(true);
    expect(bad.structuredContent).toMatchObject({ status: 400 });
    expect(text(bad)).toMatch(/n_comps/);
    const unknown = await mcp.call("run_function", { namespace: "sc.pp", function: "nope" });
    expect(unknown.isError).toBe(true);
    expect(text(unknown)).toMatch(/nope/);
  });

  it("the agent's jobs appear in the event stream a browser reads", async () => {
    const sse = await openSse(`${t.url}/api/events`);
    try {
      const r = await mcp.ok<{ job_id: string }>("run_function", { namespace: "custom", function: "noop" });
      await sse.waitFor(
        () =>
          sse.frames.some(
            (f) => f.event === "job.completed" && (f.data as { job_id: string }).job_id === r.job_id,
          ),
        10_000,
      );
      expect(
        sse.frames.some(
          (f) => f.event === "job.queued" && (f.data as { job_id: string }).job_id === r.job_id,
        ),
      ).toBe(true);
    } finally {
      sse.close();
    }
  });
});

describe("release_control", () => {
  it("releases the lock and detaches; the human can then change the session", async () => {
    const r = await mcp.ok<{ previous_session_id: string }>("release_control");
    expect(r.previous_session_id).toBe(sid);
    expect(lock()).toBeNull();
    expect((await mcp.ok<{ active_session_id: unknown }>("list_sessions")).active_session_id).toBeNull();
    const human = await t.api(`/api/sessions/${sid}/jobs`, {
      method: "POST",
      json: { namespace: "custom", function: "noop" },
      ...HUMAN,
    });
    expect(human.status).toBe(200);
  });
});
