/**
 * The shape annotation parts painted beneath the cells (z < 0, client.md 10.3), as deck.gl layers the
 * spatial canvas draws between its image and its cells: a fill as a translucent polygon, a stroke as
 * pixel-wide paths cut into its dashes, arrow heads as triangles. Dashes and heads are laid out in
 * screen pixels at the current zoom and carried back to world coordinates, so they look the same as
 * the SVG parts drawn over the cells; the overlay rebuilds them when the zoom changes.
 */
import type { Layer } from "@deck.gl/core";
import { PathLayer, SolidPolygonLayer } from "@deck.gl/layers";
import { SHAPE_DEFAULTS } from "../../../sdk/data/shape-annotations.js";
import type { Pt } from "./shape-geometry.js";
import { shapeOutline } from "./shape-geometry.js";
import { arrowedPath, dashPattern, dashPieces, type ShapePart } from "./shape-style.js";

/** `#rrggbb` and an opacity as deck's RGBA bytes. */
export function rgba(hex: string, alpha = 1): [number, number, number, number] {
  const v = Number.parseInt(hex.slice(1, 7), 16);
  return [(v >> 16) & 255, (v >> 8) & 255, v & 255, Math.round(Math.max(0, Math.min(1, alpha)) * 255)];
}

/** What the layers need of the canvas: its camera both ways. */
export interface Camera {
  project(p: readonly number[]): [number, number] | null;
  unproject(x: number, y: number): [number, number] | null;
}

/** The deck layers of the parts beneath the cells, in paint order (one or two layers per part). */
export function underlayLayers(parts: readonly ShapePart[], cam: Camera): Layer[] {
  const layers: Layer[] = [];
  const toWorld = (ps: readonly Pt[]) =>
    ps.map((p) => cam.unproject(p[0], p[1])).filter((q): q is [number, number] => q !== null);
  parts.forEach(({ shape: s, part }, i) => {
    const { points, closed } = shapeOutline(s);
    if (part === "fill") {
      layers.push(
        new SolidPolygonLayer({
          id: `shape-under-${i}-fill`,
          data: [{ polygon: points }],
          getPolygon: (d: { polygon: Pt[] }) => d.polygon,
          getFillColor: rgba(s.fill ?? s.color, s.fill_alpha ?? SHAPE_DEFAULTS.fill_alpha),
          parameters: { depthTest: false },
        } as never),
      );
      return;
    }
    const screen = points.map((p) => cam.project(p)).filter((q): q is Pt => q !== null);
    if (screen.length < 2) return;
    const ring = closed ? [...screen, screen[0]!] : screen;
    const { path, heads } = closed ? { path: ring, heads: [] } : arrowedPath(ring, s);
    const pattern = dashPattern(s.dash, s.stroke_width);
    const pieces = dashPieces(path, pattern).map(toWorld);
    layers.push(
      new PathLayer({
        id: `shape-under-${i}-stroke`,
        data: pieces,
        getPath: (d: Pt[]) => d,
        getColor: rgba(s.color),
        getWidth: s.stroke_width,
        widthUnits: "pixels",
        capRounded: s.dash === "dotted",
        jointRounded: true,
        parameters: { depthTest: false },
      } as never),
    );
    if (heads.length)
      layers.push(
        new SolidPolygonLayer({
          id: `shape-under-${i}-heads`,
          data: heads.map(toWorld),
          getPolygon: (d: Pt[]) => d,
          getFillColor: rgba(s.color),
          parameters: { depthTest: false },
        } as never),
      );
  });
  return layers;
}
