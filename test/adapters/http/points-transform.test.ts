import { readdir, realpath } from "node:fs/promises";
import { join } from "node:path";
import { Vector } from "apache-arrow";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { toAffine6 } from "../../../src/sdk/data/affine.js";
import { type SpatialData, transformTo } from "../../../src/sdk/data/spatialdata.js";
import { openCheckpoint } from "../../../src/sdk/io/checkpoint/read.js";
import { writeCheckpointNamed } from "../../../src/sdk/io/checkpoint/write.js";
import { openData } from "../../../src/sdk/io/open.js";
import { writeSpatialData } from "../../../src/sdk/io/spatialdata/write.js";
import { FsStore } from "../../../src/sdk/io/store/fs-store.js";
import { consolidateV3 } from "../../../src/sdk/io/zarr/consolidated.js";
import type { Session } from "../../../src/sdk/session/session.js";
import { richDemo } from "../../sdk/data/rich-demo.js";
import { arrowOf, startTestServer, type TestServer } from "./harness.js";

let t: TestServer;
let richPath: string;
const IDENTITY = [1, 0, 0, 0, 1, 0];

async function openRich(): Promise<Session> {
  const s = await t.server.service.createSession({ source: { kind: "load", path: richPath } });
  await s.ready;
  expect(s.status).toBe("ready");
  return s;
}

const pt = (sid: string, init?: Parameters<TestServer["api"]>[1]) =>
  t.api(`/api/sessions/${sid}/points-transform`, init);
const post = (sid: string, json: unknown, clientId?: string) =>
  pt(sid, { method: "POST", json, ...(clientId ? { clientId, clientName: clientId } : {}) });

/** First vertex of the first `n` features of an element's GeoArrow payload. */
async function firstVertices(sid: string, element: string, n = 3): Promise<number[][]> {
  const a = await arrowOf(await t.api(`/api/sessions/${sid}/shapes/${element}/geoarrow?limit=${n}`));
  const out: number[][] = [];
  for (let i = 0; i < a.numRows; i++) {
    let v: unknown = a.getChild("geometry")!.get(i);
    while (v instanceof Vector) v = v.get(0);
    const p = (v as { toJSON(): { x: number; y: number } }).toJSON();
    out.push([p.x, p.y]);
  }
  return out;
}

const worldAffine = (sd: SpatialData, family: "shapes", name: string) =>
  toAffine6(transformTo(sd, sd[family][name]!, "global", ["x", "y"]));

beforeAll(async () => {
  t = await startTestServer();
  richPath = (await writeCheckpointNamed(richDemo(), t.dataDir, "rich", { name: "rich" })).path;
}, 60_000);
afterAll(async () => {
  await t?.close();
});

describe("GET /points-transform", () => {
  it("answers the region element's affine into the world system", async () => {
    const s = await openRich();
    const r = await pt(s.id);
    expect(r.status).toBe(200);
    expect(await r.json()).toEqual({
      affine: IDENTITY,
      element: "cell_boundaries",
      coordinate_system: "global",
    });
    expect((await pt("nope")).status).toBe(404);
  });
});

describe("POST /points-transform", () => {
  it("400 for a bad affine, body or path; nothing is queued", async () => {
    const s = await openRich();
    for (const body of [
      {},
      { affine: [1, 0, 0, 0, 1] },
      { affine: [1, 0, 0, 0, 1, 0, 0] },
      { affine: ["1", 0, 0, 0, 1, 0] },
      { affine: "identity" },
      { affine: [1, 2, 0, 2, 4, 0] },
      { affine: [0, 0, 5, 0, 0, 5] },
      { affine: IDENTITY, extra: 1 },
      { affine: IDENTITY, path: 5 },
      { affine: IDENTITY, path: "/etc" },
      { affine: IDENTITY, path: "../outside.zarr.zip" },
      { affine: IDENTITY, path: "demo.txt" },
      { affine: IDENTITY, path: richPath },
    ]) {
      const r = await post(s.id, body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(((await r.json()) as { detail: string }).detail.length).toBeGreaterThan(5);
    }
    const bad = await pt(s.id, {
      method: "POST",
      body: "{not json",
      headers: { "content-type": "application/json" },
    });
    expect(bad.status).toBe(400);
    expect(s.queueView()).toEqual([]);
    expect(s.appState.compute_history.length).toBe(0);
    expect((await post("nope", { affine: IDENTITY })).status).toBe(404);
  });

  it("423 while another viewer holds the lock", async () => {
    const s = await openRich();
    expect(
      (
        await t.api(`/api/sessions/${s.id}/lock`, {
          method: "POST",
          clientId: "holder-client",
          clientName: "Holder Person",
        })
      ).status,
    ).toBe(200);
    const r = await post(s.id, { affine: [1, 0, 5, 0, 1, 5] }, "intruder");
    expect(r.status).toBe(423);
    expect(await r.json()).toEqual({ detail: "session is locked by Holder Person" });
    const anon = await post(s.id, { affine: [1, 0, 5, 0, 1, 5] });
    expect(anon.status).toBe(423);
    expect(
      (await t.api(`/api/sessions/${s.id}/lock`, { method: "DELETE", clientId: "holder-client" })).status,
    ).toBe(200);
  });

  it("sets the affine, moves the other elements on the canvas, bumps data_versions and writes a new checkpoint", async () => {
    const s = await openRich();
    const events: { event: string; data: Record<string, unknown> }[] = [];
    const stop = t.server.service.bus.subscribe((e) => {
      if ((e.data as { session_id?: string }).session_id === s.id) events.push(e as never);
    });
    const cellsBefore = await firstVertices(s.id, "cell_boundaries");
    const nucleiBefore = await firstVertices(s.id, "nuclei");
    expect(nucleiBefore).toEqual(cellsBefore);
    const affine = [2, 0, 10, 0, 2, -4];
    const r = await post(s.id, { affine });
    expect(r.status).toBe(200);
    const body = (await r.json()) as { job_id: string; path: string | null };
    // No path on a checkpoint session: a named save into the checkpoint's folder.
    expect(body.path).toBeNull();
    expect((body as { pattern?: string }).pattern).toBe(
      join(await realpath(t.dataDir), "rich-<hash>.sdata.zarr.zip"),
    );
    expect((await t.waitJob(s.id, body.job_id)).status).toBe("completed");
    stop();
    expect(await (await pt(s.id)).json()).toEqual({
      affine,
      element: "cell_boundaries",
      coordinate_system: "global",
    });
    // The cells' own polygons stay on the cells; nuclei (placed in global) move by P⁻¹.
    expect(await firstVertices(s.id, "cell_boundaries")).toEqual(cellsBefore);
    const nucleiAfter = await firstVertices(s.id, "nuclei");
    nucleiAfter.forEach(([x, y], i) => {
      expect(x).toBeCloseTo((nucleiBefore[i]![0]! - 10) / 2, 1);
      expect(y).toBeCloseTo((nucleiBefore[i]![1]! + 4) / 2, 1);
    });
    const state = (await (await t.api(`/api/sessions/${s.id}`)).json()) as {
      data_versions: Record<string, number>;
      summary: { saved: boolean };
    };
    expect(state.data_versions["shapes:cell_boundaries"]).toBe(1);
    expect(state.data_versions["shapes:annotations"]).toBe(1);
    expect(state.summary.saved).toBe(true);
    const kinds = events.map((e) => e.event);
    expect(kinds.filter((k) => k === "job.queued").length).toBe(2);
    expect(kinds.filter((k) => k === "job.completed").length).toBe(2);
    expect(
      events.find((e) => e.event === "job.completed" && e.data.kind === "points_transform")?.data,
    ).toMatchObject({
      element: "cell_boundaries",
      affine,
    });
    // Persisted: the session's new checkpoint (a new file beside the one it was opened from) has it.
    expect(s.checkpointPath).not.toBe(richPath);
    expect((await readdir(t.dataDir)).filter((f) => f.endsWith(".zarr.zip")).length).toBeGreaterThanOrEqual(
      3,
    );
    const cp = await openCheckpoint(s.checkpointPath!);
    expect(worldAffine(cp.sdata, "shapes", "cell_boundaries")).toEqual(affine);
    expect(worldAffine(cp.sdata, "shapes", "annotations")).toEqual(affine);
    expect(worldAffine(cp.sdata, "shapes", "nuclei")).toEqual([2, 0, 0, 0, 2, 0]);
    // The file the session reads lazily from is untouched and the mirror still serves genes.
    const gene = s.data.tables.table!.var.index.values[2]!;
    expect(await s.geneValues("table", gene)).not.toBeNull();
  });

  it("writes an explicit .zarr.zip path as given (the whole object, through the session's save)", async () => {
    const s = await openRich();
    const affine = [1, 0, -2, 0, 1, 2];
    const r = await post(s.id, { affine, path: "out/aligned.sdata.zarr.zip" });
    expect(r.status).toBe(200);
    const body = (await r.json()) as { job_id: string; path: string };
    expect(body.path).toBe(join(await realpath(t.dataDir), "out", "aligned.sdata.zarr.zip"));
    expect((await t.waitJob(s.id, body.job_id)).status).toBe("completed");
    const cp = await openCheckpoint(body.path);
    expect(worldAffine(cp.sdata, "shapes", "cell_boundaries")).toEqual(affine);
    expect(s.checkpointPath).toBe(body.path);
  });

  it("writes into a SpatialData .zarr folder in place (element attrs and consolidated metadata)", async () => {
    const folder = join(t.dataDir, "rich.zarr");
    const store = new FsStore(folder);
    await writeSpatialData(richDemo(), store);
    await consolidateV3(store);
    const s = await t.server.service.createSession({ source: { kind: "load", path: folder } });
    await s.ready;
    expect(s.status).toBe("ready");
    const affine = [1, 0, 3, 0, 1, 7];
    const r = await post(s.id, { affine });
    expect(r.status).toBe(200);
    const body = (await r.json()) as { job_id: string; path: string };
    expect(body.path).toBe(folder);
    expect((await t.waitJob(s.id, body.job_id)).status).toBe("completed");
    const back = await openData(folder);
    expect(worldAffine(back.sdata, "shapes", "cell_boundaries")).toEqual(affine);
    expect(worldAffine(back.sdata, "shapes", "nuclei")).toEqual([2, 0, 0, 0, 2, 0]);
    // A folder without the element is refused before anything is queued.
    const other = join(t.dataDir, "empty.zarr");
    await writeSpatialData({ ...richDemo(), shapes: {} }, new FsStore(other));
    const refused = await post(s.id, { affine, path: other });
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { detail: string }).detail).toContain(
      "no element shapes/cell_boundaries",
    );
  });
});
