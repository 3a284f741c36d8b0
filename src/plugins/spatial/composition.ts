/**
 * `custom.region_composition`: which cell types (or neighbourhoods) make up each region, as a crosstab
 * of two categorical obs columns with Pearson's chi-square test of independence.
 */
import type { Change } from "../../sdk/data/change.js";
import type { SpatialData } from "../../sdk/data/spatialdata.js";
import { type UnsValue, unsDict } from "../../sdk/data/uns.js";
import type { OpContext } from "../../sdk/jobs/operation.js";
import { chiSquareContingency } from "../../sdk/math/contingency.js";
import { matrixFrame } from "./frames.js";
import { activeTable, labelsOf } from "./inputs.js";

/** Params of `region_composition`. */
export interface RegionCompositionParams {
  /**
   * Categorical obs column of the regions (rows of the crosstab).
   * @widget obs_categorical
   * @maxLength 256
   */
  region_key: string;
  /**
   * Categorical obs column counted in each region (columns of the crosstab): cell types, or
   * neighbourhoods.
   * @widget obs_categorical
   * @maxLength 256
   */
  cell_type_key: string;
  /**
   * uns key of the result; default `<region_key>_<cell_type_key>_composition`.
   * @maxLength 256
   */
  key_added?: string | null;
}

/** The crosstab and its test, computed from two label columns. */
export interface Composition {
  /** Region × type counts, row-major. */
  readonly counts: Float64Array;
  readonly rows: number;
  readonly cols: number;
  /** Regions and types with at least one cell (the ones the test uses). */
  readonly rowUsed: Uint8Array;
  readonly colUsed: Uint8Array;
}

/** Count cells per (region, type); cells missing either label are left out. */
export function crosstab(
  regions: Int32Array,
  nRegions: number,
  types: Int32Array,
  nTypes: number,
): Composition {
  const counts = new Float64Array(nRegions * nTypes);
  for (let i = 0; i < regions.length; i++) {
    const r = regions[i]!;
    const c = types[i]!;
    if (r >= 0 && c >= 0) counts[r * nTypes + c]! += 1;
  }
  const rowUsed = new Uint8Array(nRegions);
  const colUsed = new Uint8Array(nTypes);
  for (let r = 0; r < nRegions; r++)
    for (let c = 0; c < nTypes; c++)
      if (counts[r * nTypes + c]! > 0) {
        rowUsed[r] = 1;
        colUsed[c] = 1;
      }
  return { counts, rows: nRegions, cols: nTypes, rowUsed, colUsed };
}

/**
 * Crosstab of regions × cell types with Pearson's chi-square test of independence (scipy's
 * `chi2_contingency`, Yates' correction when the table is 2 × 2).
 *
 * Writes uns `<key_added>`: `counts` (regions × types), `fractions` (each region's row summing to 1),
 * `expected` and `residuals` (Pearson's (O − E)/√E, the enrichment a plot colours), the scalars
 * `chi2`, `pvalue`, `dof`, and `params`. Regions or types without any labelled cell stay in the
 * tables (as zero rows/columns; NaN fractions for an empty region) but are left out of the test, as
 * scipy cannot test a table with an empty margin.
 */
export async function region_composition(
  sd: SpatialData,
  params: RegionCompositionParams,
  ctx: OpContext,
): Promise<Change> {
  const t = activeTable(sd, ctx.table);
  const regions = labelsOf(t, ctx.table, params.region_key);
  const types = labelsOf(t, ctx.table, params.cell_type_key);
  const key = params.key_added ?? `${params.region_key}_${params.cell_type_key}_composition`;
  const nr = regions.names.length;
  const nc = types.names.length;
  const tab = crosstab(regions.codes, nr, types.codes, nc);
  const usedRows = [...tab.rowUsed.keys()].filter((r) => tab.rowUsed[r]);
  const usedCols = [...tab.colUsed.keys()].filter((c) => tab.colUsed[c]);
  if (usedRows.length === 0)
    throw new Error(
      `region_composition: no cell has both a "${params.region_key}" and a "${params.cell_type_key}" label`,
    );
  const sub = new Float64Array(usedRows.length * usedCols.length);
  usedRows.forEach((r, i) => {
    usedCols.forEach((c, j) => {
      sub[i * usedCols.length + j] = tab.counts[r * nc + c]!;
    });
  });
  const test = chiSquareContingency(sub, usedRows.length, usedCols.length);
  const expected = new Float64Array(nr * nc);
  const residuals = new Float64Array(nr * nc);
  usedRows.forEach((r, i) => {
    usedCols.forEach((c, j) => {
      const e = test.expected[i * usedCols.length + j]!;
      expected[r * nc + c] = e;
      residuals[r * nc + c] = (tab.counts[r * nc + c]! - e) / Math.sqrt(e);
    });
  });
  const fractions = new Float64Array(nr * nc);
  for (let r = 0; r < nr; r++) {
    let s = 0;
    for (let c = 0; c < nc; c++) s += tab.counts[r * nc + c]!;
    for (let c = 0; c < nc; c++) fractions[r * nc + c] = s > 0 ? tab.counts[r * nc + c]! / s : Number.NaN;
  }
  const entries: Record<string, UnsValue> = {
    counts: matrixFrame(tab.counts, regions.names, types.names, true),
    fractions: matrixFrame(fractions, regions.names, types.names),
    expected: matrixFrame(expected, regions.names, types.names),
    residuals: matrixFrame(residuals, regions.names, types.names),
    chi2: test.statistic,
    pvalue: test.pvalue,
    dof: test.dof,
    params: unsDict({ region_key: params.region_key, cell_type_key: params.cell_type_key }),
  };
  ctx.log(
    `region_composition: ${usedRows.length} regions × ${usedCols.length} types, χ² = ${test.statistic.toPrecision(6)} ` +
      `(dof ${test.dof}), p = ${test.pvalue.toPrecision(4)}; added uns["${key}"]`,
  );
  return { tables: { [ctx.table]: { uns: { [key]: unsDict(entries) } } } };
}
