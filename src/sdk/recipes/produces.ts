/**
 * What a step will create, for preflight: the field paths (API form, on the active table) a function
 * writes given its params. Known scanpy/squidpy functions follow their documented outputs (including
 * `key_added`); any other function falls back to its naming params (`key_added`, `new_name`, `key`).
 */
import type { Descriptor } from "../session/app-state-machine.js";
import { stepKey } from "./model.js";

type Params = Readonly<Record<string, unknown>>;

function str(p: Params, name: string, dflt: string): string {
  const v = p[name];
  return typeof v === "string" && v ? v : dflt;
}

/** `[format(value)]` when the param is a non-empty string (not yet resolved: nothing claimed). */
function named(p: Params, name: string, format: (key: string) => string): string[] {
  const v = p[name];
  return typeof v === "string" && v ? [format(v)] : [];
}

/** Neighbors-style outputs: `<key>_connectivities`, `<key>_distances`, `uns:<key>` (scanpy's key_added rule). */
function graph(p: Params, dflt: string, spatial: boolean): string[] {
  const key = p.key_added;
  if (typeof key === "string" && key) {
    return spatial
      ? [`obsp:${key}_connectivities`, `obsp:${key}_distances`, `uns:${key}_neighbors`]
      : [`obsp:${key}_connectivities`, `obsp:${key}_distances`, `uns:${key}`];
  }
  return spatial
    ? [`obsp:${dflt}_connectivities`, `obsp:${dflt}_distances`, `uns:${dflt}_neighbors`]
    : ["obsp:connectivities", "obsp:distances", `uns:${dflt}`];
}

/** Outputs of known functions, by key. */
const KNOWN: Readonly<Record<string, (p: Params) => string[]>> = {
  "sc.pp.calculate_qc_metrics": () => [
    "obs:n_genes_by_counts",
    "obs:total_counts",
    "var:n_cells_by_counts",
    "var:total_counts",
  ],
  "sc.pp.filter_cells": (p) => [
    p.min_counts != null || p.max_counts != null ? "obs:n_counts" : "obs:n_genes",
  ],
  "sc.pp.filter_genes": (p) => [
    p.min_counts != null || p.max_counts != null ? "var:n_counts" : "var:n_cells",
  ],
  "sc.pp.normalize_total": (p) => (typeof p.key_added === "string" ? ["X", `obs:${p.key_added}`] : ["X"]),
  "sc.pp.log1p": () => ["X", "uns:log1p"],
  "sc.pp.scale": () => ["X"],
  "sc.pp.highly_variable_genes": () => [
    "var:highly_variable",
    "var:means",
    "var:dispersions",
    "var:dispersions_norm",
    "uns:hvg",
  ],
  "sc.pp.pca": (p) => [`obsm:${str(p, "key_added", "X_pca")}`, "varm:PCs", "uns:pca"],
  "sc.tl.pca": (p) => [`obsm:${str(p, "key_added", "X_pca")}`, "varm:PCs", "uns:pca"],
  "sc.pp.neighbors": (p) => graph(p, "neighbors", false),
  "sc.tl.umap": (p) => [`obsm:${str(p, "key_added", "X_umap")}`, "uns:umap"],
  "sc.tl.tsne": (p) => [`obsm:${str(p, "key_added", "X_tsne")}`, "uns:tsne"],
  "sc.tl.diffmap": () => ["obsm:X_diffmap", "uns:diffmap_evals"],
  "sc.tl.leiden": (p) => [`obs:${str(p, "key_added", "leiden")}`, `uns:${str(p, "key_added", "leiden")}`],
  "sc.tl.louvain": (p) => [`obs:${str(p, "key_added", "louvain")}`, `uns:${str(p, "key_added", "louvain")}`],
  "sc.tl.rank_genes_groups": (p) => [`uns:${str(p, "key_added", "rank_genes_groups")}`],
  "sc.tl.score_genes": (p) => [`obs:${str(p, "score_name", "score")}`],
  "gr.spatial_neighbors": (p) => graph(p, "spatial", true),
  "gr.nhood_enrichment": (p) => [`uns:${str(p, "cluster_key", "cluster")}_nhood_enrichment`],
  "gr.co_occurrence": (p) => [`uns:${str(p, "cluster_key", "cluster")}_co_occurrence`],
  "gr.interaction_matrix": (p) => [`uns:${str(p, "cluster_key", "cluster")}_interactions`],
  "gr.centrality_scores": (p) => [`uns:${str(p, "cluster_key", "cluster")}_centrality_scores`],
  "gr.ripley": (p) => [`uns:${str(p, "cluster_key", "cluster")}_ripley_${str(p, "mode", "F")}`],
  "custom.rename_obs_column": (p) => named(p, "new_name", (k) => `obs:${k}`),
  "custom.rename_categories": (p) => named(p, "key", (k) => `obs:${k}`),
  "custom.set_category_colors": (p) => named(p, "key", (k) => `uns:${k}_colors`),
  "custom.annotate_cells": (p) => named(p, "region_set", (k) => `obs:${k}`),
  "gr.spatial_autocorr": (p) => [`uns:${str(p, "mode", "moran") === "geary" ? "gearyC" : "moranI"}`],
};

/** Param names that name a new obs column in the `custom` namespace and elsewhere. */
const NAMING_PARAMS = ["key_added", "new_name", "new_key", "new_column", "column_added"] as const;

/**
 * Field paths a step will write, for preflight. Plots and extracts write nothing. For an unlisted
 * function, a naming param (`key_added`, `new_name` …) is taken as an obs column; otherwise nothing
 * is claimed.
 */
export function producedBy(step: Descriptor, effect: string | undefined): string[] {
  if (effect === "plot" || effect === "extract" || step.namespace === "pl") return [];
  const known = Object.hasOwn(KNOWN, stepKey(step)) ? KNOWN[stepKey(step)] : undefined;
  if (known) return known(step.params);
  for (const n of NAMING_PARAMS) {
    const v = Object.hasOwn(step.params, n) ? step.params[n] : undefined;
    if (typeof v === "string" && v) return [`obs:${v}`];
  }
  return [];
}
