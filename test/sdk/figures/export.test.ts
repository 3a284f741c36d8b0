import sharp from "sharp";
import { describe, expect, it } from "vitest";
import { VIRIDIS_LUT } from "../../../src/sdk/display/encoding.js";
import { pngSize, svgToPdf, svgToPng } from "../../../src/sdk/figures/export.js";
import { colorBar, niceScaleLength, scaleBar, swatches } from "../../../src/sdk/figures/legend.js";
import { readPdfInfo } from "../../../src/sdk/figures/pdf-info.js";
import { addPngText, readPngText } from "../../../src/sdk/figures/png-text.js";
import { escapeXml, image, rect, svgDocument, text } from "../../../src/sdk/figures/svg.js";

async function pixel(png: Uint8Array, x: number, y: number): Promise<number[]> {
  const { data, info } = await sharp(png).raw().toBuffer({ resolveWithObject: true });
  const o = (y * info.width + x) * info.channels;
  return [...data.subarray(o, o + info.channels)];
}

const doc = svgDocument({
  width: 200,
  height: 100,
  background: "#ffffff",
  children: [rect(10, 10, 50, 40, { fill: "#ff0000" }), text(100, 50, "Gène ✓ <CD3E>", { size: 14 })],
});

describe("svg builder", () => {
  it("escapes text and attributes", () => {
    expect(escapeXml(`a<b>&"'`)).toBe("a&lt;b&gt;&amp;&quot;&#39;");
    expect(doc).toContain("Gène ✓ &lt;CD3E&gt;");
    expect(doc).toContain('viewBox="0 0 200 100"');
    expect(() => svgDocument({ width: 0, height: 1, children: [] })).toThrow(/positive/);
  });
});

describe("svgToPng", () => {
  it("renders at dpi/72 pixels per user unit with the shapes where they are drawn", async () => {
    const png = await svgToPng(doc, { dpi: 144 });
    expect(pngSize(png)).toEqual({ width: 400, height: 200 });
    // the red rectangle spans (20..120, 20..100) px at 2×
    expect((await pixel(png, 70, 60)).slice(0, 3)).toEqual([255, 0, 0]);
    expect((await pixel(png, 150, 150)).slice(0, 3)).toEqual([255, 255, 255]);
  });

  it("draws text with a system font (dark pixels where the label is)", async () => {
    const png = await svgToPng(
      svgDocument({
        width: 100,
        height: 30,
        background: "#fff",
        children: text(5, 22, "MMMM", { size: 20 }),
      }),
      { dpi: 72 },
    );
    const { data, info } = await sharp(png).greyscale().raw().toBuffer({ resolveWithObject: true });
    let dark = 0;
    for (let i = 0; i < data.length; i += info.channels) if (data[i]! < 100) dark++;
    expect(dark).toBeGreaterThan(100);
  });

  it("refuses a dpi out of range and a gigapixel output", async () => {
    await expect(svgToPng(doc, { dpi: 0.5 })).rejects.toThrow(/dpi must be between/);
    const huge = svgDocument({ width: 14000, height: 100, children: [] });
    await expect(svgToPng(huge, { dpi: 600 })).rejects.toThrow(/longest side/);
  });
});

describe("PNG text chunks", () => {
  it("round-trips UTF-8 JSON through an iTXt chunk and keeps the image decodable", async () => {
    const png = await svgToPng(doc, { dpi: 72 });
    const value = JSON.stringify({ dataset: "démo", steps: ["leiden ✓"] });
    const tagged = addPngText(png, "tessera:provenance", value);
    expect(readPngText(tagged)).toEqual({ "tessera:provenance": value });
    const meta = await sharp(tagged).metadata();
    expect(meta.width).toBe(200);
    expect(readPngText(png)).toEqual({});
  });

  it("rejects bad keys and non-PNG input", () => {
    expect(() => addPngText(new Uint8Array(40), "k", "v")).toThrow(/not a PNG/);
    expect(() => readPngText(new Uint8Array(8))).toThrow(/not a PNG/);
  });
});

describe("svgToPdf", () => {
  it("makes a one-page vector PDF of the page size with the info entries readable back", async () => {
    const keywords = JSON.stringify({ dataset: "démo (1)", n: 3 });
    const pdf = await svgToPdf(doc, {
      widthPt: 200,
      heightPt: 100,
      info: { Title: "fig", Keywords: keywords },
    });
    const s = Buffer.from(pdf).toString("latin1");
    expect(s.startsWith("%PDF-")).toBe(true);
    expect(s).toMatch(/\/MediaBox \[0 0 200 100\]/);
    expect(s).toMatch(/DejaVuSans/); // the figure font is embedded
    const info = readPdfInfo(pdf);
    expect(info.Title).toBe("fig");
    expect(JSON.parse(info.Keywords!)).toEqual({ dataset: "démo (1)", n: 3 });
  });
});

describe("rasters in the PDF", () => {
  it("embeds a large raster with alpha as RGB plus a soft mask, and a large opaque one as JPEG", async () => {
    const n = 600 * 600;
    const rgba = new Uint8Array(n * 4);
    let seed = 12345; // xorshift noise: a PNG over 256 KB
    for (let i = 0; i < rgba.length; i++) {
      seed ^= seed << 13;
      seed ^= seed >>> 17;
      seed ^= seed << 5;
      rgba[i] = seed & 255;
    }
    const withAlpha = await sharp(rgba, { raw: { width: 600, height: 600, channels: 4 } })
      .png()
      .toBuffer();
    const opaque = await sharp(rgba, { raw: { width: 600, height: 600, channels: 4 } })
      .removeAlpha()
      .png()
      .toBuffer();
    expect(withAlpha.length).toBeGreaterThan(256 * 1024);
    const svg = svgDocument({
      width: 300,
      height: 300,
      children: [image(0, 0, 300, 300, opaque), image(0, 0, 300, 300, withAlpha)],
    });
    const pdf = Buffer.from(await svgToPdf(svg, { widthPt: 300, heightPt: 300 })).toString("latin1");
    expect(pdf).toMatch(/\/SMask \d+ 0 R/);
    // split here (named Tx<i>), not by pdfkit's own PNG reader (which names images I<n>)
    expect(pdf).toMatch(/\/Tx1 \d+ 0 R/);
    expect(pdf).toMatch(/\/DCTDecode/);
  });
});

describe("legend helpers", () => {
  it("picks 1-2-5 scale lengths", () => {
    expect(niceScaleLength(730)).toBe(500);
    expect(niceScaleLength(199)).toBe(100);
    expect(niceScaleLength(0.3)).toBe(0.2);
    expect(niceScaleLength(100)).toBe(100);
  });

  it("draws a scale bar of the nice value times the scale", () => {
    const sb = scaleBar({ xRight: 190, y: 90, unitsPerData: 0.25, maxLength: 60, unit: "µm" });
    expect(sb.value).toBe(200);
    expect(sb.length).toBe(50);
    expect(sb.svg).toContain("200 µm");
  });

  it("labels a colour bar and swatches", () => {
    const cb = colorBar({
      x: 0,
      y: 10,
      width: 100,
      height: 8,
      lut: VIRIDIS_LUT,
      min: 0,
      max: 2.5,
      title: "CD3E",
    });
    expect(cb).toContain(">CD3E<");
    expect(cb).toContain(">2.5<");
    expect(cb).toContain("rgb(68,1,84)");
    const sw = swatches({ x: 0, y: 0, items: [{ label: "T cell", color: "#1f77b4" }], title: "cell_type" });
    expect(sw.svg).toContain(">T cell<");
    expect(sw.height).toBeGreaterThan(0);
  });
});
