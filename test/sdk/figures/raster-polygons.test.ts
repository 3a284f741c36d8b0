/**
 * Boundary polygons beyond the vector cap: a generated shapes element of 102,400 squares, all in
 * view, is drawn as one raster of filled polygons in each cell's colour (0.8 × opacity over the
 * background, as the vector fill), with background between the squares, embedded in the PDF as one
 * image; and the scanline fill keeps a ring's hole empty (even-odd, as the vector paths).
 */
import Flatbush from "flatbush";
import sharp from "sharp";
import { describe, expect, it } from "vitest";
import type { CanvasShapes } from "../../../src/sdk/data/shape-index.js";
import { CANVAS_BACKGROUND, categoryColors, parseHexColor } from "../../../src/sdk/display/encoding.js";
import { svgToPdf, svgToPng } from "../../../src/sdk/figures/export.js";
import { apply } from "../../../src/sdk/figures/frame.js";
import { newRaster, POINT_VECTOR_CAP } from "../../../src/sdk/figures/raster-points.js";
import { fillPolygon } from "../../../src/sdk/figures/raster-polygons.js";
import { renderDisplay } from "../../../src/sdk/figures/render.js";
import type { RenderSource } from "../../../src/sdk/figures/render-source.js";

/** `side × side` squares of half-width `h` centred on a 1 µm lattice, feature i outlining cell i. */
function squares(side: number, h: number): { shapes: CanvasShapes; xs: Float32Array; ys: Float32Array } {
  const n = side * side;
  const coords = new Float64Array(n * 4 * 2);
  const ringOffsets = new Int32Array(n + 1);
  const geomOffsets = new Int32Array(n + 1);
  const cellIndex = new Int32Array(n);
  const xs = new Float32Array(n);
  const ys = new Float32Array(n);
  const index = new Flatbush(n);
  for (let i = 0; i < n; i++) {
    const cx = (i % side) + 0.5;
    const cy = Math.floor(i / side) + 0.5;
    xs[i] = cx;
    ys[i] = cy;
    const v = [cx - h, cy - h, cx + h, cy - h, cx + h, cy + h, cx - h, cy + h];
    coords.set(v, i * 8);
    ringOffsets[i + 1] = (i + 1) * 4;
    geomOffsets[i + 1] = i + 1;
    cellIndex[i] = i;
    index.add(cx - h, cy - h, cx + h, cy + h);
  }
  index.finish();
  return {
    shapes: {
      type: "polygon",
      coords,
      geomOffsets,
      polygonOffsets: null,
      ringOffsets,
      cellIndex,
      index,
      count: n,
    },
    xs,
    ys,
  };
}

describe("boundary polygons above the vector cap", () => {
  it("fills 102,400 polygons into one raster in their cells' colours, embedded in the PDF as an image", async () => {
    const side = 320;
    const n = side * side;
    const { shapes, xs, ys } = squares(side, 0.25);
    const codes = new Int32Array(n);
    for (let i = 0; i < n; i++) codes[i] = (i % side) % 4;
    const cats = ["a", "b", "c", "d"];
    const src: RenderSource = {
      async field(path) {
        if (path === "obsm:spatial") return { path, kind: "components", n, components: [xs, ys] };
        if (path === "obs:t") return { path, kind: "categorical", n, codes, categories: cats };
        throw new Error(`no field ${path}`);
      },
      shapes: () => shapes,
      shapesNames: () => ["cells"],
      unit: () => "µm",
    };
    // 8 CSS px per µm (past the zoom gate: cells 6 px apart at least), 0.4 PNG px per CSS px
    const fig = await renderDisplay(src, {
      display: {
        id: "d",
        type: "spatial_canvas",
        encoding: {
          coords: "obsm:spatial",
          color_by: "obs:t",
          render_mode: "shapes",
          shapes_layer: "cells",
          opacity: 1,
          background: "light",
          legend_visible: false,
        },
        viewport: { target: [160, 160], zoom: 3 },
      },
      viewport: { target: [160, 160], zoom: 3 },
      widthPx: 2560,
      heightPx: 2560,
      dpi: 38.4,
    });
    expect(n).toBeGreaterThan(POINT_VECTOR_CAP);
    expect(fig.render.shapes_drawn).toBe(n);
    expect(fig.render.rasterized_points).toBe(false);
    expect(fig.svg).toContain('class="boundaries-raster"');
    expect(fig.svg).not.toContain("<path");
    const png = await svgToPng(fig.svg, { dpi: 38.4 });
    const { data, info } = await sharp(png).raw().toBuffer({ resolveWithObject: true });
    expect(info.width).toBe(1024);
    const bg = parseHexColor(CANVAS_BACKGROUND.light)!;
    const hex = categoryColors(cats)!;
    const rgbAt = (wx: number, wy: number) => {
      const [px, py] = apply(invert(fig.frame), wx, wy);
      const o = (Math.floor(py) * info.width + Math.floor(px)) * info.channels;
      return [...data.subarray(o, o + 3)];
    };
    for (const i of [0, 321, 5000, 51_234, 99_999, n - 1]) {
      const want = parseHexColor(hex[codes[i]!]!)!.map((v, c) => v * 0.8 + bg[c]! * 0.2);
      const got = rgbAt(xs[i]!, ys[i]!);
      for (let c = 0; c < 3; c++) expect(Math.abs(got[c]! - want[c]!), `cell ${i}`).toBeLessThanOrEqual(2);
      // the lattice corner between four squares is 0.25 µm (0.8 PNG px) from each: background
      const gap = rgbAt(xs[i]! + 0.5 - 1e-3, ys[i]! + 0.5 - 1e-3);
      if (i % side < side - 1 && i < n - side) expect(gap, `gap beside ${i}`).toEqual(bg);
    }
    const pdf = Buffer.from(
      await svgToPdf(fig.svg, { widthPt: fig.widthPt, heightPt: fig.heightPt }),
    ).toString("latin1");
    // one raster: its RGB image and the soft mask of its alpha (no vector path per polygon)
    expect(pdf.match(/\/Subtype \/Image/g)?.length).toBe(2);
    expect(pdf.match(/\/SMask/g)?.length).toBe(1);
    expect(pdf.length).toBeLessThan(3_000_000);
  });

  it("leaves a ring's hole empty (even-odd)", () => {
    const img = newRaster(20, 20);
    // outer 0..20, hole 5..15
    const pts = Float64Array.from([0, 0, 20, 0, 20, 20, 0, 20, 5, 5, 15, 5, 15, 15, 5, 15]);
    fillPolygon(img, pts, [0, 4, 8], 255, 0, 0, 255);
    const at = (x: number, y: number) => [...img.data.subarray((y * 20 + x) * 4, (y * 20 + x) * 4 + 4)];
    expect(at(2, 2)).toEqual([255, 0, 0, 255]);
    expect(at(10, 10)).toEqual([0, 0, 0, 0]);
    expect(at(17, 12)).toEqual([255, 0, 0, 255]);
    expect(at(5, 10)).toEqual([0, 0, 0, 0]); // centre 5.5 is inside the hole
  });
});

/** World → PNG pixel: the inverse of the frame's PNG pixel → world affine. */
function invert(frame: {
  pngPixelToWorld: readonly number[];
}): [number, number, number, number, number, number] {
  const [a, b, c, d, e, f] = frame.pngPixelToWorld as [number, number, number, number, number, number];
  const det = a * e - b * d;
  return [e / det, -b / det, (b * f - c * e) / det, -d / det, a / det, (c * d - a * f) / det];
}
