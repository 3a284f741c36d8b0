/**
 * The points-to-global affine (see world-space.ts): reading it as six numbers, checking a new one,
 * and the Change that sets it on the table's region element.
 *
 * Convention of the six numbers `[a, b, c, d, e, f]`: `x' = a·x + b·y + c`, `y' = d·x + e·y + f`, from
 * canvas (obsm `spatial`) coordinates to world-system coordinates; the same as the checkpoint
 * sidecar's `Affine6`.
 */
import { BadRequestError, NotFoundError } from "../errors.js";
import { toAffine6 } from "./affine.js";
import type { Change } from "./change.js";
import type { ShapesElement, SpatialElement } from "./elements.js";
import { ANNOTATIONS_ELEMENT } from "./shape-annotations.js";
import type { SpatialData } from "./spatialdata.js";
import { type AffineTransform, defaultAxes, type Transformation } from "./transforms.js";
import { pointsToGlobal, type RegionElement, regionElement, worldSystemOf } from "./world-space.js";

/** Six numbers of a 2-d affine. */
export type Affine6 = [number, number, number, number, number, number];

/** The points-to-global affine of table `tableName` and the element it belongs to (null: none). */
export function readPointsTransform(
  sd: SpatialData,
  tableName: string | null,
): { affine: Affine6; element: string | null; coordinate_system: string } {
  const p = pointsToGlobal(sd, tableName);
  return {
    affine: toAffine6(p.matrix),
    element: p.element?.element.name ?? null,
    coordinate_system: p.system,
  };
}

/** Check an affine from a request: six finite numbers with a non-zero determinant (else 400). */
export function validateAffine(value: unknown): Affine6 {
  if (
    !Array.isArray(value) ||
    value.length !== 6 ||
    value.some((v) => typeof v !== "number" || !Number.isFinite(v))
  )
    throw new BadRequestError("affine must be [a, b, c, d, e, f]: six finite numbers");
  const [a, b, , d, e] = value as Affine6;
  const det = a * e - b * d;
  const scale = Math.max(Math.abs(a), Math.abs(b), Math.abs(d), Math.abs(e));
  if (!(Math.abs(det) > 1e-12 * Math.max(1, scale * scale)))
    throw new BadRequestError(`affine [${value.join(", ")}] is not invertible (a·e − b·d = ${det})`);
  return [...value] as Affine6;
}

/** The table's region element, or a NotFoundError saying why there is none. */
export function requireRegionElement(sd: SpatialData, tableName: string | null): RegionElement {
  if (!tableName || !Object.hasOwn(sd.tables, tableName))
    throw new NotFoundError("the session has no active table");
  const r = regionElement(sd, tableName);
  if (!r)
    throw new NotFoundError(
      `table "${tableName}" annotates no element of the object, so it has no points-to-global transform to set`,
    );
  return r;
}

/** The element's transformations with the edge into `system` replaced by `affine`. */
export function withWorldAffine(
  el: SpatialElement,
  system: string,
  affine: Affine6,
): Record<string, Transformation> {
  const [a, b, c, d, e, f] = affine;
  const old = el.transformations[system];
  const axes = defaultAxes(["x", "y"]);
  const t: AffineTransform = {
    type: "affine",
    affine: [
      [a, b, c],
      [d, e, f],
      [0, 0, 1],
    ],
    input: { name: old?.input?.name ?? `${el.name}_xy`, axes },
    output: { name: system, axes },
  };
  return { ...el.transformations, [system]: t };
}

/** The Change setting the points-to-global affine of table `tableName` (its region element's edge). */
export function pointsTransformChange(
  sd: SpatialData,
  tableName: string | null,
  affine: Affine6,
): { change: Change; region: RegionElement; system: string; annotations: ShapesElement | null } {
  const region = requireRegionElement(sd, tableName);
  const system = worldSystemOf(sd, tableName);
  const el = { ...region.element, transformations: withWorldAffine(region.element, system, affine) };
  const change: Record<string, Record<string, SpatialElement>> = { [region.family]: { [el.name]: el } };
  // The drawn annotations are canvas coordinates placed like the cells: they follow the new affine.
  const notes = sd.shapes[ANNOTATIONS_ELEMENT];
  let annotations: ShapesElement | null = null;
  if (notes && notes !== region.element) {
    annotations = { ...notes, transformations: withWorldAffine(notes, system, affine) };
    change.shapes = { ...change.shapes, [ANNOTATIONS_ELEMENT]: annotations };
  }
  return { change: change as Change, region: { ...region, element: el }, system, annotations };
}
