/**
 * Vendor reader benchmark: the Xenium fixture (sfe-toy/xenium, 526 cells, 5,260 transcripts) replicated
 * by tiling into a temp folder — `--tiles` copies of the cells on a grid (default 950 → ≈ 500,000 cells,
 * with their boundaries and counts) and `--tx-copies` copies of each tile's transcripts (default 10 →
 * ≈ 50 M transcripts) — then read three ways, printing wall time and peak RSS:
 *
 * 1. `readXenium` (the SDK reader: table, circles, boundaries, columnar transcripts, image metadata);
 * 2. the same without transcripts;
 * 3. time to first draw ready: a service session created with `kind: "load"` on the folder until it is
 *    ready (cells, obsm `spatial` and the image's info available).
 *
 * Run: `npx tsx --expose-gc bench/readers.ts [--tiles N] [--tx-copies N] [--work DIR] [--keep] [--reuse]`
 * (`--reuse` with `--work`: read the folder a previous `--keep` run generated there, without regenerating).
 * The morphology image is the fixture's (237 px); only tables, shapes and points are replicated.
 * Prints wall time, CPU seconds of the whole process (its worker threads included: the session's parse
 * runs on a job worker), peak RSS and the main thread's longest event-loop stall (what a request
 * waiting on the server would feel); never passes or fails.
 */

import { createWriteStream, existsSync } from "node:fs";
import { cp, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { monitorEventLoopDelay, performance } from "node:perf_hooks";
import { parseArgs } from "node:util";
import { fileWriter, ParquetWriter, parquetWriteFile, schemaFromColumnData } from "hyparquet-writer";
import { nRows } from "../src/sdk/data/dataframe.js";
import { pointsCount, shapesCount } from "../src/sdk/data/elements.js";
import { numericColumn, readFrameFile, textColumn } from "../src/sdk/io/vendors/frame-file.js";
import { readTenxH5 } from "../src/sdk/io/vendors/tenx/h5-matrix.js";
import { readXenium } from "../src/sdk/io/vendors/xenium/read.js";
import { Service } from "../src/sdk/session/service.js";
import { fixture } from "../test/fixtures.js";

const { values: args } = parseArgs({
  options: {
    tiles: { type: "string", default: process.env.BENCH_TILES ?? "950" },
    "tx-copies": { type: "string", default: process.env.BENCH_TX_COPIES ?? "10" },
    work: { type: "string" },
    keep: { type: "boolean", default: false },
    reuse: { type: "boolean", default: false },
  },
});
const TILES = Number(args.tiles);
const TX_COPIES = Number(args["tx-copies"]);
const SRC = fixture("sfe-toy/xenium");
/** Tile pitch in microns (the toy's cells span ≈ 410 µm). */
const PITCH = 450;

/** Peak RSS while `fn` runs, sampled every 20 ms, with its wall time. */
async function measure<T>(label: string, fn: () => Promise<T>): Promise<T> {
  (globalThis as { gc?: () => void }).gc?.();
  let peak = process.memoryUsage().rss;
  const timer = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().rss);
  }, 20);
  const loop = monitorEventLoopDelay({ resolution: 10 });
  loop.enable();
  const t0 = performance.now();
  const c0 = process.cpuUsage();
  try {
    const r = await fn();
    const s = (performance.now() - t0) / 1000;
    const c = process.cpuUsage(c0);
    const cpu = (c.user + c.system) / 1e6;
    peak = Math.max(peak, process.memoryUsage().rss);
    loop.disable();
    console.log(
      `${label.padEnd(44)} ${s.toFixed(2).padStart(8)} s wall ${cpu.toFixed(2).padStart(8)} s CPU   peak RSS ${(peak / 2 ** 20).toFixed(0).padStart(6)} MiB   event-loop max ${(loop.max / 1e6).toFixed(0)} ms`,
    );
    return r;
  } finally {
    clearInterval(timer);
    loop.disable();
  }
}

/** Tiles written per row group of the chunked files. */
const TILES_PER_GROUP = 20;

type ColumnSource = { name: string; data: unknown; type: string };

/** Write a parquet file a group of tiles at a time: `make(k0, k1)` gives the columns of tiles k0…k1−1. */
async function writeChunked(
  filename: string,
  tiles: number,
  make: (k0: number, k1: number) => ColumnSource[],
): Promise<void> {
  let pq: ParquetWriter | null = null;
  for (let k0 = 0; k0 < tiles; k0 += TILES_PER_GROUP) {
    const columnData = make(k0, Math.min(tiles, k0 + TILES_PER_GROUP)) as never;
    pq ??= new ParquetWriter({ writer: fileWriter(filename), schema: schemaFromColumnData({ columnData }) });
    pq.write({ columnData, rowGroupSize: Number.MAX_SAFE_INTEGER });
  }
  pq?.finish();
}

async function generate(dir: string): Promise<{ cells: number; transcripts: number }> {
  const cells = await readFrameFile(join(SRC, "cells.parquet"), { textColumns: ["cell_id"] });
  const ids = textColumn(cells, "cell_id");
  const n = ids.length;
  const cols = TILES;
  const grid = Math.ceil(Math.sqrt(cols));
  const off = (k: number): [number, number] => [(k % grid) * PITCH, Math.floor(k / grid) * PITCH];
  const tileId = (id: string, k: number) => (k === 0 ? id : `${id.slice(0, -2)}t${k}-1`);

  // cells.parquet
  const N = n * TILES;
  const cellIds = new Array<string>(N);
  const cx = new Float64Array(N);
  const cy = new Float64Array(N);
  const area = new Float64Array(N);
  const x0 = numericColumn(cells, "x_centroid");
  const y0 = numericColumn(cells, "y_centroid");
  const a0 = numericColumn(cells, "cell_area");
  for (let k = 0; k < TILES; k++) {
    const [dx, dy] = off(k);
    for (let i = 0; i < n; i++) {
      const j = k * n + i;
      cellIds[j] = tileId(ids[i]!, k);
      cx[j] = x0[i]! + dx;
      cy[j] = y0[i]! + dy;
      area[j] = a0[i]!;
    }
  }
  parquetWriteFile({
    filename: join(dir, "cells.parquet"),
    columnData: [
      { name: "cell_id", data: cellIds, type: "STRING" },
      { name: "x_centroid", data: cx, type: "DOUBLE" },
      { name: "y_centroid", data: cy, type: "DOUBLE" },
      { name: "cell_area", data: area, type: "DOUBLE" },
    ],
  });

  // boundaries: one write per group of tiles (row groups as the file grows; no array of the whole file).
  for (const f of ["cell_boundaries", "nucleus_boundaries"]) {
    const b = await readFrameFile(join(SRC, `${f}.parquet`), { textColumns: ["cell_id"] });
    const bid = textColumn(b, "cell_id");
    const bx = numericColumn(b, "vertex_x");
    const by = numericColumn(b, "vertex_y");
    const m = bid.length;
    await writeChunked(join(dir, `${f}.parquet`), TILES, (k0, k1) => {
      const rows = (k1 - k0) * m;
      const outId = new Array<string>(rows);
      const ox = new Float64Array(rows);
      const oy = new Float64Array(rows);
      for (let k = k0; k < k1; k++) {
        const [dx, dy] = off(k);
        for (let i = 0; i < m; i++) {
          const j = (k - k0) * m + i;
          outId[j] = tileId(bid[i]!, k);
          ox[j] = bx[i]! + dx;
          oy[j] = by[i]! + dy;
        }
      }
      return [
        { name: "cell_id", data: outId, type: "STRING" },
        { name: "vertex_x", data: ox, type: "DOUBLE" },
        { name: "vertex_y", data: oy, type: "DOUBLE" },
      ];
    });
  }

  // transcripts: TX_COPIES copies per tile, each copy nudged 0.05 µm so no two points coincide,
  // written a group of tiles at a time; a tile's cell ids are made once and reused by its copies.
  const tx = await readFrameFile(join(SRC, "transcripts.parquet"), {
    textColumns: ["cell_id", "feature_name"],
  });
  const tcell = textColumn(tx, "cell_id");
  const tgene = textColumn(tx, "feature_name");
  const tx0 = numericColumn(tx, "x_location");
  const ty0 = numericColumn(tx, "y_location");
  const tz0 = numericColumn(tx, "z_location");
  const tq = numericColumn(tx, "qv");
  const m = tcell.length;
  const T = m * TILES * TX_COPIES;
  await writeChunked(join(dir, "transcripts.parquet"), TILES, (k0, k1) => {
    const rows = (k1 - k0) * m * TX_COPIES;
    const outCell = new Array<string>(rows);
    const outGene = new Array<string>(rows);
    const ox = new Float32Array(rows);
    const oy = new Float32Array(rows);
    const oz = new Float32Array(rows);
    const oq = new Float32Array(rows);
    const tid = new BigInt64Array(rows);
    let j = 0;
    const first = k0 * m * TX_COPIES;
    for (let k = k0; k < k1; k++) {
      const [dx, dy] = off(k);
      const tileCells = tcell.map((c) => (c === "UNASSIGNED" ? c : tileId(c, k)));
      for (let c = 0; c < TX_COPIES; c++) {
        for (let i = 0; i < m; i++, j++) {
          outCell[j] = tileCells[i]!;
          outGene[j] = tgene[i]!;
          ox[j] = tx0[i]! + dx + c * 0.05;
          oy[j] = ty0[i]! + dy;
          oz[j] = tz0[i]!;
          oq[j] = tq[i]!;
          tid[j] = BigInt(first + j);
        }
      }
    }
    return [
      { name: "transcript_id", data: tid, type: "INT64" },
      { name: "cell_id", data: outCell, type: "STRING" },
      { name: "feature_name", data: outGene, type: "STRING" },
      { name: "x_location", data: ox, type: "FLOAT" },
      { name: "y_location", data: oy, type: "FLOAT" },
      { name: "z_location", data: oz, type: "FLOAT" },
      { name: "qv", data: oq, type: "FLOAT" },
    ];
  });

  // cell_feature_matrix as MEX (the fixture's h5 tiled).
  const h5 = await readTenxH5(join(SRC, "cell_feature_matrix.h5"));
  const X = h5.table.X as { indptr: Int32Array; indices: Int32Array; data: Float32Array };
  const genes = h5.table.var.index.values;
  const mex = join(dir, "cell_feature_matrix");
  await mkdir(mex);
  let nnz = 0;
  for (let r = 0; r < n; r++) nnz += X.indptr[r + 1]! - X.indptr[r]!;
  const out = createWriteStream(join(mex, "matrix.mtx"));
  const put = (text: string) =>
    out.write(text) ? Promise.resolve() : new Promise<void>((res) => out.once("drain", () => res()));
  await put(`%%MatrixMarket matrix coordinate integer general\n${genes.length} ${N} ${nnz * TILES}\n`);
  for (let k = 0; k < TILES; k++) {
    let chunk = "";
    for (let r = 0; r < n; r++)
      for (let p = X.indptr[r]!; p < X.indptr[r + 1]!; p++)
        chunk += `${X.indices[p]! + 1} ${k * n + r + 1} ${X.data[p]}\n`;
    await put(chunk);
  }
  await new Promise<void>((res, rej) => out.end((err?: Error | null) => (err ? rej(err) : res())));
  await writeFile(join(mex, "barcodes.tsv"), `${cellIds.join("\n")}\n`);
  await writeFile(
    join(mex, "features.tsv"),
    `${genes.map((g) => `${g}\t${g}\tGene Expression`).join("\n")}\n`,
  );
  await cp(join(SRC, "morphology_focus.ome.tif"), join(dir, "morphology_focus.ome.tif"));
  return { cells: N, transcripts: T };
}

async function main(): Promise<void> {
  const base = args.work ?? (await mkdtemp(join(tmpdir(), "tessera-bench-readers-")));
  const dir = join(base, "xenium");
  await mkdir(dir, { recursive: true });
  console.log(
    `bench/readers: sfe-toy/xenium tiled ${TILES}× (cells, boundaries, counts) and its transcripts ${TILES}×${TX_COPIES}×, generated in ${dir} (replicated real data, not instrument output)`,
  );
  if (args.reuse && args.work && existsSync(join(dir, "morphology_focus.ome.tif"))) {
    console.log("  reusing the folder a previous run generated");
  } else {
    const size = await measure("generate (write parquet + MEX)", () => generate(dir));
    console.log(`  ${size.cells.toLocaleString()} cells, ${size.transcripts.toLocaleString()} transcripts`);
  }
  try {
    const full = await measure("io.xenium read (all elements)", () => readXenium(dir));
    console.log(
      `  table ${nRows(full.sdata.tables.table!.obs).toLocaleString()} cells; cell_boundaries ${shapesCount(full.sdata.shapes.cell_boundaries!).toLocaleString()}; transcripts ${pointsCount(full.sdata.points.transcripts!).toLocaleString()}`,
    );
  } catch (err) {
    console.log(`  io.xenium read (all elements) failed: ${(err as Error).message}`);
  }
  await measure("io.xenium read (no transcripts)", () => readXenium(dir, { transcripts: false }));
  const service = await Service.start({
    env: {},
    plugins: ["tessera", "spatialdata-io"],
    config: {
      dataDir: base,
      computePoolWorkers: 1,
      longRunningS: 0,
      nThreads: 1,
      workDir: join(base, ".work"),
      recipesDir: join(base, "none"),
    },
  });
  try {
    await measure("time to first draw ready (session kind load)", async () => {
      const s = await service.createSession({ source: { kind: "load", path: "xenium" } });
      await s.ready;
      if (s.status !== "ready") throw new Error(String(s.summary().error));
      const t = s.data.tables.table!;
      if (!t.obsm.spatial || !s.data.images.morphology_focus) throw new Error("cells or image missing");
    });
  } catch (err) {
    console.log(`  session load failed: ${(err as Error).message}`);
  } finally {
    await service.close();
  }
  if (!args.keep && !args.work) await rm(base, { recursive: true, force: true });
}

await main();
