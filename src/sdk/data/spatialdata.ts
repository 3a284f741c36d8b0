/**
 * SpatialData: the whole object a session holds. An immutable value of five element maps plus
 * attrs; every change returns a new object that shares what did not change.
 */
import { type AffineMatrix, identityMatrix, invert, multiply } from "./affine.js";
import type {
  ImageElement,
  LabelsElement,
  PointsElement,
  ShapesElement,
  SpatialElement,
} from "./elements.js";
import { own } from "./own.js";
import type { Table } from "./table.js";
import { spatialAxes, transformationMatrix } from "./transforms.js";

/** The five element families, as SpatialData names its top-level groups. */
export const ELEMENT_KINDS = ["images", "labels", "points", "shapes", "tables"] as const;
/** One element family. */
export type ElementKind = (typeof ELEMENT_KINDS)[number];

/** Where an object was read from. */
export interface SourceInfo {
  /** Path or URL that was opened. */
  readonly path: string;
  /** What the reader recognised (`spatialdata-zarr`, `anndata-zarr`, `anndata-h5ad`, `ome-zarr`, `ome-tiff`, `checkpoint` …). */
  readonly format: string;
  /** Container format version where one is recorded (`0.1`, `0.2` …). */
  readonly version?: string;
  /** Software that wrote it, where recorded. */
  readonly writer?: string;
}

/** A SpatialData object. */
export interface SpatialData {
  readonly kind: "spatialdata";
  readonly images: Readonly<Record<string, ImageElement>>;
  readonly labels: Readonly<Record<string, LabelsElement>>;
  readonly points: Readonly<Record<string, PointsElement>>;
  readonly shapes: Readonly<Record<string, ShapesElement>>;
  readonly tables: Readonly<Record<string, Table>>;
  /** Root attrs other than `spatialdata_attrs` (user metadata), kept on write. */
  readonly attrs: Readonly<Record<string, unknown>>;
  readonly source?: SourceInfo;
}

/** Element value type of each family. */
export interface ElementOfKind {
  images: ImageElement;
  labels: LabelsElement;
  points: PointsElement;
  shapes: ShapesElement;
  tables: Table;
}

/** Build a SpatialData object; absent families are empty. */
export function makeSpatialData(init: Partial<Omit<SpatialData, "kind">> = {}): SpatialData {
  return {
    kind: "spatialdata",
    images: init.images ?? {},
    labels: init.labels ?? {},
    points: init.points ?? {},
    shapes: init.shapes ?? {},
    tables: init.tables ?? {},
    attrs: init.attrs ?? {},
    ...(init.source ? { source: init.source } : {}),
  };
}

/** A new object with one element added or replaced. */
export function withElement<K extends ElementKind>(
  sd: SpatialData,
  kind: K,
  name: string,
  el: ElementOfKind[K],
): SpatialData {
  return { ...sd, [kind]: { ...sd[kind], [name]: el } };
}

/** A new object without one element. */
export function withoutElement(sd: SpatialData, kind: ElementKind, name: string): SpatialData {
  const { [name]: _gone, ...rest } = sd[kind] as Record<string, unknown>;
  return { ...sd, [kind]: rest };
}

/** Look an element up, or throw an error naming what is missing and what exists. */
export function getElement<K extends ElementKind>(sd: SpatialData, kind: K, name: string): ElementOfKind[K] {
  const el = own(sd[kind] as Record<string, ElementOfKind[K]>, name);
  if (!el) {
    const have = Object.keys(sd[kind]);
    throw new Error(
      `no ${kind} element named "${name}"${have.length ? ` (have: ${have.join(", ")})` : ` (the object has no ${kind})`}`,
    );
  }
  return el;
}

/** Every spatial (non-table) element with its family. */
export function spatialElements(
  sd: SpatialData,
): { kind: Exclude<ElementKind, "tables">; element: SpatialElement }[] {
  const out: { kind: Exclude<ElementKind, "tables">; element: SpatialElement }[] = [];
  for (const kind of ["images", "labels", "points", "shapes"] as const) {
    for (const el of Object.values(sd[kind])) out.push({ kind, element: el });
  }
  return out;
}

/** Names of all coordinate systems any element maps to, sorted. */
export function coordinateSystems(sd: SpatialData): string[] {
  const names = new Set<string>();
  for (const { element } of spatialElements(sd))
    for (const cs of Object.keys(element.transformations)) names.add(cs);
  return [...names].sort();
}

/** Spatial axes of an element, canonical order. */
export function elementSpatialAxes(el: SpatialElement): string[] {
  if (el.kind === "shapes") return ["x", "y"];
  return spatialAxes(el.axes);
}

/**
 * The affine mapping an element's intrinsic coordinates to coordinate system `target`, over the
 * spatial axes (`x,y` or `x,y,z`). Found by path search over every element's edges, walking edges
 * backwards through their inverse where needed (as spatialdata's `get_transformation_between_coordinate_systems`
 * does), so an element can be placed in a system it has no direct edge to.
 */
export function transformTo(
  sd: SpatialData,
  el: SpatialElement,
  target: string,
  axes?: readonly string[],
): AffineMatrix {
  const ax = axes ?? elementSpatialAxes(el);
  const start = `element:${el.name}`;
  // Nodes: `element:<name>` (intrinsic systems) and `cs:<name>`. Edges carry matrices.
  const edges = new Map<string, { to: string; m: () => AffineMatrix }[]>();
  const add = (from: string, to: string, m: () => AffineMatrix) => {
    if (!edges.has(from)) edges.set(from, []);
    edges.get(from)!.push({ to, m });
  };
  for (const { element } of spatialElements(sd)) {
    for (const [cs, t] of Object.entries(element.transformations)) {
      const fwd = () => transformationMatrix(t, ax, ax);
      add(`element:${element.name}`, `cs:${cs}`, fwd);
      add(`cs:${cs}`, `element:${element.name}`, () => invert(fwd()));
    }
  }
  // Breadth-first search, so the shortest chain of transformations wins.
  const prev = new Map<string, { from: string; m: () => AffineMatrix }>();
  const queue = [start];
  const seen = new Set(queue);
  const goal = `cs:${target}`;
  while (queue.length) {
    const node = queue.shift()!;
    if (node === goal) break;
    for (const e of edges.get(node) ?? []) {
      if (seen.has(e.to)) continue;
      seen.add(e.to);
      prev.set(e.to, { from: node, m: e.m });
      queue.push(e.to);
    }
  }
  if (!seen.has(goal)) {
    const known = Object.keys(el.transformations);
    throw new Error(
      `element "${el.name}" has no path to coordinate system "${target}" (its systems: ${known.join(", ") || "none"})`,
    );
  }
  let m = identityMatrix(ax.length);
  for (let node = goal; node !== start; ) {
    const step = prev.get(node)!;
    m = multiply(m, step.m());
    node = step.from;
  }
  return m;
}
