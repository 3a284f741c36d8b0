/**
 * The snapshot routes against the real server on 127.0.0.1: a preview PNG (bounded to 480 px), a
 * snapshot written as four siblings whose PNG pixels at isolated cells' centres carry the colour the
 * categorical palette gives their category (computed here from the data and the palette, not from the
 * renderer), the image under the cells equal to the raster store's own composite, provenance read back from the PNG chunk and the PDF Info, the gallery, file, thumbnail
 * and delete routes, and 400/404 for bad requests.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type DenseArray, dense } from "../../../src/sdk/data/arrays.js";
import { categoryColors, parseHexColor } from "../../../src/sdk/display/encoding.js";
import { pngSize } from "../../../src/sdk/figures/export.js";
import { figureThreadStats } from "../../../src/sdk/figures/figure-thread.js";
import { readPdfInfo } from "../../../src/sdk/figures/pdf-info.js";
import { readPngText } from "../../../src/sdk/figures/png-text.js";
import { sessionRenderSource } from "../../../src/sdk/figures/render-source.js";
import { SNAPSHOT_PNG_KEY, type SnapshotSidecar } from "../../../src/sdk/figures/snapshots.js";
import type { SpatialDisplay } from "../../../src/sdk/io/checkpoint/app-state.js";
import { startTestServer, type TestServer } from "./harness.js";

let ts: TestServer;
let id: string;
let display: SpatialDisplay;
let xs: number[];
let ys: number[];
let cellColor: (i: number) => [number, number, number];
const W = 400;
const H = 300;
const DPI = 192; // 2 PNG px per CSS px
let target: [number, number];
let zoom: number;

beforeAll(async () => {
  ts = await startTestServer();
  id = await ts.openDemo();
  const s = ts.server.service.session(id);
  const t = s.data.tables[s.activeTable!]!;
  const sp = t.obsm.spatial as DenseArray;
  const n = sp.shape[0]!;
  xs = Array.from({ length: n }, (_, i) => Number(sp.data[i * 2]));
  ys = Array.from({ length: n }, (_, i) => Number(sp.data[i * 2 + 1]));
  const col = t.obs.columns.cell_type as unknown as {
    kind: string;
    codes: Int32Array;
    categories: { values: string[] };
  };
  const cats = col.categories.values ?? (col.categories as unknown as string[]);
  const hex = categoryColors(cats)!;
  cellColor = (i) => parseHexColor(hex[col.codes[i]!]!)!;
  const minx = Math.min(...xs);
  const maxx = Math.max(...xs);
  const miny = Math.min(...ys);
  const maxy = Math.max(...ys);
  target = [(minx + maxx) / 2, (miny + maxy) / 2];
  zoom = Math.log2(Math.min(W / (maxx - minx), H / (maxy - miny)) * 0.9);
  display = s.putDisplay({
    id: "fig",
    type: "spatial_canvas",
    encoding: {
      coords: "obsm:spatial",
      color_by: "obs:cell_type",
      opacity: 1,
      point_size: 6 / 2 ** zoom, // 6 CSS px across
      background: "light",
      show_image: false,
      legend_visible: true,
    },
    viewport: { target, zoom },
  }) as SpatialDisplay;
});
afterAll(async () => {
  await ts?.close();
});

const body = (over: Record<string, unknown> = {}) => ({
  viewport: { target, zoom },
  width_px: W,
  height_px: H,
  dpi: DPI,
  display_id: "fig",
  ...over,
});

async function pixel(png: Uint8Array, x: number, y: number): Promise<number[]> {
  const { data, info } = await sharp(png).raw().toBuffer({ resolveWithObject: true });
  const o = (Math.floor(y) * info.width + Math.floor(x)) * info.channels;
  return [...data.subarray(o, o + 3)];
}

describe("snapshot preview", () => {
  it("answers a PNG at most 480 px on its longest side and writes nothing, drawn and encoded on the figure thread", async () => {
    const ops = figureThreadStats().ops;
    const r = await ts.api(`/api/sessions/${id}/snapshot/preview`, { method: "POST", json: body() });
    expect(r.status, await r.clone().text()).toBe(200);
    expect(r.headers.get("content-type")).toBe("image/png");
    const png = new Uint8Array(await r.arrayBuffer());
    const { width, height } = pngSize(png);
    expect(Math.max(width, height)).toBeLessThanOrEqual(480);
    expect(width).toBe(480); // 400 CSS px at 192 dpi would be 800: scaled down to 480
    // one op (draw + PNG) answered by a thread other than the main one
    expect(figureThreadStats().ops).toBe(ops + 1);
    expect(figureThreadStats().lastThreadId).toBeGreaterThan(0);
    const list = (await (await ts.api("/api/snapshots")).json()) as { snapshots: unknown[] };
    expect(list.snapshots).toEqual([]);
  });
});

describe("snapshot", () => {
  let name: string;
  let png: Uint8Array;

  it("writes the four siblings and answers the name", async () => {
    const r = await ts.api(`/api/sessions/${id}/snapshot`, {
      method: "POST",
      json: body({ formats: ["pdf", "png"], label: "Figure 1 — cell types", include_minimap: true }),
    });
    expect(r.status, await r.clone().text()).toBe(200);
    const out = (await r.json()) as {
      status: string;
      name: string;
      formats: string[];
      rasterized_points: boolean;
    };
    expect(out.formats).toEqual(["pdf", "png"]);
    expect(out.rasterized_points).toBe(false);
    name = out.name;
    for (const suffix of [".figure.pdf", ".figure.png", ".figure.thumb.png", ".figure.json"])
      expect(existsSync(join(ts.dataDir, `${name}${suffix}`))).toBe(true);
    const f = await ts.api(`/api/snapshots/${name}/file?fmt=png`);
    expect(f.status).toBe(200);
    png = new Uint8Array(await f.arrayBuffer());
    expect(pngSize(png)).toEqual({ width: (W * DPI) / 96, height: (H * DPI) / 96 });
  });

  it("colours isolated cells with their category's palette colour", async () => {
    const k = DPI / 96;
    const scale = 2 ** zoom;
    const isolated: number[] = [];
    for (let i = 0; i < xs.length && isolated.length < 12; i++) {
      const px = (xs[i]! - target[0]) * scale + W / 2;
      const py = (ys[i]! - target[1]) * scale + H / 2;
      // away from the legend (bottom-right), minimap (top-right) and scale bar
      if (px < 10 || py < 10 || px > W - 170 || py > H - 50) continue;
      let near = false;
      for (let j = 0; j < xs.length && !near; j++) {
        if (j !== i && Math.hypot(xs[j]! - xs[i]!, ys[j]! - ys[i]!) * scale < 8) near = true;
      }
      if (!near) isolated.push(i);
    }
    expect(isolated.length).toBeGreaterThan(3);
    for (const i of isolated) {
      const px = ((xs[i]! - target[0]) * scale + W / 2) * k;
      const py = ((ys[i]! - target[1]) * scale + H / 2) * k;
      const got = await pixel(png, px, py);
      const want = cellColor(i);
      for (let c = 0; c < 3; c++)
        expect(Math.abs(got[c]! - want[c]!), `cell ${i}: ${got} vs ${want}`).toBeLessThanOrEqual(2);
    }
  });

  it("embeds the provenance in the PNG chunk, the PDF Info and the sidecar alike", async () => {
    const meta = JSON.parse(readPngText(png)[SNAPSHOT_PNG_KEY]!) as SnapshotSidecar;
    expect(meta.dataset).toBe("demo");
    expect(meta.kind).toBe("spatial");
    expect(meta.label).toBe("Figure 1 — cell types");
    expect(meta.output).toEqual({ width_px: W, height_px: H, dpi: DPI });
    expect(meta.viewport).toEqual({ target, zoom });
    expect(meta.encoding).toEqual(display.encoding);
    expect(meta.render.minimap).toBe(true);
    expect(meta.render.cells_in_view).toBe(xs.length);
    expect(meta.fields.map((f) => f.path)).toEqual(["obsm:spatial", "obs:cell_type"]);
    expect(meta.versions.tessera).toMatch(/\d+\.\d+/);
    const pdf = new Uint8Array(await (await ts.api(`/api/snapshots/${name}/file?fmt=pdf`)).arrayBuffer());
    const info = readPdfInfo(pdf);
    expect(JSON.parse(info.Keywords!)).toEqual(meta);
    expect(info.Title).toBe("Figure 1 — cell types");
    const sidecar = (await (await ts.api("/api/snapshots")).json()) as {
      snapshots: { name: string; thumbnail_url: string; metadata: SnapshotSidecar; formats: string[] }[];
    };
    const entry = sidecar.snapshots.find((x) => x.name === name)!;
    expect(entry.metadata).toEqual(meta);
    expect(entry.formats).toEqual(["pdf", "png"]);
    const th = await ts.api(entry.thumbnail_url);
    expect(th.status).toBe(200);
    const thumb = new Uint8Array(await th.arrayBuffer());
    expect(Math.max(...Object.values(pngSize(thumb)))).toBeLessThanOrEqual(256);
  });

  it("deletes every sibling, then answers 404", async () => {
    const r = await ts.api(`/api/snapshots/${name}`, { method: "DELETE" });
    expect(r.status).toBe(200);
    expect(await r.json()).toEqual({ status: "deleted" });
    expect(existsSync(join(ts.dataDir, `${name}.figure.json`))).toBe(false);
    expect((await ts.api(`/api/snapshots/${name}`, { method: "DELETE" })).status).toBe(404);
    expect((await ts.api(`/api/snapshots/${name}/file?fmt=png`)).status).toBe(404);
    expect((await ts.api(`/api/snapshots/${name}/thumbnail`)).status).toBe(404);
  });
});

describe("bad requests", () => {
  const cases: [string, Record<string, unknown>, RegExp][] = [
    ["width", { width_px: 3 }, /width_px/],
    ["dpi", { dpi: 5000 }, /dpi/],
    ["zoom", { viewport: { target: [0, 0], zoom: "x" } }, /viewport\.zoom/],
    ["formats", { formats: ["svg"] }, /formats/],
    ["color_by", {}, /encoding\.color_by/],
  ];
  it.each(cases)("answers 400 naming the field (%s)", async (what, over, re) => {
    if (what === "color_by") {
      const s = ts.server.service.session(id);
      s.putDisplay({ ...display, id: "broken", encoding: { ...display.encoding, color_by: "obs:nope" } });
      over.display_id = "broken";
    }
    const r = await ts.api(`/api/sessions/${id}/snapshot`, { method: "POST", json: body(over) });
    expect(r.status).toBe(400);
    expect(((await r.json()) as { detail: string }).detail).toMatch(re);
  });

  it("answers 404 for an unknown display, snapshot or session, 400 for an unknown format", async () => {
    expect(
      (await ts.api(`/api/sessions/${id}/snapshot`, { method: "POST", json: body({ display_id: "zz" }) }))
        .status,
    ).toBe(404);
    expect((await ts.api(`/api/sessions/nope/snapshot`, { method: "POST", json: body() })).status).toBe(404);
    expect((await ts.api("/api/snapshots/..%2Fetc/file?fmt=png")).status).toBe(404);
    expect((await ts.api("/api/snapshots/abc/file?fmt=svg")).status).toBe(400);
  });
});

describe("image under the cells", () => {
  it("composites the display's image as the raster store does, under the cells", async () => {
    const s = ts.server.service.session(id);
    const name = Object.keys(s.data.images)[0]!;
    const info = await s.imageInfo(name);
    const p2w = info.pixel_to_world!;
    const worldPerPx = Math.sqrt(Math.abs(p2w[0] * p2w[4] - p2w[1] * p2w[3]));
    // one level-0 pixel per PNG pixel at 96 dpi, looking at the image's centre
    const z = Math.log2(1 / worldPerPx);
    const l0 = info.levels[0]!;
    const [cx, cy] = [
      p2w[0] * (l0.width / 2) + p2w[1] * (l0.height / 2) + p2w[2],
      p2w[3] * (l0.width / 2) + p2w[4] * (l0.height / 2) + p2w[5],
    ];
    s.putDisplay({
      id: "img",
      type: "spatial_canvas",
      encoding: { coords: "obsm:spatial", image_layer: name, show_points: false, legend_visible: false },
      viewport: { target: [cx, cy], zoom: z },
    });
    const r = await ts.api(`/api/sessions/${id}/snapshot`, {
      method: "POST",
      json: {
        viewport: { target: [cx, cy], zoom: z },
        width_px: 120,
        height_px: 100,
        dpi: 96,
        display_id: "img",
        formats: ["png"],
      },
    });
    expect(r.status, await r.clone().text()).toBe(200);
    const { name: snap } = (await r.json()) as { name: string };
    const png = new Uint8Array(await (await ts.api(`/api/snapshots/${snap}/file?fmt=png`)).arrayBuffer());
    const meta = JSON.parse(readPngText(png)[SNAPSHOT_PNG_KEY]!) as SnapshotSidecar;
    expect(meta.render.image_element).toBe(name);
    // the reference: the store's own composite of level 0 with the display's channels
    const tile = await s.rasters.tileRgb(name, 0, 0, 0, { display: "img" });
    expect(tile.width).toBeGreaterThanOrEqual(Math.min(l0.width, info.tile_size));
    const inv = (wx: number, wy: number): [number, number] => {
      const det = p2w[0] * p2w[4] - p2w[1] * p2w[3];
      const dx = wx - p2w[2];
      const dy = wy - p2w[5];
      return [(p2w[4] * dx - p2w[1] * dy) / det, (-p2w[3] * dx + p2w[0] * dy) / det];
    };
    let checked = 0;
    for (const [px, py] of [
      [30, 30],
      [60, 50],
      [90, 70],
      [45, 80],
    ] as const) {
      // the PNG pixel's centre in level-0 pixels
      const wx = cx + (px + 0.5 - 60) * worldPerPx;
      const wy = cy + (py + 0.5 - 50) * worldPerPx;
      const [ix, iy] = inv(wx, wy);
      if (ix < 1 || iy < 1 || ix >= tile.width - 1 || iy >= tile.height - 1) continue;
      const got = await pixel(png, px, py);
      for (let c = 0; c < 3; c++) {
        const around = [
          [Math.floor(ix - 0.5), Math.floor(iy - 0.5)],
          [Math.ceil(ix - 0.5), Math.floor(iy - 0.5)],
          [Math.floor(ix - 0.5), Math.ceil(iy - 0.5)],
          [Math.ceil(ix - 0.5), Math.ceil(iy - 0.5)],
        ].map(([x, y]) => tile.rgb[(y! * tile.width + x!) * 3 + c]!);
        expect(got[c]!).toBeGreaterThanOrEqual(Math.min(...around) - 2);
        expect(got[c]!).toBeLessThanOrEqual(Math.max(...around) + 2);
      }
      checked++;
    }
    expect(checked).toBeGreaterThan(2);
  });
});

describe("boundaries and the PDF", () => {
  it("draws the cells' boundary polygons in their cell's colour when the mode asks for shapes", async () => {
    const s = ts.server.service.session(id);
    const shapesName = Object.keys(s.data.shapes).find((n) => !n.startsWith("_"))!;
    s.putDisplay({
      ...display,
      id: "shapes",
      encoding: { ...display.encoding, render_mode: "shapes", shapes_layer: shapesName, opacity: 1 },
    });
    const r = await ts.api(`/api/sessions/${id}/snapshot`, {
      method: "POST",
      json: body({ display_id: "shapes", formats: ["png", "pdf"] }),
    });
    expect(r.status, await r.clone().text()).toBe(200);
    const { name } = (await r.json()) as { name: string };
    const png = new Uint8Array(await (await ts.api(`/api/snapshots/${name}/file?fmt=png`)).arrayBuffer());
    const meta = JSON.parse(readPngText(png)[SNAPSHOT_PNG_KEY]!) as SnapshotSidecar;
    expect(meta.render.shapes_drawn).toBeGreaterThan(0);
    // filled polygons are drawn at 0.8 × opacity over the light background (#f4f4f2), as on the canvas
    const bg = [0xf4, 0xf4, 0xf2];
    const k = DPI / 96;
    const scale = 2 ** zoom;
    let checked = 0;
    for (let i = 0; i < xs.length && checked < 8; i += 7) {
      const px = (xs[i]! - target[0]) * scale + W / 2;
      const py = (ys[i]! - target[1]) * scale + H / 2;
      if (px < 10 || py < 10 || px > W - 170 || py > H - 50) continue;
      const want = cellColor(i).map((v, c) => v * 0.8 + bg[c]! * 0.2);
      const got = await pixel(png, px * k, py * k);
      for (let c = 0; c < 3; c++) expect(Math.abs(got[c]! - want[c]!), `cell ${i}`).toBeLessThanOrEqual(3);
      checked++;
    }
    expect(checked).toBeGreaterThan(3);
    const pdf = Buffer.from(
      await (await ts.api(`/api/snapshots/${name}/file?fmt=pdf`)).arrayBuffer(),
    ).toString("latin1");
    expect(pdf).toMatch(/\/MediaBox \[0 0 300 225\]/); // 400 × 300 px at 0.75 pt per px
  });

  it("draws vector cells in the PDF as one marker form placed per cell", async () => {
    const r = await ts.api(`/api/sessions/${id}/snapshot`, {
      method: "POST",
      json: body({ formats: ["pdf"] }),
    });
    const { name, formats } = (await r.json()) as { name: string; formats: string[] };
    expect(formats).toEqual(["pdf"]);
    expect(existsSync(join(ts.dataDir, `${name}.figure.png`))).toBe(false);
    expect(existsSync(join(ts.dataDir, `${name}.figure.thumb.png`))).toBe(true);
    const pdf = Buffer.from(
      await (await ts.api(`/api/snapshots/${name}/file?fmt=pdf`)).arrayBuffer(),
    ).toString("latin1");
    expect(pdf).toMatch(/\/TxMarkerC \d+ 0 R/);
    expect((await ts.api(`/api/snapshots/${name}/file?fmt=png`)).status).toBe(404);
  });
});

describe("a consistent committed state", () => {
  it("reads one render's fields from the object committed when it began, whatever commits meanwhile", async () => {
    const s = ts.server.service.session(id);
    const src = sessionRenderSource(s); // what renderSnapshot makes at its start
    const table = s.activeTable!;
    const n = s.data.tables[table]!.obs.index.values.length;
    const changed = Float32Array.from({ length: n }, (_, i) => i);
    const ticket = s.queueOwnJob(
      "subset",
      { namespace: "test", function: "commit", params: {} },
      async () => ({
        change: { tables: { [table]: { obs: { pinned_probe: dense(changed) } } } },
      }),
    );
    await ticket.done;
    // the live object has the new column; the render's pinned one does not
    expect((await s.field("obs:pinned_probe")).nRows).toBe(n);
    await expect(src.field("obs:pinned_probe")).rejects.toThrow(/pinned_probe/);
    // a render made now sees it
    expect((await sessionRenderSource(s).field("obs:pinned_probe")).kind).toBe("numeric");
  });
});

describe("embedding snapshot", () => {
  it("renders an embedding display with y up and the cells in their colours", async () => {
    const s = ts.server.service.session(id);
    s.putDisplay({
      id: "emb",
      type: "embedding_canvas",
      encoding: {
        obsm_key: "obsm:spatial",
        color_by: "obs:cell_type",
        point_size: 6,
        opacity: 1,
        background: "light",
      },
      viewport: { target, zoom },
    });
    const r = await ts.api(`/api/sessions/${id}/snapshot`, {
      method: "POST",
      json: body({ display_id: "emb", formats: ["png"] }),
    });
    expect(r.status, await r.clone().text()).toBe(200);
    const { name } = (await r.json()) as { name: string };
    const png = new Uint8Array(await (await ts.api(`/api/snapshots/${name}/file?fmt=png`)).arrayBuffer());
    const meta = JSON.parse(readPngText(png)[SNAPSHOT_PNG_KEY]!) as SnapshotSidecar;
    expect(meta.kind).toBe("embedding");
    const k = DPI / 96;
    const scale = 2 ** zoom;
    let checked = 0;
    for (let i = 0; i < xs.length && checked < 6; i++) {
      const px = (xs[i]! - target[0]) * scale + W / 2;
      const py = H / 2 - (ys[i]! - target[1]) * scale; // y up
      if (px < 10 || py < 10 || px > W - 170 || py > H - 50) continue;
      let near = false;
      for (let j = 0; j < xs.length && !near; j++)
        if (j !== i && Math.hypot(xs[j]! - xs[i]!, ys[j]! - ys[i]!) * scale < 8) near = true;
      if (near) continue;
      const got = await pixel(png, px * k, py * k);
      const want = cellColor(i);
      for (let c = 0; c < 3; c++) expect(Math.abs(got[c]! - want[c]!), `cell ${i}`).toBeLessThanOrEqual(2);
      checked++;
    }
    expect(checked).toBeGreaterThan(2);
  });
});

describe("admission", () => {
  it("refuses snapshots and previews with 503 past the memory threshold; listing still works", async () => {
    const config = ts.server.service.config as { containerMemMb: number };
    const before = config.containerMemMb;
    config.containerMemMb = 1; // the process is always past a 1 MB limit
    try {
      for (const path of ["snapshot", "snapshot/preview"]) {
        const r = await ts.api(`/api/sessions/${id}/${path}`, { method: "POST", json: body() });
        expect(r.status).toBe(503);
        expect(((await r.json()) as { detail: string }).detail).toMatch(/memory/);
      }
      expect((await ts.api("/api/snapshots")).status).toBe(200);
    } finally {
      config.containerMemMb = before;
    }
  });
});
