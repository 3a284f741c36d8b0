/**
 * The dense save (issue: "saving a session whose X is dense kills the server"): a table whose X is a dense
 * float32 matrix (what `sc.pp.scale` leaves), written as a checkpoint, with the peak RSS printed beside the
 * table's resident size.
 *
 * Usage: `npm run bench:save -- [--cells 50000] [--genes 3000] [--out DIR]`.
 */
import { mkdtemp, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { dense, strings } from "../src/sdk/data/arrays.js";
import { dataFrame } from "../src/sdk/data/dataframe.js";
import { makeSpatialData } from "../src/sdk/data/spatialdata.js";
import { makeTable } from "../src/sdk/data/table.js";
import { writeCheckpoint } from "../src/sdk/io/checkpoint/write.js";

const { values } = parseArgs({
  options: {
    cells: { type: "string", default: "50000" },
    genes: { type: "string", default: "3000" },
    out: { type: "string" },
  },
});
const nObs = Number(values.cells);
const nVars = Number(values.genes);

let peak = 0;
const sampler = setInterval(() => {
  peak = Math.max(peak, process.memoryUsage.rss());
}, 20);
sampler.unref();

// Scaled data: every value non-zero, as after sc.pp.scale (a cheap hash instead of a slow RNG).
const x = new Float32Array(new SharedArrayBuffer(nObs * nVars * 4));
for (let i = 0; i < x.length; i++) x[i] = (((i * 2654435761) >>> 0) / 2 ** 32 - 0.5) * 4;
const table = makeTable({
  X: dense(x, [nObs, nVars]),
  obs: dataFrame(strings(Array.from({ length: nObs }, (_, i) => `cell${i}`))),
  var: dataFrame(strings(Array.from({ length: nVars }, (_, j) => `gene${j}`))),
});
const sd = makeSpatialData({ tables: { table } });
const mb = (b: number) => `${(b / 2 ** 20).toFixed(0)} MB`;
const before = process.memoryUsage.rss();
peak = before;
const dir = values.out ?? (await mkdtemp(join(tmpdir(), "tessera-save-bench-")));
const out = join(dir, "dense.sdata.zarr.zip");
const t0 = performance.now();
await writeCheckpoint(sd, out, {
  workDir: dir,
  onProgress: (m) =>
    console.log(
      `  ${((performance.now() - t0) / 1000).toFixed(1)} s ${m} (RSS ${mb(process.memoryUsage.rss())}, peak ${mb(peak)})`,
    ),
});
const seconds = (performance.now() - t0) / 1000;
peak = Math.max(peak, process.memoryUsage.rss());
console.log(`dense save ${nObs} × ${nVars} float32 (X ${mb(x.byteLength)})`);
console.log(`  time ${seconds.toFixed(1)} s, file ${mb((await stat(out)).size)}`);
console.log(
  `  RSS before save ${mb(before)}, peak ${mb(peak)} (${(peak / before).toFixed(2)}× the resident size)`,
);
if (!values.out) await rm(dir, { recursive: true, force: true });
