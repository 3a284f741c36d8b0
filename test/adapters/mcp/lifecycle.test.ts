/**
 * Opening, saving and closing sessions through the MCP tools over real HTTP: create_session from a
 * checkpoint the data dir lists, save_checkpoint writing a real file that list_datasets then finds,
 * close_session, and the argument errors.
 */
import { existsSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "../http/harness.js";
import { connectMcp, type McpTestClient } from "./harness.js";

let t: TestServer;
let mcp: McpTestClient;
beforeAll(async () => {
  t = await startTestServer();
  mcp = await connectMcp(t.url);
});
afterAll(async () => {
  await mcp?.close();
  // Closing the HTTP app first: with the three MCP test files running in parallel, `t.close()` alone
  // hung past the hook timeout in 2 of 3 runs after this file's save + close (not yet understood; see
  // docs/mcp.md "Open"), while closing the app and then the service never did.
  await t?.server.app.close();
  await t?.close();
});

describe("session lifecycle", () => {
  let sid = "";
  it("create_session opens the listed checkpoint, waits for it, and makes it the active session", async () => {
    const { datasets } = await mcp.ok<{ datasets: { path: string }[] }>("list_datasets");
    const r = await mcp.ok<{ id: string; status: string; active_session_id: string }>("create_session", {
      checkpoint_path: datasets[0]!.path,
      name: "from-agent",
    });
    sid = r.id;
    expect(r.status).toBe("ready");
    expect(r.active_session_id).toBe(sid);
    expect(t.server.service.session(sid).name).toBe("from-agent");
    expect((await mcp.ok<{ active_session_id: string }>("list_sessions")).active_session_id).toBe(sid);
  });

  it("save_checkpoint needs the lock, then writes a checkpoint list_datasets finds", async () => {
    const refused = await mcp.call("save_checkpoint", {});
    expect(refused.structuredContent).toMatchObject({ status: 423 });
    await mcp.ok("set_active_session", { session_id: sid, take_control: true });
    const r = await mcp.ok<{ status: string; path: string }>("save_checkpoint", {});
    expect(r.status).toBe("completed");
    expect(existsSync(r.path)).toBe(true);
    const { datasets } = await mcp.ok<{ datasets: unknown[] }>("list_datasets");
    expect(datasets.length).toBe(2);
  });

  it("close_session closes it; the agent has no active session any more", async () => {
    const r = await mcp.ok<{ closed: string }>("close_session", { session_id: sid });
    expect(r.closed).toBe(sid);
    expect(t.server.service.sessions().length).toBe(0);
    expect((await mcp.ok<{ active_session_id: unknown }>("list_sessions")).active_session_id).toBeNull();
  });

  it.each([
    [{}, 400],
    [{ checkpoint_path: "../../etc/passwd" }, 400],
    [{ checkpoint_path: "missing.sdata.zarr.zip" }, 400],
    [{ reader: { namespace: "io", function: "no_such_reader", params: {} } }, 400],
  ])("create_session %j is a tool error %i and opens nothing", async (args, status) => {
    const r = await mcp.call("create_session", args);
    expect(r.isError).toBe(true);
    expect(r.structuredContent).toMatchObject({ status });
    expect(t.server.service.sessions().length).toBe(0);
  });
});
