/**
 * The `fields` block of SessionState: what the active table offers to colour and plot by, read from
 * the committed object's descriptions (nothing lazy is loaded).
 */
import { columnKind, nRows } from "../data/dataframe.js";
import { matrixInfo } from "../data/lazy.js";
import type { SpatialData } from "../data/spatialdata.js";
import { nVars } from "../data/table.js";
import type { SessionFields } from "./types.js";

/** The fields of `sd`'s table `active` (empty lists when it has none). */
export function describeFields(sd: SpatialData, active: string | null): SessionFields {
  const t = active ? sd.tables[active] : undefined;
  const fields: SessionFields = {
    obs: [],
    obsm: [],
    has_x: false,
    var_names_count: 0,
    obsp: [],
    layers: [],
    images: Object.keys(sd.images),
    shapes: Object.keys(sd.shapes),
  };
  if (!t) return fields;
  for (const name of t.obs.columnOrder) {
    const kind = columnKind(t.obs.columns[name]!);
    // Strings and booleans are labels: the viewer colours them like categories.
    fields.obs.push({ name, kind: kind === "numeric" || kind === "nullable" ? "numeric" : "categorical" });
  }
  for (const [name, m] of Object.entries(t.obsm)) {
    const shape = m.kind === "dataframe" ? [nRows(m), m.columnOrder.length] : matrixInfo(m).shape;
    fields.obsm.push({ name, n_components: shape.length > 1 ? shape[1]! : 1 });
  }
  fields.has_x = t.X != null;
  fields.var_names_count = nVars(t);
  fields.obsp = Object.keys(t.obsp);
  fields.layers = Object.keys(t.layers);
  return fields;
}

/** The table a session colours and analyses: `table` if present, else the first, else null. */
export function defaultActiveTable(sd: SpatialData, preferred?: string | null): string | null {
  if (preferred && Object.hasOwn(sd.tables, preferred)) return preferred;
  const names = Object.keys(sd.tables);
  if (names.includes("table")) return "table";
  return names[0] ?? null;
}
