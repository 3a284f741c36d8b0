/**
 * The region tools, get_table and view_plot over real HTTP with the SDK's MCP client, on the demo
 * dataset. Every number is checked against one computed here from the session's own arrays (obsm
 * coordinates, the cell-type codes, the CSR counts): inspect_region's count, composition and gene
 * means; annotate_region's labels; the embedding space; subset_to_region's child session; a table
 * page; a plot's PNG and its redraw after the data it shows changed. A human holding the lock makes
 * every mutating tool fail with the lock error, and bad arguments are tool errors naming them.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DenseArray, SparseMatrix } from "../../../src/sdk/data/arrays.js";
import { loadMatrix } from "../../../src/sdk/data/lazy.js";
import { startTestServer, type TestServer } from "../http/harness.js";
import { connectMcp, type McpTestClient } from "./harness.js";

let t: TestServer;
let mcp: McpTestClient;
let sid: string;
let xs: number[];
let ys: number[];
let codes: Int32Array;
let categories: string[];
let geneNames: string[];
let counts: SparseMatrix;
const HUMAN = { clientId: "human-browser-tab-0042", clientName: "Grace" };

beforeAll(async () => {
  t = await startTestServer();
  sid = await t.openDemo();
  mcp = await connectMcp(t.url);
  const s = t.server.service.session(sid);
  const table = s.data.tables[s.activeTable!]!;
  const sp = table.obsm.spatial as DenseArray;
  xs = Array.from({ length: sp.shape[0]! }, (_, i) => Number(sp.data[i * 2]));
  ys = Array.from({ length: sp.shape[0]! }, (_, i) => Number(sp.data[i * 2 + 1]));
  const col = table.obs.columns.cell_type as unknown as {
    codes: Int32Array;
    categories: { values: string[] };
  };
  codes = col.codes;
  categories = col.categories.values;
  geneNames = Array.from(table.var.index.values as ArrayLike<unknown>, String);
  counts = (await loadMatrix(table.X!)) as SparseMatrix;
});
afterAll(async () => {
  await mcp?.close();
  await t?.close();
});

const text = (r: { content: unknown[] }) =>
  (r.content.find((c) => (c as { type: string }).type === "text") as { text: string }).text;

/** A box as a ring and the cells whose centre is strictly inside it (counted here). */
function box(x0: number, y0: number, x1: number, y1: number) {
  const ring = [
    [x0, y0],
    [x1, y0],
    [x1, y1],
    [x0, y1],
  ];
  const inside: number[] = [];
  for (let i = 0; i < xs.length; i++)
    if (xs[i]! > x0 && xs[i]! < x1 && ys[i]! > y0 && ys[i]! < y1) inside.push(i);
  return { ring, inside };
}

/** The cell × gene value from the CSR counts. */
function value(cell: number, gene: number): number {
  for (let k = Number(counts.indptr[cell]); k < Number(counts.indptr[cell + 1]); k++)
    if (Number(counts.indices[k]) === gene) return Number(counts.data[k]);
  return 0;
}

const lower = () =>
  box(Math.min(...xs) - 1, (Math.min(...ys) + Math.max(...ys)) / 2, Math.max(...xs) + 1, Math.max(...ys) + 1);
const left = () =>
  box(Math.min(...xs) - 1, Math.min(...ys) - 1, (Math.min(...xs) + Math.max(...xs)) / 2, Math.max(...ys) + 1);

describe("inspect_region", () => {
  it("counts, composition by cell_type and gene means equal the ones computed here", async () => {
    const { ring, inside } = lower();
    const genes = geneNames.slice(0, 3);
    const r = await mcp.ok<{
      n_inside: number;
      n_cells: number;
      composition: {
        by: string;
        rows: { category: string; inside: number; overall: number; inside_fraction: number }[];
      };
      genes: { gene: string; mean_inside: number; mean_outside: number }[];
    }>("inspect_region", { session_id: sid, polygons: [ring], by: "cell_type", genes });
    expect(r.n_inside).toBe(inside.length);
    expect(r.n_cells).toBe(xs.length);
    const set = new Set(inside);
    for (const row of r.composition.rows) {
      const c = categories.indexOf(row.category);
      expect(row.inside).toBe(inside.filter((i) => codes[i] === c).length);
      expect(row.overall).toBe(codes.filter((k) => k === c).length);
      expect(row.inside_fraction).toBeCloseTo(row.inside / inside.length, 12);
    }
    expect(r.composition.rows.reduce((a, b) => a + b.inside, 0)).toBe(inside.length);
    for (const [g, gene] of genes.entries()) {
      let sIn = 0;
      let sOut = 0;
      for (let i = 0; i < xs.length; i++) {
        if (set.has(i)) sIn += value(i, g);
        else sOut += value(i, g);
      }
      const got = r.genes.find((x) => x.gene === gene)!;
      expect(got.mean_inside).toBeCloseTo(sIn / inside.length, 4);
      expect(got.mean_outside).toBeCloseTo(sOut / (xs.length - inside.length), 4);
    }
  });

  it("bad arguments are tool errors naming them", async () => {
    const { ring } = lower();
    for (const [args, pattern] of [
      [
        {
          polygons: [
            [
              [0, 0],
              [1, 1],
            ],
          ],
        },
        /polygons/,
      ],
      [{ polygons: [ring], by: "total_counts" }, /by/],
      [{ polygons: [ring], by: "nope" }, /by.*nope/],
      [{ polygons: [ring], genes: ["NOT_A_GENE"] }, /genes\[0\]/],
      [{ polygons: [ring], space: "embedding" }, /display_id/],
      [{ polygons: [ring], space: "pixels" }, /space/],
    ] as const) {
      const r = await mcp.call("inspect_region", { session_id: sid, ...args });
      expect(r.isError).toBe(true);
      expect(text(r)).toMatch(pattern);
    }
  });
});

describe("a human holds the lock", () => {
  it("annotate_region, subset_to_region and update_display fail with the lock error naming the human", async () => {
    expect((await t.api(`/api/sessions/${sid}/lock`, { method: "POST", ...HUMAN })).status).toBe(200);
    const { ring } = lower();
    for (const [name, args] of [
      ["annotate_region", { region_set: "zones", category: "A", polygons: [ring] }],
      ["subset_to_region", { polygons: [ring] }],
      ["update_display", { display_id: "any", encoding: { opacity: 1 } }],
    ] as const) {
      const r = await mcp.call(name, { session_id: sid, ...args });
      expect(r.structuredContent).toMatchObject({ status: 423 });
      expect(text(r)).toMatch(/Grace/);
    }
    expect(t.server.service.session(sid).data.tables.table!.obs.columns).not.toHaveProperty("zones");
    expect((await t.api(`/api/sessions/${sid}/lock`, { method: "DELETE", ...HUMAN })).status).toBe(200);
  });
});

describe("annotate_region and view_plot", () => {
  const labels = () => {
    const s = t.server.service.session(sid);
    const col = s.data.tables[s.activeTable!]!.obs.columns.zones as unknown as {
      codes: Int32Array;
      categories: { values: string[] };
    };
    return Array.from(col.codes, (c) => (c < 0 ? null : col.categories.values[c]!));
  };

  it("labels exactly the cells inside into the region set, as POST /annotate does", async () => {
    await mcp.ok("set_active_session", { session_id: sid, take_control: true });
    const { ring, inside } = lower();
    const r = await mcp.ok<{ status: string; n_cells: number }>("annotate_region", {
      region_set: "zones",
      category: "lower",
      polygons: [ring],
      color: "#123456",
    });
    expect(r).toMatchObject({ status: "completed", n_cells: inside.length });
    const got = labels();
    const set = new Set(inside);
    for (let i = 0; i < xs.length; i++) expect(got[i]).toBe(set.has(i) ? "lower" : null);
    const hist = t.server.service.session(sid).appState.compute_history.at(-1)!;
    expect(hist.function).toBe("annotate_cells");
  });

  it("view_plot returns a drawn plot's PNG; after its data changes it is redrawn when asked", async () => {
    const run = await mcp.ok<{ status: string }>("run_function", {
      namespace: "pl",
      function: "test_scatter",
      params: { color: "zones" },
    });
    expect(run.status).toBe("completed");
    const { plots } = await mcp.ok<{ plots: { id: string; figure_available: boolean }[] }>("list_plots");
    const plot = plots.at(-1)!;
    expect(plot.figure_available).toBe(true);
    const first = await mcp.call("view_plot", { plot_id: plot.id });
    expect(first.isError).toBeFalsy();
    const img = first.content[0] as { type: string; data: string; mimeType: string };
    expect(img).toMatchObject({ type: "image", mimeType: "image/png" });
    const meta = await sharp(Buffer.from(img.data, "base64")).metadata();
    expect(meta.format).toBe("png");
    expect(meta.width).toBeGreaterThan(50);

    // A second label changes obs:zones, which the plot was drawn from.
    const { ring } = left();
    await mcp.ok("annotate_region", { region_set: "zones", category: "left", polygons: [ring] });
    const after = await mcp.ok<{ plots: { id: string; status: string; figure_available: boolean }[] }>(
      "list_plots",
    );
    expect(after.plots.find((p) => p.id === plot.id)).toMatchObject({ figure_available: false });
    const noRedraw = await mcp.call("view_plot", { plot_id: plot.id, redraw_if_missing: false });
    expect(noRedraw.structuredContent).toMatchObject({ figure_available: false });
    expect(noRedraw.content.some((c) => (c as { type: string }).type === "image")).toBe(false);
    const redrawn = await mcp.call("view_plot", { plot_id: plot.id });
    expect(redrawn.structuredContent).toMatchObject({
      figure_available: true,
      redraw: "completed",
      status: "drawn",
    });
    expect((redrawn.content[0] as { type: string }).type).toBe("image");
    // export_figure with the plot: its files in the data dir, the SVG byte for byte the figure route's.
    const out = await mcp.ok<{ files: string[]; missing: string[] }>("export_figure", {
      plot_id: plot.id,
      formats: ["svg", "png", "pdf"],
    });
    expect(out.missing).toEqual(["pdf"]); // the test plot is drawn as SVG only
    expect(out.files.map((f) => f.slice(f.lastIndexOf(".")))).toEqual([".svg", ".png"]);
    const svgRoute = Buffer.from(
      await (await t.api(`/api/sessions/${sid}/plots/${plot.id}/figure?fmt=svg`)).arrayBuffer(),
    );
    expect(readFileSync(join(t.dataDir, out.files[0]!)).equals(svgRoute)).toBe(true);
    expect((await sharp(readFileSync(join(t.dataDir, out.files[1]!))).metadata()).format).toBe("png");
    const both = await mcp.call("export_figure", { plot_id: plot.id, display_id: "x" });
    expect(text(both)).toMatch(/display_id or plot_id/);
    const unknown = await mcp.call("view_plot", { plot_id: "nope" });
    expect(unknown.structuredContent).toMatchObject({ status: 404 });
    expect(text(unknown)).toMatch(/plot_id/);
  });
});

describe("get_table", () => {
  it("returns a page of obs whose cell_type column is the session's", async () => {
    const r = await mcp.ok<{
      total_rows: number;
      offset: number;
      columns: { name: string }[];
      rows: unknown[][];
    }>("get_table", { path: "obs", offset: 10, limit: 5 });
    expect(r.total_rows).toBe(xs.length);
    expect(r.rows).toHaveLength(5);
    const c = r.columns.findIndex((x) => x.name === "cell_type");
    expect(r.rows.map((row) => row[c])).toEqual([10, 11, 12, 13, 14].map((i) => categories[codes[i]!]));
    const v = await mcp.ok<{ total_rows: number }>("get_table", { path: "var" });
    expect(v.total_rows).toBe(geneNames.length);
  });

  it("a page past 500 rows and an unknown path are tool errors naming them", async () => {
    const big = await mcp.call("get_table", { path: "obs", limit: 501 });
    expect(text(big)).toMatch(/limit/);
    const bad = await mcp.call("get_table", { path: "nope" });
    expect(bad.isError).toBe(true);
    expect(text(bad)).toMatch(/nope/);
  });
});

describe("embedding space", () => {
  let displayId: string;
  let pcs: { x: number[]; y: number[] };

  it("after a PCA an embedding display is added and viewed with y up", async () => {
    for (const [fn, params] of [
      ["normalize_total", { target_sum: 10_000 }],
      ["log1p", {}],
      ["pca", { n_comps: 4 }],
    ] as const)
      expect(
        (await mcp.ok<{ status: string }>("run_function", { namespace: "sc.pp", function: fn, params }))
          .status,
      ).toBe("completed");
    const s = t.server.service.session(sid);
    const m = s.data.tables[s.activeTable!]!.obsm.X_pca as DenseArray;
    const k = m.shape[1]!;
    pcs = {
      x: Array.from({ length: m.shape[0]! }, (_, i) => Number(m.data[i * k])),
      y: Array.from({ length: m.shape[0]! }, (_, i) => Number(m.data[i * k + 1])),
    };
    const { display } = await mcp.ok<{ display: { id: string } }>("add_display", {
      type: "embedding_canvas",
      encoding: { obsm_key: "X_pca", color_by: "obs:cell_type" },
    });
    displayId = display.id;
    const v = await mcp.call("view_display", {
      display_id: displayId,
      viewport: "fit",
      width_px: 300,
      height_px: 300,
    });
    const meta = v.structuredContent as {
      space: { kind: string; y_axis: string };
      pixel_to_world: number[];
      render: { cells_in_view: number };
    };
    expect(meta.space).toMatchObject({ kind: "embedding", y_axis: "up" });
    expect(meta.pixel_to_world[4]).toBeLessThan(0);
    expect(meta.render.cells_in_view).toBe(xs.length);
  });

  it("inspect_region and annotate_region in component space take the cells counted here from X_pca", async () => {
    const ring = [
      [0, -1e6],
      [1e6, -1e6],
      [1e6, 1e6],
      [0, 1e6],
    ];
    const inside = pcs.x.flatMap((x, i) => (x > 0 ? [i] : []));
    expect(inside.length).toBeGreaterThan(0);
    const r = await mcp.ok<{ n_inside: number }>("inspect_region", {
      polygons: [ring],
      space: "embedding",
      display_id: displayId,
    });
    expect(r.n_inside).toBe(inside.length);
    const a = await mcp.ok<{ status: string; n_cells: number }>("annotate_region", {
      region_set: "pc1",
      category: "positive",
      polygons: [ring],
      space: "embedding",
      display_id: displayId,
    });
    expect(a).toMatchObject({ status: "completed", n_cells: inside.length });
    const s = t.server.service.session(sid);
    const col = s.data.tables[s.activeTable!]!.obs.columns.pc1 as unknown as { codes: Int32Array };
    const set = new Set(inside);
    for (let i = 0; i < xs.length; i++) expect(col.codes[i]! >= 0).toBe(set.has(i));
  });
});

describe("get_table on uns", () => {
  it("pages rank_genes_groups' dataframes: one column per group, scores ranked; a dict path lists its keys", async () => {
    const run = await mcp.ok<{ status: string }>("run_function", {
      namespace: "sc.tl",
      function: "rank_genes_groups",
      params: { groupby: "cell_type", method: "t-test" },
    });
    expect(run.status).toBe("completed");
    const names = await mcp.ok<{ total_rows: number; columns: { name: string }[]; rows: string[][] }>(
      "get_table",
      {
        path: "uns:rank_genes_groups/names",
        limit: 500,
      },
    );
    expect(names.columns.map((c) => c.name).sort()).toEqual([...categories].sort());
    expect(names.total_rows).toBe(geneNames.length);
    for (const row of names.rows) for (const g of row) expect(geneNames).toContain(g);
    const scores = await mcp.ok<{ rows: number[][] }>("get_table", {
      path: "uns:rank_genes_groups/scores",
      limit: 500,
    });
    for (let c = 0; c < categories.length; c++)
      for (let r = 1; r < scores.rows.length; r++)
        expect(scores.rows[r]![c]!).toBeLessThanOrEqual(scores.rows[r - 1]![c]!);
    const page = await mcp.ok<{ rows: string[][]; offset: number }>("get_table", {
      path: `tables:table:uns:rank_genes_groups/names`,
      offset: 3,
      limit: 2,
    });
    expect(page.rows).toEqual(names.rows.slice(3, 5));
    const dict = await mcp.call("get_table", { path: "uns:rank_genes_groups" });
    expect(dict.structuredContent).toMatchObject({ status: 400 });
    expect(text(dict)).toMatch(/rank_genes_groups\/names/);
    const none = await mcp.call("get_table", { path: "uns:nope" });
    expect(none.structuredContent).toMatchObject({ status: 404 });
  });
});

describe("subset_to_region", () => {
  it("makes a child session from the region, closes the parent, and moves the agent and its lock there", async () => {
    const { ring, inside } = lower();
    const r = await mcp.ok<{
      status: string;
      child_id: string;
      n_obs: number;
      active_session_id: string;
      has_control: boolean;
    }>("subset_to_region", { polygons: [ring] });
    expect(r.status).toBe("completed");
    // A subset keeps every cell whose outline meets the polygon (agent-mcp.md: by geometry intersection),
    // so at least the cells whose centroid inspect_region counts, and a few on the border besides; the
    // exact rule is checked by brute force in test/adapters/http/regions.test.ts.
    expect(r.n_obs).toBeGreaterThanOrEqual(inside.length);
    expect(r.n_obs).toBeLessThan(inside.length * 1.5);
    expect(r).toMatchObject({ active_session_id: r.child_id, has_control: true });
    const { sessions } = await mcp.ok<{ sessions: { id: string }[] }>("list_sessions");
    expect(sessions.map((x) => x.id)).toEqual([r.child_id]);
    expect(t.server.service.presence.lockOf(r.child_id)?.name).toBe("the assistant");

    // invert with cell_indices on the child: all but those rows.
    const inv = await mcp.ok<{ status: string; n_obs: number }>("subset_to_region", {
      cell_indices: [0, 1, 2, 3, 4],
      invert: true,
    });
    expect(inv).toMatchObject({ status: "completed", n_obs: r.n_obs - 5 });
  });
});
