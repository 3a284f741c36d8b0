/**
 * Automatic displays (client.md 5.11): when a session loads, it gets a spatial canvas, and an embedding
 * canvas once an embedding exists; only the missing ones are added. One definition of which ones and
 * how they are encoded, in the SDK so the web app (live and serverless) and any other client build the
 * same displays; where they are added is in docs/decisions.md ("Automatic displays").
 */
import type { DisplaySpec } from "../io/checkpoint/app-state.js";

/** The obsm keys an automatic embedding canvas draws, best first (client.md 5.11: UMAP, t-SNE, diffmap, then PCA). */
export const EMBEDDING_PREFERENCE = ["X_umap", "X_tsne", "X_diffmap", "X_pca"] as const;

/** Obs columns an automatic display colours by first, when the table has them (compared lower-case). */
const PREFERRED_GROUPINGS = ["cell_type", "celltype", "leiden", "louvain", "clusters", "cluster"];

/** What the choice needs to know of the active table: its obs columns' kinds and its obsm keys. */
export interface AutomaticDisplayFields {
  /** Obs columns with their kind as the session's fields report it. */
  readonly obs: readonly { readonly name: string; readonly kind: string }[];
  /** Obsm keys of the active table. */
  readonly obsm: readonly { readonly name: string }[];
}

/**
 * The automatic displays `displays` lacks: a spatial canvas on `obsm:spatial` when the table has
 * spatial coordinates and no spatial canvas exists, an embedding canvas on the preferred embedding
 * when one exists and no embedding canvas does. Both colour by a cell grouping when there is one (a
 * familiar name first, never the table's region/instance keys). `newId` mints each display's id.
 */
export function missingAutomaticDisplays(
  displays: readonly DisplaySpec[],
  fields: AutomaticDisplayFields,
  newId: () => string,
): DisplaySpec[] {
  const out: DisplaySpec[] = [];
  const groupings = fields.obs.filter(
    (o) => o.kind === "categorical" && !/^(region|instance_id|cell_id)$/i.test(o.name),
  );
  const grouping = (groupings.find((o) => PREFERRED_GROUPINGS.includes(o.name.toLowerCase())) ?? groupings[0])
    ?.name;
  const colorBy = grouping ? `obs:${grouping}` : null;
  const obsm = new Set(fields.obsm.map((o) => o.name));
  if (!displays.some((d) => d.type === "spatial_canvas") && obsm.has("spatial")) {
    out.push({
      id: newId(),
      type: "spatial_canvas",
      encoding: { coords: "obsm:spatial", color_by: colorBy },
      viewport: { target: [], zoom: 0 },
    });
  }
  if (!displays.some((d) => d.type === "embedding_canvas")) {
    const key = EMBEDDING_PREFERENCE.find((k) => obsm.has(k));
    if (key)
      out.push({
        id: newId(),
        type: "embedding_canvas",
        encoding: { obsm_key: key, color_by: colorBy },
        viewport: { target: [], zoom: 0 },
      });
  }
  return out;
}
