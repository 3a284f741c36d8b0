/**
 * 10x count matrices: every h5 layout in the fixtures (Cell Ranger 1.2 per-genome PyTables, 3.0, the
 * probe-based Space Ranger 2.1 raw matrix, Xenium's R-rewritten file) and MEX folders. The h5 and the
 * MEX copy of the same Cell Ranger run are read by separate code and must agree entry for entry.
 */
import { cp, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SparseMatrix } from "../../../../src/sdk/data/arrays.js";
import { DataError } from "../../../../src/sdk/io/data-error.js";
import { openData } from "../../../../src/sdk/io/open.js";
import { makeUnique } from "../../../../src/sdk/io/vendors/tenx/counts.js";
import { readTenxH5 } from "../../../../src/sdk/io/vendors/tenx/h5-matrix.js";
import { readMex } from "../../../../src/sdk/io/vendors/tenx/mex.js";
import { fixture } from "../../../fixtures.js";
import { rowSum, xAt } from "./helpers.js";

let tmp: string;
beforeAll(async () => {
  tmp = await mkdtemp(join(tmpdir(), "tessera-10x-"));
});
afterAll(async () => {
  await rm(tmp, { recursive: true, force: true });
});

describe("10x h5", () => {
  it("Cell Ranger 3.0: 1,107 barcodes × 507 features, equal to its MEX copy entry for entry", async () => {
    const h5 = await readTenxH5(fixture("scanpy-10x/3.0.0/filtered_feature_bc_matrix.h5"));
    expect(h5.layout).toBe("v3");
    const mex = await readMex(fixture("scanpy-10x/3.0.0/filtered_feature_bc_matrix"));
    const a = h5.table.X as SparseMatrix;
    const b = mex.table.X as SparseMatrix;
    expect(a.shape).toEqual([1107, 507]);
    expect(b.shape).toEqual([1107, 507]);
    expect(a.data.length).toBe(23866);
    expect(Array.from(a.indptr)).toEqual(Array.from(b.indptr));
    expect(Array.from(a.indices)).toEqual(Array.from(b.indices));
    expect(Array.from(a.data as Float32Array)).toEqual(Array.from(b.data as Float32Array));
    expect(h5.table.obs.index.values).toEqual(mex.table.obs.index.values);
    expect(h5.table.var.index.values).toEqual(mex.table.var.index.values);
    expect(h5.table.obs.index.values[0]).toBe("AAACCCAAGGAGAGTA-1");
  });

  it("Cell Ranger 1.2: per-genome group (12 × 343), equal to the MEX folder; several genomes need a choice", async () => {
    const h5 = await readTenxH5(fixture("scanpy-10x/1.2.0/filtered_gene_bc_matrices_h5.h5"));
    expect(h5.layout).toBe("legacy");
    const mex = await readMex(fixture("scanpy-10x/1.2.0/filtered_gene_bc_matrices/hg19_chr21"));
    expect((h5.table.X as SparseMatrix).shape).toEqual([12, 343]);
    for (let r = 0; r < 12; r++)
      for (let c = 0; c < 343; c++) expect(xAt(h5.table, r, c)).toBe(xAt(mex.table, r, c));
    expect(h5.table.var.index.values.slice(0, 3)).toEqual(["DSCAM", "MIR99AHG", "APP"]);
    await expect(readTenxH5(fixture("scanpy-10x/1.2.0/multiple_genomes.h5"))).rejects.toThrow(
      /several genomes \(another_genome, hg19_chr21\); choose one with genome/,
    );
    const other = await readTenxH5(fixture("scanpy-10x/1.2.0/multiple_genomes.h5"), {
      genome: "another_genome",
    });
    expect((other.table.X as SparseMatrix).shape).toEqual([12, 343]);
  });

  it("probe-based Space Ranger 2.1 raw matrix: 4,987 × 1,000 probes with gene and filter columns", async () => {
    const r = await readTenxH5(fixture("scanpy-visium/2.1.0/raw_probe_bc_matrix.h5"));
    const X = r.table.X as SparseMatrix;
    expect(X.shape).toEqual([4987, 1000]);
    expect(X.data.length).toBe(858);
    expect(r.table.var.index.values[0]).toBe("Itgb2l|2ef1e7b");
    expect(r.table.var.columnOrder).toEqual(
      expect.arrayContaining(["gene_ids", "gene_id", "gene_name", "probe_region", "filtered_probes"]),
    );
    expect(r.table.obs.columnOrder).toContain("filtered_barcodes");
  });

  it("Xenium's R-rewritten h5: gene expression only by default (27 of 30), all with gexOnly false", async () => {
    const r = await readTenxH5(fixture("sfe-toy/xenium/cell_feature_matrix.h5"));
    expect((r.table.X as SparseMatrix).shape).toEqual([526, 27]);
    expect(r.warnings.join()).toMatch(/kept the 27 Gene Expression features of 30/);
    const all = await readTenxH5(fixture("sfe-toy/xenium/cell_feature_matrix.h5"), { gexOnly: false });
    expect((all.table.X as SparseMatrix).shape).toEqual([526, 30]);
    // Dropping the control features keeps every gene count of a cell.
    const aktAll = all.table.var.index.values.indexOf("AKT1");
    expect(xAt(r.table, 0, 0)).toBe(xAt(all.table, 0, aktAll));
    expect(rowSum(r.table, 0)).toBeLessThanOrEqual(rowSum(all.table, 0));
  });

  it("openData reads a 10x h5 file and a MEX folder as table-only objects", async () => {
    expect((await openData(fixture("scanpy-10x/3.0.0/filtered_feature_bc_matrix.h5"))).format).toBe("10x-h5");
    expect((await openData(fixture("scanpy-10x/int-ids"))).format).toBe("10x-mtx");
  });

  it("a MEX folder whose matrix is cut short, or an h5 that is not a 10x matrix, is a DataError naming the file", async () => {
    const dir = join(tmp, "mex");
    await cp(fixture("scanpy-10x/1.2.0/filtered_gene_bc_matrices/hg19_chr21"), dir, { recursive: true });
    const mtx = "%%MatrixMarket matrix coordinate integer general\n343 12 12\n1 1 1\n";
    await writeFile(join(dir, "matrix.mtx"), mtx);
    const err = await readMex(dir).catch((e) => e);
    expect(err).toBeInstanceOf(DataError);
    expect(err.message).toMatch(
      /matrix\.mtx: 1 entries, the header declares 12 \(the file may be truncated\)/,
    );
    await expect(readTenxH5(fixture("squidpy-tests/test_data.h5ad"))).rejects.toThrow(/not a 10x h5 matrix/);
  });

  it("duplicate gene names are made unique as anndata does", () => {
    expect(makeUnique(["A", "B", "A", "A", "A-1"]).names).toEqual(["A", "B", "A-2", "A-3", "A-1"]);
  });
});
