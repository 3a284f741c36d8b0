/**
 * Regions an agent names (agent-mcp.md 3.5 and 3.8): polygons in spatial world coordinates (the active
 * table's obsm `spatial`, exactly as `annotate` and `subset` test them) or in an embedding display's
 * component space, resolved to the rows of the active table whose centroid lies inside; and the
 * read-only look at such a region that `inspect_region` gives: how many cells, the composition by a
 * categorical column inside against overall, and genes' mean expression inside against outside.
 */
import { type PolygonRing, selectInPolygons, validatePolygons } from "../data/polygon-select.js";
import { type RowSelection, resolveRowSelection } from "../data/row-selection.js";
import { BadRequestError, NotFoundError } from "../errors.js";
import { sessionRenderSource } from "../figures/render-source.js";
import type { EmbeddingDisplay } from "../io/checkpoint/app-state.js";
import { requireReady } from "../session/readiness.js";
import type { Session } from "../session/session.js";

/** The coordinate space of a region's polygons. */
export type RegionSpace = "spatial" | "embedding";

/** Genes `inspectRegion` compares at most. */
export const MAX_INSPECT_GENES = 50;
/** Categories a composition lists at most (the largest inside first). */
export const MAX_COMPOSITION_ROWS = 60;

/** A region as a tool gives it. */
export interface RegionRequest {
  polygons?: unknown;
  cell_indices?: unknown;
  space?: RegionSpace;
  /** The embedding display whose component space the polygons are in (space `embedding`). */
  display_id?: string | undefined;
  invert?: boolean;
}

/** A region resolved to rows of the active table. */
export interface ResolvedRegion extends RowSelection {
  /** The active table's name. */
  readonly table: string;
  /** The rows chosen, when the polygons were in embedding space (what annotate and subset are given). */
  readonly cellIndices: number[] | null;
}

/** The embedding display a region names: `displayId`, else the session's first embedding display. */
function embeddingDisplay(s: Session, displayId: string | undefined): EmbeddingDisplay {
  const displays = s.appState.displays;
  const d =
    displayId === undefined
      ? displays.find((x) => x.type === "embedding_canvas")
      : displays.find((x) => x.id === displayId);
  if (!d)
    throw displayId === undefined
      ? new BadRequestError(
          "display_id: space 'embedding' needs an embedding display and the session has none",
        )
      : new NotFoundError(`session ${s.id} has no display "${displayId.slice(0, 100)}"`);
  if (d.type !== "embedding_canvas")
    throw new BadRequestError(`display_id: display "${d.id}" is a ${d.type}, not an embedding_canvas`);
  return d;
}

/** Row indices of a mask. */
function indicesOf(mask: Uint8Array): number[] {
  const out: number[] = [];
  for (let i = 0; i < mask.length; i++) if (mask[i]) out.push(i);
  return out;
}

/**
 * Resolve a region against the session's active table (centroids inside any polygon, or the rows
 * given). 400 for a malformed selection or a missing embedding; 409 while the session is not ready.
 */
export async function resolveRegion(s: Session, req: RegionRequest): Promise<ResolvedRegion> {
  requireReady(s, "a region");
  const table = s.activeTable;
  if (!table) throw new BadRequestError("the session has no table to select cells from");
  if (req.space !== "embedding" || req.polygons === undefined) {
    const sel = await resolveRowSelection(s.data, table, req);
    return { ...sel, table, cellIndices: null };
  }
  if (req.cell_indices !== undefined)
    throw new BadRequestError("give exactly one of polygons and cell_indices");
  const polygons: PolygonRing[] = validatePolygons(req.polygons);
  const d = embeddingDisplay(s, req.display_id);
  const key = d.encoding.obsm_key.startsWith("obsm:") ? d.encoding.obsm_key : `obsm:${d.encoding.obsm_key}`;
  let comps: readonly Float32Array[];
  try {
    comps = (await sessionRenderSource(s).field(key)).components ?? [];
  } catch (err) {
    throw new BadRequestError(`display "${d.id}": cannot read ${key}: ${(err as Error).message}`);
  }
  const xs = comps[d.encoding.x_component ?? 0];
  const ys = comps[d.encoding.y_component ?? 1];
  if (!xs || !ys) throw new BadRequestError(`display "${d.id}": ${key} lacks the components it shows`);
  const n = xs.length;
  const xy = new Float64Array(n * 2);
  for (let i = 0; i < n; i++) {
    xy[i * 2] = xs[i]!;
    xy[i * 2 + 1] = ys[i]!;
  }
  const mask = selectInPolygons(xy, n, polygons);
  if (req.invert) for (let i = 0; i < n; i++) mask[i] = mask[i] ? 0 : 1;
  let count = 0;
  for (let i = 0; i < n; i++) count += mask[i]!;
  return { mask, count, table, cellIndices: indicesOf(mask) };
}

/** One category of a composition. */
export interface CompositionRow {
  category: string;
  inside: number;
  inside_fraction: number;
  overall: number;
  overall_fraction: number;
}

/** One gene's means. */
export interface GeneContrast {
  gene: string;
  mean_inside: number | null;
  mean_outside: number | null;
  /** Fraction of the cells with a value above 0. */
  frac_expressing_inside: number | null;
  frac_expressing_outside: number | null;
}

/** What `inspectRegion` reports. */
export interface RegionInspection {
  table: string;
  n_cells: number;
  n_inside: number;
  composition: { by: string; n_categories: number; rows: CompositionRow[] } | null;
  genes: GeneContrast[];
}

const ratio = (a: number, b: number) => (b > 0 ? a / b : 0);

/** The composition of a categorical (or string, boolean) obs column inside the region and overall. */
async function composition(
  s: Session,
  mask: Uint8Array,
  by: string,
): Promise<RegionInspection["composition"]> {
  const t = s.data.tables[s.activeTable!]!;
  if (!Object.hasOwn(t.obs.columns, by))
    throw new NotFoundError(`by: the active table has no obs column "${by}" (get_session lists the fields)`);
  const f = await sessionRenderSource(s).field(`obs:${by}`);
  if (!f.codes || !f.categories)
    throw new BadRequestError(
      `by: obs column "${by}" is ${f.kind}; a composition needs a categorical column`,
    );
  const k = f.categories.length;
  const inside = new Float64Array(k);
  const overall = new Float64Array(k);
  let nIn = 0;
  let nAll = 0;
  for (let i = 0; i < f.codes.length; i++) {
    const c = f.codes[i]!;
    if (c < 0 || c >= k) continue;
    overall[c]!++;
    nAll++;
    if (mask[i]) {
      inside[c]!++;
      nIn++;
    }
  }
  const rows: CompositionRow[] = [];
  for (let c = 0; c < k; c++) {
    if (!overall[c]) continue;
    rows.push({
      category: String(f.categories[c]),
      inside: inside[c]!,
      inside_fraction: ratio(inside[c]!, nIn),
      overall: overall[c]!,
      overall_fraction: ratio(overall[c]!, nAll),
    });
  }
  rows.sort((a, b) => b.inside - a.inside || b.overall - a.overall || a.category.localeCompare(b.category));
  return { by, n_categories: rows.length, rows: rows.slice(0, MAX_COMPOSITION_ROWS) };
}

/** Each gene's mean (and fraction expressing) inside against outside. */
async function contrasts(s: Session, mask: Uint8Array, genes: readonly string[]): Promise<GeneContrast[]> {
  if (genes.length > MAX_INSPECT_GENES)
    throw new BadRequestError(`genes: at most ${MAX_INSPECT_GENES} genes`);
  const src = sessionRenderSource(s);
  const out: GeneContrast[] = [];
  for (const [gi, gene] of genes.entries()) {
    // One gene at a time, yielding between them: other requests are served between two gene reads.
    if (gi > 0) await new Promise((resolve) => setImmediate(resolve));
    let values: ArrayLike<number> | undefined;
    try {
      values = (await src.field(`X:${gene}`)).values;
    } catch (err) {
      throw new BadRequestError(
        `genes[${gi}]: no gene "${gene}" in the active table (${(err as Error).message})`,
      );
    }
    if (!values) throw new BadRequestError(`genes[${gi}]: "${gene}" is not numeric`);
    let sIn = 0;
    let sOut = 0;
    let nIn = 0;
    let nOut = 0;
    let eIn = 0;
    let eOut = 0;
    for (let i = 0; i < values.length; i++) {
      const v = values[i]!;
      if (Number.isNaN(v)) continue;
      if (mask[i]) {
        sIn += v;
        nIn++;
        if (v > 0) eIn++;
      } else {
        sOut += v;
        nOut++;
        if (v > 0) eOut++;
      }
    }
    out.push({
      gene,
      mean_inside: nIn ? sIn / nIn : null,
      mean_outside: nOut ? sOut / nOut : null,
      frac_expressing_inside: nIn ? eIn / nIn : null,
      frac_expressing_outside: nOut ? eOut / nOut : null,
    });
  }
  return out;
}

/**
 * A read-only look at a resolved region: its cell count, the composition by `by` (inside against
 * overall, the largest inside first, at most 60 categories), and the genes' means inside against
 * outside. 400/404 naming `by` or `genes[i]` when they name nothing usable.
 */
export async function inspectRegion(
  s: Session,
  region: ResolvedRegion,
  opts: { by?: string | undefined; genes?: readonly string[] | undefined } = {},
): Promise<RegionInspection> {
  return {
    table: region.table,
    n_cells: region.mask.length,
    n_inside: region.count,
    composition: opts.by ? await composition(s, region.mask, opts.by) : null,
    genes: opts.genes?.length ? await contrasts(s, region.mask, opts.genes) : [],
  };
}
