/**
 * The dendrogram of a grouped plot (`dendrogram=True` or an uns key, as scanpy's dotplot, matrixplot,
 * heatmap and stacked_violin take it): `uns["dendrogram_<groupby>"]` as `sc.tl.dendrogram` writes it,
 * or, when it is absent, computed here with that function's defaults (scanpy runs `tl.dendrogram` on
 * the fly too) without writing it. The groups are then drawn in the dendrogram's leaf order.
 */
import type { SpatialData } from "../../sdk/data/spatialdata.js";
import type { Table } from "../../sdk/data/table.js";
import { isUnsDict, type UnsDict, type UnsValue } from "../../sdk/data/uns.js";
import type { DendrogramLinks } from "../../sdk/figures/plots/dendrogram.js";
import type { OpContext } from "../../sdk/jobs/operation.js";
import { dendrogram as computeDendrogram } from "../scanpy/tl/dendrogram.js";
import { ref } from "./access.js";

/** A plot's dendrogram: the leaf order of the categories and the links. */
export interface GroupDendrogram extends DendrogramLinks {
  /** The categories in leaf order. */
  readonly ordered: string[];
  readonly references: string[];
}

function strings(v: UnsValue | undefined): string[] | null {
  if (!v || typeof v !== "object") return null;
  const o = v as { kind?: string; values?: readonly (string | null)[] };
  if (o.kind === "string" && o.values) return o.values.map((s) => String(s ?? ""));
  if (o.kind === "categorical") {
    const c = v as unknown as { codes: Int32Array; categories: { values: string[] } | string[] };
    const cats = Array.isArray(c.categories) ? c.categories : c.categories.values;
    return Array.from(c.codes, (k) => cats[k] ?? "");
  }
  return null;
}

/** A float matrix of 4 columns (icoord / dcoord) as rows. */
function rows4(v: UnsValue | undefined): number[][] | null {
  if (!v || typeof v !== "object" || (v as { kind?: string }).kind !== "dense") return null;
  const d = v as unknown as { data: ArrayLike<number | bigint>; shape: number[] };
  const flat = Array.from(d.data as ArrayLike<number>, Number);
  if (flat.length % 4 !== 0) return null;
  const out: number[][] = [];
  for (let i = 0; i < flat.length; i += 4) out.push(flat.slice(i, i + 4));
  return out;
}

function parse(dat: UnsDict, key: string, op: string): Omit<GroupDendrogram, "references"> {
  const info = dat.entries.dendrogram_info;
  const ordered =
    strings(dat.entries.categories_ordered) ?? (isUnsDict(info) ? strings(info.entries.ivl) : null);
  const icoord = isUnsDict(info) ? rows4(info.entries.icoord) : null;
  const dcoord = isUnsDict(info) ? rows4(info.entries.dcoord) : null;
  if (!ordered || !icoord || !dcoord || icoord.length !== dcoord.length)
    throw new Error(`${op}: uns["${key}"] is not a dendrogram (run sc.tl.dendrogram again)`);
  return { ordered, icoord, dcoord };
}

/**
 * The dendrogram of `groupby`'s categories for a plot with `dendrogram` set (null when it is not),
 * checked against the categories drawn.
 */
export async function groupDendrogram(
  sd: SpatialData,
  t: Table,
  ctx: OpContext,
  groupby: string,
  dendrogram: boolean | string | null | undefined,
  categories: readonly string[],
  op: string,
): Promise<GroupDendrogram | null> {
  // scanpy adds a dendrogram only between more than two categories
  if (!dendrogram || categories.length <= 2) return null;
  const key = typeof dendrogram === "string" ? dendrogram : `dendrogram_${groupby}`;
  const stored = Object.hasOwn(t.uns.entries, key) ? t.uns.entries[key] : undefined;
  let d: Omit<GroupDendrogram, "references">;
  let references: string[];
  if (isUnsDict(stored)) {
    d = parse(stored, key, op);
    references = [ref(ctx, "uns", key)];
  } else if (typeof dendrogram === "string") {
    throw new Error(`${op}: no uns["${key}"] (dendrogram); run sc.tl.dendrogram with key_added="${key}"`);
  } else {
    // as scanpy does: tl.dendrogram with its defaults, here not written back
    const change = await computeDendrogram(sd, { groupby }, ctx);
    const dat = change.tables?.[ctx.table]?.uns?.[key];
    if (!isUnsDict(dat ?? undefined))
      throw new Error(`${op}: the dendrogram of "${groupby}" was not computed`);
    d = parse(dat as UnsDict, key, op);
    references = [ref(ctx, "obs", groupby), t.obsm.X_pca ? ref(ctx, "obsm", "X_pca") : ref(ctx, "X")];
  }
  const same =
    d.ordered.length === categories.length &&
    [...d.ordered].sort().join("\u0000") === [...categories].sort().join("\u0000");
  if (!same)
    throw new Error(
      `${op}: the categories of uns["${key}"] (${d.ordered.slice(0, 8).join(", ")}) are not those of "${groupby}"; run sc.tl.dendrogram again`,
    );
  return { ...d, references };
}
