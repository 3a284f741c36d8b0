/**
 * `POST /api/sessions/{id}/save` over real HTTP: whole saves adopted as the session's checkpoint,
 * exports (include / levels / slots / figures) reopened and checked, every validation rule answered
 * 400 before any job starts, a failed save leaving the previous file intact, and the edit-lock gate.
 */
import { copyFile, readdir, readFile, truncate, writeFile } from "node:fs/promises";
import { join, relative } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { nearlyEqual } from "../../../src/sdk/data/affine.js";
import type { DenseArray } from "../../../src/sdk/data/arrays.js";
import { levelToSystem } from "../../../src/sdk/data/select.js";
import { makeSpatialData, transformTo } from "../../../src/sdk/data/spatialdata.js";
import { updateTable } from "../../../src/sdk/data/table.js";
import { generateDemo } from "../../../src/sdk/demo/generate.js";
import type { AppState, DisplaySpec } from "../../../src/sdk/io/checkpoint/app-state.js";
import { type Checkpoint, openCheckpoint } from "../../../src/sdk/io/checkpoint/read.js";
import { writeCheckpointNamed } from "../../../src/sdk/io/checkpoint/write.js";
import { startTestServer, type TestServer } from "./harness.js";

const DEMO = { nCells: 200, nGenes: 30, imageSize: 512, nTranscripts: 300 } as const;

let t: TestServer;
let rich: string;
let sid: string;
let plotId: string;
let gene: string;

/** Displays of the rich fixture: every kind of reference a selection can break. */
const displays = (g: string): DisplaySpec[] => [
  {
    id: "d-gene",
    type: "spatial_canvas",
    encoding: {
      coords: "obsm:spatial",
      color_by: `X:${g}`,
      image_layer: "morphology",
      shapes_layer: "cell_boundaries",
    },
    viewport: { target: [0, 0], zoom: 0 },
  },
  {
    id: "d-obs",
    type: "spatial_canvas",
    encoding: { coords: "obsm:spatial", color_by: "obs:cell_type", image_layer: "morphology" },
    viewport: { target: [0, 0], zoom: 0 },
  },
  {
    id: "d-layer",
    type: "spatial_canvas",
    encoding: { coords: "obsm:spatial", color_by: "layers:counts" },
    viewport: { target: [0, 0], zoom: 0 },
  },
  {
    id: "e-umap",
    type: "embedding_canvas",
    encoding: { obsm_key: "X_umap", color_by: "obs:cell_type" },
    viewport: { target: [0, 0], zoom: 0 },
  },
];

/**
 * A checkpoint with a 2-level image, labels, points, shapes and three tables: `table` (X, layer
 * `counts`, obsm `spatial` and `X_umap`), `table2` (no X; spatial and X_umap), `table3` (spatial only).
 */
async function writeRich(dir: string): Promise<string> {
  const sd = generateDemo(DEMO);
  const t0 = sd.tables.table!;
  const spatial = t0.obsm.spatial as DenseArray;
  const umap = {
    kind: "dense" as const,
    dtype: "float64" as const,
    shape: [...spatial.shape],
    data: (spatial.data as Float64Array).map((v) => v / 10),
  };
  const table = updateTable(t0, { layers: { counts: t0.X! }, obsm: { spatial, X_umap: umap } });
  const table2 = updateTable(t0, { X: null, obsm: { spatial, X_umap: umap } });
  const table3 = updateTable(t0, { X: null, obsm: { spatial } });
  const g = t0.var.index.values[0]!;
  const app: AppState = { schema_version: 1, compute_history: [], plots: [], displays: displays(g) };
  const out = makeSpatialData({ ...sd, tables: { table, table2, table3 } });
  const { path } = await writeCheckpointNamed(out, dir, "rich", { appState: app, activeTable: "table" });
  return path;
}

const post = (path: string, json?: unknown, who: { clientId?: string; clientName?: string } = {}) =>
  t.api(path, { method: "POST", ...(json !== undefined ? { json } : {}), ...who });
const S = () => `/api/sessions/${sid}`;
const state = async (id = sid) => (await t.api(`/api/sessions/${id}`)).json();

/** Load a file through `POST /api/sessions` (kind load) and wait until it is ready. */
async function load(path: string): Promise<string> {
  const r = await post("/api/sessions", { source: { kind: "load", path } });
  expect(r.status).toBe(201);
  const { id } = await r.json();
  for (let i = 0; i < 400; i++) {
    const st = await state(id);
    if (st.summary.status !== "loading") {
      expect(st.summary.status).toBe("ready");
      return id;
    }
    await new Promise((res) => setTimeout(res, 25));
  }
  throw new Error("load timed out");
}

/** Close a session (at most `TESSERA_MAX_SESSIONS` may be open). */
async function close(id: string): Promise<void> {
  expect((await t.api(`/api/sessions/${id}`, { method: "DELETE" })).status).toBe(200);
}

/** Every file under the data dir (relative), the working dir excluded. */
async function files(): Promise<string[]> {
  const out = await readdir(t.dataDir, { recursive: true });
  return out.filter((f) => !f.startsWith(".work")).sort();
}

/** Save and wait: the answer, the job's end, and the job.completed event's data. */
async function save(body: unknown, id = sid) {
  const base = (await (await t.api("/api/events/poll")).json()).last_id;
  const r = await post(`/api/sessions/${id}/save`, body);
  expect(r.status, JSON.stringify(await r.clone().text())).toBe(200);
  const answer = await r.json();
  const end = await t.waitJob(id, answer.job_id);
  const events = (await (await t.api(`/api/events/poll?after=${base}`)).json()).events;
  const done = events.find(
    (e: { event: string; data: { job_id?: string } }) =>
      e.data.job_id === answer.job_id && (e.event === "job.completed" || e.event === "job.failed"),
  );
  return { answer, end, event: done?.data };
}

beforeAll(async () => {
  t = await startTestServer({ demo: DEMO });
  rich = await writeRich(t.dataDir);
  sid = await load(rich);
  gene = (await state()).app_state.displays[0].encoding.color_by.slice(2);
  const r = await post(`${S()}/jobs`, {
    namespace: "pl",
    function: "test_scatter",
    params: { color: "cell_type" },
  });
  plotId = (await r.json()).job_id;
  expect((await t.waitJob(sid, plotId)).status).toBe("completed");
}, 60_000);
afterAll(async () => {
  await t?.close();
});

describe("whole saves", () => {
  it("saves under a content-hash name, adopted as the session's checkpoint (saved true)", async () => {
    const r = await post(`${S()}/jobs`, {
      namespace: "custom",
      function: "rename_obs_column",
      params: { old_name: "nucleus_area", new_name: "nuc_area" },
    });
    await t.waitJob(sid, (await r.json()).job_id);
    expect((await state()).summary.saved).toBe(false);
    const { answer, end, event } = await save({ folder: "whole", prefix: "mine" });
    expect(answer).toEqual({
      job_id: expect.any(String),
      path: null,
      pattern: join(t.dataDir, "whole", "mine-<hash>.sdata.zarr.zip"),
      export: false,
    });
    expect(end.status).toBe("completed");
    expect(event.path).toMatch(new RegExp(`^${t.dataDir}/whole/mine-[0-9a-f]{12}\\.sdata\\.zarr\\.zip$`));
    expect(event.export).toBe(false);
    expect((await state()).summary.saved).toBe(true);
    const list = (await (await t.api("/api/sessions")).json()).sessions;
    expect(list.find((s: { id: string }) => s.id === sid).saved).toBe(true);
    const log = (await (await t.api(`${S()}/jobs/${answer.job_id}/log`)).json()).log;
    expect(log).toContain(`wrote ${event.path}`);
    // Without SSE the final path comes from the job route.
    const job = await (await t.api(`${S()}/jobs/${answer.job_id}`)).json();
    expect(job).toMatchObject({
      status: "completed",
      kind: "save",
      result: { path: event.path, export: false },
    });
    expect(t.server.service.session(sid).checkpointPath).toBe(event.path);
  });

  it("an empty body, a null body and no body at all save the whole object", async () => {
    for (const init of [{ json: {} }, { json: null }, {}]) {
      const r = await t.api(`${S()}/save`, { method: "POST", ...init });
      expect(r.status).toBe(200);
      const a = await r.json();
      expect(a.export).toBe(false);
      expect((await t.waitJob(sid, a.job_id)).status).toBe("completed");
    }
  });

  it("a `path` save writes exactly there (answered up front) and `name` renames the session", async () => {
    const { answer, end, event } = await save({ path: "named/exact.sdata.zarr.zip", name: "Renamed rich" });
    const path = join(t.dataDir, "named", "exact.sdata.zarr.zip");
    expect(answer).toMatchObject({ path, pattern: null, export: false });
    expect(end.status).toBe("completed");
    expect(event.path).toBe(path);
    const st = await state();
    expect(st.summary.name).toBe("Renamed rich");
    expect(st.summary.saved).toBe(true);
    const cp = await openCheckpoint(path);
    expect(cp.appState.name).toBe("Renamed rich");
    expect(Object.keys(cp.sdata.tables).sort()).toEqual(["table", "table2", "table3"]);
  });
});

describe("exports", () => {
  let cp: Checkpoint;
  let exportId: string;
  it("include/levels/slots write exactly the selection and leave `saved` and the checkpoint path alone", async () => {
    // Make the session unsaved, so an adopted save would show.
    const r = await post(`${S()}/jobs`, {
      namespace: "custom",
      function: "rename_obs_column",
      params: { old_name: "nuc_area", new_name: "nucleus_area" },
    });
    await t.waitJob(sid, (await r.json()).job_id);
    const before = t.server.service.session(sid);
    const ownPath = before.checkpointPath;
    const { answer, end, event } = await save({
      path: "exports/part.sdata.zarr.zip",
      include: { points: [], labels: [], shapes: [], tables: ["table", "table3"] },
      levels: { morphology: 1 },
      slots: { table: ["obs", "var", "uns", "obsm/spatial", "obsm/X_umap"] },
    });
    expect(answer.export).toBe(true);
    expect(end.status).toBe("completed");
    expect(event).toMatchObject({ kind: "save", export: true, path: answer.path });
    expect((await state()).summary.saved).toBe(false);
    expect(before.checkpointPath).toBe(ownPath);

    cp = await openCheckpoint(answer.path);
    const sd = cp.sdata;
    expect(Object.keys(sd.points)).toEqual([]);
    expect(Object.keys(sd.labels)).toEqual([]);
    expect(Object.keys(sd.shapes)).toEqual([]);
    expect(Object.keys(sd.tables).sort()).toEqual(["table", "table3"]);
    const table = sd.tables.table!;
    expect(table.X).toBeNull();
    expect(Object.keys(table.layers)).toEqual([]);
    expect(Object.keys(table.obsm).sort()).toEqual(["X_umap", "spatial"]);
    expect(table.obs.columnOrder).toContain("cell_type");
    // The pyramid lost its finest level and kept its world extent.
    const src = before.data.images.morphology!;
    const img = sd.images.morphology!;
    expect(img.levels.map((l) => l.shape)).toEqual([src.levels[1]!.shape]);
    expect(nearlyEqual(levelToSystem(img, 0, "global"), levelToSystem(src, 1, "global"))).toBe(true);
    const scale = (m: number[][]) => m[0]![0]!;
    expect(scale(transformTo(sd, img, "global", ["x", "y"]))).toBeCloseTo(
      2 * scale(transformTo(before.data, src, "global", ["x", "y"])),
    );
    // The sidecar agrees: no X and no mirror for the table, one level, the active table kept.
    expect(cp.sidecar.active_table).toBe("table");
    const side = cp.sidecar.tables.find((x) => x.name === "table")!;
    expect(side).toMatchObject({ has_x: false, x_mirror: null });
    expect(cp.sidecar.images[0]!.levels).toHaveLength(1);
    expect(cp.sidecar.images[0]!.pixel_to_world![0]).toBeCloseTo(1);
    expect(await cp.store.get("/viewer/X_csc/table/zarr.json")).toBeUndefined();
    // Displays: dropped shapes layer and colourings of dropped slots are null; the rest is kept.
    const d = Object.fromEntries(
      cp.appState.displays.map((x) => [x.id, x.encoding as unknown as Record<string, unknown>]),
    );
    expect(d["d-gene"]).toMatchObject({ color_by: null, shapes_layer: null, image_layer: "morphology" });
    expect(d["d-layer"]).toMatchObject({ color_by: null });
    expect(d["d-obs"]).toMatchObject({ color_by: "obs:cell_type", image_layer: "morphology" });
    expect(d["e-umap"]).toMatchObject({ color_by: "obs:cell_type", obsm_key: "X_umap" });
    // The session's own displays are untouched.
    expect((await state()).app_state.displays[0].encoding.color_by).toBe(`X:${gene}`);
  });

  it("the export opens again as a session (POST /api/sessions kind load) with exactly that content", async () => {
    exportId = await load(cp.location);
    const st = await state(exportId);
    expect(st.fields.has_x).toBe(false);
    expect(st.fields.images).toEqual(["morphology"]);
    expect(st.fields.shapes).toEqual([]);
    expect(st.fields.layers).toEqual([]);
    expect(st.fields.obsm.map((o: { name: string }) => o.name).sort()).toEqual(["X_umap", "spatial"]);
    expect(st.app_state.displays.find((x: DisplaySpec) => x.id === "d-gene").encoding.color_by).toBeNull();
    const gene404 = await t.api(`/api/sessions/${exportId}/data/X:${gene}`);
    expect(gene404.status).toBeGreaterThanOrEqual(400);
    expect(gene404.status).toBeLessThan(500);
    await close(exportId);
  });

  it("putting another table first changes the export's active table and nulls every color_by", async () => {
    const { answer, end } = await save({
      path: "exports/other-first.sdata.zarr.zip",
      include: { tables: ["table2", "table"] },
    });
    expect(end.status).toBe("completed");
    const c = await openCheckpoint(answer.path);
    expect(c.sidecar.active_table).toBe("table2");
    expect(c.appState.displays.every((x) => x.encoding.color_by === null)).toBe(true);
    // Layers naming kept elements stay.
    expect(c.appState.displays[0]!.encoding).toMatchObject({ shapes_layer: "cell_boundaries" });
    const id = await load(answer.path);
    expect((await state(id)).fields.has_x).toBe(false);
    expect(t.server.service.session(id).activeTable).toBe("table2");
    await close(id);
  });

  it("dropping only X writes a table without X (not zeros) and without the mirror", async () => {
    const { answer } = await save({
      path: "exports/no-x.sdata.zarr.zip",
      slots: { table: ["obs", "var", "uns", "layers/counts", "obsm/spatial", "obsm/X_umap"] },
    });
    const c = await openCheckpoint(answer.path);
    expect(c.sdata.tables.table!.X).toBeNull();
    expect(Object.keys(c.sdata.tables.table!.layers)).toEqual(["counts"]);
    expect(c.sidecar.tables.every((x) => x.x_mirror === null)).toBe(true);
    const d = Object.fromEntries(
      c.appState.displays.map((x) => [x.id, x.encoding as unknown as Record<string, unknown>]),
    );
    expect(d["d-gene"]!.color_by).toBeNull();
    expect(d["d-layer"]!.color_by).toBe("layers:counts");
    expect(d["d-obs"]!.color_by).toBe("obs:cell_type");
    // The other tables are written whole.
    expect(Object.keys(c.sdata.tables).sort()).toEqual(["table", "table2", "table3"]);
  });

  it("`{images: []}` drops every image and nulls image layers; levels 0 keeps the whole pyramid", async () => {
    const a = await save({ path: "exports/no-images.sdata.zarr.zip", include: { images: [] } });
    const c = await openCheckpoint(a.answer.path);
    expect(Object.keys(c.sdata.images)).toEqual([]);
    expect(
      c.appState.displays.every((x) => !("image_layer" in x.encoding) || x.encoding.image_layer === null),
    ).toBe(true);
    const b = await save({ path: "exports/level0.sdata.zarr.zip", levels: { morphology: 0 } });
    const c0 = await openCheckpoint(b.answer.path);
    expect(c0.sdata.images.morphology!.levels).toHaveLength(2);
  });

  it("an export to a content-hash name answers the pattern; the final name arrives on job.completed", async () => {
    const { answer, event } = await save({ folder: "exports", prefix: "hashed", include: { points: [] } });
    expect(answer).toMatchObject({ path: null, export: true });
    expect(answer.pattern).toBe(join(t.dataDir, "exports", "hashed-<hash>.sdata.zarr.zip"));
    expect(event.path).toMatch(/\/exports\/hashed-[0-9a-f]{12}\.sdata\.zarr\.zip$/);
    expect((await files()).includes(relative(t.dataDir, event.path))).toBe(true);
  });
});

describe("figures", () => {
  it("carries every drawn figure by default, the listed ones, or none with []", async () => {
    const all = await save({ path: "figs/all.sdata.zarr.zip" });
    const c1 = await openCheckpoint(all.answer.path);
    expect(c1.sidecar.figures.map((f) => f.plot_id)).toEqual([plotId]);
    expect(await c1.store.get(`/viewer/figures/${plotId}/svg/zarr.json`)).toBeDefined();
    const none = await save({ path: "figs/none.sdata.zarr.zip", figures: [] });
    const c2 = await openCheckpoint(none.answer.path);
    expect(c2.sidecar.figures).toEqual([]);
    const listed = await save({
      path: "figs/listed.sdata.zarr.zip",
      figures: [plotId],
      include: { points: [] },
    });
    const c3 = await openCheckpoint(listed.answer.path);
    expect(c3.sidecar.figures.map((f) => f.plot_id)).toEqual([plotId]);
  });
});

describe("validation: 400 before any job", () => {
  const cases: [string, unknown, RegExp][] = [
    ["blank folder", { folder: "" }, /folder/],
    ["whitespace folder", { folder: "   " }, /folder/],
    ["folder outside", { folder: "../elsewhere" }, /outside the data dir/],
    ["absolute folder outside", { folder: "/etc" }, /outside the data dir/],
    ["folder that is a file", { folder: "notes.txt" }, /is a file/],
    ["blank prefix", { prefix: "" }, /prefix/],
    ["dot prefix", { prefix: ".hidden" }, /prefix/],
    ["separator in prefix", { prefix: "a/b" }, /prefix/],
    ["backslash in prefix", { prefix: "a\\b" }, /prefix/],
    ["blank name", { name: "  " }, /name must not be blank/],
    ["path with folder", { path: "x.sdata.zarr.zip", folder: "f" }, /cannot be combined/],
    ["path with prefix", { path: "x.sdata.zarr.zip", prefix: "p" }, /cannot be combined/],
    ["path outside", { path: "/tmp/x.sdata.zarr.zip" }, /outside the data dir/],
    ["relative path outside", { path: "../x.sdata.zarr.zip" }, /outside the data dir/],
    ["path that is a folder", { path: "whole" }, /is a folder/],
    ["unknown facet", { include: { widgets: [] } }, /unknown facet "widgets"/],
    ["unknown element", { include: { images: ["nope"] } }, /unknown element "nope"/],
    ["facet not a list", { include: { images: "morphology" } }, /list of strings/],
    ["include not an object", { include: ["images"] }, /include/],
    ["tables omit the active table", { include: { tables: ["table2"] } }, /omits the active table "table"/],
    ["empty tables", { include: { tables: [] } }, /omits the active table/],
    ["new active table lacks a drawn obsm", { include: { tables: ["table3", "table"] } }, /obsm\/X_umap/],
    ["levels of an unknown image", { levels: { nope: 0 } }, /unknown image "nope"/],
    ["levels of labels", { levels: { cell_labels: 0 } }, /unknown image "cell_labels"/],
    ["levels past the last", { levels: { morphology: 2 } }, /levels 0\.\.1/],
    ["negative level", { levels: { morphology: -1 } }, /levels 0\.\.1/],
    ["fractional level", { levels: { morphology: 0.5 } }, /levels 0\.\.1/],
    ["level as a string", { levels: { morphology: "1" } }, /levels 0\.\.1/],
    ["levels of a dropped image", { include: { images: [] }, levels: { morphology: 1 } }, /drops/],
    ["slots of an unknown table", { slots: { nope: ["obs", "var", "uns"] } }, /unknown table "nope"/],
    [
      "slots of a dropped table",
      { include: { tables: ["table"] }, slots: { table2: ["obs", "var", "uns"] } },
      /drops/,
    ],
    [
      "unknown slot path",
      { slots: { table: ["obs", "var", "uns", "obsm/spatial", "obsm/X_umap", "foo"] } },
      /unknown slot path "foo"/,
    ],
    ["absent slot", { slots: { table3: ["obs", "var", "uns", "obsm/spatial", "X"] } }, /has no slot "X"/],
    [
      "absent keyed slot",
      { slots: { table: ["obs", "var", "uns", "obsm/spatial", "obsm/X_umap", "obsp/x"] } },
      /has no slot "obsp\/x"/,
    ],
    ["slots omit obs", { slots: { table3: ["var", "uns", "obsm/spatial"] } }, /omits "obs"/],
    ["slots omit var", { slots: { table3: ["obs", "uns", "obsm/spatial"] } }, /omits "var"/],
    ["slots omit uns", { slots: { table3: ["obs", "var", "obsm/spatial"] } }, /omits "uns"/],
    [
      "slots omit the coords obsm",
      { slots: { table: ["obs", "var", "uns", "obsm/X_umap"] } },
      /omits obsm\/spatial/,
    ],
    [
      "slots omit the embedding obsm",
      { slots: { table: ["obs", "var", "uns", "obsm/spatial"] } },
      /omits obsm\/X_umap/,
    ],
    ["figure not drawn", { figures: ["nope"] }, /not drawn/],
    ["figures not a list", { figures: "all" }, /figures/],
    ["unknown field", { folder: "x", colour: 1 }, /additional properties|colour/],
    ["wrong type", { prefix: 5 }, /prefix/],
  ];
  it.each(cases)("%s", async (_what, body, detail) => {
    await writeFile(join(t.dataDir, "notes.txt"), "not a folder");
    const before = await files();
    const base = (await (await t.api("/api/events/poll")).json()).last_id;
    const r = await post(`${S()}/save`, body);
    expect(r.status).toBe(400);
    expect((await r.json()).detail).toMatch(detail);
    const events = (await (await t.api(`/api/events/poll?after=${base}`)).json()).events;
    expect(events.filter((e: { event: string }) => e.event.startsWith("job."))).toEqual([]);
    expect((await state()).queue).toEqual([]);
    expect(await files()).toEqual(before);
  });

  it("bad JSON is a 400; an unknown session a 404", async () => {
    const r = await t.api(`${S()}/save`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{not json",
    });
    expect(r.status).toBe(400);
    expect((await post("/api/sessions/00000000-0000-0000-0000-000000000000/save", {})).status).toBe(404);
  });
});

describe("saving over the session's own checkpoint", () => {
  it("a whole save over the file the session reads from keeps the session readable and savable", async () => {
    const own = join(t.dataDir, "own.sdata.zarr.zip");
    await copyFile(rich, own);
    const id = await load(own);
    const g = encodeURIComponent(`X:${gene}`);
    const before = await t.api(`/api/sessions/${id}/data/${g}`);
    expect(before.status).toBe(200);
    const first = await save({ path: own }, id);
    expect(first.end.status).toBe("completed");
    // Lazy arrays now read from the new file (the old one was renamed over).
    const img = await save({ path: "after-own.sdata.zarr.zip" }, id);
    expect(img.end.status).toBe("completed");
    const after = await t.api(`/api/sessions/${id}/data/${g}`);
    expect(after.status).toBe(200);
    expect(Buffer.from(await after.arrayBuffer()).equals(Buffer.from(await before.arrayBuffer()))).toBe(true);
    expect((await state(id)).summary.saved).toBe(true);
    const again = await openCheckpoint(join(t.dataDir, "after-own.sdata.zarr.zip"));
    expect(again.sdata.images.morphology!.levels).toHaveLength(2);
    await close(id);
  });

  it("saving identical bytes under an existing content-hash name keeps that file (other readers go on)", async () => {
    const base = await load(rich);
    const first = await save({ folder: "shared", prefix: "same" }, base);
    const shared = first.event.path as string;
    const a = await load(shared);
    const b = await load(shared);
    const again = await save({ folder: "shared", prefix: "same" }, a);
    expect(again.end.status).toBe("completed");
    expect(again.event.path).toBe(shared);
    // Session b reads lazily from the same file: it is still the file it opened.
    const out = await save({ path: "shared/from-b.sdata.zarr.zip" }, b);
    expect(out.end.status).toBe("completed");
    expect((await files()).filter((f) => f.startsWith("shared/same-"))).toHaveLength(1);
    for (const id of [base, a, b]) await close(id);
  });

  it("an export may not replace the session's own checkpoint (400)", async () => {
    const own = join(t.dataDir, "own2.sdata.zarr.zip");
    await copyFile(rich, own);
    const id = await load(own);
    const bytes = await readFile(own);
    const r = await post(`/api/sessions/${id}/save`, { path: own, include: { points: [] } });
    expect(r.status).toBe(400);
    expect((await r.json()).detail).toMatch(/cannot replace the session's own checkpoint/);
    expect((await readFile(own)).equals(bytes)).toBe(true);
    await close(id);
  });
});

describe("failures and the edit lock", () => {
  it("a save that fails leaves the previous file byte for byte, and no temp file behind", async () => {
    // A session reading lazily from a file that then loses its second half: the write cannot read it.
    const fragile = join(t.dataDir, "fragile.sdata.zarr.zip");
    await copyFile(rich, fragile);
    const id = await load(fragile);
    const prev = join(t.dataDir, "prev.sdata.zarr.zip");
    await copyFile(t.demo, prev);
    const bytes = await readFile(prev);
    const size = (await readFile(fragile)).length;
    await truncate(fragile, Math.floor(size / 3));
    const before = await files();
    const { end, event } = await save({ path: "prev.sdata.zarr.zip" }, id);
    expect(end.status).toBe("failed");
    expect(event.error).toEqual(expect.any(String));
    expect((await readFile(prev)).equals(bytes)).toBe(true);
    expect(await files()).toEqual(before);
    expect(t.server.service.session(id).checkpointPath).toBe(fragile);
    await close(id);
  });

  it("423 while another viewer holds the lock; the holder saves", async () => {
    const holder = { clientId: "11111111-1111-4111-8111-111111111111", clientName: "Amber Fox" };
    const other = { clientId: "22222222-2222-4222-8222-222222222222", clientName: "Blue Owl" };
    expect((await post(`${S()}/lock`, undefined, holder)).status).toBe(200);
    try {
      const before = await files();
      for (const who of [other, {}]) {
        const r = await post(`${S()}/save`, { include: { points: [] } }, who);
        expect(r.status).toBe(423);
        expect((await r.json()).detail).toBe("session is locked by Amber Fox");
      }
      expect(await files()).toEqual(before);
      const ok = await post(`${S()}/save`, { path: "locked-by-me.sdata.zarr.zip" }, holder);
      expect(ok.status).toBe(200);
      expect((await t.waitJob(sid, (await ok.json()).job_id)).status).toBe("completed");
    } finally {
      await t.api(`${S()}/lock`, { method: "DELETE", ...holder });
    }
  });
});
