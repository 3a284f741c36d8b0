/**
 * Selecting part of a SpatialData object for an export (spec "Save": `include`, `levels`, `slots`):
 * keep only some elements of each family, drop the finest levels of an image pyramid, keep only some
 * slots of a table. Every function returns a new object sharing what it kept; nothing is copied.
 *
 * These functions check the shape of what they are given against the object (an unknown element,
 * slot or level is an `Error` naming it); the session layer turns a request into 400s before it gets
 * here (`src/sdk/session/export-selection.ts`).
 */
import { type AffineMatrix, multiply } from "./affine.js";
import type { ImageElement, RasterLevel } from "./elements.js";
import { ELEMENT_KINDS, type ElementKind, type SpatialData } from "./spatialdata.js";
import { KEYED_SLOTS, type KeyedSlot, type Table, updateTable } from "./table.js";
import { defaultAxes, type Transformation, transformationMatrix } from "./transforms.js";

/** Facet → names of the elements to keep; a facet absent keeps every element of it. */
export type ElementInclude = Partial<Record<ElementKind, readonly string[]>>;

/** Table name → slot paths to keep (`X`, `obs`, `var`, `uns`, `raw`, `<mapping>/<key>`). */
export type SlotSelection = Readonly<Record<string, readonly string[]>>;

/** Image name → index of the finest pyramid level to keep (0 keeps everything). */
export type LevelSelection = Readonly<Record<string, number>>;

/** Slot paths a table must always keep: an AnnData without them is not a table. */
export const REQUIRED_SLOTS = ["obs", "var", "uns"] as const;

/** Every slot path of a table, in save-slot vocabulary (`X` only when the table has one). */
export function tableSlotPaths(t: Table): string[] {
  const out: string[] = [];
  if (t.X) out.push("X");
  out.push(...REQUIRED_SLOTS);
  if (t.raw) out.push("raw");
  for (const slot of KEYED_SLOTS) for (const key of Object.keys(t[slot])) out.push(`${slot}/${key}`);
  return out;
}

/** Keep only the listed elements of each facet named in `include`. */
export function selectElements(sd: SpatialData, include: ElementInclude): SpatialData {
  let out: SpatialData = sd;
  for (const kind of ELEMENT_KINDS) {
    const keep = include[kind];
    if (!keep) continue;
    const family = sd[kind] as Readonly<Record<string, unknown>>;
    for (const name of keep) {
      if (!(name in family)) throw new Error(`select: no ${kind} element named "${name}"`);
    }
    // Listed order first: for tables, the first one listed becomes the export's active table.
    out = { ...out, [kind]: Object.fromEntries(keep.map((n) => [n, family[n]])) };
  }
  return out;
}

/** Keep only `paths` (save-slot vocabulary) of table `t`; `obs`, `var`, `uns` must be among them. */
export function selectSlots(t: Table, paths: readonly string[]): Table {
  const have = tableSlotPaths(t);
  for (const p of paths) if (!have.includes(p)) throw new Error(`select: the table has no slot "${p}"`);
  for (const r of REQUIRED_SLOTS)
    if (!paths.includes(r)) throw new Error(`select: slot "${r}" cannot be dropped`);
  const keyed = (slot: KeyedSlot) =>
    Object.fromEntries(Object.entries(t[slot]).filter(([k]) => paths.includes(`${slot}/${k}`))) as Record<
      string,
      never
    >;
  return updateTable(t, {
    X: paths.includes("X") ? t.X : null,
    raw: paths.includes("raw") ? t.raw : null,
    obsm: keyed("obsm"),
    varm: keyed("varm"),
    obsp: keyed("obsp"),
    varp: keyed("varp"),
    layers: keyed("layers"),
  });
}

/** A level's pixel → element-intrinsic matrix over `axes` (scale and translation steps composed). */
function levelMatrix(level: RasterLevel, axes: readonly string[]): AffineMatrix {
  return transformationMatrix({ type: "sequence", transformations: level.levelTransform }, axes, axes);
}

/** Scale and translation vectors of an axis-aligned matrix; throws for rotation or shear. */
function scaleTranslation(m: AffineMatrix, where: string): { scale: number[]; translation: number[] } {
  const n = m.length - 1;
  for (let i = 0; i < n; i++)
    for (let j = 0; j < n; j++)
      if (i !== j && m[i]![j] !== 0)
        throw new Error(`${where}: a level transformation that is not a scale and translation`);
  return {
    scale: Array.from({ length: n }, (_, i) => m[i]![i]!),
    translation: Array.from({ length: n }, (_, i) => m[i]![n]!),
  };
}

/**
 * The image without its levels finer than `finest`. The kept level `finest` becomes level 0 and the
 * image's intrinsic pixel space; every transformation to a coordinate system is prefixed with the
 * old level's pixel → intrinsic scale (and translation), so the image covers the same world extent.
 * Coarser levels are rebased onto the new level 0. Levels are renamed `s0, s1, …` (what the writer
 * writes, and what the sidecar names).
 */
export function trimPyramid(el: ImageElement, finest: number): ImageElement {
  if (!Number.isInteger(finest) || finest < 0 || finest >= el.levels.length)
    throw new Error(
      `select: image "${el.name}" has levels 0..${el.levels.length - 1}; level ${finest} does not exist`,
    );
  if (finest === 0) return el;
  const axes = el.axes;
  const where = `image "${el.name}"`;
  const base = scaleTranslation(levelMatrix(el.levels[finest]!, axes), where);
  const levels = el.levels.slice(finest).map((lv, j): RasterLevel => {
    const own = scaleTranslation(levelMatrix(lv, axes), where);
    const scale = own.scale.map((s, i) => s / base.scale[i]!);
    const translation = own.translation.map((t, i) => (t - base.translation[i]!) / base.scale[i]!);
    const steps: Transformation[] = [{ type: "scale", scale }];
    if (translation.some((t) => t !== 0)) steps.push({ type: "translation", translation });
    return { ...lv, path: `s${j}`, levelTransform: steps };
  });
  const intrinsic = { name: axes.join(""), axes: defaultAxes(axes) };
  const prefix: Transformation[] = [
    { type: "scale", scale: base.scale, input: intrinsic, output: intrinsic },
  ];
  if (base.translation.some((t) => t !== 0))
    prefix.push({ type: "translation", translation: base.translation, input: intrinsic, output: intrinsic });
  const transformations = Object.fromEntries(
    Object.entries(el.transformations).map(([cs, t]): [string, Transformation] => [
      cs,
      {
        type: "sequence",
        transformations: [...prefix, t],
        input: t.input ?? intrinsic,
        output: t.output ?? { name: cs, axes: defaultAxes(axes.filter((a) => a !== "c")) },
      },
    ]),
  );
  return { ...el, levels, transformations };
}

/**
 * The matrix mapping pixels `(x, y)` of `el`'s level `i` into coordinate system `cs`: what stays
 * equal across `trimPyramid` for the levels kept (the world extent of the image).
 */
export function levelToSystem(el: ImageElement, i: number, cs: string): AffineMatrix {
  const t = el.transformations[cs];
  if (!t) throw new Error(`image "${el.name}" has no transformation to "${cs}"`);
  const xy = ["x", "y"];
  const own = scaleTranslation(levelMatrix(el.levels[i]!, el.axes), `image "${el.name}"`);
  const at = (a: string) => el.axes.indexOf(a);
  const level: AffineMatrix = [
    [own.scale[at("x")]!, 0, own.translation[at("x")]!],
    [0, own.scale[at("y")]!, own.translation[at("y")]!],
    [0, 0, 1],
  ];
  return multiply(transformationMatrix(t, xy, xy), level);
}

/** What to keep of an object: elements, pyramid levels, table slots. */
export interface DataSelection {
  readonly include?: ElementInclude;
  readonly levels?: LevelSelection;
  readonly slots?: SlotSelection;
}

/** Apply a selection: elements first, then levels and slots of the elements kept. */
export function selectData(sd: SpatialData, sel: DataSelection): SpatialData {
  let out = sel.include ? selectElements(sd, sel.include) : sd;
  const images = { ...out.images };
  for (const [name, finest] of Object.entries(sel.levels ?? {})) {
    const el = images[name];
    if (!el) throw new Error(`select: no image named "${name}" to trim`);
    images[name] = trimPyramid(el, finest);
  }
  const tables = { ...out.tables };
  for (const [name, paths] of Object.entries(sel.slots ?? {})) {
    const t = tables[name];
    if (!t) throw new Error(`select: no table named "${name}"`);
    tables[name] = selectSlots(t, paths);
  }
  out = { ...out, images, tables };
  return out;
}
