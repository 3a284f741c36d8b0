/**
 * Child process of the dense-save test: builds a table whose X is a dense float32 matrix (what `sc.pp.scale`
 * leaves), writes it as a checkpoint, and prints `{before, peak, xBytes}` (RSS in bytes) as JSON on stdout.
 * A separate process so the RSS measured is the save's alone.
 * Usage: `node --import tsx dense-save-child.ts CELLS GENES OUT_FILE`.
 */
import { dirname } from "node:path";
import { dense, strings } from "../../src/sdk/data/arrays.js";
import { dataFrame } from "../../src/sdk/data/dataframe.js";
import { makeSpatialData } from "../../src/sdk/data/spatialdata.js";
import { makeTable } from "../../src/sdk/data/table.js";
import { writeCheckpoint } from "../../src/sdk/io/checkpoint/write.js";

const [cells, genes, out] = process.argv.slice(2);
const nObs = Number(cells);
const nVars = Number(genes);
const x = new Float32Array(new SharedArrayBuffer(nObs * nVars * 4));
// Every value non-zero, as after scaling; a multiplicative hash is deterministic and fast.
for (let i = 0; i < x.length; i++) x[i] = (((i * 2654435761) >>> 0) / 2 ** 32 - 0.5) * 4 || 1;
const table = makeTable({
  X: dense(x, [nObs, nVars]),
  obs: dataFrame(strings(Array.from({ length: nObs }, (_, i) => `cell${i}`))),
  var: dataFrame(strings(Array.from({ length: nVars }, (_, j) => `gene${j}`))),
});
const before = process.memoryUsage.rss();
let peak = before;
const sampler = setInterval(() => {
  peak = Math.max(peak, process.memoryUsage.rss());
}, 10);
await writeCheckpoint(makeSpatialData({ tables: { table } }), out!, { workDir: dirname(out!) });
clearInterval(sampler);
peak = Math.max(peak, process.memoryUsage.rss());
process.stdout.write(JSON.stringify({ before, peak, xBytes: x.byteLength }));
