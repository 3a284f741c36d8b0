/**
 * Canvas world space: the space the viewer's canvas draws in, which is the obsm `spatial` space of
 * the active table (cells are drawn at their `spatial` rows as they are). Everything else is placed
 * through the world coordinate system:
 *
 * - The world system is the one the table's region element maps to (`global` when it is among its
 *   systems), as for subset polygons (`subsetCoordinateSystem`), so both agree.
 * - The points-to-global affine `P` is the region element's transformation into the world system:
 *   it takes canvas (cell) coordinates into world coordinates. It is the one editable alignment.
 * - Any element `E` lands on the canvas through `P⁻¹ · T_E`, with `T_E` its own transformation into
 *   the world system. The region element itself therefore always lands on its cells (`P⁻¹·P = I`);
 *   editing `P` moves every other element (images, other shapes) relative to the cells.
 *
 * A table that annotates no element (or whose element has no path into any system) has `P = I`:
 * the canvas is the world system.
 */
import { type AffineMatrix, identityMatrix, invert, multiply } from "./affine.js";
import type { SpatialElement } from "./elements.js";
import { own } from "./own.js";
import { type SpatialData, transformTo } from "./spatialdata.js";
import { subsetCoordinateSystem } from "./subset.js";
import type { Table } from "./table.js";

/** A table's region element: the first annotated element that exists, with its family. */
export interface RegionElement {
  readonly family: "images" | "labels" | "points" | "shapes";
  readonly element: SpatialElement;
}

/** Names of the elements a table annotates, in the annotation's order. */
export function regionNames(t: Table | undefined): string[] {
  const r = t?.annotation?.region;
  return r === undefined ? [] : typeof r === "string" ? [r] : [...r];
}

/** The element the rows of table `tableName` describe, or null (no table, no annotation, absent). */
export function regionElement(sd: SpatialData, tableName: string | null): RegionElement | null {
  const t = tableName ? own(sd.tables, tableName) : undefined;
  for (const name of regionNames(t)) {
    for (const family of ["shapes", "labels", "points", "images"] as const) {
      const el = own<RegionElement["element"]>(sd[family], name);
      if (el) return { family, element: el };
    }
  }
  return null;
}

/** The world coordinate system of the canvas for table `tableName` (see the module comment). */
export function worldSystemOf(sd: SpatialData, tableName: string | null): string {
  return subsetCoordinateSystem(sd, tableName ?? "");
}

/** The points-to-global affine of a table: canvas → world, identity without a placed region element. */
export function pointsToGlobal(
  sd: SpatialData,
  tableName: string | null,
): { matrix: AffineMatrix; element: RegionElement | null; system: string } {
  const system = worldSystemOf(sd, tableName);
  const region = regionElement(sd, tableName);
  let matrix = identityMatrix(2);
  if (region) {
    try {
      matrix = transformTo(sd, region.element, system, ["x", "y"]);
    } catch {
      // No path into the world system: the cells are drawn as world coordinates.
    }
  }
  return { matrix, element: region, system };
}

/**
 * The affine taking element `el`'s own coordinates to canvas world space (`P⁻¹ · T_E`). Throws a
 * plain Error when the element has no path into the world system (callers decide the status).
 */
export function elementToCanvas(sd: SpatialData, tableName: string | null, el: SpatialElement): AffineMatrix {
  const { matrix, system } = pointsToGlobal(sd, tableName);
  return multiply(invert(matrix), transformTo(sd, el, system, ["x", "y"]));
}
