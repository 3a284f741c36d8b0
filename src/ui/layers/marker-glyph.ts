/**
 * The geometry of a cell's marker glyph (`point_marker`: circle, square, hexagon) on the web canvas,
 * kept identical to the server's figures (`src/sdk/figures/plots/points-raster.ts` `insideMarker`) so
 * the screen equals a snapshot: for a point of radius r, the square has half side r (the circle's
 * bounding box) and the hexagon is flat-topped with circumradius r (vertices at (±r, 0) and
 * (±r/2, ±r·√3/2), as squidpy draws Visium spots).
 *
 * deck.gl's ScatterplotLayer draws each cell on a quad and discards fragments outside its disc of
 * radius r. A square's corners lie outside that disc, so the glyph extension grows the quad (and the
 * disc with it) by `glyphQuadScale` and cuts the glyph out of it; this module says by how much and
 * which points of the grown quad are inside, in the quad's unit coordinates (deck.gl's `geometry.uv`:
 * the fragment's offset from the centre over the grown radius). Pure functions, no DOM: the shader
 * code in `marker-glyph-extension.ts` is generated from the same constants and unit-tested here.
 */

/** The glyphs of a spatial display's `point_marker` (client.md 5.3). */
export type MarkerGlyph = "circle" | "square" | "hexagon";

/** The glyphs, in the order the settings panel lists them. */
export const MARKER_GLYPHS: readonly MarkerGlyph[] = ["circle", "square", "hexagon"];

const SQRT3 = Math.sqrt(3);

/**
 * How much the instance quad (and the layer's own disc) grows for a glyph. The square's corner is at
 * √2·r and the hexagon's vertex at r; the grown disc's antialiased rim (half a pixel wide) would fade
 * them, so the disc reaches a margin past the glyph's farthest point (1.5·r ≥ √2·r + 0.5 px from
 * r ≈ 6 px up; 1.125·r for the hexagon, from r = 4 px). The circle is the layer as it is.
 */
export function glyphQuadScale(glyph: MarkerGlyph): number {
  if (glyph === "square") return 1.5;
  if (glyph === "hexagon") return 1.125;
  return 1;
}

/**
 * Whether the point (ux, uy) of the grown quad, in its unit coordinates (1 = the grown radius), is
 * inside the glyph. Scaled back to glyph units (1 = the point's radius r) this is `insideMarker`.
 */
export function insideGlyph(glyph: MarkerGlyph, ux: number, uy: number): boolean {
  const s = glyphQuadScale(glyph);
  const gx = Math.abs(ux * s);
  const gy = Math.abs(uy * s);
  if (glyph === "square") return gx <= 1 && gy <= 1;
  if (glyph === "hexagon") return gy <= SQRT3 / 2 && SQRT3 * gx + gy <= SQRT3;
  return gx * gx + gy * gy <= 1;
}

/** A float as a GLSL literal (always with a decimal point). */
export function glslFloat(v: number): string {
  const t = String(v);
  return t.includes(".") || t.includes("e") ? t : `${t}.0`;
}

/**
 * The fragment shader statements of `insideGlyph` for a glyph (empty for the circle): they run in
 * deck.gl's `fs:DECKGL_FILTER_COLOR` hook, where `geometry.uv` holds the quad's unit position, and
 * discard a fragment outside the glyph. Discarded fragments are not picked either.
 */
export function glyphFragmentGlsl(glyph: MarkerGlyph): string {
  if (glyph === "circle") return "";
  const s = glslFloat(glyphQuadScale(glyph));
  const g = `vec2 markerG = abs(geometry.uv) * ${s};`;
  if (glyph === "square") return `${g}\nif (max(markerG.x, markerG.y) > 1.0) discard;`;
  const sq3 = glslFloat(SQRT3);
  return `${g}\nif (markerG.y > ${glslFloat(SQRT3 / 2)} || ${sq3} * markerG.x + markerG.y > ${sq3}) discard;`;
}
