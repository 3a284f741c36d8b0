/** The plot geometry's pure parts: colour maps, normalisation, ticks, the violin KDE, the grid chart. */
import { describe, expect, it } from "vitest";
import { VIRIDIS_LUT } from "../../../../src/sdk/display/encoding.js";
import {
  colormapHex,
  colormapRgb,
  colormapTable,
  normalizer,
} from "../../../../src/sdk/figures/plots/colormaps.js";
import { gridChart } from "../../../../src/sdk/figures/plots/grid-chart.js";
import { gaussianKde } from "../../../../src/sdk/figures/plots/kde.js";
import { niceTicks } from "../../../../src/sdk/figures/plots/scale.js";
import { VECTOR_STRIP_CAP, violinChart } from "../../../../src/sdk/figures/plots/violin-chart.js";

describe("colour maps", () => {
  it("Reds, Blues and bwr run between matplotlib's end colours; viridis is the canvases' LUT", () => {
    expect(colormapHex("Reds", 0)).toBe("#fff5f0");
    expect(colormapHex("Reds", 1)).toBe("#67000d");
    expect(colormapHex("Blues", 1)).toBe("#08306b");
    expect(colormapHex("bwr", 0)).toBe("#0000ff");
    expect(colormapHex("bwr", 1)).toBe("#ff0000");
    // bwr's middle entries straddle white (entries 127 and 128 of 256).
    for (const c of colormapRgb("bwr", 0.5)) expect(c).toBeGreaterThanOrEqual(253);
    expect(colormapTable("viridis")).toBe(VIRIDIS_LUT);
    // matplotlib indexes floor(t·256): 0.5 is entry 128.
    expect(colormapRgb("viridis", 0.5)).toEqual([...VIRIDIS_LUT.subarray(128 * 3, 128 * 3 + 3)]);
    expect(() => colormapTable("jet")).toThrow(/unknown colour map "jet"/);
  });

  it("a centred normalisation maps each side to its half (TwoSlopeNorm)", () => {
    const n = normalizer(-2, 8, 0);
    expect(n(-2)).toBe(0);
    expect(n(0)).toBe(0.5);
    expect(n(8)).toBe(1);
    expect(n(4)).toBe(0.75);
    expect(normalizer(3, 3)(3)).toBe(0.5);
  });
});

describe("ticks and densities", () => {
  it("nice ticks are round steps (1, 2, 2.5, 5 × 10^k) inside the range", () => {
    expect(niceTicks(0, 1, 5).map((v) => Number(v.toFixed(9)))).toEqual([0, 0.2, 0.4, 0.6, 0.8, 1]);
    expect(niceTicks(-23, 97, 5)).toEqual([0, 25, 50, 75]);
    expect(niceTicks(-23, 97, 10)).toEqual([-20, 0, 20, 40, 60, 80]);
  });

  it("the KDE integrates to about 1 and peaks at a normal sample's mean", () => {
    let s = 1;
    const rnd = () => {
      s = (s * 16807) % 2147483647;
      return s / 2147483647;
    };
    const v = Float64Array.from({ length: 20000 }, () => {
      const u = Math.max(rnd(), 1e-12);
      return 3 + Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * rnd());
    });
    const d = gaussianKde(v)!;
    let area = 0;
    for (let k = 1; k < d.at.length; k++)
      area += ((d.density[k]! + d.density[k - 1]!) / 2) * (d.at[k]! - d.at[k - 1]!);
    expect(area).toBeCloseTo(1, 2);
    const peak = d.at[d.density.indexOf(Math.max(...d.density))]!;
    expect(Math.abs(peak - 3)).toBeLessThan(0.2);
    expect(d.median).toBeCloseTo(3, 1);
    // The standard normal density at its mean is 1/√(2π) ≈ 0.399; Scott's bandwidth widens it a little.
    expect(Math.max(...d.density)).toBeGreaterThan(0.37);
    expect(Math.max(...d.density)).toBeLessThan(0.41);
    expect(gaussianKde([Number.NaN])).toBeNull();
    expect(gaussianKde([2, 2, 2])!.density.every((x) => x === 0)).toBe(true);
  });
});

describe("grid chart", () => {
  it("draws a square per finite value, none for NaN, and refuses a wrong value count", () => {
    const svg = gridChart({
      rowLabels: ["a", "b"],
      colLabels: ["x", "y"],
      values: [0, 1, Number.NaN, 0.5],
      cmap: "viridis",
    });
    expect(svg.match(/class="cell"/g)).toHaveLength(3);
    expect(svg).toContain(`fill="${colormapHex("viridis", 1)}"`);
    expect(() => gridChart({ rowLabels: ["a"], colLabels: ["x"], values: [1, 2], cmap: "viridis" })).toThrow(
      /2 values for 1 × 1/,
    );
  });
});

describe("violin chart", () => {
  it("draws a strip of vector dots up to the cap, one raster of every cell above it", async () => {
    const values = (n: number) => Float64Array.from({ length: n }, (_, i) => Math.sin(i) * 3 + (i % 7));
    const spec = (n: number) => ({
      panels: [{ yLabel: "g", violins: [{ label: "a", values: values(n), color: "#1f77b4" }] }],
      scale: "width" as const,
      stripplot: true,
      jitter: 0.4,
      dotRadius: 0.5,
    });
    const small = await violinChart(spec(VECTOR_STRIP_CAP));
    expect(small.match(/<circle /g)).toHaveLength(VECTOR_STRIP_CAP);
    expect(small).toContain('class="violin"');
    const big = await violinChart(spec(VECTOR_STRIP_CAP + 1));
    expect(big.match(/<circle /g)).toBeNull();
    expect(big.match(/class="strip-raster"/g)).toHaveLength(1);
  });
});
