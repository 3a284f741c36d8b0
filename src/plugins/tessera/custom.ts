/**
 * The service's own operations (namespace `custom`): renaming obs columns and categories, category
 * colours, labelling chosen cells, and the extracts the viewer reads (an obs column's values, the
 * element inventory). Each is a real operation over the data model: computes return a `Change`.
 */
import { allocArray, type Categorical } from "../../sdk/data/arrays.js";
import type { Change } from "../../sdk/data/change.js";
import { columnValue } from "../../sdk/data/dataframe.js";
import { type Inventory, inventory } from "../../sdk/data/inventory.js";
import { resolveRowSelection } from "../../sdk/data/row-selection.js";
import type { SpatialData } from "../../sdk/data/spatialdata.js";
import { nObs } from "../../sdk/data/table.js";
import { unsGet } from "../../sdk/data/uns.js";
import type { OpContext } from "../../sdk/jobs/operation.js";
import { defaultColor } from "./palette.js";
import { activeTable, categoricalColumn, categoryLabels, obsColumn, stringArray } from "./tables.js";

/** A cell index: a row of the active table. @asType integer @minimum 0 */
export type CellIndex = number;

/** A colour as `#rrggbb` (or `#rrggbbaa`). @pattern ^#[0-9a-fA-F]{6}([0-9a-fA-F]{2})?$ */
export type HexColor = string;

/** A name: an obs column, a category. @maxLength 256 */
export type Name = string;

/** A polygon ring: 3 to 100,000 [x, y] vertices. @minItems 3 @maxItems 100000 */
export type Ring = number[][];

const HEX_COLOR = /^#[0-9a-fA-F]{6}([0-9a-fA-F]{2})?$/;

/** Params of `rename_obs_column`. */
export interface RenameObsColumnParams {
  /**
   * The obs column to rename.
   * @widget obs_key
   * @maxLength 256
   */
  old_name: string;
  /**
   * Its new name; must not exist yet.
   * @minLength 1
   * @maxLength 256
   */
  new_name: string;
}

/**
 * Rename an obs column of the active table. Its colours (`uns/<name>_colors`) follow it; the column
 * moves to the end of the frame.
 */
export async function rename_obs_column(
  sd: SpatialData,
  params: RenameObsColumnParams,
  ctx: OpContext,
): Promise<Change> {
  const t = activeTable(sd, ctx.table);
  const { old_name, new_name } = params;
  const col = obsColumn(t, ctx.table, old_name);
  if (old_name === new_name)
    throw new Error(`rename_obs_column: old_name and new_name are both "${old_name}"`);
  if (Object.hasOwn(t.obs.columns, new_name))
    throw new Error(`table "${ctx.table}" already has an obs column "${new_name}"`);
  if (t.annotation && (t.annotation.regionKey === old_name || t.annotation.instanceKey === old_name)) {
    throw new Error(
      `obs column "${old_name}" is the region or instance key of table "${ctx.table}"; renaming it would detach the table from its elements`,
    );
  }
  const colors = unsGet(t.uns, `${old_name}_colors`);
  return {
    tables: {
      [ctx.table]: {
        obs: { [old_name]: null, [new_name]: col },
        ...(colors !== undefined
          ? { uns: { [`${old_name}_colors`]: null, [`${new_name}_colors`]: colors } }
          : {}),
      },
    },
  };
}

/** Params of `rename_categories`. */
export interface RenameCategoriesParams {
  /**
   * The categorical obs column whose categories to rename.
   * @maxLength 256
   */
  key: string;
  /**
   * Old category → new category; categories not listed keep their name.
   * @widget obs_value_map
   * @boundTo key
   * @maxProperties 100000
   */
  mapping: Record<string, Name>;
}

/**
 * Rename categories of a categorical obs column, keeping every cell's label and the category order
 * (pandas `rename_categories`). Two categories may not end up with the same name.
 */
export async function rename_categories(
  sd: SpatialData,
  params: RenameCategoriesParams,
  ctx: OpContext,
): Promise<Change> {
  const t = activeTable(sd, ctx.table);
  const col = categoricalColumn(t, ctx.table, params.key);
  const labels = categoryLabels(col.categories);
  const unknown = Object.keys(params.mapping).filter((k) => !labels.includes(k));
  if (unknown.length) {
    throw new Error(
      `obs column "${params.key}" has no categor${unknown.length > 1 ? "ies" : "y"} ${unknown.map((u) => `"${u}"`).join(", ")}`,
    );
  }
  const renamed = labels.map((l) => (Object.hasOwn(params.mapping, l) ? params.mapping[l]! : l));
  const seen = new Set<string>();
  for (const r of renamed) {
    if (seen.has(r))
      throw new Error(`rename_categories: two categories of "${params.key}" would both be named "${r}"`);
    seen.add(r);
  }
  // The codes are shared with the old column: nothing ever writes into a committed array.
  const out: Categorical = {
    kind: "categorical",
    codes: col.codes,
    categories: stringArray(renamed),
    ordered: col.ordered,
  };
  return { tables: { [ctx.table]: { obs: { [params.key]: out } } } };
}

/** Params of `set_category_colors`. */
export interface SetCategoryColorsParams {
  /**
   * The categorical obs column to colour.
   * @maxLength 256
   */
  key: string;
  /**
   * Category → colour (`#rrggbb`). Categories not listed keep their colour (or get scanpy's default).
   * @widget obs_value_map
   * @boundTo key
   * @maxProperties 100000
   */
  colors: Record<string, HexColor>;
}

/**
 * Set the colours of categories of a categorical obs column (`uns/<key>_colors`, aligned with the
 * categories as scanpy stores them).
 */
export async function set_category_colors(
  sd: SpatialData,
  params: SetCategoryColorsParams,
  ctx: OpContext,
): Promise<Change> {
  const t = activeTable(sd, ctx.table);
  const col = categoricalColumn(t, ctx.table, params.key);
  const labels = categoryLabels(col.categories);
  for (const [cat, color] of Object.entries(params.colors)) {
    if (!labels.includes(cat)) throw new Error(`obs column "${params.key}" has no category "${cat}"`);
    if (!HEX_COLOR.test(color)) throw new Error(`colour "${color}" of category "${cat}" is not #rrggbb`);
  }
  const current = existingColors(sd, ctx.table, params.key, labels.length);
  const colors = labels.map(
    (l, i) =>
      (Object.hasOwn(params.colors, l) ? params.colors[l] : undefined) ?? current?.[i] ?? defaultColor(i),
  );
  return { tables: { [ctx.table]: { uns: { [`${params.key}_colors`]: stringArray(colors) } } } };
}

/** `uns/<key>_colors` when it is a string list aligned with `n` categories, else null. */
function existingColors(sd: SpatialData, table: string, key: string, n: number): (string | null)[] | null {
  const v = unsGet(sd.tables[table]!.uns, `${key}_colors`);
  if (v && typeof v === "object" && v.kind === "string" && v.values.length === n) return [...v.values];
  return null;
}

/** Params of `annotate_cells`. */
export interface AnnotateCellsParams {
  /**
   * The categorical obs column holding the labels (created when absent).
   * @widget obs_categorical
   * @maxLength 256
   */
  region_set: string;
  /**
   * The label to give the chosen cells; added as a new category when the column lacks it.
   * @minLength 1
   * @maxLength 256
   */
  category: string;
  /**
   * Rows of the active table to label (give this or `polygons`).
   * @minItems 1
   */
  cell_indices?: CellIndex[];
  /**
   * Polygons in the obsm `spatial` coordinates of the active table, each a ring of [x, y] vertices:
   * the cells whose point lies inside any of them are labelled (give this or `cell_indices`). A
   * drawn region stays a few numbers in the history, however many cells it holds.
   * @widget json
   * @maxItems 1000
   */
  polygons?: Ring[];
}

/**
 * Label chosen cells into a categorical obs column (a region set). Other cells keep their labels;
 * a new category is appended (with a default colour when the column has colours).
 */
export async function annotate_cells(
  sd: SpatialData,
  params: AnnotateCellsParams,
  ctx: OpContext,
): Promise<Change> {
  const t = activeTable(sd, ctx.table);
  const n = nObs(t);
  const existing = Object.hasOwn(t.obs.columns, params.region_set)
    ? t.obs.columns[params.region_set]
    : undefined;
  if (existing && existing.kind !== "categorical") {
    throw new Error(
      `obs column "${params.region_set}" of table "${ctx.table}" is ${existing.kind}, not categorical`,
    );
  }
  const chosen = await resolveRowSelection(sd, ctx.table, {
    ...(params.cell_indices !== undefined ? { cell_indices: params.cell_indices } : {}),
    ...(params.polygons !== undefined ? { polygons: params.polygons } : {}),
  });
  const labels = existing ? categoryLabels(existing.categories) : [];
  let code = labels.indexOf(params.category);
  const categories = code >= 0 ? labels : [...labels, params.category];
  if (code < 0) code = labels.length;
  const codes = allocArray("int32", n) as Int32Array;
  if (existing) codes.set(existing.codes);
  else codes.fill(-1);
  for (let i = 0; i < n; i++) if (chosen.mask[i]) codes[i] = code;
  const col: Categorical = {
    kind: "categorical",
    codes,
    categories: stringArray(categories),
    ordered: existing?.ordered ?? false,
  };
  // Colours stay aligned with the categories: a new category gets the next default colour.
  const colors = existing ? existingColors(sd, ctx.table, params.region_set, labels.length) : null;
  const grown = colors && categories.length > labels.length;
  const uns = grown
    ? {
        [`${params.region_set}_colors`]: stringArray([
          ...colors.map((c, i) => c ?? defaultColor(i)),
          defaultColor(labels.length),
        ]),
      }
    : undefined;
  return { tables: { [ctx.table]: { obs: { [params.region_set]: col }, ...(uns ? { uns } : {}) } } };
}

/** Params of `obs_values`. */
export interface ObsValuesParams {
  /**
   * The obs column to count.
   * @widget obs_key
   * @maxLength 256
   */
  column: string;
  /**
   * At most this many distinct values of a non-categorical column (the most frequent first).
   * @asType integer
   * @minimum 1
   * @default 1000
   */
  limit?: number;
}

/** One distinct value of a column and how many cells have it (`null` counts missing values). */
export interface ValueCount {
  value: string | number | boolean | null;
  count: number;
}

/** What `obs_values` returns. */
export interface ObsValues {
  column: string;
  values: ValueCount[];
}

/**
 * Count the distinct values of an obs column of the active table. A categorical lists every category
 * in order (zero counts included); other columns list their most frequent values first.
 * @effect extract
 */
export async function obs_values(
  sd: SpatialData,
  params: ObsValuesParams,
  ctx: OpContext,
): Promise<ObsValues> {
  const t = activeTable(sd, ctx.table);
  const col = obsColumn(t, ctx.table, params.column);
  const n = nObs(t);
  if (col.kind === "categorical") {
    const labels = categoryLabels(col.categories);
    const counts = new Array<number>(labels.length).fill(0);
    let missing = 0;
    for (let i = 0; i < n; i++) {
      const c = col.codes[i]!;
      if (c < 0) missing++;
      else counts[c]!++;
    }
    const numeric = col.categories.kind !== "string";
    const values: ValueCount[] = labels.map((l, i) => ({
      value: numeric ? Number(l) : l,
      count: counts[i]!,
    }));
    if (missing) values.push({ value: null, count: missing });
    return { column: params.column, values };
  }
  const counts = new Map<string | number | boolean | null, number>();
  for (let i = 0; i < n; i++) {
    const raw = columnValue(col, i);
    const v = typeof raw === "bigint" ? Number(raw) : raw;
    counts.set(v, (counts.get(v) ?? 0) + 1);
  }
  const values = [...counts].map(([value, count]) => ({ value, count }));
  values.sort((a, b) => b.count - a.count || compareValues(a.value, b.value));
  return { column: params.column, values: values.slice(0, params.limit ?? 1000) };
}

function compareValues(a: ValueCount["value"], b: ValueCount["value"]): number {
  if (a === b) return 0;
  if (a === null) return 1;
  if (b === null) return -1;
  if (typeof a === "number" && typeof b === "number") return a - b;
  return String(a) < String(b) ? -1 : 1;
}

/** Params of `describe` (none). */
export type DescribeParams = Record<string, never>;

/**
 * List the object's elements: tables with their slots, images, labels, shapes, points and
 * coordinate systems.
 * @effect extract
 */
export async function describe(
  sd: SpatialData,
  _params: DescribeParams,
  _ctx: OpContext,
): Promise<Inventory> {
  return inventory(sd);
}
