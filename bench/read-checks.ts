/**
 * What the read-time checks of a file cost (issue 22): the sparse index check (indptr from 0,
 * non-decreasing, ending at nnz; every index in range) on a real h5ad and on a generated 200,000-cell
 * CSR matrix, set beside the time the read itself takes. `npx tsx bench/read-checks.ts [file.h5ad]`.
 */
import type { SparseMatrix } from "../src/sdk/data/arrays.js";
import { loadMatrix } from "../src/sdk/data/lazy.js";
import { checkSparseIndices } from "../src/sdk/io/anndata/decode.js";
import { readH5ad } from "../src/sdk/io/anndata/read-h5ad.js";

const ms = (t0: number) => `${(performance.now() - t0).toFixed(1)} ms`;

function best(fn: () => void, runs = 5): number {
  let min = Number.POSITIVE_INFINITY;
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    fn();
    min = Math.min(min, performance.now() - t0);
  }
  return min;
}

const file =
  process.argv[2] ?? new URL("../../shared/reference/synth_10k/input.h5ad", import.meta.url).pathname;
{
  let t0 = performance.now();
  const { table } = await readH5ad(file);
  const open = ms(t0);
  t0 = performance.now();
  const X = (await loadMatrix(table.X!)) as SparseMatrix;
  const read = performance.now() - t0;
  if (X.kind === "csr" || X.kind === "csc") {
    const check = best(() => checkSparseIndices(file, X.kind, X.shape, X.indptr, X.indices, X.data.length));
    console.log(
      `${file}: ${X.kind} ${X.shape.join(" × ")}, nnz ${X.data.length}: open ${open}, read X ${read.toFixed(1)} ms (check included), the check alone ${check.toFixed(2)} ms (${((100 * check) / read).toFixed(1)}% of the read)`,
    );
  } else console.log(`${file}: X is dense; no sparse check`);
}
{
  const nCells = 200_000;
  const nGenes = 2_000;
  const perRow = 100;
  const indptr = new Int32Array(nCells + 1);
  const indices = new Int32Array(nCells * perRow);
  for (let i = 0; i < nCells; i++) {
    indptr[i + 1] = (i + 1) * perRow;
    for (let k = 0; k < perRow; k++) indices[i * perRow + k] = (k * 19 + i) % nGenes;
  }
  const check = best(() =>
    checkSparseIndices("generated", "csr", [nCells, nGenes], indptr, indices, indices.length),
  );
  console.log(
    `generated csr ${nCells} × ${nGenes}, nnz ${indices.length}: the check ${check.toFixed(1)} ms (${((1e6 * check) / indices.length).toFixed(2)} ns per stored value)`,
  );
}
