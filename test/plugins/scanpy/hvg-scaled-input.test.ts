/**
 * The pipeline a newcomer runs on data that is already scaled (pbmc68k_reduced's X has negative
 * values): normalize_total and log1p refuse it at once, naming the negative values and what they
 * expect; highly_variable_genes on it fails with a message naming the cause and the fix instead of a
 * bare "bin edges must be unique (NaN)".
 */
import { expect, it } from "vitest";
import { highly_variable_genes } from "../../../src/plugins/scanpy/pp/highly-variable-genes.js";
import { normalize_total } from "../../../src/plugins/scanpy/pp/normalization.js";
import { log1p } from "../../../src/plugins/scanpy/pp/simple.js";
import type { Matrix } from "../../../src/sdk/data/arrays.js";
import { loadMatrix } from "../../../src/sdk/data/lazy.js";
import { makeSpatialData, type SpatialData } from "../../../src/sdk/data/spatialdata.js";
import { readH5ad } from "../../../src/sdk/io/anndata/read-h5ad.js";
import { fixture } from "../../fixtures.js";
import { makeCtx } from "./ctx.js";

it("names NaN or negative values in X and points at normalize_total and log1p", async () => {
  const { table } = await readH5ad(fixture("scanpy-pbmc68k-reduced/10x_pbmc68k_reduced.h5ad"));
  const sd: SpatialData = makeSpatialData({ tables: { table } });
  await expect(normalize_total(sd, {}, makeCtx())).rejects.toThrow(
    /^normalize_total: X has negative values \(min -[\d.]+\): it looks already scaled or log-transformed; normalize_total expects counts/,
  );
  await expect(log1p(sd, {}, makeCtx())).rejects.toThrow(
    /^log1p: X has negative values \(min -[\d.]+\): .*run it before sc\.pp\.scale/,
  );
  // NaN where X was negative (what normalize_total and log1p used to make of it): highly_variable_genes
  // names the cause.
  const x = await loadMatrix(table.X!);
  const nan: Matrix = {
    ...x,
    data: Float32Array.from(x.data as Float32Array, (v) => (v < 0 ? Number.NaN : v)),
  };
  const logged = makeSpatialData({ tables: { table: { ...table, X: nan } } });
  await expect(highly_variable_genes(logged, { flavor: "seurat" }, makeCtx())).rejects.toThrow(
    /X holds NaN or negative values .*sc\.pp\.normalize_total, sc\.pp\.log1p/,
  );
});

it("names the layer it read", async () => {
  const { table } = await readH5ad(fixture("scanpy-pbmc68k-reduced/10x_pbmc68k_reduced.h5ad"));
  const sd: SpatialData = makeSpatialData({ tables: { table: { ...table, layers: { scaled: table.X! } } } });
  await expect(normalize_total(sd, { layer: "scaled" }, makeCtx())).rejects.toThrow(
    /^normalize_total: layers\/scaled has negative values/,
  );
});
