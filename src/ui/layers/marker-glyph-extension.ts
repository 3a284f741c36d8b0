/**
 * A deck.gl layer extension that draws a ScatterplotLayer's points as squares or flat-topped
 * hexagons instead of discs (a spatial display's `point_marker`, client.md 5.3).
 *
 * Why an extension and not polygons: the canvas draws up to millions of cells as one instanced
 * scatter (one quad per cell, positions and colours as binary attributes). Cutting the glyph out of
 * each quad in the fragment shader keeps that: no per-cell geometry, no extra attribute, the same
 * draw call. The vertex hook grows the quad (and the layer's disc) so a square's corners fit; the
 * fragment hook discards what lies outside the glyph — a pixel is covered when its centre is inside,
 * the rule of the server's figures, so the screen equals a snapshot. Discarded fragments are not
 * picked either, so picking follows the glyph. The geometry lives in `marker-glyph.ts`.
 */
import { type Layer, LayerExtension } from "@deck.gl/core";
import { glslFloat, glyphFragmentGlsl, glyphQuadScale, type MarkerGlyph } from "./marker-glyph.js";

/** The extension's options: which glyph to cut. */
export interface MarkerGlyphOptions {
  readonly glyph: MarkerGlyph;
}

/**
 * Cuts `opts.glyph` out of each point of a ScatterplotLayer. The glyph is a shader define rather
 * than a uniform: switching glyph (a user's rare edit) rebuilds the layer's program once, drawing
 * costs nothing extra. Use `markerGlyphExtensions` to get stable instances.
 */
export class MarkerGlyphExtension extends LayerExtension<MarkerGlyphOptions> {
  static override extensionName = "MarkerGlyphExtension";

  /** The shader hooks: grow the quad in the vertex shader, cut the glyph in the fragment shader. */
  override getShaders(this: Layer, extension: MarkerGlyphExtension): unknown {
    const glyph = extension.opts.glyph;
    return {
      inject: {
        "vs:DECKGL_FILTER_SIZE": `size *= ${glslFloat(glyphQuadScale(glyph))};`,
        "fs:DECKGL_FILTER_COLOR": glyphFragmentGlsl(glyph),
      },
    };
  }
}

/** One extensions array per glyph (see `markerGlyphExtensions`); the circle needs none. */
const EXTENSIONS: Record<MarkerGlyph, readonly MarkerGlyphExtension[]> = {
  circle: [],
  square: [new MarkerGlyphExtension({ glyph: "square" })],
  hexagon: [new MarkerGlyphExtension({ glyph: "hexagon" })],
};

/**
 * The ScatterplotLayer `extensions` for a display's `point_marker` (unknown values draw circles): the
 * same array for the same glyph on every call, because deck.gl rebuilds a layer's program and
 * re-uploads its attributes when its extensions change.
 */
export function markerGlyphExtensions(glyph: string | undefined): readonly MarkerGlyphExtension[] {
  return EXTENSIONS[glyph as MarkerGlyph] ?? EXTENSIONS.circle;
}
