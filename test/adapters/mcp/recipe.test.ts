/** run_recipe over real HTTP: the bundled annotate_demo recipe run (wait) and staged; unknown names and values refused. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "../http/harness.js";
import { connectMcp, type McpTestClient } from "./harness.js";

let t: TestServer;
let mcp: McpTestClient;
let sid: string;
beforeAll(async () => {
  t = await startTestServer();
  sid = await t.openDemo();
  mcp = await connectMcp(t.url);
  await mcp.ok("set_active_session", { session_id: sid, take_control: true });
});
afterAll(async () => {
  await mcp?.close();
  await t?.server.app.close();
  await t?.close();
});

describe("run_recipe", () => {
  it("stages annotate_demo as pending steps, changing no data", async () => {
    const steps = t.server.service.recipes.recipes.find((r) => r.recipe.meta.name === "annotate_demo")!.recipe
      .steps;
    const r = await mcp.ok<{ step_ids: string[] }>("run_recipe", { recipe: "annotate_demo", mode: "stage" });
    expect(r.step_ids.length).toBe(steps.length);
    const pending = t.server.service
      .session(sid)
      .appState.compute_history.filter((h) => h.status === "pending");
    expect(pending.map((h) => h.id)).toEqual(r.step_ids);
  });

  it("runs annotate_demo with wait: every step completed, the compartment column exists", async () => {
    const r = await mcp.ok<{ steps: { status: string }[] }>("run_recipe", { recipe: "annotate_demo" });
    expect(r.steps.length).toBeGreaterThan(0);
    expect(r.steps.every((s) => s.status === "completed")).toBe(true);
    const s = t.server.service.session(sid);
    expect(Object.keys(s.data.tables[s.activeTable!]!.obs.columns)).toContain("compartment");
  });

  it("an unknown recipe is a 404, an unknown param value a 400; nothing is queued", async () => {
    const before = t.server.service.session(sid).appState.compute_history.length;
    const unknown = await mcp.call("run_recipe", { recipe: "nope" });
    expect(unknown.structuredContent).toMatchObject({ status: 404 });
    const bad = await mcp.call("run_recipe", { recipe: "annotate_demo", param_values: { bogus: 1 } });
    expect(bad.structuredContent).toMatchObject({ status: 400 });
    expect((bad.content[0] as { text: string }).text).toMatch(/bogus/);
    expect(t.server.service.session(sid).appState.compute_history.length).toBe(before);
  });
});
