/**
 * `npm run interop`: does what Tessera writes open in the real Python stack?
 *
 * Every convertible fixture of `../shared/data` (the list in `test/fixture-cases.ts`), and the files the real
 * anndata/h5py wrote for this repository's tests (`test/data`: LZF h5ad, sparse obsm, an unconsolidated zip), is
 * opened with Tessera,
 * written as a checkpoint (`.sdata.zarr.zip`), unzipped, and AnnData fixtures are also written as plain AnnData
 * zarr. Then `check.py`, run by the scverse venv's Python, opens each result with `spatialdata.read_zarr`,
 * `anndata.read_zarr` and zarr-python's `ZipStore`, and compares element names, shapes, obs/var columns and a
 * sample of values with what Tessera read from the source.
 *
 * Not part of `npm test`: the venv is not on a fresh machine. Install it with
 * `../shared/tools/scverse/install.sh` (Python found at `$SCVERSE_PYTHON`, else `/tmp/scverse/venv/bin/python`).
 * Usage: `npm run interop [-- --keep] [-- NAME_FILTER]`.
 */
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { inventory } from "../../src/sdk/data/inventory.js";
import { writeAnnDataZarr } from "../../src/sdk/io/anndata/write.js";
import { writeCheckpoint } from "../../src/sdk/io/checkpoint/write.js";
import { openData } from "../../src/sdk/io/open.js";
import { FsStore } from "../../src/sdk/io/store/fs-store.js";
import { consolidateV3 } from "../../src/sdk/io/zarr/consolidated.js";
import { CONVERTIBLE_FIXTURES } from "../../test/fixture-cases.js";
import { extractZip } from "./extract-zip.js";
import { valueSamples } from "./samples.js";

const HERE = dirname(fileURLToPath(import.meta.url));
const SHARED_DATA = resolve(HERE, "../../../shared/data");
/** Files made by the real anndata/h5py for this repository's tests (`scripts/fixtures/`), converted too. */
const REPO_DATA = resolve(HERE, "../../test/data");
const REPO_FIXTURES: readonly (readonly [string, string])[] = [
  ["h5/lzf.h5ad", "anndata-h5ad"],
  ["h5/gzip.h5ad", "anndata-h5ad"],
  ["anndata-sparse-obsm/sparse-obsm.h5ad", "anndata-h5ad"],
  ["anndata-sparse-obsm/sparse-obsm.zarr", "anndata-zarr"],
  ["zarr-zip/anndata-v2-unconsolidated.zarr.zip", "anndata-zarr"],
];
const PYTHON = process.env.SCVERSE_PYTHON ?? "/tmp/scverse/venv/bin/python";

/** One converted fixture, as `check.py` reads it from the manifest. */
interface Case {
  name: string;
  format: string;
  zip: string;
  folder: string;
  /** Plain AnnData zarr folders written for AnnData inputs: table name → folder. */
  anndata: Record<string, string>;
  expected: { inventory: unknown; samples: unknown };
}

async function main(): Promise<number> {
  const args = process.argv.slice(2);
  const keep = args.includes("--keep");
  const filter = args.find((a) => !a.startsWith("--"));
  if (!existsSync(PYTHON)) {
    console.error(
      `interop: no Python at ${PYTHON}. Run ../shared/tools/scverse/install.sh first, or set SCVERSE_PYTHON.`,
    );
    return 2;
  }
  const out = await mkdtemp(join(tmpdir(), "tessera-interop-"));
  const cases: Case[] = [];
  let failedToWrite = 0;
  try {
    const all = [
      ...CONVERTIBLE_FIXTURES.map(([rel, format]) => [rel, format, join(SHARED_DATA, rel)] as const),
      ...REPO_FIXTURES.map(([rel, format]) => [`test/data/${rel}`, format, join(REPO_DATA, rel)] as const),
    ];
    for (const [rel, format, input] of all) {
      if (filter && !rel.includes(filter)) continue;
      const slug = rel.replace(/[^a-z0-9]+/gi, "_");
      try {
        const { sdata } = await openData(input);
        const zip = join(out, `${slug}.sdata.zarr.zip`);
        await writeCheckpoint(sdata, zip, { workDir: out });
        const folder = join(out, `${slug}.sdata.zarr`);
        await extractZip(zip, folder);
        const anndata: Record<string, string> = {};
        if (format.startsWith("anndata") || format === "mudata-zarr") {
          for (const [name, table] of Object.entries(sdata.tables)) {
            const dir = join(out, `${slug}.${name}.zarr`);
            await mkdir(dir, { recursive: true });
            const store = new FsStore(dir);
            await writeAnnDataZarr(table, store, "/");
            await consolidateV3(store);
            anndata[name] = dir;
          }
        }
        cases.push({
          name: rel,
          format,
          zip,
          folder,
          anndata,
          expected: { inventory: inventory(sdata), samples: await valueSamples(sdata) },
        });
      } catch (err) {
        failedToWrite++;
        console.log(`FAIL ${rel}: Tessera could not convert it: ${(err as Error).message}`);
      }
    }
    const manifest = join(out, "manifest.json");
    await writeFile(manifest, JSON.stringify(cases, null, 1));
    const run = spawnSync(PYTHON, [join(HERE, "check.py"), manifest], { stdio: "inherit" });
    if (run.error) throw run.error;
    if (keep) console.log(`kept ${out}`);
    return run.status === 0 && failedToWrite === 0 ? 0 : 1;
  } finally {
    if (!keep) await rm(out, { recursive: true, force: true });
  }
}

process.exitCode = await main();
