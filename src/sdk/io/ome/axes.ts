/**
 * The axes an element exposes versus the axes its arrays have on disk.
 *
 * Images are exposed as `c,y,x` (or `c,z,y,x`, with `t` kept only when it has more than one point) and
 * labels as `y,x` (or `z,y,x`), whatever the file holds: singleton `t`/`z` (and `c` for labels) are
 * read at index 0, and an image without a channel axis gets a virtual channel axis of length 1. Order
 * otherwise follows the file, which NGFF fixes as time, channel, space.
 */
import type { AxisSelection } from "../../data/elements.js";

/** Where an exposed axis comes from: a file axis, or nowhere (a virtual length-1 axis). */
export type ExposedAxis =
  | { readonly name: string; readonly file: number }
  | { readonly name: string; readonly file: null };

/** How exposed axes map onto the on-disk axes of every level of an element. */
export interface AxisMapping {
  /** Names of the on-disk axes. */
  readonly fileAxes: readonly string[];
  /** The exposed axes in order. */
  readonly exposed: readonly ExposedAxis[];
}

/** Decide the exposed axes of an image (`kind: "image"`) or labels element from the level-0 shape. */
export function mapAxes(
  fileAxes: readonly string[],
  shape0: readonly number[],
  kind: "image" | "labels",
): AxisMapping {
  const drop = new Set<string>(kind === "image" ? ["t", "z"] : ["t", "c", "z"]);
  const exposed: ExposedAxis[] = [];
  fileAxes.forEach((name, i) => {
    if (drop.has(name) && shape0[i] === 1) return;
    exposed.push({ name, file: i });
  });
  if (kind === "image" && !fileAxes.includes("c")) {
    // Put the virtual channel axis before the first space axis (after a kept time axis).
    const at = exposed.findIndex((a) => a.name !== "t");
    exposed.splice(at < 0 ? 0 : at, 0, { name: "c", file: null });
  }
  return { fileAxes, exposed };
}

/** Names of the exposed axes. */
export function exposedNames(m: AxisMapping): string[] {
  return m.exposed.map((a) => a.name);
}

/** Exposed shape of a level from its on-disk shape. */
export function exposedShape(m: AxisMapping, fileShape: readonly number[]): number[] {
  return m.exposed.map((a) => (a.file === null ? 1 : fileShape[a.file]!));
}

/** Project a per-file-axis vector (scale, translation) onto the exposed axes; virtual axes get `fill`. */
export function exposedVector(m: AxisMapping, v: readonly number[], fill: number): number[] {
  return m.exposed.map((a) => (a.file === null ? fill : v[a.file]!));
}

/**
 * Turn a selection over exposed axes into one over file axes (numbers index, `[a,b]` ranges, `null`
 * everything), checking bounds. Dropped file axes are read at index 0.
 */
export function fileSelection(
  m: AxisMapping,
  fileShape: readonly number[],
  selection: readonly AxisSelection[] | undefined,
  where: string,
): AxisSelection[] {
  const sel = selection ?? [];
  if (sel.length > m.exposed.length) {
    throw new RangeError(
      `${where}: ${sel.length} selections for ${m.exposed.length} axes (${exposedNames(m).join(",")})`,
    );
  }
  const out: AxisSelection[] = fileShape.map(() => 0);
  m.exposed.forEach((a, i) => {
    const s = sel[i] ?? null;
    const n = a.file === null ? 1 : fileShape[a.file]!;
    checkSelection(s, n, a.name, where);
    if (a.file !== null) out[a.file] = s;
  });
  return out;
}

function checkSelection(s: AxisSelection, n: number, axis: string, where: string): void {
  if (s === null) return;
  if (typeof s === "number") {
    if (!Number.isInteger(s) || s < 0 || s >= n)
      throw new RangeError(`${where}: index ${s} out of range for axis "${axis}" of length ${n}`);
    return;
  }
  const [a, b] = s;
  if (!Number.isInteger(a) || !Number.isInteger(b) || a < 0 || b > n || a > b) {
    throw new RangeError(`${where}: range [${a}, ${b}) out of bounds for axis "${axis}" of length ${n}`);
  }
}

/** Shape of the result of reading `selection` (numbers drop their axis, as in numpy). */
export function selectionShape(
  shape: readonly number[],
  selection: readonly AxisSelection[] | undefined,
): number[] {
  const out: number[] = [];
  shape.forEach((n, i) => {
    const s = selection?.[i] ?? null;
    if (s === null) out.push(n);
    else if (typeof s !== "number") out.push(s[1] - s[0]);
  });
  return out;
}
