import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TesseraEvent } from "../../../src/sdk/events/types.js";
import { startTestServer, type TestServer } from "./harness.js";

let t: TestServer;
let sid: string;
beforeAll(async () => {
  t = await startTestServer();
  sid = await t.openDemo();
});
afterAll(async () => {
  await t?.close();
});

interface Shape {
  id: string;
  kind: string;
  points: number[][];
  text: string | null;
  color: string;
  fill: string | null;
  stroke_width: number;
  font_size: number;
}

const kinds: Record<string, Record<string, unknown>> = {
  arrow: {
    kind: "arrow",
    points: [
      [10, 10],
      [40, 30],
    ],
    color: "#ff0000",
    stroke_width: 4,
    text: "invasion front",
  },
  line: {
    kind: "line",
    points: [
      [0, 0],
      [50, 0],
      [50, 50],
    ],
  },
  box: {
    kind: "box",
    points: [
      [20, 20],
      [60, 45],
    ],
    fill: "#00ff00",
  },
  polygon: {
    kind: "polygon",
    points: [
      [70, 70],
      [100, 70],
      [85, 100],
    ],
    color: "#0000ff",
  },
  ellipse: {
    kind: "ellipse",
    points: [
      [30, 80],
      [60, 100],
    ],
  },
  text: { kind: "text", points: [[5, 120]], text: "Region A", font_size: 18 },
};

const base = (id = sid) => `/api/sessions/${id}/shape-annotations`;

async function list(id = sid): Promise<Shape[]> {
  const r = await t.api(base(id));
  expect(r.status).toBe(200);
  return ((await r.json()) as { shapes: Shape[] }).shapes;
}

/** Send an edit, check the answer and wait for its job; returns the answer. */
async function edit(
  method: string,
  path: string,
  json?: unknown,
  id = sid,
): Promise<{ job_id: string; shape_id: string }> {
  const r = await t.api(path, { method, ...(json !== undefined ? { json } : {}) });
  expect(r.status, await r.clone().text()).toBe(200);
  const body = (await r.json()) as { job_id: string; shape_id: string };
  expect(Object.keys(body).sort()).toEqual(["job_id", "shape_id"]);
  expect((await t.waitJob(id, body.job_id)).status).toBe("completed");
  return body;
}

describe("shape annotations", () => {
  it("starts empty", async () => {
    expect(await list()).toEqual([]);
  });

  it("creates every kind as a queued job; GET lists them with defaults filled", async () => {
    const events: TesseraEvent[] = [];
    const stop = t.server.service.bus.subscribe((e) => {
      events.push(e);
    });
    const ids: Record<string, string> = {};
    for (const [k, body] of Object.entries(kinds)) ids[k] = (await edit("POST", base(), body)).shape_id;
    stop();
    const shapes = await list();
    expect(shapes.map((s) => s.kind)).toEqual(Object.keys(kinds));
    expect(shapes.map((s) => s.id)).toEqual(Object.values(ids));
    expect(shapes[0]).toEqual({
      id: ids.arrow,
      kind: "arrow",
      points: [
        [10, 10],
        [40, 30],
      ],
      text: "invasion front",
      color: "#ff0000",
      fill: null,
      stroke_width: 4,
      font_size: 16,
      dash: "solid",
      arrow_start: false,
      arrow_end: true,
      arrow_size: 12,
      stroke_z: 1,
      fill_alpha: 0.25,
      fill_z: 0,
    });
    expect(shapes[1]).toMatchObject({
      color: "#3388ff",
      fill: null,
      stroke_width: 2,
      text: null,
      arrow_end: false,
    });
    // The annotations are a real shapes element, with one feature per shape.
    const el = t.server.service.session(sid).data.shapes.annotations!;
    expect(el.frame.index.values).toEqual(Object.values(ids));
    expect(el.geometry.type).toBe("polygon");
    // Events: job.queued / started / completed (kind shape_annotation, with the shape id).
    const done = events
      .filter((e) => e.event === "job.completed")
      .map((e) => e.data as Record<string, unknown>);
    expect(done).toHaveLength(6);
    expect(done[0]).toMatchObject({ session_id: sid, kind: "shape_annotation", shape_id: ids.arrow });
    expect(events.filter((e) => e.event === "job.queued")).toHaveLength(6);
    // Drawing makes no history entry but marks the data as changed.
    const s = t.server.service.session(sid);
    expect(s.appState.compute_history.some((h) => h.function.startsWith("shape_annotation"))).toBe(false);
    expect(s.dataVersions["shapes:annotations"]).toBe(6);
  });

  it("replaces a shape by id (body id optional) and deletes one", async () => {
    const [arrow, line] = await list();
    await edit("PUT", `${base()}/${arrow!.id}`, {
      kind: "arrow",
      points: [
        [1, 1],
        [2, 2],
      ],
      color: "#123456",
    });
    await edit("PUT", `${base()}/${line!.id}`, { ...line, text: "boundary" });
    let shapes = await list();
    expect(shapes[0]).toMatchObject({
      id: arrow!.id,
      points: [
        [1, 1],
        [2, 2],
      ],
      color: "#123456",
      text: null,
      stroke_width: 2,
    });
    expect(shapes[1]).toMatchObject({ id: line!.id, text: "boundary" });
    const del = await edit("DELETE", `${base()}/${line!.id}`);
    expect(del.shape_id).toBe(line!.id);
    shapes = await list();
    expect(shapes.map((s) => s.id)).not.toContain(line!.id);
    expect(shapes).toHaveLength(5);
  });

  it("stores the style fields of client.md 10.3 and replaces them with a PUT", async () => {
    const body = {
      ...kinds.polygon,
      dash: "dashed",
      fill: "#00aa00",
      fill_alpha: 0.7,
      fill_z: -2,
      stroke_z: 3,
    };
    const { shape_id } = await edit("POST", base(), body);
    let got = (await list()).find((s) => s.id === shape_id);
    expect(got).toMatchObject({ dash: "dashed", fill: "#00aa00", fill_alpha: 0.7, fill_z: -2, stroke_z: 3 });
    await edit("PUT", `${base()}/${shape_id}`, { ...got, dash: "dotted", fill_alpha: 0.1 });
    got = (await list()).find((s) => s.id === shape_id);
    expect(got).toMatchObject({ dash: "dotted", fill_alpha: 0.1, fill_z: -2, stroke_z: 3 });
    // The element holds them as columns.
    const el = t.server.service.session(sid).data.shapes.annotations!;
    for (const c of ["dash", "arrow_start", "arrow_end", "arrow_size", "stroke_z", "fill_alpha", "fill_z"])
      expect(Object.keys(el.frame.columns)).toContain(c);
  });

  it("survives a save and a reload", async () => {
    const before = await list();
    const s = t.server.service.session(sid);
    const out = await (await s.save({ prefix: "shapes" })).done;
    expect(out.status).toBe("completed");
    const path = (out.result as { path: string }).path;
    const again = await t.server.service.createSession({ source: { kind: "load", path } });
    await again.ready;
    expect(again.status).toBe("ready");
    expect(await list(again.id)).toEqual(before);
  });

  it("refuses bad shapes with 400 and unknown ids with 404, queuing nothing", async () => {
    const [first] = await list();
    const bad: [string, string, unknown, number, RegExp][] = [
      [
        "POST",
        base(),
        { kind: "star", points: [[0, 0]] },
        400,
        /kind must be one of arrow, line, box, polygon, ellipse, text/,
      ],
      ["POST", base(), { kind: "box", points: [[0, 0]] }, 400, /a box needs 2 points/],
      ["POST", base(), { kind: "text", points: [[0, 0]] }, 400, /non-empty text/],
      [
        "POST",
        base(),
        {
          kind: "line",
          points: [
            [0, 0],
            [1, 1],
          ],
          color: "blue",
        },
        400,
        /color must be #rrggbb/,
      ],
      [
        "POST",
        base(),
        {
          kind: "line",
          points: [
            [0, 0],
            [1, 1],
          ],
          glow: 1,
        },
        400,
        /unknown field "glow"/,
      ],
      [
        "POST",
        base(),
        {
          id: "mine",
          kind: "line",
          points: [
            [0, 0],
            [1, 1],
          ],
        },
        400,
        /leave "id" out/,
      ],
      ["POST", base(), [1, 2], 400, /body must be object/],
      ["POST", base(), { ...kinds.line, dash: "zigzag" }, 400, /dash must be one of solid, dashed, dotted/],
      ["POST", base(), { ...kinds.box, fill_alpha: 2 }, 400, /fill_alpha must be a number in \[0, 1\]/],
      ["POST", base(), { ...kinds.box, arrow_start: true }, 400, /arrow_start applies to line and arrow/],
      ["POST", base(), { ...kinds.line, stroke_z: "top" }, 400, /stroke_z must be an integer/],
      ["PUT", `${base()}/${first!.id}`, { ...first, id: "other" }, 400, /does not match/],
      ["PUT", `${base()}/${first!.id}`, { kind: "line", points: [] }, 400, /a line needs/],
      [
        "PUT",
        `${base()}/no-such-shape`,
        {
          kind: "line",
          points: [
            [0, 0],
            [1, 1],
          ],
        },
        404,
        /no shape annotation "no-such-shape"/,
      ],
      ["DELETE", `${base()}/no-such-shape`, undefined, 404, /no shape annotation "no-such-shape"/],
      ["GET", base("nope"), undefined, 404, /no session "nope"/],
      ["POST", base("nope"), kinds.line, 404, /no session "nope"/],
      ["DELETE", `${base("nope")}/x`, undefined, 404, /no session "nope"/],
    ];
    const events: TesseraEvent[] = [];
    const stop = t.server.service.bus.subscribe((e) => {
      events.push(e);
    });
    for (const [method, path, json, status, re] of bad) {
      const r = await t.api(path, { method, ...(json !== undefined ? { json } : {}) });
      expect(r.status, `${method} ${JSON.stringify(json)}`).toBe(status);
      expect(((await r.json()) as { detail: string }).detail, `${method} ${JSON.stringify(json)}`).toMatch(
        re,
      );
    }
    const r = await t.api(base(), {
      method: "POST",
      body: "{oops",
      headers: { "content-type": "application/json" },
    });
    expect(r.status).toBe(400);
    stop();
    expect(events.filter((e) => e.event === "job.queued")).toHaveLength(0);
  });

  it("answers 423 on every edit while another viewer holds the lock; reading stays open", async () => {
    const [first] = await list();
    await t.api(`/api/sessions/${sid}/lock`, { method: "POST", clientId: "hal-client", clientName: "Hal" });
    try {
      for (const [method, path, json] of [
        ["POST", base(), kinds.line],
        ["PUT", `${base()}/${first!.id}`, kinds.line],
        ["DELETE", `${base()}/${first!.id}`, undefined],
      ] as const) {
        const r = await t.api(path, { method, clientId: "ida-client", ...(json ? { json } : {}) });
        expect(r.status, method).toBe(423);
        expect(await r.json()).toEqual({ detail: "session is locked by Hal" });
      }
      const read = await t.api(base(), { clientId: "ida-client" });
      expect(read.status).toBe(200);
    } finally {
      await t.api(`/api/sessions/${sid}/lock`, { method: "DELETE", clientId: "hal-client" });
    }
  });

  it("removes the element when the last shape goes", async () => {
    const id = await t.openDemo();
    const { shape_id } = await edit("POST", base(id), kinds.box, id);
    expect(t.server.service.session(id).data.shapes.annotations).toBeDefined();
    await edit("DELETE", `${base(id)}/${shape_id}`, undefined, id);
    expect(await list(id)).toEqual([]);
    expect(t.server.service.session(id).data.shapes.annotations).toBeUndefined();
  });
});
