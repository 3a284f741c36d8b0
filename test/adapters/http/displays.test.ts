import { afterAll, beforeAll, describe, expect, it } from "vitest";
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

const spatial = {
  type: "spatial_canvas",
  encoding: { coords: "obsm:spatial", color_by: "obs:cell_type", image_layer: "morphology", point_size: 3 },
  viewport: { target: [64, 64], zoom: 1 },
};

/** Events since `after` from the polling route. */
async function eventsSince(
  after: number,
): Promise<{ id: number; event: string; data: Record<string, unknown> }[]> {
  const r = await t.api(`/api/events/poll?after=${after}`);
  expect(r.status).toBe(200);
  return ((await r.json()) as { events: { id: number; event: string; data: Record<string, unknown> }[] })
    .events;
}

const baseline = async (): Promise<number> =>
  ((await (await t.api("/api/events/poll")).json()) as { last_id: number }).last_id;

const displays = () => t.server.service.session(sid).appState.displays;

describe("POST /api/sessions/{id}/displays", () => {
  it("mints an id, stores the display and emits display.updated", async () => {
    const after = await baseline();
    const r = await t.api(`/api/sessions/${sid}/displays`, { method: "POST", json: spatial });
    expect(r.status).toBe(200);
    const d = (await r.json()) as { id: string; type: string; encoding: object };
    expect(d.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(d).toEqual({ ...spatial, id: d.id });
    expect(displays().find((x) => x.id === d.id)).toEqual(d);
    const ev = (await eventsSince(after)).filter((e) => e.event === "display.updated");
    expect(ev).toHaveLength(1);
    expect(ev[0]!.data).toEqual({ session_id: sid, display_id: d.id, spec: d });
  });

  it("adds an embedding display too", async () => {
    const emb = {
      type: "embedding_canvas",
      encoding: { obsm_key: "spatial", x_component: 0, y_component: 1, color_by: null },
      viewport: { target: [0, 0], zoom: 2, rotationX: 0, rotationOrbit: 0 },
    };
    const r = await t.api(`/api/sessions/${sid}/displays`, { method: "POST", json: emb });
    expect(r.status).toBe(200);
    expect(((await r.json()) as { type: string }).type).toBe("embedding_canvas");
  });

  it("refuses an id in the body, bad JSON, unknown and mistyped fields, schema violations", async () => {
    const bad: [unknown, RegExp][] = [
      [{ ...spatial, id: "mine" }, /leave id out/],
      [{ ...spatial, extra: 1 }, /unknown field "extra"/],
      [{ ...spatial, type: "table_canvas" }, /type/],
      [{ type: "spatial_canvas", encoding: {} }, /viewport/],
      [{ ...spatial, encoding: { color_by: "obs:x" } }, /invalid display.*coords/],
      [{ ...spatial, encoding: { coords: "obsm:spatial", render_mode: "dots" } }, /invalid display/],
      [{ ...spatial, encoding: { coords: "obsm:spatial", glow: true } }, /invalid display/],
      [{ ...spatial, viewport: { target: [0, 0] } }, /invalid display.*zoom/],
      [[1, 2], /body/],
    ];
    for (const [body, re] of bad) {
      const r = await t.api(`/api/sessions/${sid}/displays`, { method: "POST", json: body });
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(((await r.json()) as { detail: string }).detail, JSON.stringify(body)).toMatch(re);
    }
    const r = await t.api(`/api/sessions/${sid}/displays`, {
      method: "POST",
      body: "{not json",
      headers: { "content-type": "application/json" },
    });
    expect(r.status).toBe(400);
    expect(((await r.json()) as { detail: string }).detail).toBeTruthy();
  });

  it("answers 404 for an unknown session", async () => {
    const r = await t.api("/api/sessions/nope/displays", { method: "POST", json: spatial });
    expect(r.status).toBe(404);
    expect(await r.json()).toEqual({ detail: 'no session "nope"' });
  });
});

describe("PUT /api/sessions/{id}/displays/{displayId}", () => {
  it("replaces a display, with or without the id in the body, and emits display.updated", async () => {
    const made = (await (
      await t.api(`/api/sessions/${sid}/displays`, { method: "POST", json: spatial })
    ).json()) as { id: string };
    const after = await baseline();
    const next = { ...spatial, encoding: { ...spatial.encoding, color_by: "obs:total_counts" } };
    let r = await t.api(`/api/sessions/${sid}/displays/${made.id}`, { method: "PUT", json: next });
    expect(r.status).toBe(200);
    expect(await r.json()).toEqual({ ok: true });
    expect(displays().find((x) => x.id === made.id)!.encoding).toEqual(next.encoding);
    r = await t.api(`/api/sessions/${sid}/displays/${made.id}`, {
      method: "PUT",
      json: { ...next, id: made.id, viewport: { target: [1, 2], zoom: 3 } },
    });
    expect(r.status).toBe(200);
    expect(displays().find((x) => x.id === made.id)!.viewport).toEqual({ target: [1, 2], zoom: 3 });
    const ev = (await eventsSince(after)).filter((e) => e.event === "display.updated");
    expect(ev.map((e) => e.data.display_id)).toEqual([made.id, made.id]);
    expect((ev[0]!.data.spec as { encoding: unknown }).encoding).toEqual(next.encoding);
  });

  it("creates a display it does not know (upsert) under the path's id", async () => {
    const n = displays().length;
    const r = await t.api(`/api/sessions/${sid}/displays/client-minted-1`, { method: "PUT", json: spatial });
    expect(r.status).toBe(200);
    expect(displays()).toHaveLength(n + 1);
    expect(displays().at(-1)!.id).toBe("client-minted-1");
  });

  it("refuses display ids that are not plain tokens", async () => {
    for (const odd of ["a%20b", "a%2Fb", "%C3%A9t%C3%A9", "x".repeat(129)]) {
      const r = await t.api(`/api/sessions/${sid}/displays/${odd}`, { method: "PUT", json: spatial });
      expect(r.status, odd).toBe(400);
      expect(((await r.json()) as { detail: string }).detail).toMatch(/params.displayId must match pattern/);
    }
  });

  it("refuses a body id that disagrees with the path, and invalid displays", async () => {
    let r = await t.api(`/api/sessions/${sid}/displays/a`, { method: "PUT", json: { ...spatial, id: "b" } });
    expect(r.status).toBe(400);
    expect(((await r.json()) as { detail: string }).detail).toMatch(/does not match/);
    r = await t.api(`/api/sessions/${sid}/displays/a`, {
      method: "PUT",
      json: { ...spatial, encoding: { coords: "obsm:spatial", opacity: "half" } },
    });
    expect(r.status).toBe(400);
    r = await t.api(`/api/sessions/nope/displays/a`, { method: "PUT", json: spatial });
    expect(r.status).toBe(404);
  });
});

describe("the edit lock", () => {
  it("answers 423 to other viewers while one holds the lock; the holder and lock-free callers pass", async () => {
    const lock = await t.api(`/api/sessions/${sid}/lock`, {
      method: "POST",
      clientId: "alice-id",
      clientName: "Alice Smith",
    });
    expect(lock.status).toBe(200);
    try {
      for (const [method, path] of [
        ["POST", `/api/sessions/${sid}/displays`],
        ["PUT", `/api/sessions/${sid}/displays/locked-1`],
      ] as const) {
        const r = await t.api(path, { method, json: spatial, clientId: "bob-id-client", clientName: "Bob" });
        expect(r.status).toBe(423);
        expect(await r.json()).toEqual({ detail: "session is locked by Alice Smith" });
        // Without a client id the caller writes only while nobody holds the lock.
        const anon = await t.api(path, { method, json: spatial });
        expect(anon.status).toBe(423);
        const mine = await t.api(path, { method, json: spatial, clientId: "alice-id" });
        expect(mine.status).toBe(200);
      }
    } finally {
      await t.api(`/api/sessions/${sid}/lock`, { method: "DELETE", clientId: "alice-id" });
    }
    const r = await t.api(`/api/sessions/${sid}/displays`, {
      method: "POST",
      json: spatial,
      clientId: "bob-id-client",
    });
    expect(r.status).toBe(200);
    await t.api(`/api/sessions/${sid}/lock`, { method: "DELETE", clientId: "bob-id-client" });
  });
});
