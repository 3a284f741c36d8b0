/**
 * The incomplete gamma / chi-square tail, the chi-square contingency test and Kruskal–Wallis against
 * scipy 1.16.3. Expected values were computed with `/tmp/scverse/venv/bin/python` as written beside
 * each (`scipy.stats.chi2.sf`, `scipy.special.gammainc/gammaincc`, `stats.chi2_contingency`,
 * `stats.kruskal`).
 */
import { describe, expect, it } from "vitest";
import { chiSquareContingency } from "../../../src/sdk/math/contingency.js";
import { chi2Sf, gammaIncLower, gammaIncUpper } from "../../../src/sdk/math/gamma-inc.js";
import { kruskalSparse, kruskalWallis } from "../../../src/sdk/math/kruskal.js";

const rel = (a: number, b: number) => Math.abs(a - b) / Math.abs(b);

describe("chi-square tail", () => {
  it("matches scipy from the bulk to the far tail", () => {
    expect(rel(chi2Sf(3.84, 1), 0.05004352124870519)).toBeLessThan(1e-12); // chi2.sf(3.84, 1)
    expect(rel(chi2Sf(250, 10), 5.427833960969259e-48)).toBeLessThan(1e-11); // chi2.sf(250, 10)
    expect(rel(chi2Sf(0.5, 7), 0.9994464813904249)).toBeLessThan(1e-13); // chi2.sf(0.5, 7)
    expect(rel(chi2Sf(800, 3), 4.327470814385081e-173)).toBeLessThan(1e-10); // chi2.sf(800, 3)
    expect(rel(gammaIncLower(2.5, 1), 0.15085496391539038)).toBeLessThan(1e-13); // gammainc(2.5, 1)
    expect(rel(gammaIncUpper(30, 45), 0.007337199297796568)).toBeLessThan(1e-12); // gammaincc(30, 45)
    expect(chi2Sf(0, 4)).toBe(1);
    expect(chi2Sf(Number.NaN, 4)).toBeNaN();
    expect(chi2Sf(1, 0)).toBeNaN();
  });
});

describe("chi-square contingency", () => {
  it("3 × 3 table", () => {
    // chi2_contingency([[12,5,7],[3,9,14],[8,8,2]]) → 14.094447822708691, 0.006999638772879789, dof 4
    const r = chiSquareContingency([12, 5, 7, 3, 9, 14, 8, 8, 2], 3, 3);
    expect(rel(r.statistic, 14.094447822708691)).toBeLessThan(1e-12);
    expect(rel(r.pvalue, 0.006999638772879789)).toBeLessThan(1e-10);
    expect(r.dof).toBe(4);
    expect(r.expected[0]).toBeCloseTo((24 * 23) / 68, 12);
  });
  it("2 × 2 table with Yates' correction", () => {
    // chi2_contingency([[10,3],[4,12]]) → 5.804149496336997, 0.015988399121177898
    const r = chiSquareContingency([10, 3, 4, 12], 2, 2);
    expect(rel(r.statistic, 5.804149496336997)).toBeLessThan(1e-12);
    expect(rel(r.pvalue, 0.015988399121177898)).toBeLessThan(1e-10);
  });
  it("refuses an empty row and a table of the wrong size", () => {
    expect(() => chiSquareContingency([0, 0, 1, 2], 2, 2)).toThrow(/row 0 has no counts/);
    expect(() => chiSquareContingency([1, 2, 3], 2, 2)).toThrow(/3 counts for a 2 × 2/);
  });
});

describe("Kruskal–Wallis", () => {
  it("with ties, zeros and a negative value", () => {
    // kruskal([0,0,1.5,2,2,3], [0,4,5,5,0], [-1,0,0,2,7,8,9]) → 0.5859244451278864, 0.7460503240332823
    const a = [0, 0, 1.5, 2, 2, 3];
    const b = [0, 4, 5, 5, 0];
    const c = [-1, 0, 0, 2, 7, 8, 9];
    const values = [...a, ...b, ...c];
    const groups = [...a.map(() => 0), ...b.map(() => 1), ...c.map(() => 2)];
    const r = kruskalWallis(values, groups, 3);
    expect(rel(r.statistic, 0.5859244451278864)).toBeLessThan(1e-12);
    expect(rel(r.pvalue, 0.7460503240332823)).toBeLessThan(1e-12);
    // The same data with the zeros implicit (counted per group) gives the same test.
    const nz = values.map((v, i) => [v, groups[i]!] as const).filter(([v]) => v !== 0);
    const zeros = [2, 2, 2];
    const s = kruskalSparse(
      nz.map(([v]) => v),
      nz.map(([, g]) => g),
      nz.length,
      zeros,
      3,
    );
    expect(s.statistic).toBeCloseTo(r.statistic, 13);
    expect(s.pvalue).toBeCloseTo(r.pvalue, 13);
  });
  it("without ties; a group left out; all tied gives NaN", () => {
    // kruskal([1,2,3,4],[5,6,7,8,9]) → 6.0, 0.014305878435429641
    const r = kruskalWallis([1, 2, 3, 4, 5, 6, 7, 8, 9, 100], [0, 0, 0, 0, 1, 1, 1, 1, 1, -1], 2);
    expect(rel(r.statistic, 6)).toBeLessThan(1e-13);
    expect(rel(r.pvalue, 0.014305878435429641)).toBeLessThan(1e-12);
    expect(kruskalWallis([2, 2, 2, 2], [0, 0, 1, 1], 2).statistic).toBeNaN();
    expect(kruskalWallis([1, 2, 3], [0, 0, 0], 2).groups).toBe(1);
  });
});
