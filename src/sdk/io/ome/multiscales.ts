/**
 * NGFF `multiscales` metadata of every version seen in the wild, parsed into one shape.
 *
 * - 0.1 / 0.2 (bioformats2raw): no axes, no per-level transformations → axes come from the array rank
 *   (the last `rank` of `t,c,z,y,x`) and level scales from the shape ratios.
 * - 0.3: axes as a list of names.
 * - 0.4, 0.4-dev-spatialdata: axes as objects; per-dataset `coordinateTransformations`; spatialdata adds
 *   element-level transformations with `input`/`output` coordinate systems.
 * - 0.5, 0.5-dev-spatialdata (zarr v3): the same, nested under `attributes.ome` with `ome.version`.
 *
 * Leniency policy (checked against the NGFF JSON-Schema test suites, see docs/formats/images.md):
 * reject what we could not read correctly (no datasets, a dataset without a string path, duplicate or
 * nameless axes, no `y`/`x` axes, more than 3 space axes or 5 axes, a transformation whose length
 * does not match the axes, malformed transformation values); tolerate what does not change the pixels
 * (a missing or odd `version`, unknown axis types or units, missing per-level transformations, a
 * translation without scale, repeated scales, odd omero colours/windows).
 */
import type { Transformation } from "../../data/transforms.js";
import { parseTransformation } from "../../data/transforms.js";

/** One NGFF axis. */
export interface NgffAxis {
  readonly name: string;
  readonly type?: string;
  readonly unit?: string;
}

/** One resolution level as the metadata lists it. */
export interface NgffDataset {
  /** Path of the level's array inside the multiscale group (`0`, `s0` …). */
  readonly path: string;
  /** The level's pixel → multiscale transformations (scale, then optional translation); may be empty. */
  readonly transforms: readonly Transformation[];
}

/** The parsed NGFF metadata of one image or label group. */
export interface NgffImageMeta {
  /** NGFF version string as written (`0.1` … `0.5-dev-spatialdata`), `""` when absent. */
  readonly version: string;
  /** Whether the metadata sat under the zarr v3 `ome` key. */
  readonly omeKey: boolean;
  readonly name?: string;
  /** Axes as recorded; `undefined` when the metadata has none (NGFF 0.1/0.2): resolve with {@link resolveAxes}. */
  readonly axes?: readonly NgffAxis[];
  /** Levels, finest first. */
  readonly datasets: readonly NgffDataset[];
  /** Multiscale-level transformations without coordinate systems (plain NGFF ≥ 0.4). */
  readonly transforms: readonly Transformation[];
  /** SpatialData edges: target coordinate system name → transformation from the element's pixels. */
  readonly edges: Readonly<Record<string, Transformation>>;
  /** Channel names (`omero.channels[].label`, or spatialdata 0.0.x `channels_metadata`), stringified. */
  readonly channels?: readonly string[];
  /** The `omero` block as read. */
  readonly omero?: unknown;
  /** The `image-label` block, present on label groups. */
  readonly imageLabel?: Readonly<Record<string, unknown>>;
  /** `spatialdata_attrs.version` when a spatialdata writer left one. */
  readonly spatialdataVersion?: string;
}

/** Canonical NGFF axis order for arrays whose metadata records no axes. */
const DEFAULT_AXES = ["t", "c", "z", "y", "x"] as const;

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

/** Whether group attributes carry NGFF multiscales (v2 top level or v3 `ome`). */
export function hasMultiscales(attrs: Readonly<Record<string, unknown>>): boolean {
  const block = isObject(attrs.ome) ? attrs.ome : attrs;
  return Array.isArray(block.multiscales) && block.multiscales.length > 0;
}

/**
 * Parse the NGFF metadata of an image or label group from its attributes (zarr v2 `.zattrs` or the
 * zarr v3 `attributes`). `where` names the group in error messages. Only the first multiscale is used,
 * as every known writer writes one.
 */
export function parseNgffAttrs(attrs: Readonly<Record<string, unknown>>, where: string): NgffImageMeta {
  const omeKey = isObject(attrs.ome) && "multiscales" in attrs.ome;
  const block: Record<string, unknown> = omeKey ? (attrs.ome as Record<string, unknown>) : { ...attrs };
  const list = block.multiscales;
  if (!Array.isArray(list)) throw new Error(`${where}: no NGFF "multiscales" metadata`);
  if (list.length === 0) throw new Error(`${where}: "multiscales" is empty`);
  const ms = list[0];
  if (!isObject(ms)) throw new Error(`${where}: multiscales[0] is not an object`);
  const version = String(block.version ?? ms.version ?? "");

  const axes = parseAxes(ms.axes, where);
  const datasets = parseDatasets(ms.datasets, where);

  const transforms: Transformation[] = [];
  const edges: Record<string, Transformation> = {};
  const mct = ms.coordinateTransformations;
  if (mct !== undefined) {
    if (!Array.isArray(mct))
      throw new Error(`${where}: multiscales[0].coordinateTransformations must be a list`);
    mct.forEach((j, i) => {
      const t = parseTransformation(j, `${where}: multiscales[0].coordinateTransformations[${i}]`);
      if (t.output?.name) edges[t.output.name] = t;
      else transforms.push(t);
    });
  }

  const omero = block.omero ?? (isObject(ms.metadata) ? ms.metadata.omero : undefined);
  const channels = channelNames(omero) ?? channelNames(block.channels_metadata);
  const imageLabel = isObject(block["image-label"]) ? block["image-label"] : undefined;
  const sdAttrs = attrs.spatialdata_attrs;
  const spatialdataVersion =
    isObject(sdAttrs) && sdAttrs.version !== undefined ? String(sdAttrs.version) : undefined;
  return {
    version,
    omeKey,
    ...(typeof ms.name === "string" ? { name: ms.name } : {}),
    ...(axes ? { axes } : {}),
    datasets,
    transforms,
    edges,
    ...(channels ? { channels } : {}),
    ...(omero !== undefined ? { omero } : {}),
    ...(imageLabel ? { imageLabel } : {}),
    ...(spatialdataVersion !== undefined ? { spatialdataVersion } : {}),
  };
}

function parseAxes(json: unknown, where: string): NgffAxis[] | undefined {
  if (json === undefined) return undefined;
  if (!Array.isArray(json)) throw new Error(`${where}: "axes" must be a list`);
  if (json.length === 0) throw new Error(`${where}: "axes" is empty`);
  const axes = json.map((a, i): NgffAxis => {
    if (typeof a === "string") return { name: a };
    if (!isObject(a) || typeof a.name !== "string") throw new Error(`${where}: axes[${i}] has no name`);
    return {
      name: a.name,
      ...(typeof a.type === "string" ? { type: a.type } : {}),
      ...(typeof a.unit === "string" ? { unit: a.unit } : {}),
    };
  });
  checkAxisNames(
    axes.map((a) => a.name),
    axes.map((a) => a.type),
    where,
  );
  return axes;
}

/** Reject axis lists a raster reader cannot work with. */
function checkAxisNames(
  names: readonly string[],
  types: readonly (string | undefined)[],
  where: string,
): void {
  const seen = new Set<string>();
  for (const n of names) {
    if (seen.has(n)) throw new Error(`${where}: axis "${n}" appears twice`);
    seen.add(n);
  }
  if (names.length > 5)
    throw new Error(`${where}: ${names.length} axes (${names.join(",")}); NGFF allows at most 5`);
  if (!seen.has("y") || !seen.has("x")) throw new Error(`${where}: axes ${names.join(",")} lack "y" and "x"`);
  const space = names.filter(
    (n, i) =>
      types[i] === "space" ||
      ((types[i] === undefined || types[i] === "") && (n === "x" || n === "y" || n === "z")),
  );
  if (space.length > 3)
    throw new Error(`${where}: ${space.length} space axes (${space.join(",")}); at most 3`);
}

function parseDatasets(json: unknown, where: string): NgffDataset[] {
  if (!Array.isArray(json)) throw new Error(`${where}: multiscales[0] has no "datasets" list`);
  if (json.length === 0) throw new Error(`${where}: multiscales[0].datasets is empty`);
  return json.map((d, i) => {
    const at = `${where}: datasets[${i}]`;
    if (!isObject(d) || typeof d.path !== "string" || d.path === "")
      throw new Error(`${at} has no string "path"`);
    const ct = d.coordinateTransformations;
    if (ct !== undefined && !Array.isArray(ct))
      throw new Error(`${at}.coordinateTransformations must be a list`);
    // Vector lengths are checked against the array rank when the level is opened (checkLengths):
    // the 0.4 suite counts a 2-value scale on 3 axes as schema-valid.
    const transforms = (ct ?? []).map((j: unknown, k: number) =>
      parseTransformation(j, `${at}.coordinateTransformations[${k}]`),
    );
    return { path: d.path, transforms };
  });
}

/** Check that every scale/translation vector has one value per axis (`nAxes`), naming the culprit. */
export function checkLengths(steps: readonly Transformation[], nAxes: number, where: string): void {
  for (const t of steps) {
    if (t.type === "sequence") {
      checkLengths(t.transformations, nAxes, where);
      continue;
    }
    const v = t.type === "scale" ? t.scale : t.type === "translation" ? t.translation : undefined;
    if (v && v.length !== nAxes) {
      throw new Error(`${where}: a ${t.type} has ${v.length} values for ${nAxes} axes`);
    }
  }
}

/** Channel labels of an `omero`-like block (`{channels: [{label}]}`), stringified; ints become `"0"`. */
function channelNames(block: unknown): string[] | undefined {
  if (!isObject(block) || !Array.isArray(block.channels)) return undefined;
  return block.channels.map((c, i) => {
    const label = isObject(c) ? c.label : undefined;
    return label === undefined || label === null ? String(i) : String(label);
  });
}

/**
 * The axis names of a multiscale whose level-0 array has rank `rank`: the recorded axes, or for
 * metadata without axes the last `rank` of `t,c,z,y,x`.
 */
export function resolveAxes(meta: NgffImageMeta, rank: number, where: string): NgffAxis[] {
  if (meta.axes) {
    if (meta.axes.length !== rank) {
      throw new Error(
        `${where}: metadata lists ${meta.axes.length} axes (${meta.axes.map((a) => a.name).join(",")}) but the array has ${rank} dimensions`,
      );
    }
    return [...meta.axes];
  }
  if (rank < 2 || rank > 5)
    throw new Error(`${where}: cannot guess the axes of a ${rank}-d array without "axes" metadata`);
  return DEFAULT_AXES.slice(5 - rank).map((name) => ({ name }));
}

/** Composed per-axis scale and translation of a list of scale/translation steps (`x' = s·x + t`). */
export interface ScaleTranslation {
  readonly scale: number[];
  readonly translation: number[];
}

/**
 * Compose scale / translation / identity steps (NGFF per-level and multiscale transformations) into
 * one scale and translation over `n` axes, applying the steps in order.
 */
export function composeScaleTranslation(
  steps: readonly Transformation[],
  n: number,
  where: string,
): ScaleTranslation {
  const scale = new Array<number>(n).fill(1);
  const translation = new Array<number>(n).fill(0);
  for (const t of steps) {
    if (t.type === "identity") continue;
    if (t.type === "scale") {
      for (let i = 0; i < n; i++) {
        scale[i]! *= t.scale[i];
        translation[i]! *= t.scale[i];
      }
    } else if (t.type === "translation") {
      for (let i = 0; i < n; i++) translation[i]! += t.translation[i];
    } else if (t.type === "sequence") {
      const inner = composeScaleTranslation(t.transformations, n, where);
      for (let i = 0; i < n; i++) {
        scale[i]! *= inner.scale[i];
        translation[i] = translation[i]! * inner.scale[i]! + inner.translation[i]!;
      }
    } else {
      throw new Error(`${where}: a "${t.type}" transformation is not allowed in NGFF multiscale metadata`);
    }
  }
  return { scale, translation };
}
