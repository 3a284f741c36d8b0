/**
 * The agent's lock and presence go after TESSERA_MCP_IDLE_RELEASE_S without a tool call (here 1 s),
 * but not while a tool is still waiting on a job.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { AGENT_NAME } from "../../../src/adapters/mcp/agent.js";
import { startTestServer, type TestServer } from "../http/harness.js";
import { connectMcp, type McpTestClient } from "./harness.js";

let t: TestServer;
let mcp: McpTestClient;
let sid: string;
beforeAll(async () => {
  t = await startTestServer({ config: { mcpIdleReleaseS: 1 } });
  sid = await t.openDemo();
  mcp = await connectMcp(t.url);
});
afterAll(async () => {
  await mcp?.close();
  await t?.server.app.close();
  await t?.close();
});

it("a tool waiting on a job longer than the idle time keeps the agent and its lock", async () => {
  await mcp.ok("set_active_session", { session_id: sid, take_control: true });
  const presence = t.server.service.presence;
  let lost = false;
  const watch = setInterval(() => {
    if (presence.lockOf(sid)?.name !== AGENT_NAME) lost = true;
  }, 50);
  try {
    // Longer than one heartbeat tick (5 s), where an idle check would release the agent.
    const r = await mcp.ok<{ status: string }>("run_function", {
      namespace: "custom",
      function: "sleep",
      params: { ms: 6500 },
    });
    expect(r.status).toBe("completed");
  } finally {
    clearInterval(watch);
  }
  expect(lost).toBe(false);
}, 60_000);

it("an idle agent loses the lock and leaves the viewers; a human can then take the lock", async () => {
  await mcp.ok("set_active_session", { session_id: sid, take_control: true });
  const presence = t.server.service.presence;
  expect(presence.lockOf(sid)?.name).toBe(AGENT_NAME);
  const t0 = Date.now();
  while (presence.lockOf(sid) !== null && Date.now() - t0 < 15_000)
    await new Promise((r) => setTimeout(r, 100));
  expect(presence.lockOf(sid)).toBeNull();
  expect(presence.view().sessions[sid]?.viewers ?? []).not.toContain(AGENT_NAME);
  const take = await t.api(`/api/sessions/${sid}/lock`, {
    method: "POST",
    clientId: "human-browser-tab-0002",
    clientName: "Ada",
  });
  expect(take.status).toBe(200);
}, 30_000);
