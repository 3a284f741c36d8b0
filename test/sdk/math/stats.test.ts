import { describe, expect, it } from "vitest";
import {
  benjaminiHochberg,
  betaIncReg,
  bonferroni,
  erf,
  erfc,
  lgamma,
  logBeta,
  normalCdf,
  normalSf,
  rankAverage,
  studentTSf,
  studentTTwoSided,
  tieCorrection,
  welchTTest,
} from "../../../src/sdk/math/stats.js";

// Expected values: scipy 1.17 (special.erfc, stats.norm.sf, special.gammaln, stats.t.sf,
// stats.ttest_ind_from_stats) and, where scipy itself loses digits (betaln of a large argument, the
// deepest tails), mpmath at 50 digits.

function rel(a: number, b: number): number {
  return b === 0 ? Math.abs(a) : Math.abs(a - b) / Math.abs(b);
}

describe("special functions", () => {
  it("erfc and erf in both tails", () => {
    const cases: [number, number][] = [
      [0.1, 0.8875370839817152],
      [0.5, 0.4795001221869535],
      [1.0, 0.15729920705028516],
      [1.19, 0.092391714028315],
      [1.21, 0.08704449202733061],
      [2.0, 0.004677734981047266],
      [5.0, 1.5374597944280347e-12],
      [10.0, 2.0884875837625446e-45],
      [20.0, 5.395865611607901e-176],
      [26.0, 5.663192408856145e-296],
    ];
    for (const [x, want] of cases) {
      expect(rel(erfc(x), want)).toBeLessThan(1e-14);
      expect(rel(erfc(-x), 2 - want)).toBeLessThan(1e-15);
    }
    expect(erfc(30)).toBe(0);
    expect(erf(0.5)).toBeCloseTo(1 - 0.4795001221869535, 15);
    expect(erf(-2)).toBeCloseTo(-(1 - 0.004677734981047266), 15);
  });

  it("normal tail to 1e-13 relative down to 1e-300", () => {
    const cases: [number, number][] = [
      [0, 0.5],
      [1, 0.15865525393145707],
      [3, 0.0013498980316300933],
      [8, 6.22096057427174e-16],
      [20, 2.7536241186062337e-89], // mpmath
      [34.137512, 1.0244381369194232e-255], // mpmath
    ];
    for (const [z, want] of cases) expect(rel(normalSf(z), want)).toBeLessThan(1e-13);
    expect(rel(normalCdf(-3), 0.0013498980316300933)).toBeLessThan(1e-14);
    expect(normalCdf(0)).toBe(0.5);
  });

  it("lgamma and logBeta, including a large and a small argument", () => {
    const lg: [number, number][] = [
      [0.3, 1.0957979948180756],
      [1.5, -0.12078223763524526],
      [2.5, 0.2846828704729192],
      [7, 6.579251212010101],
      [10, 12.801827480081469],
      [123.4, 469.3360974421906],
      [5000.5, 37586.88488728106],
    ];
    for (const [x, want] of lg)
      expect(Math.abs(lgamma(x) - want)).toBeLessThan(5e-15 * Math.max(1, Math.abs(want)));
    const lb: [number, number, number][] = [
      [0.5, 0.5, 1.1447298858494],
      [3, 4.5, -4.387480485356345],
      [4977.5, 0.5, -3.6839514620359792], // mpmath (scipy: …029654)
      [20, 30, -33.968820791977386],
      [12.5, 0.5, -0.6805020408007404],
      [1e6, 0.5, -6.335390211057437], // mpmath (scipy: …0143175)
    ];
    for (const [a, b, want] of lb) expect(Math.abs(logBeta(a, b) - want)).toBeLessThan(1e-14);
  });

  it("regularised incomplete beta", () => {
    const cases: [number, number, number, number][] = [
      [2, 3, 0.4, 0.5248],
      [0.5, 0.5, 0.9, 0.7951672353008665],
      [50, 0.5, 0.3, 6.800825885173791e-28],
      [4977.5, 0.5, 0.999, 0.0016002319191734547], // mpmath
      [10, 20, 0.6, 0.9984777778269129],
    ];
    for (const [a, b, x, want] of cases) expect(rel(betaIncReg(a, b, x), want)).toBeLessThan(1e-12);
    expect(betaIncReg(2, 3, 0)).toBe(0);
    expect(betaIncReg(2, 3, 1)).toBe(1);
    expect(betaIncReg(2, 3, 1.5)).toBeNaN();
  });

  it("Student's t tail", () => {
    const cases: [number, number, number][] = [
      [1, 3, 0.3910022189557705],
      [2.5, 10.5, 0.03042627264108856],
      [-0.3, 100, 0.7647998803003035],
      [10, 1000, 1.6670702958600067e-22], // mpmath
      [40, 250.5, 9.039162796760813e-111], // mpmath
    ];
    for (const [t, df, want] of cases) expect(rel(studentTTwoSided(t, df), want)).toBeLessThan(1e-13);
    expect(studentTTwoSided(0, 5)).toBe(1);
    expect(studentTTwoSided(Number.POSITIVE_INFINITY, 5)).toBe(0);
    expect(rel(studentTSf(1, 3), 0.3910022189557705 / 2)).toBeLessThan(1e-14);
    expect(rel(studentTSf(-1, 3), 1 - 0.3910022189557705 / 2)).toBeLessThan(1e-14);
  });
});

describe("Welch's t-test from summary statistics", () => {
  it("matches scipy's ttest_ind_from_stats(equal_var=False)", () => {
    const r = welchTTest(1.2, 0.8, 300, 0.9, 0.5, 9000);
    expect(rel(r.statistic, 5.749889084999458)).toBeLessThan(1e-14);
    expect(rel(r.pvalue, 2.1300665483881156e-8)).toBeLessThan(1e-12);
    const big = welchTTest(2.5, 0.3, 800, 0.2, 0.1, 9155);
    expect(rel(big.statistic, 117.0785968563592)).toBeLessThan(1e-14);
    expect(big.pvalue).toBe(0);
  });

  it("0/0 gives NaN, equal constant groups give df 1", () => {
    const r = welchTTest(1, 0, 10, 1, 0, 20);
    expect(r.statistic).toBeNaN();
    expect(r.df).toBe(1);
    const inf = welchTTest(2, 0, 10, 1, 0, 20);
    expect(inf.statistic).toBe(Number.POSITIVE_INFINITY);
    expect(inf.pvalue).toBe(0);
  });
});

describe("multiple-testing corrections", () => {
  it("Benjamini–Hochberg as statsmodels' fdr_bh", () => {
    // statsmodels.stats.multitest.multipletests([0.01, 0.04, 0.03, 0.2, 0.005], method="fdr_bh")[1]
    const adj = benjaminiHochberg([0.01, 0.04, 0.03, 0.2, 0.005]);
    const want = [0.025, 0.05, 0.05, 0.2, 0.025];
    for (let i = 0; i < want.length; i++) expect(adj[i]).toBeCloseTo(want[i]!, 15);
    expect([...benjaminiHochberg([0.9, 1, 0.95])]).toEqual([1, 1, 1]);
  });

  it("Bonferroni", () => {
    expect([...bonferroni([0.01, 0.3], 10)]).toEqual([0.1, 1]);
  });
});

describe("ranking", () => {
  it("average ranks and tie correction as scipy's rankdata / tiecorrect", () => {
    const { ranks, tieSum } = rankAverage([3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 0, 0, 0]);
    expect([...ranks]).toEqual([7.5, 4.5, 9, 4.5, 11, 14, 6, 13, 11, 7.5, 11, 2, 2, 2]);
    expect(tieCorrection(tieSum, 14)).toBeCloseTo(0.978021978021978, 15);
    expect(tieCorrection(0, 1)).toBe(1);
  });
});
