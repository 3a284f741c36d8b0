/**
 * `tessera start` (what `npm start` runs): until the HTTP service exists it makes sure the demo
 * dataset is in the data dir and prints its inventory.
 */

import { inventory } from "../../sdk/data/inventory.js";
import { ensureDemoDataset } from "../../sdk/demo/ensure.js";
import { openData } from "../../sdk/io/open.js";
import { readConfig } from "../../sdk/session/config.js";
import { formatInventory } from "./format-inventory.js";

/** Prepare the demo dataset and print its inventory. */
export async function startCommand(): Promise<void> {
  const { dataDir } = readConfig();
  const { path, created } = await ensureDemoDataset(dataDir);
  process.stdout.write(`${created ? "generated" : "found"} demo dataset ${path}\n`);
  const { sdata } = await openData(path);
  process.stdout.write(formatInventory(path, inventory(sdata)));
  process.stdout.write(
    "The HTTP service is not built yet: this command only prints the demo dataset's inventory.\n",
  );
}
