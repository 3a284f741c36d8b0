/**
 * Child process of the killed-save test: writes a generated table (CELLS × GENES, dense float32) as a checkpoint
 * at OUT, staging in WORK_DIR, and prints `writing` once the save has started. The parent kills it with SIGKILL
 * at chosen moments. Usage: `node --import tsx save-child.ts OUT WORK_DIR CELLS GENES`.
 */
import { dense, strings } from "../../src/sdk/data/arrays.js";
import { dataFrame } from "../../src/sdk/data/dataframe.js";
import { makeSpatialData } from "../../src/sdk/data/spatialdata.js";
import { makeTable } from "../../src/sdk/data/table.js";
import { writeCheckpoint } from "../../src/sdk/io/checkpoint/write.js";

const [out, workDir, cells, genes] = process.argv.slice(2);
const nObs = Number(cells);
const nVars = Number(genes);
const x = new Float32Array(nObs * nVars);
for (let i = 0; i < x.length; i++) x[i] = (((i * 2654435761) >>> 0) / 2 ** 32 - 0.5) * 4;
const table = makeTable({
  X: dense(x, [nObs, nVars]),
  obs: dataFrame(strings(Array.from({ length: nObs }, (_, i) => `cell${i}`))),
  var: dataFrame(strings(Array.from({ length: nVars }, (_, j) => `gene${j}`))),
});
process.stdout.write("writing\n");
await writeCheckpoint(makeSpatialData({ tables: { table } }), out!, { workDir: workDir!, name: "killed" });
process.stdout.write("done\n");
