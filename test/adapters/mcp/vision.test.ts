/**
 * The display tools over real HTTP with the SDK's MCP client, on the demo dataset: add_display,
 * update_display, view_display (the vision contract of agent-mcp.md section 4) and export_figure.
 * The affine is checked against a frame computed here from the cells' obsm coordinates (the deck.gl
 * orthographic view: one world unit is 2^zoom px, y down), the picture against it (a cell's pixel has
 * its category's colour, a mark is cyan where the affine puts it), and the acceptance check of 4.4:
 * a pixel rectangle mapped to world coordinates selects exactly the cells counted here from obsm.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DenseArray } from "../../../src/sdk/data/arrays.js";
import { categoryColors, parseHexColor } from "../../../src/sdk/display/encoding.js";
import { startTestServer, type TestServer } from "../http/harness.js";
import { openSse } from "../http/sse.js";
import { connectMcp, type McpTestClient } from "./harness.js";

type Affine = [number, number, number, number, number, number];
interface Meta {
  display_id: string;
  image_px: { width: number; height: number };
  viewport: { target: [number, number]; zoom: number };
  pixel_to_world: Affine;
  world_to_pixel: Affine;
  corners: Record<string, [number, number]>;
  world_window: { x: [number, number]; y: [number, number] };
  grid: { step_x: number; step_y: number; x: number[]; y: number[] } | null;
  render: { cells_in_view: number };
  space: { kind: string; y_axis: string };
}

let t: TestServer;
let mcp: McpTestClient;
let sid: string;
let xs: number[];
let ys: number[];
let cellColor: (i: number) => [number, number, number];
let displayId: string;
const W = 640;
const H = 480;

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
  const hex = categoryColors(col.categories.values)!;
  cellColor = (i) => parseHexColor(hex[col.codes[i]!]!)!;
});
afterAll(async () => {
  await mcp?.close();
  await t?.close();
});

const apply = (m: Affine, x: number, y: number) => [m[0] * x + m[1] * y + m[2], m[3] * x + m[4] * y + m[5]];
const text = (r: { content: unknown[] }) =>
  (r.content.find((c) => (c as { type: string }).type === "text") as { text: string }).text;

/** view_display's two blocks: the PNG decoded to RGB, then the metadata. */
async function view(args: Record<string, unknown>) {
  const r = await mcp.call("view_display", { display_id: displayId, ...args });
  if (r.isError) throw new Error(text(r));
  const [img, meta] = r.content as [
    { type: string; data: string; mimeType: string },
    { type: string; text: string },
  ];
  expect(img.type).toBe("image");
  expect(img.mimeType).toBe("image/png");
  expect(meta.type).toBe("text");
  const { data, info } = await sharp(Buffer.from(img.data, "base64"))
    .removeAlpha()
    .raw()
    .toBuffer({ resolveWithObject: true });
  const m = JSON.parse(meta.text) as Meta;
  expect(r.structuredContent).toEqual(m);
  const rgb = (px: number, py: number) => {
    const o = (py * info.width + px) * 3;
    return [data[o]!, data[o + 1]!, data[o + 2]!];
  };
  return { meta: m, width: info.width, height: info.height, rgb };
}

/**
 * The fit frame computed here: the cells' bounding box with 5% margins, centred. (The renderer reads
 * positions as float32, as the canvases do: values agree to about 1e-6 relative.)
 */
function fitFrame(w: number, h: number) {
  const x0 = Math.min(...xs);
  const x1 = Math.max(...xs);
  const y0 = Math.min(...ys);
  const y1 = Math.max(...ys);
  const scale = Math.min(w / ((x1 - x0) * 1.1), h / ((y1 - y0) * 1.1));
  return { tx: (x0 + x1) / 2, ty: (y0 + y1) / 2, scale };
}

describe("add_display and update_display", () => {
  it("add_display needs the lock (423) and names a missing encoding key", async () => {
    const r = await mcp.call("add_display", { session_id: sid, type: "spatial_canvas", encoding: {} });
    expect(r.structuredContent).toMatchObject({ status: 423 });
    await mcp.ok("set_active_session", { session_id: sid, take_control: true });
    const bad = await mcp.call("add_display", {
      type: "spatial_canvas",
      encoding: { color_by: "obs:cell_type" },
    });
    expect(bad.isError).toBe(true);
    expect(text(bad)).toMatch(/encoding\.coords/);
    const noField = await mcp.call("add_display", {
      type: "spatial_canvas",
      encoding: { coords: "obsm:spatial", color_by: "obs:nope" },
    });
    expect(noField.structuredContent).toMatchObject({ status: 400 });
    expect(text(noField)).toMatch(/encoding\.color_by/);
  });

  it("add_display adds a display framed on the cells; the session and the HTTP state list it", async () => {
    const { display } = await mcp.ok<{
      display: { id: string; viewport: { target: number[]; zoom: number } };
    }>("add_display", {
      type: "spatial_canvas",
      encoding: {
        coords: "obsm:spatial",
        color_by: "obs:cell_type",
        background: "light",
        show_image: false,
        opacity: 1,
        legend_visible: false,
      },
    });
    displayId = display.id;
    const f = fitFrame(1024, 768);
    expect(display.viewport.target[0]).toBeCloseTo(f.tx, 4);
    expect(display.viewport.target[1]).toBeCloseTo(f.ty, 4);
    expect(display.viewport.zoom).toBeCloseTo(Math.log2(f.scale), 6);
    const state = (await (await t.api(`/api/sessions/${sid}`)).json()) as {
      app_state: { displays: { id: string }[] };
    };
    expect(state.app_state.displays.map((d) => d.id)).toContain(displayId);
  });

  it("update_display merges keys (null clears one), sets the viewport, and refuses a bad key by name", async () => {
    const f = fitFrame(W, H);
    // Markers 5 px across at the fit zoom.
    const r = await mcp.ok<{ display: { encoding: Record<string, unknown> } }>("update_display", {
      display_id: displayId,
      encoding: { point_size: 5 / f.scale, legend_visible: null },
    });
    expect(r.display.encoding.point_size).toBeCloseTo(5 / f.scale, 9);
    expect(r.display.encoding).not.toHaveProperty("legend_visible");
    expect(r.display.encoding.color_by).toBe("obs:cell_type");
    const bad = await mcp.call("update_display", {
      display_id: displayId,
      encoding: { render_mode: "sparkles" },
    });
    expect(bad.structuredContent).toMatchObject({ status: 400 });
    expect(text(bad)).toMatch(/render_mode/);
    const missing = await mcp.call("update_display", { display_id: "nope", encoding: { opacity: 1 } });
    expect(missing.structuredContent).toMatchObject({ status: 404 });
    // Viewers see the change on the event stream a browser reads.
    const sse = await openSse(`${t.url}/api/events`);
    try {
      await mcp.ok("update_display", { display_id: displayId, encoding: { opacity: 1 } });
      await sse.waitFor(
        () =>
          sse.frames.some(
            (f) =>
              f.event === "display.updated" && (f.data as { display_id: string }).display_id === displayId,
          ),
        10_000,
      );
    } finally {
      sse.close();
    }
    const nothing = await mcp.call("update_display", { display_id: displayId });
    expect(text(nothing)).toMatch(/encoding and\/or viewport/);
  });
});

describe("view_display", () => {
  it("fit: the PNG, an affine equal to the frame computed here, and corners/window from it", async () => {
    const { meta, width, height } = await view({ viewport: "fit", width_px: W, height_px: H });
    expect([width, height]).toEqual([W, H]);
    expect(meta.image_px).toEqual({ width: W, height: H });
    expect(meta.space).toMatchObject({ kind: "spatial", y_axis: "down" });
    const f = fitFrame(W, H);
    // Pixel centres: world = target + (p + ½ − size/2) / scale, y down.
    const expected: Affine = [
      1 / f.scale,
      0,
      f.tx + (0.5 - W / 2) / f.scale,
      0,
      1 / f.scale,
      f.ty + (0.5 - H / 2) / f.scale,
    ];
    for (const [i, v] of meta.pixel_to_world.entries()) expect(v).toBeCloseTo(expected[i]!, 4);
    expect(meta.corners.top_left![0]).toBeCloseTo(f.tx - W / 2 / f.scale, 4);
    expect(meta.corners.bottom_right![1]).toBeCloseTo(f.ty + H / 2 / f.scale, 4);
    expect(meta.world_window.x[0]).toBeCloseTo(f.tx - W / 2 / f.scale, 4);
    // Every cell is in view with the 5% margin.
    expect(meta.render.cells_in_view).toBe(xs.length);
    for (let i = 0; i < xs.length; i++) {
      const [px, py] = apply(meta.world_to_pixel, xs[i]!, ys[i]!);
      expect(px).toBeGreaterThan(0.04 * W - 1);
      expect(py).toBeLessThan(0.96 * H + 1);
    }
  });

  it("acceptance (4.4): a pixel rectangle mapped to world selects the cells counted here from obsm", async () => {
    const { meta } = await view({ viewport: "fit", width_px: W, height_px: H });
    for (const [c0, r0, c1, r1] of [
      [100, 80, 300, 260],
      [320, 50, 600, 400],
    ] as const) {
      const ring = [
        [c0, r0],
        [c1, r0],
        [c1, r1],
        [c0, r1],
      ].map(([c, r]) => apply(meta.pixel_to_world, c!, r!));
      const inspect = await mcp.ok<{ n_inside: number }>("inspect_region", { polygons: [ring] });
      const [wx0, wy0] = ring[0]!;
      const [wx1, wy1] = ring[2]!;
      let count = 0;
      for (let i = 0; i < xs.length; i++)
        if (xs[i]! > wx0! && xs[i]! < wx1! && ys[i]! > wy0! && ys[i]! < wy1!) count++;
      expect(count).toBeGreaterThan(5);
      expect(inspect.n_inside).toBe(count);
    }
  });

  it("the picture agrees with the affine: isolated cells have their category's colour where it maps them", async () => {
    const { meta, rgb } = await view({ viewport: "fit", width_px: W, height_px: H, include_grid: false });
    const spacing = 12 / (1 / meta.pixel_to_world[0]); // 12 px in world units
    let checked = 0;
    for (let i = 0; i < xs.length && checked < 15; i++) {
      let isolated = true;
      for (let j = 0; j < xs.length && isolated; j++)
        if (j !== i && Math.hypot(xs[j]! - xs[i]!, ys[j]! - ys[i]!) < spacing) isolated = false;
      if (!isolated) continue;
      const [px, py] = apply(meta.world_to_pixel, xs[i]!, ys[i]!).map(Math.round);
      const got = rgb(px!, py!);
      const want = cellColor(i);
      for (const [k, v] of got.entries()) expect(Math.abs(v - want[k]!)).toBeLessThanOrEqual(40);
      checked++;
    }
    expect(checked).toBeGreaterThan(3);
  });

  it("invert_x / invert_y are composed into the affine, and the picture still agrees with it", async () => {
    await mcp.ok("update_display", { display_id: displayId, encoding: { invert_x: true, invert_y: true } });
    try {
      const { meta, rgb } = await view({ viewport: "fit", width_px: W, height_px: H, include_grid: false });
      expect(meta.pixel_to_world[0]).toBeLessThan(0);
      expect(meta.pixel_to_world[4]).toBeLessThan(0);
      expect(meta.space.y_axis).toBe("up");
      // The top-left pixel now shows the largest x and y of the window.
      expect(meta.corners.top_left![0]).toBeCloseTo(meta.world_window.x[1], 6);
      expect(meta.corners.top_left![1]).toBeCloseTo(meta.world_window.y[1], 6);
      const spacing = 12 * Math.abs(meta.pixel_to_world[0]);
      let checked = 0;
      for (let i = 0; i < xs.length && checked < 10; i++) {
        if (xs.some((x, j) => j !== i && Math.hypot(x - xs[i]!, ys[j]! - ys[i]!) < spacing)) continue;
        const [px, py] = apply(meta.world_to_pixel, xs[i]!, ys[i]!).map(Math.round);
        const got = rgb(px!, py!);
        const want = cellColor(i);
        for (const [k, v] of got.entries()) expect(Math.abs(v - want[k]!)).toBeLessThanOrEqual(40);
        checked++;
      }
      expect(checked).toBeGreaterThan(3);
    } finally {
      await mcp.ok("update_display", { display_id: displayId, encoding: { invert_x: null, invert_y: null } });
    }
  });

  it("mark_points are cyan where world_to_pixel puts them; mark_polygons and the grid draw", async () => {
    const f = fitFrame(W, H);
    const p: [number, number] = [f.tx + 3 / f.scale, f.ty - 7 / f.scale];
    const { meta, rgb } = await view({
      viewport: "fit",
      width_px: W,
      height_px: H,
      mark_points: [p],
      mark_polygons: [
        [
          [f.tx - 50 / f.scale, f.ty - 50 / f.scale],
          [f.tx + 50 / f.scale, f.ty - 50 / f.scale],
          [f.tx, f.ty + 50 / f.scale],
        ],
      ],
    });
    const [px, py] = apply(meta.world_to_pixel, p[0], p[1]).map(Math.round);
    const [r, g, b] = rgb(px!, py!);
    expect(r).toBeLessThan(90);
    expect(g).toBeGreaterThan(170);
    expect(b).toBeGreaterThan(170);
    expect(meta).toMatchObject({ marks: { points: 1, polygons: 1 } });
    // A nice step (1, 2, 2.5 or 5 × 10^k), about six lines per axis.
    const g0 = meta.grid!;
    for (const step of [g0.step_x, g0.step_y]) {
      const m = step / 10 ** Math.floor(Math.log10(step));
      expect([1, 2, 2.5, 5].some((k) => Math.abs(k - m) < 1e-9)).toBe(true);
    }
    expect(g0.x.length).toBeGreaterThanOrEqual(3);
    expect(g0.x.length).toBeLessThanOrEqual(12);
    for (const x of g0.x) expect(x).toBeGreaterThanOrEqual(meta.world_window.x[0]);
  });

  it("an omitted viewport is the saved one; a size past 1568 px is capped with the same world window", async () => {
    const saved = { target: [Math.min(...xs) + 40, Math.min(...ys) + 30], zoom: 1.5 };
    await mcp.ok("update_display", { display_id: displayId, viewport: saved });
    const small = await view({ width_px: 400, height_px: 300 });
    expect(small.meta.viewport).toEqual(saved);
    expect(small.meta.pixel_to_world[0]).toBeCloseTo(2 ** -1.5, 9);
    const big = await view({ viewport: saved, width_px: 3136, height_px: 2000 });
    expect(big.meta.image_px).toEqual({ width: 1568, height: 1000 });
    expect([big.width, big.height]).toEqual([1568, 1000]);
    // Half the pixels over the same world: twice the world units per pixel.
    expect(big.meta.pixel_to_world[0]).toBeCloseTo(2 * 2 ** -1.5, 9);
    expect(big.meta.world_window.x[0]).toBeCloseTo(saved.target[0]! - 1568 / 2 ** 1.5, 6);
    // The saved viewport is capped the same way; the metadata gives the viewport rendered.
    const bigSaved = await view({ width_px: 3136, height_px: 2000 });
    expect(bigSaved.meta.viewport).toEqual({ target: saved.target, zoom: 0.5 });
    expect(bigSaved.meta.world_window).toEqual(big.meta.world_window);
  });

  it("bad arguments are tool errors naming the argument", async () => {
    for (const [args, pattern] of [
      [{ viewport: "zoomed" }, /viewport/],
      [{ width_px: 5 }, /width_px/],
      [{ mark_points: [[1]] }, /mark_points/],
      [{ mark_polygons: [[[0, Number.MAX_VALUE * 0], [1]]] }, /mark_polygons/],
      [{ display_id: "nope" }, /nope/],
    ] as const) {
      const r = await mcp.call("view_display", { display_id: displayId, ...args });
      expect(r.isError).toBe(true);
      expect(text(r)).toMatch(pattern);
    }
  });
});

describe("export_figure", () => {
  it("writes a snapshot into the gallery (default pdf + png), listed by GET /api/snapshots", async () => {
    const r = await mcp.ok<{ name: string; formats: string[]; files: string[] }>("export_figure", {
      display_id: displayId,
      viewport: "fit",
      width_px: 400,
      height_px: 300,
      dpi: 96,
      label: "agent figure",
    });
    expect(r.formats).toEqual(["pdf", "png"]);
    for (const f of r.files) expect(existsSync(join(t.dataDir, f))).toBe(true);
    const list = (await (await t.api("/api/snapshots")).json()) as {
      snapshots: { name: string; label: string; output: { width_px: number } }[];
    };
    expect(list.snapshots.find((x) => x.name === r.name)).toMatchObject({
      label: "agent figure",
      output: { width_px: 400 },
    });
    const png = await t.api(`/api/snapshots/${r.name}/file?fmt=png`);
    expect(png.status).toBe(200);
    const meta = await sharp(Buffer.from(await png.arrayBuffer())).metadata();
    expect([meta.width, meta.height]).toEqual([400, 300]);
  });

  it("bad formats and dpi are tool errors naming them", async () => {
    const f = await mcp.call("export_figure", { formats: ["svg"] });
    expect(text(f)).toMatch(/formats/);
    const d = await mcp.call("export_figure", { dpi: 5000 });
    expect(text(d)).toMatch(/dpi/);
  });
});
