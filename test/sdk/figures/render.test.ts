/**
 * The render core on in-memory displays: a numeric colour by draws each cell in the viridis entry
 * the canvas's colour module gives its value (and that module is the one the browser imports), the
 * legend text is in the SVG, the scale bar is as long as its value at the zoom, more than 60,000 cells
 * in view are rasterised at the output resolution with the same colours, the pixel ↔ world affine
 * lands the PNG centre on the target, and the embedding canvas has y up.
 */
import sharp from "sharp";
import { describe, expect, it } from "vitest";
import * as sdkColors from "../../../src/sdk/display/cell-colors.js";
import { categoryColors, lutIndex, VIRIDIS_LUT } from "../../../src/sdk/display/encoding.js";
import type { FieldData } from "../../../src/sdk/display/field-data.js";
import { svgToPdf, svgToPng } from "../../../src/sdk/figures/export.js";
import { apply } from "../../../src/sdk/figures/frame.js";
import { drawMarker, newRaster } from "../../../src/sdk/figures/raster-points.js";
import { renderDisplay } from "../../../src/sdk/figures/render.js";
import type { RenderSource } from "../../../src/sdk/figures/render-source.js";
import type { DisplaySpec } from "../../../src/sdk/io/checkpoint/app-state.js";
import * as uiColors from "../../../src/ui/colors.js";

/** A render source over arrays: `obsm:spatial` / `obsm:X_umap` as xs, ys and fields by path. */
function memorySource(xs: Float32Array, ys: Float32Array, fields: Record<string, FieldData>): RenderSource {
  return {
    async field(path) {
      if (path === "obsm:spatial" || path === "obsm:X_umap")
        return { path, kind: "components", n: xs.length, components: [xs, ys] };
      const f = fields[path];
      if (!f) throw new Error(`no field ${path}`);
      return f;
    },
    unit: () => "µm",
  };
}

async function rgbAt(png: Uint8Array, x: number, y: number): Promise<number[]> {
  const { data, info } = await sharp(png).raw().toBuffer({ resolveWithObject: true });
  const o = (Math.floor(y) * info.width + Math.floor(x)) * info.channels;
  return [...data.subarray(o, o + 3)];
}

const spatial = (enc: Record<string, unknown>, zoom = 0): DisplaySpec => ({
  id: "d",
  type: "spatial_canvas",
  encoding: { coords: "obsm:spatial", opacity: 1, background: "light", ...enc },
  viewport: { target: [100, 75], zoom },
});

describe("render core", () => {
  it("shares the canvas's colour module with the browser", () => {
    expect(uiColors.cellColors).toBe(sdkColors.cellColors);
  });

  it("draws a numeric field in the viridis colour of each value, with its legend", async () => {
    // 5 cells in a row, values 0, 1, 2, 3, 4 (min 0, max 4)
    const xs = Float32Array.from([20, 60, 100, 140, 180]);
    const ys = Float32Array.from([75, 75, 75, 75, 75]);
    const values = Float64Array.from([0, 1, 2, 3, 4]);
    const src = memorySource(xs, ys, { "X:CD3E": { path: "X:CD3E", kind: "numeric", n: 5, values } });
    const fig = await renderDisplay(src, {
      display: spatial({ color_by: "X:CD3E", point_size: 12 }),
      viewport: { target: [100, 75], zoom: 1 },
      widthPx: 400,
      heightPx: 300,
      dpi: 96,
    });
    expect(fig.svg).toContain(">CD3E<");
    expect(fig.legend?.kind).toBe("numeric");
    const png = await svgToPng(fig.svg, { dpi: 96 });
    for (let i = 0; i < 5; i++) {
      const [px, py] = apply(fig.frame.worldToPx, xs[i]!, ys[i]!);
      const k = lutIndex(values[i]!, 0, 4) * 3;
      const want = [VIRIDIS_LUT[k]!, VIRIDIS_LUT[k + 1]!, VIRIDIS_LUT[k + 2]!];
      const got = await rgbAt(png, px, py);
      for (let c = 0; c < 3; c++) expect(Math.abs(got[c]! - want[c]!), `cell ${i}`).toBeLessThanOrEqual(1);
    }
  });

  it("draws a scale bar as long as its value at the zoom", async () => {
    const xs = Float32Array.from([100]);
    const ys = Float32Array.from([75]);
    const fig = await renderDisplay(memorySource(xs, ys, {}), {
      display: spatial({}),
      viewport: { target: [100, 75], zoom: 1 }, // 2 px per µm
      widthPx: 400,
      heightPx: 300,
      dpi: 192, // 2 PNG px per px
    });
    // longest allowed: min(200, 400/4) = 100 px = 50 µm → 50 µm, 100 px, 200 PNG px
    expect(fig.svg).toContain(">50 µm<");
    const png = await svgToPng(fig.svg, { dpi: 192 });
    const { data, info } = await sharp(png).raw().toBuffer({ resolveWithObject: true });
    const y = (300 - 15) * 2; // the bar spans y = H-16 … H-14 px
    let dark = 0;
    for (let x = 0; x < info.width; x++) {
      const o = (y * info.width + x) * info.channels;
      if (data[o]! < 60 && data[o + 1]! < 60 && data[o + 2]! < 60) dark++;
    }
    expect(dark).toBe(200);
  });

  it("draws point_marker hexagon as a flat-topped hexagon (SVG, PNG, the PDF's marker form, the raster)", async () => {
    const xs = Float32Array.from([100]);
    const ys = Float32Array.from([75]);
    const fig = await renderDisplay(memorySource(xs, ys, {}), {
      display: spatial({ point_size: 40, point_marker: "hexagon" }),
      viewport: { target: [100, 75], zoom: 1 }, // 2 px per µm: circumradius 20 µm = 40 px
      widthPx: 400,
      heightPx: 300,
      dpi: 96,
    });
    expect(fig.svg).toMatch(/<path transform="translate\(200 150\) scale\(40\)"/);
    const png = await svgToPng(fig.svg, { dpi: 96 });
    const cell = await rgbAt(png, 200, 150);
    const bg = await rgbAt(png, 5, 5);
    expect(cell).not.toEqual(bg);
    expect(await rgbAt(png, 200 + 36, 150)).toEqual(cell); // towards a vertex: inside
    expect(await rgbAt(png, 200, 150 - 38)).toEqual(bg); // above the flat top (at 34.6 px): outside
    expect(await rgbAt(png, 200, 150 - 30)).toEqual(cell);
    const pdf = Buffer.from(await svgToPdf(fig.svg, { widthPt: fig.widthPt, heightPt: fig.heightPt }));
    expect(pdf.includes("TxMarkerH")).toBe(true); // drawn by the marker fast path, as one form
    // the raster form (above 60,000 cells): the same shape, its area (3√3/2)·r²
    const img = newRaster(100, 100);
    drawMarker(img, 50, 50, 40, 255, 0, 0, 255, "hexagon");
    let covered = 0;
    for (let i = 3; i < img.data.length; i += 4) if (img.data[i]! > 0) covered++;
    expect(Math.abs(covered - ((3 * Math.sqrt(3)) / 2) * 1600) / covered).toBeLessThan(0.02);
    expect(img.data[(50 * 100 + 88) * 4 + 3]).toBe(255); // (x 88.5, y 50.5): inside, near the right vertex
    expect(img.data[(14 * 100 + 50) * 4 + 3]).toBe(0); // (50.5, 14.5): 35.5 above the centre, outside
  });

  it("rasterises more than 60,000 cells in view with the same colours", async () => {
    const side = 300;
    const n = side * side;
    const xs = new Float32Array(n);
    const ys = new Float32Array(n);
    const codes = new Int32Array(n);
    for (let i = 0; i < n; i++) {
      xs[i] = (i % side) + 0.5;
      ys[i] = Math.floor(i / side) + 0.5;
      codes[i] = i % side < side / 2 ? 0 : 1;
    }
    const src = memorySource(xs, ys, {
      "obs:side": { path: "obs:side", kind: "categorical", n, codes, categories: ["left", "right"] },
    });
    const fig = await renderDisplay(src, {
      display: spatial({ color_by: "obs:side", point_size: 1, legend_visible: true }),
      viewport: { target: [150, 150], zoom: 0 },
      widthPx: 300,
      heightPx: 300,
      dpi: 96,
    });
    expect(fig.render.rasterized_points).toBe(true);
    expect(fig.render.cells_in_view).toBe(n);
    expect(fig.svg).toContain(">left<");
    expect(fig.svg).toContain(">right<");
    const png = await svgToPng(fig.svg, { dpi: 96 });
    const [left, right] = categoryColors(["left", "right"])!;
    const hex = (h: string) => [1, 3, 5].map((i) => Number.parseInt(h!.slice(i, i + 2), 16));
    expect(await rgbAt(png, 50, 50)).toEqual(hex(left!));
    expect(await rgbAt(png, 200, 50)).toEqual(hex(right!));
  });

  it("returns the PNG pixel → world affine (the centre is the target) and honours invert_x", async () => {
    const xs = Float32Array.from([90, 110]);
    const ys = Float32Array.from([75, 75]);
    const fig = await renderDisplay(memorySource(xs, ys, {}), {
      display: spatial({ invert_x: true }),
      viewport: { target: [100, 75], zoom: 2 },
      widthPx: 200,
      heightPx: 100,
      dpi: 192,
    });
    expect(fig.frame.pngWidth).toBe(400);
    const [wx, wy] = apply(fig.frame.pngPixelToWorld, 200, 100);
    expect(wx).toBeCloseTo(100, 9);
    expect(wy).toBeCloseTo(75, 9);
    // mirrored: the cell at x = 110 is left of the one at 90
    expect(apply(fig.frame.worldToPx, 110, 75)[0]).toBeLessThan(apply(fig.frame.worldToPx, 90, 75)[0]);
    // 200 × 100 px at 4 px per unit: 50 × 25 units around the target
    expect(fig.frame.worldWindow).toEqual([75, 62.5, 125, 87.5]);
  });

  it("draws an embedding with y up", async () => {
    const xs = Float32Array.from([0, 0]);
    const ys = Float32Array.from([-1, 1]);
    const fig = await renderDisplay(memorySource(xs, ys, {}), {
      display: {
        id: "e",
        type: "embedding_canvas",
        encoding: { obsm_key: "X_umap" },
        viewport: { target: [0, 0], zoom: 5 },
      },
      viewport: { target: [0, 0], zoom: 5 },
      widthPx: 200,
      heightPx: 200,
      dpi: 96,
    });
    expect(apply(fig.frame.worldToPx, 0, 1)[1]).toBeLessThan(apply(fig.frame.worldToPx, 0, -1)[1]);
    expect(fig.render.cells_in_view).toBe(2);
  });
});
