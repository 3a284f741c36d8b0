/**
 * `npm run interop`: does what Tessera writes open in the real Python stack?
 *
 * Every convertible fixture of `../shared/data` (the list in `test/fixture-cases.ts`), and the files the real
 * anndata/h5py wrote for this repository's tests (`test/data`: LZF h5ad, sparse obsm, an unconsolidated zip), is
 * opened with Tessera,
 * written as a checkpoint (`.sdata.zarr.zip`), unzipped, and AnnData fixtures are also written as plain AnnData
 * zarr; instrument folders (Visium, Xenium, MERSCOPE, CosMx) and 10x matrices go through their readers first.
 * Then `check.py`, run by the scverse venv's Python, opens each result with `spatialdata.read_zarr`,
 * `anndata.read_zarr` and zarr-python's `ZipStore`, and compares element names, shapes, obs/var columns and a
 * sample of values with what Tessera read from the source.
 *
 * Not part of `npm test`: the venv is not on a fresh machine. Install it with
 * `../shared/tools/scverse/install.sh` (Python found at `$SCVERSE_PYTHON`, else `/tmp/scverse/venv/bin/python`).
 * Also the demo with a shape `annotations` element carrying every style field (each column compared).
 * Usage: `npm run interop [-- --keep] [-- NAME_FILTER]`.
 */
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { inventory } from "../../src/sdk/data/inventory.js";
import {
  ANNOTATIONS_ELEMENT,
  parseShapeAnnotation,
  readShapeAnnotations,
  shapeAnnotationsElement,
} from "../../src/sdk/data/shape-annotations.js";
import { withElement } from "../../src/sdk/data/spatialdata.js";
import { generateDemo } from "../../src/sdk/demo/generate.js";
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
/**
 * Instrument output folders and 10x matrices of `../shared/data`, read by the vendor readers (`openData`
 * recognises each by what it holds), converted like the others.
 */
const VENDOR_FIXTURES: readonly (readonly [string, string])[] = [
  ["scanpy-visium/1.0.0", "visium"],
  ["sfe-visium-toy/sample01/outs", "visium"],
  ["sfe-toy/xenium", "xenium"],
  ["sfe-toy/vizgen_cellbound", "merscope"],
  ["sfe-toy/cosmx", "cosmx"],
  ["scanpy-10x/3.0.0/filtered_feature_bc_matrix", "10x-mtx"],
  ["scanpy-10x/3.0.0/filtered_feature_bc_matrix.h5", "10x-h5"],
  ["scanpy-10x/1.2.0/filtered_gene_bc_matrices_h5.h5", "10x-h5"],
  ["scanpy-visium/2.1.0/raw_probe_bc_matrix.h5", "10x-h5"],
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
  /** For the shape annotations case: each row of the `annotations` element as Tessera reads it back. */
  annotations?: Record<string, unknown>[];
}

/** The demo with an `annotations` element holding every kind with non-default styles, as a case. */
async function annotationsCase(out: string): Promise<Case> {
  const sd0 = generateDemo({ nCells: 60, nGenes: 30, imageSize: 96, nTranscripts: 50 });
  const bodies: Record<string, unknown>[] = [
    { kind: "line", points: [[1, 2], [30, 40], [50, 10]], dash: "dashed", arrow_start: true, arrow_size: 18, stroke_z: -2 },
    { kind: "arrow", points: [[5, 5], [20, 25]], color: "#ff00ff", dash: "dotted" },
    { kind: "box", points: [[5, 5], [25, 15]], fill: "#00ff00", fill_alpha: 0.6, fill_z: -1, text: "band" },
    { kind: "ellipse", points: [[40, 40], [60, 50]], rotation: 30, fill: "#123456", stroke_z: 4 },
    { kind: "polygon", points: [[0, 0], [20, 0], [10, 20]], stroke_width: 3.5 },
    { kind: "text", points: [[70, 70]], text: "look here", font_size: 12.5 },
  ];
  const shapes = bodies.map((b, i) => parseShapeAnnotation(b, `shape-${i}`));
  const el = shapeAnnotationsElement(sd0, "table", shapes);
  if (!el) throw new Error("no annotations element");
  const sdata = withElement(sd0, "shapes", ANNOTATIONS_ELEMENT, el);
  const zip = join(out, "tessera_annotations.sdata.zarr.zip");
  await writeCheckpoint(sdata, zip, { workDir: out });
  const folder = join(out, "tessera_annotations.sdata.zarr");
  await extractZip(zip, folder);
  const back = (await openData(zip)).sdata;
  return {
    name: "tessera/annotations (demo + every shape style)",
    format: "checkpoint",
    zip,
    folder,
    anndata: {},
    expected: { inventory: inventory(back), samples: await valueSamples(back) },
    annotations: readShapeAnnotations(back).map(({ points, rotation, ...rest }) => ({
      ...rest,
      points: JSON.stringify(points),
      rotation: rotation ?? 0,
    })),
  };
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
      ...VENDOR_FIXTURES.map(([rel, format]) => [rel, format, join(SHARED_DATA, rel)] as const),
    ];
    const vendor = new Set(VENDOR_FIXTURES.map(([rel]) => rel));
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
        // An instrument folder's reader gives single-level images that the checkpoint writer gives a
        // pyramid: what Python must find is the checkpoint as Tessera reads it back, with the same
        // elements as the folder gave.
        let expectedOf = sdata;
        if (vendor.has(rel)) {
          expectedOf = (await openData(zip)).sdata;
          const names = (x: typeof sdata) =>
            JSON.stringify(
              (["images", "labels", "points", "shapes", "tables"] as const).map((k) => Object.keys(x[k]).sort()),
            );
          if (names(expectedOf) !== names(sdata))
            throw new Error(`the checkpoint re-opens with ${names(expectedOf)}, the folder gave ${names(sdata)}`);
        }
        cases.push({
          name: rel,
          format,
          zip,
          folder,
          anndata,
          expected: { inventory: inventory(expectedOf), samples: await valueSamples(expectedOf) },
        });
      } catch (err) {
        failedToWrite++;
        console.log(`FAIL ${rel}: Tessera could not convert it: ${(err as Error).message}`);
      }
    }
    // Shape annotations with every style field (client.md 10.3), on the demo: spatialdata must open the
    // `annotations` element and find each column with the values Tessera stored.
    if (!filter || "annotations".includes(filter)) {
      try {
        cases.push(await annotationsCase(out));
      } catch (err) {
        failedToWrite++;
        console.log(`FAIL tessera/annotations: ${(err as Error).message}`);
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
