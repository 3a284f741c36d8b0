/**
 * Making sure a data dir has something to open: when it holds no dataset, the demo dataset is
 * generated (deterministic, seeded) and saved there as a checkpoint. This is what `npm start` runs.
 */
import { mkdir, readdir } from "node:fs/promises";
import { join } from "node:path";
import { writeCheckpointNamed } from "../io/checkpoint/write.js";
import { generateDemo } from "./generate.js";

const DATASET_RE = /\.(zarr|zarr\.zip|h5ad)$/i;

/** The dataset (or demo) to open in `dataDir`, and whether it was generated just now. */
export interface DemoDataset {
  path: string;
  created: boolean;
}

/**
 * Return the demo checkpoint in `dataDir` (`demo-<hash>.sdata.zarr.zip`), or any dataset already
 * there; when the folder has no dataset at all, generate the demo with `seed` and save it.
 */
export async function ensureDemoDataset(dataDir: string, seed = 0): Promise<DemoDataset> {
  await mkdir(dataDir, { recursive: true });
  const names = (await readdir(dataDir)).filter((n) => DATASET_RE.test(n) && !n.startsWith(".")).sort();
  const demo = names.find((n) => n.startsWith("demo-") && n.endsWith(".sdata.zarr.zip"));
  if (demo) return { path: join(dataDir, demo), created: false };
  if (names.length) return { path: join(dataDir, names[0]!), created: false };
  const sd = generateDemo({ seed });
  const written = await writeCheckpointNamed(sd, dataDir, "demo", { name: "demo" });
  return { path: written.path, created: true };
}
