/**
 * Browser bundle entry for the serverless-reading test: opens the checkpoint next to the page over
 * HTTP Range requests and reports what it read in the page body.
 */
import { openCheckpoint, readGeneFromMirror } from "../../../../src/sdk/io/checkpoint/read.js";

(async () => {
  try {
    const url = new URL("/data.sdata.zarr.zip", location.href).href;
    const cp = await openCheckpoint(url);
    const t = cp.sdata.tables.table!;
    const gene = await readGeneFromMirror(cp, "table", "CD3E");
    const out = {
      n_obs: t.obs.index.values.length,
      first: t.obs.index.values[0],
      name: cp.sidecar.name,
      gene: Array.from(gene),
    };
    document.body.textContent = `RESULT ${JSON.stringify(out)}`;
  } catch (e) {
    document.body.textContent = `ERROR ${String((e as Error).stack ?? e)}`;
  }
})();
