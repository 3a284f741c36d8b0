import { type Table, Vector } from "apache-arrow";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeCheckpointNamed } from "../../../src/sdk/io/checkpoint/write.js";
import type { Session } from "../../../src/sdk/session/session.js";
import { richDemo } from "../../sdk/data/rich-demo.js";
import { arrowOf, startTestServer, type TestServer } from "./harness.js";

let t: TestServer;
let rich: Session;
const geo = (element: string, query = "", sid = rich.id) =>
  t.api(`/api/sessions/${sid}/shapes/${encodeURIComponent(element)}/geoarrow${query}`);

beforeAll(async () => {
  t = await startTestServer();
  const { path } = await writeCheckpointNamed(richDemo(), t.dataDir, "rich", { name: "rich" });
  rich = await t.server.service.createSession({ source: { kind: "load", path } });
  await rich.ready;
  expect(rich.status).toBe("ready");
}, 60_000);
afterAll(async () => {
  await t?.close();
});

const r2 = (v: number) => Math.round(v * 100) / 100;

/** Nested Arrow list values as plain arrays, struct rows as objects. */
function plain(v: unknown): unknown {
  if (v instanceof Vector) return [...v].map(plain);
  return (v as { toJSON(): unknown }).toJSON();
}

/** The polygons of a decoded table as rings of [x, y] (polygon: one feature = list of rings). */
function features(a: Table): { rings: number[][][]; cell: number }[] {
  const out: { rings: number[][][]; cell: number }[] = [];
  const geom = a.getChild("geometry")!;
  const cell = a.getChild("cell_index")!;
  for (let i = 0; i < a.numRows; i++) {
    const g = plain(geom.get(i)) as unknown[];
    // multipolygon: [[ring...]...]; polygon: [ring...]
    const polys = (Array.isArray((g[0] as unknown[])?.[0]) ? g : [g]) as { x: number; y: number }[][][];
    out.push({ rings: polys.flat().map((ring) => ring.map((p) => [p.x, p.y])), cell: cell.get(i) as number });
  }
  return out;
}

/** Feature i of cell_boundaries as rings, rounded, straight from the session's element. */
function expectedRings(i: number): number[][][] {
  const g = rich.data.shapes.cell_boundaries!.geometry;
  const rings: number[][][] = [];
  for (let r = g.geomOffsets![i]!; r < g.geomOffsets![i + 1]!; r++) {
    const ring: number[][] = [];
    for (let v = g.ringOffsets![r]!; v < g.ringOffsets![r + 1]!; v++)
      ring.push([r2(g.coords[2 * v]!), r2(g.coords[2 * v + 1]!)]);
    rings.push(ring);
  }
  return rings;
}

/** Brute force: features whose bbox (rounded coordinates) intersects the query box. */
function bruteForce(box: [number, number, number, number]): number[] {
  const out: number[] = [];
  const n = rich.data.shapes.cell_boundaries!.frame.index.values.length;
  for (let i = 0; i < n; i++) {
    const pts = expectedRings(i).flat();
    const xs = pts.map((p) => p[0]!);
    const ys = pts.map((p) => p[1]!);
    if (
      Math.min(...xs) <= box[2] &&
      Math.max(...xs) >= box[0] &&
      Math.min(...ys) <= box[3] &&
      Math.max(...ys) >= box[1]
    )
      out.push(i);
  }
  return out;
}

describe("GET /shapes/{element}/geoarrow", () => {
  it("serves every polygon (no bbox) in canvas space, 2 decimals, with GeoArrow metadata and cell rows", async () => {
    const r = await geo("cell_boundaries");
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toBe("application/vnd.apache.arrow.stream");
    const a = await arrowOf(r);
    expect(a.batches.length).toBe(1);
    expect(a.numRows).toBe(300);
    const [gf, cf] = a.schema.fields;
    expect(gf!.name).toBe("geometry");
    expect(gf!.metadata.get("ARROW:extension:name")).toBe("geoarrow.polygon");
    expect(gf!.metadata.get("ARROW:extension:metadata")).toBe("{}");
    expect(String(gf!.type)).toBe("List<List<Struct<{x:Float64, y:Float64}>>>");
    expect([cf!.name, String(cf!.type)]).toEqual(["cell_index", "Int32"]);
    const fs = features(a);
    const ids = rich.data.shapes.cell_boundaries!.frame.index.values;
    const instance = rich.data.tables.table!.obs.columns.cell_id!;
    for (const i of [0, 1, 150, 299]) {
      expect(fs[i]!.rings).toEqual(expectedRings(i));
      // cell_index is the table row whose instance key equals the feature's id.
      const row = fs[i]!.cell;
      expect(instance.kind === "dense" ? String(instance.data[row]) : "").toBe(ids[i]);
    }
    for (const f of fs)
      for (const [x, y] of f.rings.flat()) {
        expect(Math.abs(x! * 100 - Math.round(x! * 100))).toBeLessThan(1e-6);
        expect(Math.abs(y! * 100 - Math.round(y! * 100))).toBeLessThan(1e-6);
      }
  });

  it("bbox keeps exactly the features whose bounds intersect it (vs brute force), in element order", async () => {
    const sp = rich.data.tables.table!.obsm.spatial as { data: Float64Array };
    const boxes: [number, number, number, number][] = [
      [sp.data[0]! - 5, sp.data[1]! - 5, sp.data[0]! + 5, sp.data[1]! + 5],
      [0, 0, 40, 40],
      [20, 30, 90, 60],
      [sp.data[20]!, sp.data[21]!, sp.data[20]!, sp.data[21]!],
    ];
    for (const box of boxes) {
      const a = await arrowOf(await geo("cell_boundaries", `?bbox=${box.join(",")}`));
      const want = bruteForce(box);
      expect(want.length).toBeGreaterThan(0);
      expect(a.numRows, box.join(",")).toBe(want.length);
      // cell i sits in row i (cell ids 1..n in order): cell_index gives the feature position.
      expect(features(a).map((f) => f.cell)).toEqual(want);
    }
  });

  it("limit keeps the first N intersecting features; 0 gives an empty table", async () => {
    const all = await arrowOf(await geo("cell_boundaries", "?bbox=0,0,1000,1000"));
    const a = await arrowOf(await geo("cell_boundaries", "?bbox=0,0,1000,1000&limit=7"));
    expect(a.numRows).toBe(7);
    expect(features(a).map((f) => f.cell)).toEqual(
      features(all)
        .slice(0, 7)
        .map((f) => f.cell),
    );
    expect((await arrowOf(await geo("cell_boundaries", "?limit=0"))).numRows).toBe(0);
  });

  it("an empty or non-intersecting bbox gives a 0-row table with the full schema", async () => {
    for (const q of ["?bbox=-1000,-1000,-900,-900", "?bbox=5000,5000,5000,5000"]) {
      const r = await geo("cell_boundaries", q);
      expect(r.status).toBe(200);
      const a = await arrowOf(r);
      expect(a.numRows).toBe(0);
      expect(a.schema.fields.map((f) => f.name)).toEqual(["geometry", "cell_index"]);
      expect(a.schema.fields[0]!.metadata.get("ARROW:extension:name")).toBe("geoarrow.polygon");
    }
  });

  it("multipolygons are placed by their own transformation (a scale) onto the same canvas", async () => {
    const a = await arrowOf(await geo("nuclei", "?limit=5"));
    expect(a.schema.fields[0]!.metadata.get("ARROW:extension:name")).toBe("geoarrow.multipolygon");
    expect(String(a.schema.fields[0]!.type)).toBe("List<List<List<Struct<{x:Float64, y:Float64}>>>>");
    const fs = features(a);
    for (let i = 0; i < 5; i++) {
      expect(fs[i]!.rings).toEqual(expectedRings(i));
      // The table annotates cell_boundaries only: nuclei features map to no row.
      expect(fs[i]!.cell).toBe(-1);
    }
  });

  it("the harness demo's boundaries map to their cells", async () => {
    const demo = await t.openDemo();
    const a = await arrowOf(await geo("cell_boundaries", "?limit=3", demo));
    expect(features(a).map((f) => f.cell)).toEqual([0, 1, 2]);
  });

  it("404: absent element, circles, the annotations element, no path into the world system", async () => {
    for (const [el, says] of [
      ["nope", 'no shapes element "nope"'],
      ["spots", "circles"],
      ["annotations", "annotations"],
      ["floating", "no transformation into the world"],
    ] as const) {
      const r = await geo(el);
      expect(r.status, el).toBe(404);
      expect(((await r.json()) as { detail: string }).detail, el).toContain(says);
    }
    expect((await t.api("/api/sessions/nope/shapes/cell_boundaries/geoarrow")).status).toBe(404);
  });

  it("400: malformed bbox or limit", async () => {
    for (const q of [
      "?bbox=1,2,3",
      "?bbox=1,2,3,4,5",
      "?bbox=a,b,c,d",
      "?bbox=",
      "?bbox=1,,3,4",
      "?bbox=NaN,0,1,1",
      "?bbox=0,0,Infinity,1",
      "?bbox=5,0,1,1",
      "?bbox=0,5,1,1",
      "?bbox=0,0,1,1&bbox=0,0,1,1",
      "?limit=-1",
      "?limit=x",
      "?limit=1.5",
      "?limit=",
    ]) {
      const r = await geo("cell_boundaries", q);
      expect(r.status, q).toBe(400);
      expect(((await r.json()) as { detail: string }).detail, q).toMatch(/bbox|limit/);
    }
  });

  it("reuses the index while the session is unchanged", async () => {
    const { canvasShapes } = await import("../../../src/sdk/data/shape-index.js");
    const a = canvasShapes(rich.data, rich.activeTable, "cell_boundaries");
    const b = canvasShapes(rich.data, rich.activeTable, "cell_boundaries");
    expect(a).toBe(b);
  });
});
