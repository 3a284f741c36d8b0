/**
 * Group attributes shared by SpatialData's non-raster elements (points and shapes): `axes`,
 * `coordinateTransformations` (edges from the element's intrinsic system to named systems) and
 * `spatialdata_attrs`.
 */
import type { ElementTransformations } from "../../data/elements.js";
import {
  defaultAxes,
  parseTransformation,
  type Transformation,
  transformationToJson,
} from "../../data/transforms.js";

/** Transformations of an element's attrs, keyed by each one's `output.name`. */
export function parseElementTransformations(
  attrs: Readonly<Record<string, unknown>>,
  where: string,
): ElementTransformations {
  const list = attrs.coordinateTransformations;
  if (list === undefined || list === null) return {};
  if (!Array.isArray(list)) throw new Error(`${where}: "coordinateTransformations" must be a list`);
  const out: Record<string, Transformation> = {};
  list.forEach((json, i) => {
    const t = parseTransformation(json, `${where}: coordinateTransformations[${i}]`);
    const target = t.output?.name;
    if (!target) throw new Error(`${where}: coordinateTransformations[${i}] has no output coordinate system`);
    out[target] = t;
  });
  return out;
}

/** The `spatialdata_attrs` object of an element's attrs (empty when absent). */
export function spatialdataAttrs(attrs: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const s = attrs.spatialdata_attrs;
  return s && typeof s === "object" && !Array.isArray(s) ? (s as Record<string, unknown>) : {};
}

/**
 * `coordinateTransformations` as SpatialData writes them: each transformation gets an input system
 * named after the element's axes (`xy`, `xyz`) and an output system named after its target, both with
 * SpatialData's default axis descriptions, unless the transformation already names them.
 */
export function transformationsToJson(
  ts: ElementTransformations,
  axes: readonly string[],
): Record<string, unknown>[] {
  const cs = (name: string) => ({ name, axes: defaultAxes(axes) });
  return Object.entries(ts).map(([target, t]) => {
    const json = transformationToJson(t);
    json.input ??= cs(axes.join(""));
    json.output = t.output ? json.output : cs(target);
    return json;
  });
}

/** The full attrs of a points/shapes group as spatialdata ≥ 0.6 writes them. */
export function elementGroupAttrs(
  encodingType: "ngff:points" | "ngff:shapes",
  axes: readonly string[],
  ts: ElementTransformations,
  sdAttrs: Record<string, unknown>,
): Record<string, unknown> {
  const sorted = [...axes].sort();
  return {
    "encoding-type": encodingType,
    axes: sorted,
    coordinateTransformations: transformationsToJson(ts, sorted),
    spatialdata_attrs: sdAttrs,
  };
}
