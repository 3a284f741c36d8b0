/**
 * Tessera's own spatial functions (`custom.*`, tessera-spatial) on the peers' generated data: seconds
 * per call on the main thread. No peer has these functions, so there is no reference time; the figures
 * say what a call costs at 50k (and 200k) cells.
 *
 *   npx tsx bench/spatial-custom.ts [--sizes 50k,200k] [--data /tmp/bench-data] [--n-perm 100]
 *
 * Data: `synth_{50k,200k}.h5ad` from ../shared/bench/gen_data.py (obs `cell_type`, 12 types; `domain`,
 * 8 domains, used as regions; obsm `spatial`). X is normalised and log1p'd first (for the Kruskal
 * test, on all genes). A benchmark prints figures; it never passes or fails.
 */
import { existsSync } from "node:fs";
import { loadavg } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { normalize_total } from "../src/plugins/scanpy/pp/normalization.js";
import { log1p } from "../src/plugins/scanpy/pp/simple.js";
import { infiltration_profile, region_boundary } from "../src/plugins/spatial/boundary.js";
import { region_composition } from "../src/plugins/spatial/composition.js";
import { proximity_test } from "../src/plugins/spatial/proximity.js";
import { region_feature_kruskal } from "../src/plugins/spatial/region-kruskal.js";
import { cellular_neighborhoods, identify_regions_leiden } from "../src/plugins/spatial/regions.js";
import { identify_tmas } from "../src/plugins/spatial/tma.js";
import { applyChange, type Change } from "../src/sdk/data/change.js";
import { makeSpatialData, type SpatialData } from "../src/sdk/data/spatialdata.js";
import { readH5ad } from "../src/sdk/io/anndata/read-h5ad.js";
import { benchCtx } from "./context.js";

const { values } = parseArgs({
  options: {
    sizes: { type: "string", default: "50k" },
    data: { type: "string", default: "/tmp/bench-data" },
    "n-perm": { type: "string", default: "100" },
  },
});
const nPerm = Number(values["n-perm"]);

async function timed(label: string, sd: SpatialData, run: () => Promise<Change>): Promise<SpatialData> {
  const t0 = performance.now();
  const change = await run();
  const s = (performance.now() - t0) / 1000;
  console.log(`  ${label.padEnd(48)} ${s.toFixed(2).padStart(8)} s`);
  return applyChange(sd, change).sdata;
}

for (const size of values.sizes!.split(",")) {
  const path = join(values.data!, `synth_${size}.h5ad`);
  if (!existsSync(path)) {
    console.log(`${size}: ${path} missing (python ../shared/bench/gen_data.py ${size} --out ${values.data})`);
    continue;
  }
  const { table } = await readH5ad(path);
  let sd = makeSpatialData({ tables: { table } });
  const ctx = benchCtx();
  sd = applyChange(sd, await normalize_total(sd, {}, ctx)).sdata;
  sd = applyChange(sd, await log1p(sd, {}, ctx)).sdata;
  const n = sd.tables.table!.obs.index.values.length;
  console.log(`${size}: ${n} cells (load average ${loadavg()[0]!.toFixed(1)} on this machine's cores)`);
  sd = await timed("identify_regions_leiden (15-NN, resolution 1)", sd, () =>
    identify_regions_leiden(sd, {}, ctx),
  );
  sd = await timed("cellular_neighborhoods (k 20, resolution 0.1)", sd, () =>
    cellular_neighborhoods(sd, { cell_type_key: "cell_type" }, ctx),
  );
  sd = await timed("region_composition (domain × cell_type)", sd, () =>
    region_composition(sd, { region_key: "domain", cell_type_key: "cell_type" }, ctx),
  );
  sd = await timed("region_feature_kruskal (all genes, 12 types)", sd, () =>
    region_feature_kruskal(sd, { region_key: "domain", cell_type_key: "cell_type" }, ctx),
  );
  sd = await timed(`proximity_test (median, ${nPerm} permutations)`, sd, () =>
    proximity_test(sd, { cluster_key: "cell_type", n_perm: nPerm }, ctx),
  );
  const first = (sd.tables.table!.obs.columns.cell_type as unknown as { categories: { values: string[] } })
    .categories.values[0]!;
  sd = await timed(`region_boundary (mask, region_types [${first}])`, sd, () =>
    region_boundary(sd, { cell_type_key: "cell_type", region_types: [first] }, ctx),
  );
  sd = await timed("infiltration_profile (20 bins)", sd, () =>
    infiltration_profile(sd, { cell_type_key: "cell_type" }, ctx),
  );
  sd = await timed("identify_tmas (gaps, auto rows and columns)", sd, () => identify_tmas(sd, {}, ctx));
}
