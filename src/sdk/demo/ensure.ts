/**
 * Making sure a data dir has something to open: when it holds no dataset, the demo dataset is
 * generated (deterministic, seeded) and saved there as a checkpoint. This is what `npm start` runs.
 */
import { mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import { basename, join, resolve } from "node:path";
import { writeCheckpointNamed } from "../io/checkpoint/write.js";
import { generateDemo } from "./generate.js";

const DATASET_RE = /\.(zarr|zarr\.zip|h5ad)$/i;

/**
 * A hidden file naming the generated demo's checkpoint, so that only the demo counts as the demo: a user's own
 * save named `demo-<hash>` (the docs' first example saves with prefix `demo`) is not taken for it.
 */
const DEMO_MARKER = ".tessera-demo";

/** The dataset (or demo) to open in `dataDir`, and whether it was generated just now. */
export interface DemoDataset {
  path: string;
  created: boolean;
}

/**
 * Return the demo checkpoint in `dataDir` (the one this function generated there, named in a hidden marker
 * file), or any dataset already there; when the folder has no dataset at all, generate the demo with `seed`
 * and save it. The path is absolute.
 */
export async function ensureDemoDataset(dataDir: string, seed = 0): Promise<DemoDataset> {
  // Absolute: a path relative to the current folder would be read relative to the data dir by `open`.
  const dir = resolve(dataDir);
  await mkdir(dir, { recursive: true });
  const names = (await readdir(dir)).filter((n) => DATASET_RE.test(n) && !n.startsWith(".")).sort();
  const marked = (await readFile(join(dir, DEMO_MARKER), "utf8").catch(() => "")).trim();
  if (marked && names.includes(marked)) return { path: join(dir, marked), created: false };
  // Folders from before the marker: a `demo-…` checkpoint is taken for the demo; else any dataset.
  const legacyDemo = marked
    ? undefined
    : names.find((n) => n.startsWith("demo-") && n.endsWith(".sdata.zarr.zip"));
  const existing = legacyDemo ?? names[0];
  if (existing) return { path: join(dir, existing), created: false };
  const sd = generateDemo({ seed });
  const written = await writeCheckpointNamed(sd, dir, "demo", { name: "demo" });
  await writeFile(join(dir, DEMO_MARKER), `${basename(written.path)}\n`);
  return { path: written.path, created: true };
}
