/** Shape annotation tools over real HTTP: add (default yellow stroke), list, delete; lock and bad geometry. */
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
});
afterAll(async () => {
  await mcp?.close();
  await t?.server.app.close();
  await t?.close();
});

describe("shape annotations", () => {
  it("add needs the lock (423)", async () => {
    const r = await mcp.call("add_shape_annotation", {
      session_id: sid,
      geometry: {
        kind: "box",
        points: [
          [1, 1],
          [5, 5],
        ],
      },
    });
    expect(r.structuredContent).toMatchObject({ status: 423 });
  });

  it("adds a box with the default stroke, lists it as the HTTP API does, deletes it", async () => {
    await mcp.ok("set_active_session", { session_id: sid, take_control: true });
    const add = await mcp.ok<{ shape_id: string; status: string }>("add_shape_annotation", {
      label: "dense band",
      geometry: {
        kind: "box",
        points: [
          [10, 20],
          [60, 45],
        ],
      },
    });
    expect(add.status).toBe("completed");
    const { shapes } = await mcp.ok<{ shapes: Record<string, unknown>[] }>("list_shape_annotations");
    expect(shapes).toEqual([
      expect.objectContaining({
        id: add.shape_id,
        kind: "box",
        text: "dense band",
        color: "#ffcc00",
        stroke_width: 2,
      }),
    ]);
    const http = (await (await t.api(`/api/sessions/${sid}/shape-annotations`)).json()) as {
      shapes: unknown[];
    };
    expect(http.shapes).toEqual(shapes);
    const del = await mcp.ok<{ status: string }>("delete_shape_annotation", { shape_id: add.shape_id });
    expect(del.status).toBe("completed");
    expect((await mcp.ok<{ shapes: unknown[] }>("list_shape_annotations")).shapes).toEqual([]);
  });

  it("bad geometry and an unknown shape id are tool errors", async () => {
    const bad = await mcp.call("add_shape_annotation", { geometry: { kind: "star", points: [[0, 0]] } });
    expect(bad.isError).toBe(true);
    expect((bad.content[0] as { text: string }).text).toMatch(/geometry\.kind/);
    const missing = await mcp.call("delete_shape_annotation", { shape_id: "nope" });
    expect(missing.isError).toBe(true);
    expect(missing.structuredContent).toMatchObject({ status: 404 });
  });
});
