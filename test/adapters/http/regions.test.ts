import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Categorical, DenseArray, StringArray } from "../../../src/sdk/data/arrays.js";
import { loadMatrix } from "../../../src/sdk/data/lazy.js";
import type { TesseraEvent } from "../../../src/sdk/events/types.js";
import { publicClientId } from "../../../src/sdk/session/presence.js";
import { outerRings, ringsMeet } from "../../helpers/geometry-brute.js";
import { startTestServer, type TestServer } from "./harness.js";

let t: TestServer;
beforeAll(async () => {
  // Every test opens its own demo (a subset replaces it by its child): room for all of them.
  t = await startTestServer({ config: { maxSessions: 32 } });
});
afterAll(async () => {
  await t?.close();
});

/** The textbook even-odd test (pnpoly), the oracle for the server's selection. */
function pnpoly(ring: number[][], x: number, y: number): boolean {
  let c = false;
  for (let i = 0, j = ring.length - 1; i < ring.length; j = i++) {
    const [xi, yi] = ring[i]!;
    const [xj, yj] = ring[j]!;
    if (yi! > y !== yj! > y && x < ((xj! - xi!) * (y - yi!)) / (yj! - yi!) + xi!) c = !c;
  }
  return c;
}

const lasso = [
  [20, 20],
  [90, 25],
  [70, 60],
  [100, 100],
  [30, 90],
];
const square = [
  [95, 5],
  [120, 5],
  [120, 30],
  [95, 30],
];

/** Cell names and spatial coordinates of a session's active table. */
async function cells(id: string): Promise<{ names: string[]; xy: Float64Array }> {
  const s = t.server.service.session(id);
  const tab = s.data.tables[s.activeTable!]!;
  const sp = (await loadMatrix(tab.obsm.spatial as DenseArray)) as DenseArray;
  return { names: tab.obs.index.values as string[], xy: Float64Array.from(sp.data as Float64Array) };
}

/** Record bus events from now on. */
function record(): {
  events: TesseraEvent[];
  stop: () => void;
  waitFor: (pred: (e: TesseraEvent) => boolean) => Promise<TesseraEvent>;
} {
  const events: TesseraEvent[] = [];
  const waiters: { pred: (e: TesseraEvent) => boolean; resolve: (e: TesseraEvent) => void }[] = [];
  const stop = t.server.service.bus.subscribe((e) => {
    events.push(e);
    for (const w of [...waiters]) if (w.pred(e)) w.resolve(e);
  });
  return {
    events,
    stop,
    waitFor: (pred) => {
      const hit = events.find(pred);
      if (hit) return Promise.resolve(hit);
      return new Promise((resolve, reject) => {
        waiters.push({ pred, resolve });
        setTimeout(() => reject(new Error("event did not come")), 30_000).unref();
      });
    },
  };
}

const post = (
  id: string,
  what: "subset" | "annotate",
  json: unknown,
  init: { clientId?: string; clientName?: string } = {},
) => t.api(`/api/sessions/${id}/${what}`, { method: "POST", json, ...init });

/** Subset `id` with `body`, wait for the child, return ids and the events seen. */
async function subset(id: string, body: unknown, init: { clientId?: string } = {}) {
  const rec = record();
  try {
    const r = await post(id, "subset", body, init);
    expect(r.status).toBe(200);
    const { job_id } = (await r.json()) as { job_id: string };
    const removed = await rec.waitFor(
      (e) => e.event === "session.removed" && (e.data as { session_id: string }).session_id === id,
    );
    const childId = (removed.data as { child_id: string }).child_id;
    return { jobId: job_id, childId, events: [...rec.events] };
  } finally {
    rec.stop();
  }
}

describe("POST /api/sessions/{id}/subset", () => {
  it("by polygons: the child holds exactly the cells whose outline meets a polygon (brute force), the parent closes", async () => {
    const parent = await t.openDemo("tissue");
    const before = await cells(parent);
    const service = t.server.service;
    // The demo's table annotates cell_boundaries (identity transforms): a subset keeps every cell whose
    // outline meets a polygon (spatialdata's polygon_query), a superset of the centroids inside.
    const outlines = outerRings(service.session(parent).data.shapes.cell_boundaries!);
    service.session(parent).putDisplay({
      id: "d1",
      type: "spatial_canvas",
      encoding: { coords: "obsm:spatial", color_by: "obs:cell_type" },
      viewport: { target: [0, 0], zoom: 1 },
    });
    const { jobId, childId, events } = await subset(parent, { polygons: [lasso, square] });
    const centroidIn = (i: number) =>
      pnpoly(lasso, before.xy[2 * i]!, before.xy[2 * i + 1]!) ||
      pnpoly(square, before.xy[2 * i]!, before.xy[2 * i + 1]!);
    const want = before.names.filter((name, i) => {
      const ring = outlines.get(name);
      return centroidIn(i) || (ring !== undefined && (ringsMeet(ring, lasso) || ringsMeet(ring, square)));
    });
    const centroids = before.names.filter((_, i) => centroidIn(i));
    expect(want.length).toBeGreaterThan(centroids.length);
    expect(centroids.length).toBeGreaterThan(20);
    expect(want.length).toBeLessThan(before.names.length);
    const child = service.session(childId);
    expect((await cells(childId)).names).toEqual(want);
    // Shapes follow the cells; the demo's shapes are indexed by cell id.
    expect(child.data.shapes.cell_boundaries!.frame.index.values).toEqual(want);
    // Every transcript kept lies in a polygon (identity transforms in the demo).
    const tx = child.data.points.transcripts!.frame.columns;
    const xs = tx.x as DenseArray;
    const ys = tx.y as DenseArray;
    expect(xs.data.length).toBeGreaterThan(0);
    for (let i = 0; i < xs.data.length; i++) {
      const x = Number(xs.data[i]);
      const y = Number(ys.data[i]);
      expect(pnpoly(lasso, x, y) || pnpoly(square, x, y)).toBe(true);
    }
    // The child: parent_id, name, displays kept; the parent: gone.
    const summary = child.summary();
    expect(summary.parent_id).toBe(parent);
    expect(summary.name).toBe("tissue-subset");
    expect(summary.status).toBe("ready");
    expect(child.appState.displays.map((d) => d.id)).toEqual(["d1"]);
    expect(() => service.session(parent)).toThrow(/no session/);
    // The closed parent's job route still answers, so a client without SSE can await the subset.
    const jr = await t.api(`/api/sessions/${parent}/jobs/${jobId}`);
    expect(jr.status).toBe(200);
    expect(await jr.json()).toMatchObject({ job_id: jobId, status: "completed" });
    // Events: queued, started, completed (with child_id), the child created, the parent removed.
    const mine = events.filter((e) => {
      const d = e.data as { session_id?: string };
      return d.session_id === parent || d.session_id === childId;
    });
    const names = mine.map((e) => e.event);
    expect(names).toEqual([
      "job.queued",
      "job.started",
      "session.created",
      "job.completed",
      "session.removed",
    ]);
    const created = mine.find((e) => e.event === "session.created")!.data as {
      summary: { id: string; parent_id: string };
    };
    expect(created.summary).toMatchObject({ id: childId, parent_id: parent });
    expect(mine.find((e) => e.event === "job.completed")!.data).toMatchObject({
      job_id: jobId,
      kind: "subset",
      child_id: childId,
    });
    expect(mine.at(-1)!.data).toEqual({ session_id: parent, reason: "subset", child_id: childId });
    // The parent's subset job can still be asked after, from the service's record.
    expect(service.job(parent, jobId)).toMatchObject({ job_id: jobId, status: "completed", kind: "subset" });
    expect(() => service.job(parent, "other")).toThrow(/no session/);
  });

  it("invert keeps the outside", async () => {
    const parent = await t.openDemo();
    const before = await cells(parent);
    const outlines = outerRings(t.server.service.session(parent).data.shapes.cell_boundaries!);
    const { childId } = await subset(parent, {
      polygons: [lasso],
      invert: true,
      coordinate_system: "global",
    });
    // The complement of what the same polygon keeps: cells whose outline does not meet it.
    const want = before.names.filter((name, i) => {
      const ring = outlines.get(name);
      return !pnpoly(lasso, before.xy[2 * i]!, before.xy[2 * i + 1]!) && !(ring && ringsMeet(ring, lasso));
    });
    expect((await cells(childId)).names).toEqual(want);
  });

  it("by cell_indices: the rows named, every obs column sliced consistently", async () => {
    const parent = await t.openDemo();
    const ptab = t.server.service.session(parent).data.tables.table!;
    const idx = [299, 0, 5, 5, 17];
    const { childId } = await subset(parent, { cell_indices: idx });
    const ctab = t.server.service.session(childId).data.tables.table!;
    const rows = [0, 5, 17, 299];
    expect(ctab.obs.index.values).toEqual(rows.map((i) => ptab.obs.index.values[i]));
    const pType = ptab.obs.columns.cell_type as Categorical;
    const cType = ctab.obs.columns.cell_type as Categorical;
    const label = (c: Categorical, i: number) => (c.categories as StringArray).values[c.codes[i]!];
    expect(rows.map((_, k) => label(cType, k))).toEqual(rows.map((i) => label(pType, i)));
    expect((ctab.X as unknown as { shape: number[] }).shape).toEqual([
      4,
      (ptab.X as unknown as { shape: number[] }).shape[1],
    ]);
  });

  it("the child saves as a checkpoint and loads back with the same cells", async () => {
    const parent = await t.openDemo();
    const { childId } = await subset(parent, { polygons: [lasso] });
    const child = t.server.service.session(childId);
    const out = await (await child.save()).done;
    expect(out.status, out.error).toBe("completed");
    const path = (out.result as { path: string }).path;
    expect(path).toMatch(/demo-subset-[0-9a-f]+\.sdata\.zarr\.zip$/);
    const again = await t.server.service.createSession({ source: { kind: "load", path } });
    await again.ready;
    expect(again.status).toBe("ready");
    expect((await cells(again.id)).names).toEqual((await cells(childId)).names);
    expect(again.data.shapes.cell_boundaries!.frame.index.values).toEqual((await cells(childId)).names);
  });

  it("passes the parent's edit lock to the child", async () => {
    const parent = await t.openDemo();
    const lock = await t.api(`/api/sessions/${parent}/lock`, {
      method: "POST",
      clientId: "carol-client",
      clientName: "Carol",
    });
    expect(lock.status).toBe(200);
    const { childId } = await subset(parent, { cell_indices: [1, 2, 3] }, { clientId: "carol-client" });
    expect(t.server.service.presence.lockOf(childId)).toEqual({
      client_id: publicClientId("carol-client"),
      name: "Carol",
    });
    await t.api(`/api/sessions/${childId}/lock`, { method: "DELETE", clientId: "carol-client" });
  });

  it("refuses bad requests with 400 before anything is queued", async () => {
    const id = await t.openDemo();
    const far = [
      [1000, 1000],
      [1010, 1000],
      [1010, 1010],
    ];
    const bad: [unknown, RegExp][] = [
      [{}, /exactly one of polygons and cell_indices/],
      [{ polygons: [lasso], cell_indices: [1] }, /exactly one of polygons and cell_indices/],
      [{ cell_indices: [300] }, /cell_indices\[0\] = 300 is not a row/],
      [{ cell_indices: [-1] }, /cell_indices/],
      [{ cell_indices: [1.5] }, /integer/],
      [{ cell_indices: ["a"] }, /integer/],
      [
        {
          polygons: [
            [
              [0, 0],
              [1, 1],
            ],
          ],
        },
        /fewer than 3|NOT have fewer/,
      ],
      [{ polygons: [[[0, 0], [1, 1], [2]]] }, /polygons/],
      [{ polygons: [] }, /polygons/],
      [{ polygons: [far] }, /keeps no cell/],
      [{ polygons: [lasso], coordinate_system: "nowhere" }, /unknown coordinate system "nowhere"/],
      [{ cell_indices: [1], invert: "yes" }, /invert/],
      [{ cell_indices: [1], name: "x" }, /unknown field "name"/],
      [{ cell_indices: Array.from({ length: 300 }, (_, i) => i), invert: true }, /keeps no cell/],
    ];
    const rec = record();
    try {
      for (const [body, re] of bad) {
        const r = await post(id, "subset", body);
        expect(r.status, JSON.stringify(body).slice(0, 80)).toBe(400);
        expect(((await r.json()) as { detail: string }).detail, JSON.stringify(body).slice(0, 80)).toMatch(
          re,
        );
      }
      const r = await t.api(`/api/sessions/${id}/subset`, {
        method: "POST",
        body: "[[",
        headers: { "content-type": "application/json" },
      });
      expect(r.status).toBe(400);
      expect(rec.events.filter((e) => e.event === "job.queued")).toHaveLength(0);
    } finally {
      rec.stop();
    }
    expect(t.server.service.session(id).status).toBe("ready");
  });

  it("answers 404 for an unknown session and 423 while another viewer holds the lock", async () => {
    expect((await post("nope", "subset", { cell_indices: [1] })).status).toBe(404);
    const id = await t.openDemo();
    await t.api(`/api/sessions/${id}/lock`, {
      method: "POST",
      clientId: "dave-client",
      clientName: "Dave Jones",
    });
    const r = await post(id, "subset", { cell_indices: [1] }, { clientId: "erin-client" });
    expect(r.status).toBe(423);
    expect(await r.json()).toEqual({ detail: "session is locked by Dave Jones" });
    await t.api(`/api/sessions/${id}/lock`, { method: "DELETE", clientId: "dave-client" });
  });
});

describe("POST /api/sessions/{id}/annotate", () => {
  it("labels the cells in the polygons, keeps earlier labels, and points every display at the region set", async () => {
    const id = await t.openDemo();
    const s = t.server.service.session(id);
    for (const d of ["a", "b"])
      s.putDisplay({
        id: d,
        type: "spatial_canvas",
        encoding: {
          coords: "obsm:spatial",
          color_by: "obs:cell_type",
          category_colors: { "obs:cell_type": { x: "#000000" } },
        },
        viewport: { target: [0, 0], zoom: 1 },
      });
    const before = await cells(id);
    const rec = record();
    let r = await post(id, "annotate", {
      polygons: [lasso],
      region_set: "regions",
      category: "core",
      color: "#ff8800",
    });
    expect(r.status).toBe(200);
    let { job_id } = (await r.json()) as { job_id: string };
    expect((await t.waitJob(id, job_id)).status).toBe("completed");
    r = await post(id, "annotate", { cell_indices: [0, 1], region_set: "regions", category: "edge" });
    expect(r.status).toBe(200);
    ({ job_id } = (await r.json()) as { job_id: string });
    expect((await t.waitJob(id, job_id)).status).toBe("completed");
    rec.stop();
    const col = s.data.tables.table!.obs.columns.regions as Categorical;
    expect(col.kind).toBe("categorical");
    const cats = (col.categories as StringArray).values;
    expect(cats).toEqual(["core", "edge"]);
    for (let i = 0; i < before.names.length; i++) {
      const inside = pnpoly(lasso, before.xy[2 * i]!, before.xy[2 * i + 1]!);
      const want = i < 2 ? "edge" : inside ? "core" : null;
      expect(col.codes[i]! < 0 ? null : cats[col.codes[i]!], `cell ${i}`).toBe(want);
    }
    for (const d of s.appState.displays) {
      expect(d.encoding.color_by).toBe("obs:regions");
      expect(d.encoding.category_colors).toEqual({
        "obs:cell_type": { x: "#000000" },
        "obs:regions": { core: "#ff8800" },
      });
    }
    const updates = rec.events.filter(
      (e) => e.event === "display.updated" && (e.data as { session_id: string }).session_id === id,
    );
    expect(updates.map((e) => (e.data as { display_id: string }).display_id)).toEqual(["a", "b", "a", "b"]);
    // Each annotation is a history entry of the registered operation.
    const hist = s.appState.compute_history.filter((h) => h.function === "annotate_cells");
    expect(hist.map((h) => [h.namespace, h.status, h.params.category])).toEqual([
      ["custom", "completed", "core"],
      ["custom", "completed", "edge"],
    ]);
  });

  it("refuses bad requests with 400, unknown sessions with 404, other viewers with 423", async () => {
    const id = await t.openDemo();
    const bad: [unknown, RegExp][] = [
      [{ cell_indices: [1], region_set: "r" }, /category/],
      [{ cell_indices: [1], category: "c" }, /region_set/],
      [{ region_set: "r", category: "c" }, /exactly one of polygons and cell_indices/],
      [{ cell_indices: [1], region_set: "r", category: "c", color: "orange" }, /color|pattern/],
      [{ cell_indices: [1], region_set: "r", category: "c", color: "#ff880" }, /color|pattern/],
      [
        { cell_indices: [1], region_set: "total_counts", category: "c" },
        /is dense, not categorical|not categorical/,
      ],
      [{ cell_indices: [1], region_set: "region", category: "c" }, /region or instance key/],
      [{ cell_indices: [1], region_set: "  ", category: "c" }, /region_set/],
      [{ cell_indices: [1000], region_set: "r", category: "c" }, /not a row/],
      [
        {
          polygons: [
            [
              [500, 500],
              [501, 500],
              [501, 501],
            ],
          ],
          region_set: "r",
          category: "c",
        },
        /no cell/,
      ],
      [{ cell_indices: [1], region_set: "r", category: "c", invert: true }, /unknown field "invert"/],
    ];
    for (const [body, re] of bad) {
      const r = await post(id, "annotate", body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(((await r.json()) as { detail: string }).detail, JSON.stringify(body)).toMatch(re);
    }
    expect(
      (await post("nope", "annotate", { cell_indices: [1], region_set: "r", category: "c" })).status,
    ).toBe(404);
    await t.api(`/api/sessions/${id}/lock`, { method: "POST", clientId: "fay-client", clientName: "Fay" });
    const r = await post(
      id,
      "annotate",
      { cell_indices: [1], region_set: "r", category: "c" },
      { clientId: "gus-client" },
    );
    expect(r.status).toBe(423);
    expect(await r.json()).toEqual({ detail: "session is locked by Fay" });
    await t.api(`/api/sessions/${id}/lock`, { method: "DELETE", clientId: "fay-client" });
  });
});
