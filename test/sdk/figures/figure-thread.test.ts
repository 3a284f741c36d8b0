/**
 * The render core off the main thread: a render and an SVG → PDF called from the main thread are
 * answered by the figure thread (a worker thread: its id is not the main thread's 0), with the same
 * pixels as before (the colours of a rasterised 200,000-cell layer at known cells). The event loop's
 * largest delay during the render is printed, not asserted (speed belongs in bench/figures.ts).
 */
import { monitorEventLoopDelay } from "node:perf_hooks";
import { isMainThread } from "node:worker_threads";
import sharp from "sharp";
import { describe, expect, it } from "vitest";
import { categoryColors, parseHexColor } from "../../../src/sdk/display/encoding.js";
import type { FieldData } from "../../../src/sdk/display/field-data.js";
import { svgToPdf, svgToPng } from "../../../src/sdk/figures/export.js";
import { figureThreadStats } from "../../../src/sdk/figures/figure-thread.js";
import { apply } from "../../../src/sdk/figures/frame.js";
import { renderDisplay } from "../../../src/sdk/figures/render.js";
import type { RenderSource } from "../../../src/sdk/figures/render-source.js";

function source(xs: Float32Array, ys: Float32Array, fields: Record<string, FieldData>): RenderSource {
  return {
    async field(path) {
      if (path === "obsm:spatial") return { path, kind: "components", n: xs.length, components: [xs, ys] };
      const f = fields[path];
      if (!f) throw new Error(`no field ${path}`);
      return f;
    },
    unit: () => "µm",
  };
}

describe("figure thread", () => {
  it("draws a 200,000-cell raster on a worker thread with the canvas's colours", async () => {
    expect(isMainThread).toBe(true); // vitest's forks pool: this is a process's main thread
    const side = 400;
    const rows = 500;
    const n = side * rows;
    const xs = new Float32Array(n);
    const ys = new Float32Array(n);
    const codes = new Int32Array(n);
    for (let i = 0; i < n; i++) {
      xs[i] = (i % side) + 0.5;
      ys[i] = Math.floor(i / side) + 0.5;
      codes[i] = Math.floor(i / side) % 3; // category by row
    }
    const cats = ["a", "b", "c"];
    const src = source(xs, ys, {
      "obs:t": { path: "obs:t", kind: "categorical", n, codes, categories: cats },
    });
    const before = figureThreadStats().ops;
    const loop = monitorEventLoopDelay({ resolution: 5 });
    loop.enable();
    const fig = await renderDisplay(src, {
      display: {
        id: "d",
        type: "spatial_canvas",
        encoding: {
          coords: "obsm:spatial",
          color_by: "obs:t",
          point_size: 1,
          opacity: 1,
          background: "light",
        },
        viewport: { target: [200, 250], zoom: 0 },
      },
      viewport: { target: [200, 250], zoom: 0 },
      widthPx: 400,
      heightPx: 500,
      dpi: 96,
    });
    loop.disable();
    console.log(`event loop max delay during a 200,000-cell render: ${(loop.max / 1e6).toFixed(0)} ms`);
    const stats = figureThreadStats();
    expect(stats.ops).toBe(before + 1);
    expect(stats.lastThreadId).not.toBeNull();
    expect(stats.lastThreadId).not.toBe(0);
    expect(fig.render.rasterized_points).toBe(true);
    expect(fig.render.cells_in_view).toBe(n);
    const png = await svgToPng(fig.svg, { dpi: 96 });
    const { data, info } = await sharp(png).raw().toBuffer({ resolveWithObject: true });
    const hex = categoryColors(cats)!;
    for (const i of [0, 1234, 77_777, 150_001, n - 1]) {
      const [px, py] = apply(fig.frame.worldToPx, xs[i]!, ys[i]!);
      const o = (Math.floor(py) * info.width + Math.floor(px)) * info.channels;
      expect([...data.subarray(o, o + 3)], `cell ${i}`).toEqual(parseHexColor(hex[codes[i]!]!));
    }
  });

  it("makes a PDF on the figure thread", async () => {
    const before = figureThreadStats().ops;
    const svg =
      '<svg xmlns="http://www.w3.org/2000/svg" width="100" height="50" viewBox="0 0 100 50"><rect x="10" y="10" width="30" height="20" fill="#ff0000"/><text x="50" y="30">hi</text></svg>';
    const pdf = await svgToPdf(svg, { widthPt: 100, heightPt: 50, info: { Title: "t" } });
    expect(Buffer.from(pdf.subarray(0, 5)).toString("latin1")).toBe("%PDF-");
    expect(figureThreadStats().ops).toBe(before + 1);
    expect(figureThreadStats().lastThreadId).not.toBe(0);
  });
});
