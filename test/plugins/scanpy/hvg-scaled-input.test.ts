/**
 * The pipeline a newcomer runs on data that is already scaled (pbmc68k_reduced's X has negative
 * values): normalize_total, log1p, then highly_variable_genes fails with a message naming the cause
 * and the fix instead of a bare "bin edges must be unique (NaN)".
 */
import { expect, it } from "vitest";
import { highly_variable_genes } from "../../../src/plugins/scanpy/pp/highly-variable-genes.js";
import { normalize_total } from "../../../src/plugins/scanpy/pp/normalization.js";
import { log1p } from "../../../src/plugins/scanpy/pp/simple.js";
import { applyChange } from "../../../src/sdk/data/change.js";
import { makeSpatialData, type SpatialData } from "../../../src/sdk/data/spatialdata.js";
import { readH5ad } from "../../../src/sdk/io/anndata/read-h5ad.js";
import { fixture } from "../../fixtures.js";
import { makeCtx } from "./ctx.js";

it("names NaN or negative values in X and points at normalize_total and log1p", async () => {
  const { table } = await readH5ad(fixture("scanpy-pbmc68k-reduced/10x_pbmc68k_reduced.h5ad"));
  let sd: SpatialData = makeSpatialData({ tables: { table } });
  sd = applyChange(sd, await normalize_total(sd, {}, makeCtx())).sdata;
  sd = applyChange(sd, await log1p(sd, {}, makeCtx())).sdata;
  await expect(highly_variable_genes(sd, { flavor: "seurat" }, makeCtx())).rejects.toThrow(
    /X holds NaN or negative values .*sc\.pp\.normalize_total, sc\.pp\.log1p/,
  );
});
