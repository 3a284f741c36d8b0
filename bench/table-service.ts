/**
 * What the memory benchmarks start from: a generated table saved as a checkpoint in `dir`, and a service on
 * `dir` with the scanpy and tessera plugins and memory admission off (they measure, they must not be refused).
 */
import { join } from "node:path";
import { makeSpatialData } from "../src/sdk/data/spatialdata.js";
import { writeCheckpointNamed } from "../src/sdk/io/checkpoint/write.js";
import { Service } from "../src/sdk/session/service.js";
import { generateLargeTable } from "./generate.js";

/** The checkpoint of a generated `cells × genes` table in `dir`, and a service on `dir`. */
export async function tableService(
  dir: string,
  cells: number,
  genes: number,
): Promise<{ path: string; service: Service }> {
  const table = generateLargeTable(cells, genes, 0);
  const { path } = await writeCheckpointNamed(makeSpatialData({ tables: { table } }), dir, "input");
  const service = await Service.start({
    env: {},
    plugins: ["scanpy", "tessera"],
    config: { dataDir: dir, workDir: join(dir, ".work"), recipesDir: join(dir, "none"), containerMemMb: 0 },
  });
  return { path, service };
}
