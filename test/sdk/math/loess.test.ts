import { describe, expect, it } from "vitest";
import { kdVertices, loess } from "../../../src/sdk/math/loess.js";

// Expected values: skmisc.loess 0.1.4 (the netlib dloess code scanpy's seurat_v3 uses) on the same
// inputs, defaults surface="interpolate", cell=0.2, family="gaussian".
function small(): { x: number[]; y: number[] } {
  const x = Array.from({ length: 200 }, (_, i) => ((i * 37) % 200) / 20);
  x[5] = x[6]!;
  const y = x.map((v, i) => Math.sin(v) + 0.1 * Math.cos(7 * i));
  return { x, y };
}

function close(a: number, b: number, rel = 1e-10): void {
  expect(Math.abs(a - b)).toBeLessThanOrEqual(rel * Math.max(1e-3, Math.abs(b)));
}

describe("loess", () => {
  it("matches skmisc, degree 2, span 0.3 (many k-d cells, tied x)", () => {
    const { x, y } = small();
    const f = loess(x, y, { span: 0.3, degree: 2 });
    const want: Record<number, number> = {
      0: -0.06319433160560284,
      5: 0.8922453689903234,
      6: 0.8922453689903234,
      17: 0.9810808004178537,
      99: -0.0029245913902578927,
      150: 0.9353842149870546,
      199: 0.9481338454746423,
    };
    for (const [i, v] of Object.entries(want)) close(f[Number(i)]!, v);
  });

  it("matches skmisc, degree 1, span 0.75", () => {
    const { x, y } = small();
    const f = loess(x, y, { span: 0.75, degree: 1 });
    const want: Record<number, number> = {
      0: 0.9958308949547762,
      5: 0.6533346450090053,
      17: 0.5419507213995425,
      99: 0.02068144669588929,
      150: 0.25323206481750826,
      199: 0.37603308747569314,
    };
    for (const [i, v] of Object.entries(want)) close(f[Number(i)]!, v);
  });

  it("matches skmisc on a log-mean/log-variance-like curve (n = 1200)", () => {
    const x = Array.from({ length: 1200 }, (_, i) => Math.log10(1 + ((i * 7919) % 1200) / 3));
    const y = x.map((v, i) => 0.8 * v + 0.2 * v * v + 0.05 * Math.sin(13 * i));
    const f = loess(x, y, { span: 0.3 });
    const want: Record<number, number> = {
      0: 0.016048050342335123,
      1: 3.0396169781193656,
      500: 3.0193322856096714,
      777: 2.9783204274686708,
      1199: 2.740967841718506,
    };
    for (const [i, v] of Object.entries(want)) close(f[Number(i)]!, v);
  });

  it("puts the bounding vertices 0.5% outside the range and splits at medians", () => {
    const xs = Float64Array.from({ length: 100 }, (_, i) => i);
    const v = kdVertices(xs, 30);
    expect(v[0]).toBeCloseTo(-0.495, 12);
    expect(v[v.length - 1]).toBeCloseTo(99.495, 12);
    expect(Array.from(v.slice(1, -1))).toEqual([24, 49, 74]);
  });

  it("reproduces a quadratic exactly and rejects bad input", () => {
    const x = Array.from({ length: 50 }, (_, i) => i / 7);
    const y = x.map((v) => 1 + 2 * v - 0.5 * v * v);
    const f = loess(x, y, { span: 0.5 });
    f.forEach((v, i) => {
      close(v, y[i]!, 1e-9);
    });
    expect(() => loess([1, 2], [1], {})).toThrow(/x has 2 values, y has 1/);
    expect(() => loess([1, 2, 3, 4], [1, 2, 3, 4], { span: 0.5 })).toThrow(/span too small/);
    expect(() => loess([1, Number.NaN, 3, 4, 5], [1, 2, 3, 4, 5], { span: 1 })).toThrow(/non-finite/);
  });
});
