/**
 * Instrument folders are parsed on a job worker, not on the server's main thread: a `kind: "load"`
 * session on the Xenium fixture over real HTTP is answered by other requests while it loads, its job
 * log says which worker thread parsed it, its progress and log stream as job events, and the object
 * it ends with holds the same values as the reader called on this thread (images reopened here read
 * the same pixels). A raw-input load that cannot fit is refused with a 503 naming the estimate.
 */
import { cp } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Categorical, DenseArray, SparseMatrix } from "../../../src/sdk/data/arrays.js";
import { nRows } from "../../../src/sdk/data/dataframe.js";
import type { PointsElement, ShapesElement } from "../../../src/sdk/data/elements.js";
import { isMaterialised, stringAt } from "../../../src/sdk/data/lazy-strings.js";
import { readCosmx } from "../../../src/sdk/io/vendors/cosmx/read.js";
import { estimateFolderNeed } from "../../../src/sdk/io/vendors/need.js";
import { readXenium } from "../../../src/sdk/io/vendors/xenium/read.js";
import { startTestServer, type TestServer } from "../../adapters/http/harness.js";
import { fixture } from "../../fixtures.js";
import { record } from "../../sdk/session/helpers.js";

/** Values of a typed array as plain numbers (for equality). */
const nums = (a: unknown): number[] => Array.from(a as ArrayLike<number>);

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer({ plugins: ["tessera", "spatialdata-io"] });
  await cp(fixture("sfe-toy/xenium"), join(t.dataDir, "xenium"), { recursive: true });
}, 60_000);
afterAll(async () => {
  await t?.close();
});

describe("kind load on an instrument folder", () => {
  it("parses on a worker thread while the server answers, with the same values as a direct read", async () => {
    const rec = record(t.server.service);
    const created = await t.api("/api/sessions", {
      method: "POST",
      json: { source: { kind: "load", path: "xenium" } },
    });
    expect(created.status).toBe(201);
    const { id } = (await created.json()) as { id: string };
    // Other requests while it loads: each is answered, and some of them see the session still loading.
    const seen: string[] = [];
    for (;;) {
      const [one, list] = await Promise.all([t.api(`/api/sessions/${id}`), t.api("/api/sessions")]);
      expect(one.status).toBe(200);
      expect(list.status).toBe(200);
      const status = ((await one.json()) as { summary: { status: string } }).summary.status;
      seen.push(status);
      if (status !== "loading") break;
      await new Promise((r) => setTimeout(r, 20));
    }
    rec.stop();
    expect(seen.at(-1)).toBe("ready");
    expect(seen).toContain("loading");

    // The parse ran on a worker (thread id ≠ 0), and the reader's progress and log came as job events.
    const logs = rec.events
      .filter((e) => e.event === "job.log")
      .map((e) => String(e.data.chunk))
      .join("");
    const thread = /parsing on worker thread (\d+)/.exec(logs);
    expect(thread).not.toBeNull();
    expect(Number(thread![1])).toBeGreaterThan(0);
    expect(logs).toMatch(/526 cells, 27 genes/);
    expect(logs).toMatch(/pixel size 0\.2125 µm/);
    const progress = rec.events.filter((e) => e.event === "job.progress").map((e) => String(e.data.message));
    expect(progress.some((m) => /boundaries|transcripts|matrix/.test(m))).toBe(true);

    // The same values as the reader called here.
    const s = t.server.service.session(id);
    const got = s.data;
    const want = (await readXenium(join(t.dataDir, "xenium"))).sdata;
    const gt = got.tables.table!;
    const wt = want.tables.table!;
    expect(gt.obs.index.values).toEqual(wt.obs.index.values);
    const gx = gt.X as SparseMatrix;
    const wx = wt.X as SparseMatrix;
    expect(Array.from(gx.indptr)).toEqual(Array.from(wx.indptr));
    expect(Array.from(gx.indices)).toEqual(Array.from(wx.indices));
    expect(nums(gx.data)).toEqual(nums(wx.data));
    expect(nums((gt.obsm.spatial as DenseArray).data)).toEqual(nums((wt.obsm.spatial as DenseArray).data));
    for (const name of ["cell_boundaries", "nucleus_boundaries", "cell_circles"]) {
      const g = got.shapes[name] as ShapesElement;
      const w = want.shapes[name] as ShapesElement;
      expect(Array.from(g.geometry.coords)).toEqual(Array.from(w.geometry.coords));
      expect(g.frame.index.values).toEqual(w.frame.index.values);
    }
    const gp = got.points.transcripts as PointsElement;
    const wp = want.points.transcripts as PointsElement;
    // The 0…n−1 index is a range on both sides and crossed as one: no string per transcript here.
    expect(gp.frame.index.backing).toEqual({ kind: "range", start: 0, step: 1 });
    expect(isMaterialised(gp.frame.index)).toBe(false);
    expect(nRows(gp.frame)).toBe(5260);
    expect(stringAt(gp.frame.index, 5259)).toBe("5259");
    expect(gp.frame.index.values).toEqual(wp.frame.index.values);
    expect(nums((gp.frame.columns.x as DenseArray).data)).toEqual(
      nums((wp.frame.columns.x as DenseArray).data),
    );
    const gf = gp.frame.columns.feature_name as Categorical;
    const wf = wp.frame.columns.feature_name as Categorical;
    expect(Array.from(gf.codes)).toEqual(Array.from(wf.codes));
    expect(gf.categories).toEqual(wf.categories);
    // Images reopened on this thread read the same pixels as the direct read's.
    expect(Object.keys(got.images).sort()).toEqual(Object.keys(want.images).sort());
    for (const name of Object.keys(want.images)) {
      const g = got.images[name]!;
      const w = want.images[name]!;
      expect(g.transformations).toEqual(w.transformations);
      expect(g.levels.map((l) => l.shape)).toEqual(w.levels.map((l) => l.shape));
      const sel = g.levels[0]!.shape.map((n) => [0, Math.min(n, 64)] as [number, number]);
      const a = (await g.levels[0]!.source.read(sel)).data as ArrayLike<number>;
      const b = (await w.levels[0]!.source.read(sel)).data as ArrayLike<number>;
      expect(Array.from(a)).toEqual(Array.from(b));
    }
  }, 120_000);

  it("kind read with io.xenium also parses on a worker and opens its images here", async () => {
    const rec = record(t.server.service);
    const s = await t.server.service.createSession({
      source: {
        kind: "read",
        namespace: "io",
        function: "xenium",
        params: { path: "xenium", transcripts: false, nucleus_boundaries: false },
      },
    });
    await s.ready;
    rec.stop();
    expect(s.status).toBe("ready");
    const logs = rec.events
      .filter((e) => e.event === "job.log")
      .map((e) => String(e.data.chunk))
      .join("");
    expect(Number(/parsing on worker thread (\d+)/.exec(logs)?.[1] ?? 0)).toBeGreaterThan(0);
    expect(Object.keys(s.data.points)).toEqual([]);
    expect(Object.keys(s.data.shapes).sort()).toEqual(["cell_boundaries", "cell_circles"]);
    const img = s.data.images.morphology_focus!;
    const px = await img.levels[0]!.source.read(img.levels[0]!.shape.map((n) => [0, Math.min(n, 8)]));
    expect(px.data.length).toBeGreaterThan(0);
  }, 120_000);

  it("a CosMx folder with label masks: the masks are reopened here after the worker's parse", async () => {
    const dir = join(t.dataDir, "cosmx");
    await cp(fixture("sfe-toy/cosmx"), dir, { recursive: true });
    await cp(
      new URL("../../data/cosmx-labels/CellLabels", import.meta.url).pathname,
      join(dir, "CellLabels"),
      {
        recursive: true,
      },
    );
    const s = await t.server.service.createSession({ source: { kind: "load", path: "cosmx" } });
    await s.ready;
    expect(s.status).toBe("ready");
    const got = s.data.labels["1_labels"]!;
    const want = (await readCosmx(dir)).sdata.labels["1_labels"]!;
    expect(got.transformations).toEqual(want.transformations);
    const sel: [number, number][] = [
      [700, 800],
      [150, 260],
    ];
    const a = (await got.levels[0]!.source.read(sel)).data;
    const b = (await want.levels[0]!.source.read(sel)).data;
    expect(a).toBeInstanceOf(Int32Array);
    expect(nums(a)).toEqual(nums(b));
    expect(nums(a).some((v) => v > 0)).toBe(true);
  }, 120_000);

  it("a raw-input load that cannot fit is refused with a 503 naming the estimate, before a session exists", async () => {
    // A limit leaving half the folder's estimated need free below the threshold (the test process's
    // RSS is what admission counts): the load does not fit, while opening anything else still would.
    const need = estimateFolderNeed(fixture("sfe-toy/xenium"))!.bytes / 2 ** 20;
    expect(need).toBeGreaterThan(64);
    const rssMb = process.memoryUsage().rss / 2 ** 20;
    const small = await startTestServer({
      plugins: ["tessera", "spatialdata-io"],
      config: { containerMemMb: Math.round((rssMb + need / 2) / 0.9), admissionPct: 0.9 },
    });
    try {
      await cp(fixture("sfe-toy/xenium"), join(small.dataDir, "xenium"), { recursive: true });
      const before = ((await (await small.api("/api/sessions")).json()) as { sessions: unknown[] }).sessions
        .length;
      const r = await small.api("/api/sessions", {
        method: "POST",
        json: { source: { kind: "load", path: "xenium" } },
      });
      expect(r.status).toBe(503);
      const body = (await r.json()) as { detail?: string; error?: string };
      expect(JSON.stringify(body)).toMatch(/session load refused: it needs about \d+ MB .*folder's files/);
      const after = ((await (await small.api("/api/sessions")).json()) as { sessions: unknown[] }).sessions
        .length;
      expect(after).toBe(before);
    } finally {
      await small.close();
    }
  }, 120_000);
});
