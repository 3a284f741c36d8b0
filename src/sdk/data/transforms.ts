/**
 * Coordinate systems and coordinate transformations, as SpatialData (NGFF "coordinateTransformations"
 * with input/output coordinate systems) stores them, and their composition into one affine matrix.
 */
import { type AffineMatrix, identityMatrix, multiply } from "./affine.js";

/** One axis of a coordinate system. */
export interface Axis {
  readonly name: string;
  /** `space`, `channel`, `time` … */
  readonly type?: string;
  readonly unit?: string;
}

/** A named coordinate system with its axes. */
export interface CoordinateSystem {
  readonly name: string;
  readonly axes: readonly Axis[];
}

interface TransformBase {
  /** The system this transformation maps from (absent on steps nested in a sequence). */
  readonly input?: CoordinateSystem;
  /** The system it maps to. */
  readonly output?: CoordinateSystem;
}

/** Identity. */
export interface IdentityTransform extends TransformBase {
  readonly type: "identity";
}
/** Per-axis scale, in input-axis order. */
export interface ScaleTransform extends TransformBase {
  readonly type: "scale";
  readonly scale: readonly number[];
}
/** Per-axis translation, in input-axis order. */
export interface TranslationTransform extends TransformBase {
  readonly type: "translation";
  readonly translation: readonly number[];
}
/** A full homogeneous affine, `(nOut+1) × (nIn+1)` (a matrix without the last row is accepted on read). */
export interface AffineTransform extends TransformBase {
  readonly type: "affine";
  readonly affine: readonly (readonly number[])[];
}
/** Apply each step in order. */
export interface SequenceTransform extends TransformBase {
  readonly type: "sequence";
  readonly transformations: readonly Transformation[];
}
/** Rename or permute axes: `{outputAxis: inputAxis}`. */
export interface MapAxisTransform extends TransformBase {
  readonly type: "mapAxis";
  readonly mapAxis: Readonly<Record<string, string>>;
}

/** A coordinate transformation. */
export type Transformation =
  | IdentityTransform
  | ScaleTransform
  | TranslationTransform
  | AffineTransform
  | SequenceTransform
  | MapAxisTransform;

/** Names of the spatial axes in canonical order. */
export const SPATIAL_AXES = ["x", "y", "z"] as const;

/** Spatial axes of an axis list, in canonical x, y, z order (`["x","y"]` for a 2-d element). */
export function spatialAxes(axes: readonly string[]): string[] {
  return SPATIAL_AXES.filter((a) => axes.includes(a));
}

function axisNames(cs: CoordinateSystem | undefined): string[] | undefined {
  return cs?.axes.map((a) => a.name);
}

/**
 * The matrix of `t` mapping points with axes `inAxes` to points with axes `outAxes`
 * (a `(outAxes.length+1) × (inAxes.length+1)` matrix). Axes the transformation does not mention pass
 * through unchanged when they exist on both sides; axes it mentions but the caller omits (typically
 * the channel axis `c`) are dropped. `ctxAxes` names the axes of a step that carries no input/output
 * of its own (a step nested in a sequence).
 */
export function transformationMatrix(
  t: Transformation,
  inAxes: readonly string[],
  outAxes: readonly string[],
  ctxAxes?: readonly string[],
): AffineMatrix {
  const ownIn = axisNames(t.input) ?? ctxAxes ?? inAxes;
  const ownOut = axisNames(t.output) ?? ownIn;
  if (t.type === "sequence") {
    // Compose every step in the caller's axes, so that intermediate systems need not be named.
    let m = identityMatrix(inAxes.length);
    const stepAxes = [...inAxes];
    for (const step of t.transformations) {
      const sm = transformationMatrix(step, stepAxes, stepAxes, ownIn);
      m = multiply(sm, m);
    }
    return embed(m, inAxes, inAxes, inAxes, outAxes);
  }
  return embed(ownMatrix(t, ownIn, ownOut), ownIn, ownOut, inAxes, outAxes);
}

/** Matrix of a single non-sequence step in its own axes. */
function ownMatrix(t: Transformation, ownIn: readonly string[], ownOut: readonly string[]): AffineMatrix {
  const nIn = ownIn.length;
  const nOut = ownOut.length;
  const m: AffineMatrix = Array.from({ length: nOut + 1 }, () => new Array<number>(nIn + 1).fill(0));
  m[nOut]![nIn] = 1;
  switch (t.type) {
    case "identity":
      for (let i = 0; i < nOut; i++) {
        const j = ownIn.indexOf(ownOut[i]!);
        if (j >= 0) m[i]![j] = 1;
      }
      return m;
    case "scale":
    case "translation": {
      const v = t.type === "scale" ? t.scale : t.translation;
      if (v.length !== nIn) {
        throw new Error(`${t.type} has ${v.length} values for ${nIn} axes (${ownIn.join(",")})`);
      }
      for (let i = 0; i < nOut; i++) {
        const j = ownIn.indexOf(ownOut[i]!);
        if (j < 0) continue;
        if (t.type === "scale") m[i]![j] = v[j]!;
        else {
          m[i]![j] = 1;
          m[i]![nIn] = v[j]!;
        }
      }
      return m;
    }
    case "affine": {
      const a = t.affine;
      if (a.length < nOut || a[0]!.length !== nIn + 1) {
        throw new Error(
          `affine matrix is ${a.length}×${a[0]?.length}, expected ${nOut + 1}×${nIn + 1} for axes ${ownIn.join(",")} → ${ownOut.join(",")}`,
        );
      }
      for (let i = 0; i < nOut; i++) for (let j = 0; j <= nIn; j++) m[i]![j] = a[i]![j]!;
      return m;
    }
    case "mapAxis":
      for (let i = 0; i < nOut; i++) {
        const src = t.mapAxis[ownOut[i]!] ?? ownOut[i]!;
        const j = ownIn.indexOf(src);
        if (j >= 0) m[i]![j] = 1;
      }
      return m;
    case "sequence":
      throw new Error("unreachable");
  }
}

/** Re-express a matrix between own axes as one between the caller's axes. */
function embed(
  own: AffineMatrix,
  ownIn: readonly string[],
  ownOut: readonly string[],
  inAxes: readonly string[],
  outAxes: readonly string[],
): AffineMatrix {
  const nIn = inAxes.length;
  const nOut = outAxes.length;
  const m: AffineMatrix = Array.from({ length: nOut + 1 }, () => new Array<number>(nIn + 1).fill(0));
  m[nOut]![nIn] = 1;
  for (let i = 0; i < nOut; i++) {
    const r = ownOut.indexOf(outAxes[i]!);
    if (r < 0) {
      // Not touched by this transformation: passes through if the input has it.
      const j = inAxes.indexOf(outAxes[i]!);
      if (j >= 0) m[i]![j] = 1;
      continue;
    }
    for (let k = 0; k < ownIn.length; k++) {
      const j = inAxes.indexOf(ownIn[k]!);
      if (j >= 0) m[i]![j] = own[r]![k]!;
    }
    m[i]![nIn] = own[r]![ownIn.length]!;
  }
  return m;
}

/** Parse one NGFF/SpatialData transformation JSON object, with a clear error on unknown types. */
export function parseTransformation(json: unknown, where = "transformation"): Transformation {
  if (!json || typeof json !== "object") throw new Error(`${where}: not an object`);
  const o = json as Record<string, unknown>;
  const io = {
    ...(o.input && typeof o.input === "object" ? { input: parseCs(o.input, `${where}.input`) } : {}),
    ...(o.output && typeof o.output === "object" ? { output: parseCs(o.output, `${where}.output`) } : {}),
  };
  const nums = (v: unknown, field: string): number[] => {
    if (!Array.isArray(v) || v.some((x) => typeof x !== "number"))
      throw new Error(`${where}: "${field}" must be a list of numbers`);
    return v as number[];
  };
  switch (o.type) {
    case "identity":
      return { type: "identity", ...io };
    case "scale":
      return { type: "scale", scale: nums(o.scale, "scale"), ...io };
    case "translation":
      return { type: "translation", translation: nums(o.translation, "translation"), ...io };
    case "affine": {
      if (!Array.isArray(o.affine)) throw new Error(`${where}: "affine" must be a matrix`);
      return {
        type: "affine",
        affine: (o.affine as unknown[]).map((r, i) => nums(r, `affine[${i}]`)),
        ...io,
      };
    }
    case "sequence": {
      if (!Array.isArray(o.transformations)) throw new Error(`${where}: "transformations" must be a list`);
      return {
        type: "sequence",
        transformations: o.transformations.map((t, i) =>
          parseTransformation(t, `${where}.transformations[${i}]`),
        ),
        ...io,
      };
    }
    case "mapAxis": {
      const map = o.mapAxis;
      if (!map || typeof map !== "object") throw new Error(`${where}: "mapAxis" must be an object`);
      return { type: "mapAxis", mapAxis: map as Record<string, string>, ...io };
    }
    default:
      throw new Error(`${where}: unsupported transformation type ${JSON.stringify(o.type)}`);
  }
}

function parseCs(json: unknown, where: string): CoordinateSystem {
  const o = json as Record<string, unknown>;
  if (typeof o.name !== "string") throw new Error(`${where}: coordinate system without a name`);
  const axes = Array.isArray(o.axes)
    ? o.axes.map((a) => (typeof a === "string" ? { name: a } : (a as Axis)))
    : [];
  return { name: o.name, axes };
}

/** The JSON form of a transformation (what SpatialData writes). */
export function transformationToJson(t: Transformation): Record<string, unknown> {
  const { input, output, ...rest } = t as Transformation & Record<string, unknown>;
  const body: Record<string, unknown> = { ...rest };
  if (t.type === "sequence") body.transformations = t.transformations.map(transformationToJson);
  if (input) body.input = { name: input.name, axes: input.axes.map((a) => ({ ...a })) };
  if (output) body.output = { name: output.name, axes: output.axes.map((a) => ({ ...a })) };
  return body;
}

/** Default axis descriptions (SpatialData's) for axis names. */
export function defaultAxes(names: readonly string[]): Axis[] {
  return names.map((n) =>
    n === "c" ? { name: n, type: "channel" } : { name: n, type: "space", unit: "unit" },
  );
}
