// The example's own tests (node:test, run by `npm test` after `tessera plugin build`): each operation
// on a small table whose answers are known by hand.
import assert from "node:assert/strict";
import { test } from "node:test";
import { dataFrame, dense, makeSpatialData, makeTable, Rng } from "tessera-omics/plugin";
import { flag_low_counts, top_genes } from "../qc.js";

// 4 cells × 3 genes; row sums 3, 12, 0, 30; column means 3.5, 2.5, 5.25.
const X = dense(new Float32Array([1, 1, 1, 4, 4, 4, 0, 0, 0, 9, 5, 16]), [4, 3]);
const sd = makeSpatialData({
  tables: {
    table: makeTable({ X, obs: dataFrame(["c1", "c2", "c3", "c4"]), var: dataFrame(["A", "B", "C"]) }),
  },
});
const ctx = {
  table: "table",
  signal: new AbortController().signal,
  rng: new Rng(0),
  threads: 1,
  progress() {},
  log() {},
};

test("flag_low_counts flags the cells under min_counts", async () => {
  const change = await flag_low_counts(sd, { min_counts: 10, key_added: "low" }, ctx);
  assert.deepEqual(Array.from(change.tables.table.obs.low.data), [1, 0, 1, 0]);
});

test("top_genes lists the genes by mean, highest first", async () => {
  assert.deepEqual(await top_genes(sd, { n_top: 2 }, ctx), [
    { gene: "C", mean: 5.25 },
    { gene: "A", mean: 3.5 },
  ]);
});
