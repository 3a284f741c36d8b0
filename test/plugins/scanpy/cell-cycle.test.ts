import { describe, expect, it } from "vitest";
import { score_genes, score_genes_cell_cycle } from "../../../src/plugins/scanpy/tl/score-genes.js";
import { applyChange } from "../../../src/sdk/data/change.js";
import { columnValue } from "../../../src/sdk/data/dataframe.js";
import { generateDemo } from "../../../src/sdk/demo/generate.js";
import { makeCtx } from "./ctx.js";

describe("score_genes_cell_cycle", () => {
  const sd = generateDemo({ nCells: 300, imageSize: 256, nTranscripts: 1000 });
  const genes = sd.tables.table!.var.index.values as string[];
  const sGenes = genes.slice(10, 16);
  const g2mGenes = genes.slice(40, 48);

  it("writes S_score and G2M_score equal to score_genes with the shared control size, and the phase rule", async () => {
    const change = await score_genes_cell_cycle(sd, { s_genes: sGenes, g2m_genes: g2mGenes }, makeCtx());
    const t = applyChange(sd, change).sdata.tables.table!;
    const s = await score_genes(sd, { gene_list: sGenes, score_name: "S_score", ctrl_size: 6 }, makeCtx());
    const sWant = applyChange(sd, s).sdata.tables.table!.obs.columns.S_score!;
    for (let i = 0; i < 300; i++) expect(columnValue(t.obs.columns.S_score!, i)).toBe(columnValue(sWant, i));
    for (let i = 0; i < 300; i++) {
      const sv = columnValue(t.obs.columns.S_score!, i) as number;
      const gv = columnValue(t.obs.columns.G2M_score!, i) as number;
      const want = sv < 0 && gv < 0 ? "G1" : gv > sv ? "G2M" : "S";
      expect(columnValue(t.obs.columns.phase!, i)).toBe(want);
    }
  });

  it("refuses empty gene lists", async () => {
    await expect(score_genes_cell_cycle(sd, { s_genes: [], g2m_genes: g2mGenes }, makeCtx())).rejects.toThrow(
      /at least one gene/,
    );
  });
});
