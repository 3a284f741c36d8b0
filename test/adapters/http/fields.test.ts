import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { columnValue } from "../../../src/sdk/data/dataframe.js";
import type { Session } from "../../../src/sdk/session/session.js";
import { startTestServer, type TestServer } from "./harness.js";

let t: TestServer;
let sid: string;
let session: Session;
beforeAll(async () => {
  t = await startTestServer();
  sid = await t.openDemo();
  session = t.server.service.session(sid);
});
afterAll(async () => {
  await t?.close();
});

const get = async <T = Record<string, unknown>>(path: string): Promise<{ status: number; body: T }> => {
  const r = await t.api(path);
  return { status: r.status, body: (await r.json()) as T };
};
const table = () => session.data.tables.table!;

describe("GET /api/sessions/{id}/obs/{column}/values", () => {
  it("lists a categorical's categories in category order with their counts", async () => {
    const { status, body } = await get<{ column: string; values: { value: unknown; count: number }[] }>(
      `/api/sessions/${sid}/obs/cell_type/values`,
    );
    expect(status).toBe(200);
    expect(body.column).toBe("cell_type");
    const col = table().obs.columns.cell_type!;
    if (col.kind !== "categorical" || col.categories.kind !== "string") throw new Error("demo changed");
    expect(body.values.map((v) => v.value)).toEqual(col.categories.values);
    // Counts recomputed independently from the codes.
    const counts = col.categories.values.map((_, k) => col.codes.filter((c) => c === k).length);
    expect(body.values.map((v) => v.count)).toEqual(counts);
    expect(counts.reduce((a, b) => a + b, 0)).toBe(300);
  });

  it("lists a string column's and an integer column's distinct values sorted", async () => {
    const ids = await get<{ values: { value: number; count: number }[] }>(
      `/api/sessions/${sid}/obs/cell_id/values`,
    );
    expect(ids.status).toBe(200);
    const expected = [
      ...new Set(Array.from({ length: 300 }, (_, i) => columnValue(table().obs.columns.cell_id!, i))),
    ]
      .map(Number)
      .sort((a, b) => a - b);
    expect(ids.body.values.map((v) => v.value)).toEqual(expected);
    expect(ids.body.values.every((v) => v.count === 1)).toBe(true);
  });

  it("answers 404 for an unknown column (names with / or : too) and an unknown session", async () => {
    for (const c of ["nope", "a%2Fb", "obs%3Acell_type", "a%20b"]) {
      const r = await get<{ detail: string }>(`/api/sessions/${sid}/obs/${c}/values`);
      expect(r.status, c).toBe(404);
      expect(r.body.detail).toMatch(/no obs column/);
    }
    expect((await get(`/api/sessions/nope/obs/cell_type/values`)).status).toBe(404);
  });

  it("refuses a continuous numeric column with too many distinct values (400)", async () => {
    const s = await startTestServer({ demo: { nCells: 1100, nGenes: 30, imageSize: 256, nTranscripts: 20 } });
    try {
      const id = await s.openDemo();
      const r = await s.api(`/api/sessions/${id}/obs/cell_area/values`);
      expect(r.status).toBe(400);
      expect(((await r.json()) as { detail: string }).detail).toMatch(/more than 1000 distinct values/);
    } finally {
      await s.close();
    }
  });
});

describe("GET /api/sessions/{id}/var-names", () => {
  const names = () => table().var.index.values as string[];
  const search = (q: string) => get<{ names: string[] }>(`/api/sessions/${sid}/var-names${q}`);

  it("gives the first names for an empty query, bounded by limit", async () => {
    expect((await search("")).body.names).toEqual(names().slice(0, 50));
    expect((await search("?q=")).body.names).toEqual(names().slice(0, 50));
    expect((await search("?limit=5")).body.names).toEqual(names().slice(0, 5));
  });

  it("matches case-insensitively, prefix matches first, then substrings, each in var order", async () => {
    const all = names();
    const g = all[3]!;
    const q =
      g.slice(0, 2).toLowerCase() === g.slice(0, 2)
        ? g.slice(0, 2).toUpperCase()
        : g.slice(0, 2).toLowerCase();
    const { status, body } = await search(`?q=${encodeURIComponent(q)}&limit=1000`);
    expect(status).toBe(200);
    const lower = q.toLowerCase();
    const prefix = all.filter((n) => n.toLowerCase().startsWith(lower));
    const inner = all.filter((n) => !n.toLowerCase().startsWith(lower) && n.toLowerCase().includes(lower));
    expect(body.names).toEqual([...prefix, ...inner]);
    expect(body.names).toContain(g);
    // A single common letter gives both groups on the demo genes.
    const e = await search("?q=e&limit=1000");
    const ePrefix = all.filter((n) => n.toLowerCase().startsWith("e"));
    const eInner = all.filter((n) => !n.toLowerCase().startsWith("e") && n.toLowerCase().includes("e"));
    expect(e.body.names).toEqual([...ePrefix, ...eInner]);
    expect((await search("?q=zzzzqqq")).body.names).toEqual([]);
  });

  it("refuses a bad limit or an unknown parameter with 400", async () => {
    for (const q of ["?limit=0", "?limit=-1", "?limit=1001", "?limit=abc", "?limit=2.5", "?query=x"]) {
      const r = await search(q);
      expect(r.status, q).toBe(400);
    }
    expect((await get(`/api/sessions/nope/var-names`)).status).toBe(404);
  });
});

describe("GET /api/sessions/{id}/elements", () => {
  interface Inv {
    tables: {
      name: string;
      n_obs: number;
      n_vars: number;
      active: boolean;
      size_mb?: number;
      slots?: { path: string; size_mb: number; required: boolean }[];
    }[];
    shapes: { name: string; n: number; geometry: string; size_mb?: number }[];
    points: { name: string; n: number; columns: string[]; size_mb?: number }[];
    images: {
      name: string;
      levels: { level: number; width: number; height: number; size_mb?: number }[];
      channels: string[];
      size_mb?: number;
    }[];
    labels: {
      name: string;
      levels: { level: number; width: number; height: number; size_mb?: number }[];
      size_mb?: number;
    }[];
  }

  it("lists every element family without sizes by default", async () => {
    const { status, body } = await get<Inv>(`/api/sessions/${sid}/elements`);
    expect(status).toBe(200);
    expect(body.tables).toEqual([
      expect.objectContaining({ name: "table", n_obs: 300, n_vars: 40, active: true }),
    ]);
    expect(body.tables[0]).not.toHaveProperty("size_mb");
    expect(body.shapes).toEqual([
      expect.objectContaining({ name: "cell_boundaries", n: 300, geometry: "polygon" }),
    ]);
    expect(body.points).toEqual([expect.objectContaining({ name: "transcripts", n: 500 })]);
    expect(body.images.map((i) => i.name)).toEqual(["morphology"]);
    expect(body.images[0]!.levels[0]).toEqual({ level: 0, width: 256, height: 256 });
    expect(body.images[0]!.channels.length).toBe(4);
    expect(body.labels.map((i) => i.name)).toEqual(["cell_labels"]);
    for (const q of ["?sizes=0", "?sizes=false"]) {
      const r = await get<Inv>(`/api/sessions/${sid}/elements${q}`);
      expect(r.body.images[0]).not.toHaveProperty("size_mb");
    }
  });

  it("with sizes=1 adds size_mb everywhere; levels and slots sum to their element's size", async () => {
    const { status, body } = await get<Inv>(`/api/sessions/${sid}/elements?sizes=1`);
    expect(status).toBe(200);
    const sum = (xs: number[]) => Math.round(xs.reduce((a, b) => a + b, 0) * 1000) / 1000;
    for (const img of [...body.images, ...body.labels]) {
      expect(img.size_mb).toBeGreaterThan(0);
      expect(img.levels.length).toBeGreaterThan(0);
      expect(img.levels.map((l) => l.level)).toEqual(img.levels.map((_, i) => i));
      for (let i = 1; i < img.levels.length; i++)
        expect(img.levels[i - 1]!.width).toBeGreaterThan(img.levels[i]!.width);
      expect(sum(img.levels.map((l) => l.size_mb!))).toBe(img.size_mb);
    }
    const tb = body.tables[0]!;
    expect(tb.slots!.map((s) => s.path)).toEqual(
      expect.arrayContaining(["X", "obs", "var", "uns", "obsm/spatial"]),
    );
    expect(
      tb
        .slots!.filter((s) => s.required)
        .map((s) => s.path)
        .sort(),
    ).toEqual(["obs", "uns", "var"]);
    expect(sum(tb.slots!.map((s) => s.size_mb))).toBe(tb.size_mb);
    expect(body.shapes[0]!.size_mb).toBeGreaterThan(0);
    expect(body.points[0]!.size_mb).toBeGreaterThan(0);
    // Real compressed bytes from the checkpoint: less than the raw 256×256×4 uint16 pixels.
    expect(body.images[0]!.levels[0]!.size_mb).toBeLessThan((256 * 256 * 4 * 2) / 1e6);
    const same = await get<Inv>(`/api/sessions/${sid}/elements?sizes=true`);
    expect(same.body).toEqual(body);
  });

  it("refuses a bad sizes value or an unknown parameter (400); unknown session 404", async () => {
    expect((await get(`/api/sessions/${sid}/elements?sizes=yes`)).status).toBe(400);
    expect((await get(`/api/sessions/${sid}/elements?size=1`)).status).toBe(400);
    expect((await get(`/api/sessions/nope/elements`)).status).toBe(404);
  });
});

describe("GET /api/sessions/{id}/table", () => {
  interface Page {
    total_rows: number;
    offset: number;
    limit: number;
    index_name: string;
    index: string[];
    columns: { name: string; dtype: string }[];
    rows: unknown[][];
  }
  const page = (q: string) => get<Page & { detail?: string }>(`/api/sessions/${sid}/table${q}`);

  it("pages the active table's obs with typed, positional columns", async () => {
    const { status, body } = await page("?path=obs&offset=10&limit=5");
    expect(status).toBe(200);
    const obs = table().obs;
    expect(body.total_rows).toBe(300);
    expect(body.offset).toBe(10);
    expect(body.limit).toBe(5);
    expect(body.index_name).toBe(obs.indexName);
    expect(body.index).toEqual(obs.index.values.slice(10, 15));
    expect(body.columns).toEqual([
      { name: "cell_id", dtype: "int32" },
      { name: "region", dtype: "category" },
      { name: "cell_type", dtype: "category" },
      { name: "total_counts", dtype: "float32" },
      { name: "cell_area", dtype: "float64" },
      { name: "nucleus_area", dtype: "float64" },
    ]);
    expect(body.rows.length).toBe(5);
    for (const [r, row] of body.rows.entries()) {
      expect(row.length).toBe(body.columns.length);
      body.columns.forEach((c, j) => {
        expect(row[j]).toEqual(columnValue(obs.columns[c.name]!, 10 + r));
      });
    }
  });

  it("defaults to offset 0 and limit 100; caps limit at 1000; an offset past the end gives no rows", async () => {
    const d = await page("?path=obs");
    expect([d.body.offset, d.body.limit, d.body.rows.length]).toEqual([0, 100, 100]);
    const big = await page("?path=obs&limit=5000");
    expect([big.body.limit, big.body.rows.length]).toEqual([1000, 300]);
    const end = await page("?path=obs&offset=295&limit=10");
    expect(end.body.rows.length).toBe(5);
    const past = await page("?path=obs&offset=1000");
    expect([past.status, past.body.rows.length, past.body.index.length]).toEqual([200, 0, 0]);
    const zero = await page("?path=obs&limit=0");
    expect([zero.status, zero.body.rows.length, zero.body.columns.length]).toEqual([200, 0, 6]);
  });

  it("pages var, tables:<name>:obs/var, shapes and points", async () => {
    const v = await page("?path=var&limit=3");
    expect(v.body.total_rows).toBe(40);
    expect(v.body.columns).toEqual([
      { name: "gene_ids", dtype: "string" },
      { name: "feature_types", dtype: "category" },
    ]);
    expect(v.body.index).toEqual(table().var.index.values.slice(0, 3));
    expect((await page("?path=tables:table:var&limit=3")).body).toEqual(v.body);
    expect((await page("?path=tables:table:obs&limit=7")).body).toEqual(
      (await page("?path=obs&limit=7")).body,
    );
    const sh = await page("?path=shapes:cell_boundaries&limit=2");
    expect(sh.status).toBe(200);
    expect(sh.body.total_rows).toBe(300);
    expect(sh.body.columns.at(-1)).toEqual({ name: "geometry", dtype: "geometry" });
    expect(sh.body.rows[0]!.at(-1)).toMatch(/^POLYGON \(\((-?[\d.]+ -?[\d.]+, )+-?[\d.]+ -?[\d.]+\)\)$/);
    const pts = await page("?path=points:transcripts&offset=490&limit=50");
    expect(pts.status).toBe(200);
    expect(pts.body.total_rows).toBe(500);
    expect(pts.body.rows.length).toBe(10);
    expect(pts.body.columns.map((c) => c.name)).toEqual(expect.arrayContaining(["x", "y"]));
  });

  it("answers 400 for a bad path, offset or limit, and 404 for an unknown table or element", async () => {
    for (const q of [
      "",
      "?path=",
      "?path=X",
      "?path=obsm:spatial",
      "?path=tables:table",
      "?path=images:morphology",
      "?path=obs&offset=-1",
      "?path=obs&offset=1.5",
      "?path=obs&limit=-2",
      "?path=obs&limit=ten",
      "?path=obs&page=2",
    ]) {
      const r = await page(q);
      expect(r.status, `${q}: ${r.body.detail}`).toBe(400);
    }
    for (const q of ["?path=tables:nope:obs", "?path=shapes:nope", "?path=points:cell_boundaries"]) {
      const r = await page(q);
      expect(r.status, q).toBe(404);
    }
    expect((await get(`/api/sessions/nope/table?path=obs`)).status).toBe(404);
  });
});

describe("a session that failed to load", () => {
  it("answers 409 on every data route, and its state stays readable", async () => {
    await writeFile(join(t.dataDir, "broken.txt"), "not a dataset");
    const r = await t.api("/api/sessions", {
      method: "POST",
      json: { source: { kind: "load", path: "broken.txt" } },
    });
    const { id } = (await r.json()) as { id: string };
    await t.server.service.session(id).ready;
    for (const path of ["obs/cell_type/values", "var-names", "elements", "table?path=obs"]) {
      const res = await get<{ detail: string }>(`/api/sessions/${id}/${path}`);
      expect(res.status, path).toBe(409);
      expect(res.body.detail).toMatch(/failed to load/);
    }
    expect((await get(`/api/sessions/${id}`)).status).toBe(200);
    await t.api(`/api/sessions/${id}`, { method: "DELETE" });
  });
});
