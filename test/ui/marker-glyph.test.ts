/**
 * The web canvas's marker glyph geometry (`src/ui/layers/marker-glyph.ts`) against the server figures'
 * `insideMarker`: over a grid of the grown quad, a point is inside the glyph exactly when the figure's
 * test says so at the same pixel offset, so the screen equals a snapshot; and the shader statements
 * carry the same constants.
 */
import { describe, expect, it } from "vitest";
import { insideMarker } from "../../src/sdk/figures/plots/points-raster.js";
import {
  glyphFragmentGlsl,
  glyphQuadScale,
  insideGlyph,
  MARKER_GLYPHS,
  type MarkerGlyph,
} from "../../src/ui/layers/marker-glyph.js";

const FIGURE_NAME = { circle: "circle", square: "square", hexagon: "hex" } as const;

describe("marker glyph geometry", () => {
  it("equals the figures' insideMarker at every offset of the grown quad", () => {
    const r = 10;
    for (const g of MARKER_GLYPHS) {
      const s = glyphQuadScale(g);
      let inside = 0;
      for (let i = -60; i <= 60; i++) {
        for (let j = -60; j <= 60; j++) {
          const ux = i / 60;
          const uy = j / 60;
          const want = insideMarker(FIGURE_NAME[g], ux * s * r, uy * s * r, r);
          expect(insideGlyph(g, ux, uy), `${g} at (${ux}, ${uy})`).toBe(want);
          if (want) inside++;
        }
      }
      // Areas relative to the disc (π r²): square 4/π, hexagon 3√3/(2π).
      const area = (inside / 121 ** 2) * (2 * s) ** 2;
      const ratio = { circle: 1, square: 4 / Math.PI, hexagon: (3 * Math.sqrt(3)) / (2 * Math.PI) }[g];
      expect(area / Math.PI).toBeCloseTo(ratio, 1);
    }
  });

  it("the glyph fits inside the grown disc with the rim's margin; the circle is not grown", () => {
    expect(glyphQuadScale("circle")).toBe(1);
    // Farthest point of the glyph, in units of r: the square's corner, the hexagon's vertex.
    const far: Record<MarkerGlyph, number> = { circle: 1, square: Math.SQRT2, hexagon: 1 };
    for (const g of ["square", "hexagon"] as const) expect(glyphQuadScale(g)).toBeGreaterThan(far[g]);
    // Square corner and hexagon vertex are inside; just beyond them is not.
    const s = glyphQuadScale("square");
    expect(insideGlyph("square", 0.999 / s, 0.999 / s)).toBe(true);
    expect(insideGlyph("square", 1.001 / s, 0)).toBe(false);
    const h = glyphQuadScale("hexagon");
    expect(insideGlyph("hexagon", 0.999 / h, 0)).toBe(true);
    expect(insideGlyph("hexagon", 0, (Math.sqrt(3) / 2 + 0.001) / h)).toBe(false);
    expect(insideGlyph("hexagon", 0, (Math.sqrt(3) / 2 - 0.001) / h)).toBe(true);
  });

  it("shader statements: none for the circle, a discard with the same constants otherwise", () => {
    expect(glyphFragmentGlsl("circle")).toBe("");
    expect(glyphFragmentGlsl("square")).toContain("abs(geometry.uv) * 1.5");
    expect(glyphFragmentGlsl("square")).toContain("discard");
    const hex = glyphFragmentGlsl("hexagon");
    expect(hex).toContain("* 1.125");
    expect(hex).toContain(String(Math.sqrt(3) / 2));
    expect(hex).toContain("discard");
  });
});
