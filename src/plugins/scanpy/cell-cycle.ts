/**
 * `sc.tl.score_genes_cell_cycle`: S and G2/M scores from two gene sets, and the phase each cell is
 * most likely in, as scanpy computes it (two `score_genes` calls with a shared control size).
 */
import { strings } from "../../sdk/data/arrays.js";
import type { Change } from "../../sdk/data/change.js";
import type { Column } from "../../sdk/data/dataframe.js";
import type { SpatialData } from "../../sdk/data/spatialdata.js";
import type { OpContext } from "../../sdk/jobs/operation.js";
import { score_genes } from "./rank.js";

/** Params of `score_genes_cell_cycle`. */
export interface ScoreGenesCellCycleParams {
  /**
   * Genes of the S phase (e.g. Tirosh et al.'s list: MCM5, PCNA, TYMS …).
   * @widget var_names
   */
  s_genes: string[];
  /**
   * Genes of the G2/M phase (e.g. HMGB2, CDK1, NUSAP1 …).
   * @widget var_names
   */
  g2m_genes: string[];
  /**
   * Number of expression-level bins for control genes.
   * @default 25
   * @asType integer
   * @minimum 2
   */
  n_bins?: number;
  /**
   * Seed of the control-gene sampling.
   * @default 0
   * @asType integer
   */
  random_state?: number;
  /** Use `raw` (default: true when the table has raw and no layer is given). */
  use_raw?: boolean;
  /** Layer to read expression from. */
  layer?: string;
}

/** The obs column `score_genes` wrote into its change. */
function scoreOf(change: Change, table: string, name: string): Float64Array {
  const col = change.tables?.[table]?.obs?.[name] as Column | null | undefined;
  if (!col || col.kind !== "dense")
    throw new Error(`score_genes_cell_cycle: score_genes wrote no obs column "${name}"`);
  return Float64Array.from(col.data as ArrayLike<number>);
}

/**
 * Score the cell cycle: writes obs `S_score`, `G2M_score` and `phase` (`G1` when both scores are
 * negative, else `S` or `G2M` by the higher score), as scanpy's `score_genes_cell_cycle`.
 */
export async function score_genes_cell_cycle(
  sd: SpatialData,
  params: ScoreGenesCellCycleParams,
  ctx: OpContext,
): Promise<Change> {
  if (!params.s_genes?.length || !params.g2m_genes?.length) {
    throw new Error("score_genes_cell_cycle: s_genes and g2m_genes must both name at least one gene");
  }
  // scanpy uses the smaller list's length as the control size for both scores.
  const common = {
    ctrl_size: Math.min(params.s_genes.length, params.g2m_genes.length),
    n_bins: params.n_bins ?? 25,
    random_state: params.random_state ?? 0,
    ...(params.use_raw !== undefined ? { use_raw: params.use_raw } : {}),
    ...(params.layer !== undefined ? { layer: params.layer } : {}),
  };
  const sChange = await score_genes(sd, { ...common, gene_list: params.s_genes, score_name: "S_score" }, ctx);
  const g2mChange = await score_genes(
    sd,
    { ...common, gene_list: params.g2m_genes, score_name: "G2M_score" },
    ctx,
  );
  const s = scoreOf(sChange, ctx.table, "S_score");
  const g2m = scoreOf(g2mChange, ctx.table, "G2M_score");
  // Categories sorted as pandas sorts them when anndata writes the string column: G1, G2M, S.
  const codes = new Int32Array(s.length);
  for (let i = 0; i < s.length; i++) {
    codes[i] = s[i]! < 0 && g2m[i]! < 0 ? 0 : g2m[i]! > s[i]! ? 1 : 2;
  }
  ctx.log(`score_genes_cell_cycle: added obs S_score, G2M_score, phase`);
  return {
    tables: {
      [ctx.table]: {
        obs: {
          S_score: { kind: "dense", dtype: "float64", shape: [s.length], data: s },
          G2M_score: { kind: "dense", dtype: "float64", shape: [g2m.length], data: g2m },
          phase: { kind: "categorical", codes, categories: strings(["G1", "G2M", "S"]), ordered: false },
        },
      },
    },
  };
}
