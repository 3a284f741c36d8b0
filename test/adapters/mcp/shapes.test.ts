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

  it("takes client.md's stroke and fill objects and stores them as the API's style fields", async () => {
    const add = await mcp.ok<{ shape_id: string; status: string }>("add_shape_annotation", {
      geometry: {
        kind: "line",
        points: [
          [0, 0],
          [20, 5],
        ],
      },
      stroke: { color: "#00ffaa", width: 3, dash: "dotted", arrowStart: true, arrowSize: 18, z: -1 },
    });
    expect(add.status).toBe("completed");
    const box = await mcp.ok<{ shape_id: string; status: string }>("add_shape_annotation", {
      geometry: {
        kind: "box",
        points: [
          [0, 0],
          [9, 9],
        ],
      },
      fill: { color: "#112233", alpha: 0.6, z: 2 },
    });
    const { shapes } = await mcp.ok<{ shapes: Record<string, unknown>[] }>("list_shape_annotations");
    expect(shapes.find((s) => s.id === add.shape_id)).toMatchObject({
      color: "#00ffaa",
      stroke_width: 3,
      dash: "dotted",
      arrow_start: true,
      arrow_end: false,
      arrow_size: 18,
      stroke_z: -1,
    });
    expect(shapes.find((s) => s.id === box.shape_id)).toMatchObject({
      fill: "#112233",
      fill_alpha: 0.6,
      fill_z: 2,
    });
    // A bad value is the API's message naming the field.
    const bad = await mcp.call("add_shape_annotation", {
      geometry: {
        kind: "box",
        points: [
          [0, 0],
          [9, 9],
        ],
      },
      fill: { color: "#112233", alpha: 3 },
    });
    expect(bad.isError).toBe(true);
    expect((bad.content[0] as { text: string }).text).toMatch(/fill_alpha must be a number in \[0, 1\]/);
    for (const id of [add.shape_id, box.shape_id]) await mcp.ok("delete_shape_annotation", { shape_id: id });
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
