/**
 * I/O benchmark of Tessera's foundation: write and read a generated sparse count table (AnnData zarr
 * and the `.sdata.zarr.zip` checkpoint with its column-major mirror), read the 10k reference h5ad, and
 * write and read a large 4-channel uint16 OME-Zarr image with its pyramid. Prints seconds, MB/s and
 * peak RSS per phase; never passes or fails.
 *
 * Run: `npm run bench:io -- [--quick] [--cells N] [--genes N] [--image PX] [--channels N] [--seed N]
 * [--gene-samples N] [--tiles N] [--work DIR] [--keep] [--no-table] [--no-image] [--no-h5ad]`
 * (or the env vars `BENCH_CELLS`, `BENCH_GENES`, `BENCH_IMAGE`, `BENCH_CHANNELS`, `BENCH_SEED`,
 * `BENCH_QUICK=1`, `BENCH_WORK`). Defaults are the foundation issue's sizes: 1,000,000 cells ×
 * 2,000 genes and a 10,000 × 10,000 × 4-channel image. `--quick` is 100,000 × 2,000 and 4,000 px.
 *
 * MB/s is the uncompressed in-memory size of the data moved divided by wall seconds (MB = 10^6 bytes).
 */
import { existsSync, promises as fsp } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { performance } from "node:perf_hooks";
import { parseArgs } from "node:util";
import * as v8 from "node:v8";
import { runInNewContext } from "node:vm";
import { Worker } from "node:worker_threads";
import type { Matrix } from "../src/sdk/data/arrays.js";
import type { DataFrame } from "../src/sdk/data/dataframe.js";
import type { ImageElement } from "../src/sdk/data/elements.js";
import { makeSpatialData } from "../src/sdk/data/spatialdata.js";
import type { Table } from "../src/sdk/data/table.js";
import { readH5ad } from "../src/sdk/io/anndata/read-h5ad.js";
import { readAnnDataZarr } from "../src/sdk/io/anndata/read-zarr.js";
import { writeAnnDataZarr } from "../src/sdk/io/anndata/write.js";
import { openCheckpoint, readGeneFromMirror } from "../src/sdk/io/checkpoint/read.js";
import { writeCheckpoint } from "../src/sdk/io/checkpoint/write.js";
import { readOmeZarrImage } from "../src/sdk/io/ome/read.js";
import { writeRasterElement } from "../src/sdk/io/ome/write.js";
import { FsStore } from "../src/sdk/io/store/fs-store.js";
import { Rng } from "../src/sdk/math/rng.js";
import { generateLargeImage, generateLargeTable } from "./generate.js";

// ---------------------------------------------------------------------------------------------------
// Options

/** Benchmark sizes and switches, from CLI flags over env vars over defaults. */
interface BenchOptions {
  cells: number;
  genes: number;
  image: number;
  channels: number;
  seed: number;
  geneSamples: number;
  tiles: number;
  work: string;
  keep: boolean;
  table: boolean;
  imageOn: boolean;
  h5ad: boolean;
  quick: boolean;
}

const H5AD_REFERENCE = "/work/shared/reference/synth_10k/input.h5ad";

function parseOptions(): BenchOptions {
  const { values } = parseArgs({
    options: {
      quick: { type: "boolean" },
      cells: { type: "string" },
      genes: { type: "string" },
      image: { type: "string" },
      channels: { type: "string" },
      seed: { type: "string" },
      "gene-samples": { type: "string" },
      tiles: { type: "string" },
      work: { type: "string" },
      keep: { type: "boolean" },
      "no-table": { type: "boolean" },
      "no-image": { type: "boolean" },
      "no-h5ad": { type: "boolean" },
      help: { type: "boolean", short: "h" },
    },
    allowPositionals: false,
  });
  if (values.help) {
    console.log(
      "usage: npm run bench:io -- [--quick] [--cells N] [--genes N] [--image PX] [--channels N] [--seed N]\n" +
        "       [--gene-samples N] [--tiles N] [--work DIR] [--keep] [--no-table] [--no-image] [--no-h5ad]",
    );
    process.exit(0);
  }
  const env = process.env;
  const quick = values.quick ?? env.BENCH_QUICK === "1";
  const int = (name: string, flag: string | undefined, envVal: string | undefined, dflt: number): number => {
    const raw = flag ?? envVal;
    if (raw === undefined || raw === "") return dflt;
    const n = Number(raw.replace(/_/g, ""));
    if (!Number.isInteger(n) || n < 0)
      throw new Error(`bench/io: --${name} must be a non-negative integer, got "${raw}"`);
    return n;
  };
  return {
    quick,
    cells: int("cells", values.cells, env.BENCH_CELLS, quick ? 100_000 : 1_000_000),
    genes: int("genes", values.genes, env.BENCH_GENES, 2_000),
    image: int("image", values.image, env.BENCH_IMAGE, quick ? 4_000 : 10_000),
    channels: int("channels", values.channels, env.BENCH_CHANNELS, 4),
    seed: int("seed", values.seed, env.BENCH_SEED, 0),
    geneSamples: int("gene-samples", values["gene-samples"], undefined, 20),
    tiles: int("tiles", values.tiles, undefined, 50),
    work: values.work ?? env.BENCH_WORK ?? os.tmpdir(),
    keep: values.keep ?? false,
    table: !values["no-table"],
    imageOn: !values["no-image"],
    h5ad: !values["no-h5ad"],
  };
}

// ---------------------------------------------------------------------------------------------------
// Peak RSS: sampled from a worker thread, because the main thread is blocked during synchronous work
// (table generation, CSR → CSC, zstd) and an interval there would miss exactly the peaks that matter.

/** Slots of the shared sample buffer (bytes): max within the phase, overall, within a phase's sub-step. */
const PHASE = 0;
const OVERALL = 1;
const STEP = 2;
const SLOTS = 3;

const SAMPLER_SOURCE = `
const { workerData } = require("node:worker_threads");
const buf = workerData.buf;
const bump = (i, v) => {
  for (;;) {
    const cur = Atomics.load(buf, i);
    if (v <= cur || Atomics.compareExchange(buf, i, cur, v) === cur) return;
  }
};
const tick = () => {
  const v = BigInt(process.memoryUsage.rss());
  for (let i = 0; i < buf.length; i++) bump(i, v);
};
tick();
setInterval(tick, workerData.intervalMs);
`;

/** Samples `rss` every `intervalMs` off the main thread; `phasePeak()` is the max since `resetPhase()`. */
class RssSampler {
  private readonly buf = new BigInt64Array(new SharedArrayBuffer(8 * SLOTS));
  private readonly worker: Worker;

  constructor(intervalMs = 50) {
    this.worker = new Worker(SAMPLER_SOURCE, { eval: true, workerData: { buf: this.buf, intervalMs } });
    this.worker.unref();
  }

  /** Record a sample from this thread too (so a phase shorter than the interval still has one). */
  sample(): void {
    const v = BigInt(process.memoryUsage.rss());
    for (let i = 0; i < SLOTS; i++) {
      for (;;) {
        const cur = Atomics.load(this.buf, i);
        if (v <= cur || Atomics.compareExchange(this.buf, i, cur, v) === cur) break;
      }
    }
  }

  resetPhase(): void {
    Atomics.store(this.buf, PHASE, 0n);
    this.sample();
  }

  resetStep(): void {
    Atomics.store(this.buf, STEP, 0n);
    this.sample();
  }

  stepPeak(): number {
    this.sample();
    return Number(Atomics.load(this.buf, STEP));
  }

  phasePeak(): number {
    this.sample();
    return Number(Atomics.load(this.buf, PHASE));
  }

  overallPeak(): number {
    this.sample();
    return Number(Atomics.load(this.buf, OVERALL));
  }

  stop(): Promise<number> {
    return this.worker.terminate();
  }
}

// ---------------------------------------------------------------------------------------------------
// Sizes

const MB = 1e6;

/** In-memory bytes of a matrix's buffers (data + indices + indptr for sparse). */
function matrixBytes(m: Matrix): number {
  if (m.kind === "dense") return m.data.byteLength;
  return m.data.byteLength + m.indices.byteLength + m.indptr.byteLength;
}

function utf8Bytes(values: readonly (string | null)[]): number {
  let n = 0;
  for (const v of values) if (v) n += Buffer.byteLength(v, "utf8");
  return n;
}

/** In-memory bytes of a data frame: numeric buffers plus the UTF-8 length of its strings. */
function frameBytes(df: DataFrame): number {
  let n = utf8Bytes(df.index.values);
  for (const col of Object.values(df.columns)) {
    switch (col.kind) {
      case "dense":
        n += col.data.byteLength;
        break;
      case "string":
        n += utf8Bytes(col.values);
        break;
      case "categorical":
        n +=
          col.codes.byteLength +
          (col.categories.kind === "string"
            ? utf8Bytes(col.categories.values)
            : col.categories.data.byteLength);
        break;
      case "nullable":
        n += col.data.byteLength + col.mask.byteLength;
        break;
    }
  }
  return n;
}

/** Bytes of X (when loaded), obs and var. */
function tableBytes(t: Table, x: Matrix | null): number {
  return (x ? matrixBytes(x) : 0) + frameBytes(t.obs) + frameBytes(t.var);
}

/** Total size of the files under `p` (a file or a folder). */
async function diskBytes(p: string): Promise<number> {
  const st = await fsp.stat(p);
  if (!st.isDirectory()) return st.size;
  let n = 0;
  for (const d of await fsp.readdir(p, { withFileTypes: true })) {
    const child = path.join(p, d.name);
    n += d.isDirectory() ? await diskBytes(child) : (await fsp.stat(child)).size;
  }
  return n;
}

// ---------------------------------------------------------------------------------------------------
// Phases and the report

/** One measured phase. */
interface PhaseResult {
  phase: string;
  seconds: number;
  /** Uncompressed bytes moved; null for phases that move no data (generation, open). */
  bytes: number | null;
  peakRss: number;
  /** RSS after a full GC at the start of the phase: what earlier phases left resident. */
  startRss?: number;
  note?: string;
  /** Sub-steps announced by the SDK's progress callback, printed under the phase. */
  steps?: { name: string; seconds: number; peakRss: number }[];
}

/** A peer's figure, printed under the phase it compares with. */
interface PeerLine {
  label: string;
  seconds: number;
  note: string;
}

const results: PhaseResult[] = [];
/** Peer lines keyed by the index of the result row they follow. */
const peers = new Map<number, PeerLine[]>();

/** Print `p` under the last recorded phase. */
function addPeer(p: PeerLine): void {
  const at = results.length - 1;
  peers.set(at, [...(peers.get(at) ?? []), p]);
  console.log(`    peer: ${p.label}: ${fmt(p.seconds, 3)} s  (${p.note})`);
}
const sampler = new RssSampler(50);

/** Force a full GC between phases so each phase's RSS is its own (flag set at run time, not via CLI). */
v8.setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;

/** Full GC, then a pause: array buffers are freed by a background sweeper, so RSS drops a bit later. */
async function collect(): Promise<void> {
  for (let i = 0; i < 2; i++) {
    gc();
    await new Promise((r) => setTimeout(r, 150));
  }
}

/** Run `fn` as a named phase: time it, sample RSS, record and print a line. */
async function phase<T>(
  name: string,
  bytes: number | null | ((value: T) => number | null),
  fn: () => Promise<T> | T,
  note?: (value: T) => string | undefined,
): Promise<T> {
  await collect();
  const startRss = process.memoryUsage.rss();
  if (process.env.BENCH_DEBUG) {
    const m = process.memoryUsage();
    const f = (k: keyof NodeJS.MemoryUsage) => `${k} ${fmt(m[k] / MB, 0)}`;
    console.log(
      `  [memory before "${name}": ${["rss", "heapTotal", "heapUsed", "external", "arrayBuffers"].map((k) => f(k as keyof NodeJS.MemoryUsage)).join(", ")} MB]`,
    );
  }
  sampler.resetPhase();
  const t0 = performance.now();
  const value = await fn();
  const seconds = (performance.now() - t0) / 1000;
  const peakRss = sampler.phasePeak();
  const moved = typeof bytes === "function" ? bytes(value) : bytes;
  const r: PhaseResult = { phase: name, seconds, bytes: moved, peakRss, startRss };
  const n = note?.(value);
  if (n) r.note = n;
  results.push(r);
  const rate = moved !== null && seconds > 0 ? `  ${fmt(moved / MB / seconds, 1)} MB/s` : "";
  console.log(
    `  ${name}: ${fmt(seconds, 3)} s${rate}  (RSS start ${fmt(startRss / MB, 0)} MB, peak ${fmt(peakRss / MB, 0)} MB)${n ? `  ${n}` : ""}`,
  );
  return value;
}

/**
 * Times the sub-steps an SDK call announces through `onProgress` (each message starts a step, `""`
 * ends the last), with the peak RSS of each; `report()` prints them under the phase.
 */
function stepTimer(): { mark: (message: string) => void; report: () => void } {
  const steps: { name: string; seconds: number; peakRss: number }[] = [];
  let cur: { name: string; t0: number } | null = null;
  return {
    mark(message: string) {
      const now = performance.now();
      if (cur) steps.push({ name: cur.name, seconds: (now - cur.t0) / 1000, peakRss: sampler.stepPeak() });
      sampler.resetStep();
      cur = message ? { name: message, t0: now } : null;
    },
    report() {
      for (const st of steps) {
        const line = `${fmt(st.seconds, 3)} s, peak RSS ${fmt(st.peakRss / MB, 0)} MB`;
        console.log(`      step "${st.name}": ${line}`);
        const last = results.at(-1)!;
        last.steps = [...(last.steps ?? []), { name: st.name, seconds: st.seconds, peakRss: st.peakRss }];
      }
    },
  };
}

/** A row summing the two phases before it (open + load). */
function addTotal(name: string, bytes: number): void {
  const [a, b] = [results.at(-2)!, results.at(-1)!];
  const seconds = a.seconds + b.seconds;
  results.push({ phase: name, seconds, bytes, peakRss: Math.max(a.peakRss, b.peakRss) });
  console.log(`  ${name}: ${fmt(seconds, 3)} s  ${fmt(bytes / MB / seconds, 1)} MB/s`);
}

function fmt(x: number, digits: number): string {
  return x.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

function mb(bytes: number): string {
  return `${fmt(bytes / MB, 1)} MB`;
}

function printTable(): void {
  const header = ["phase", "seconds", "MB moved", "MB/s", "start RSS MB", "peak RSS MB", "note"];
  const rows: string[][] = [];
  results.forEach((r, i) => {
    rows.push([
      r.phase,
      fmt(r.seconds, 3),
      r.bytes === null ? "" : fmt(r.bytes / MB, 1),
      r.bytes === null || r.seconds <= 0 ? "" : fmt(r.bytes / MB / r.seconds, 1),
      r.startRss === undefined ? "" : fmt(r.startRss / MB, 0),
      fmt(r.peakRss / MB, 0),
      r.note ?? "",
    ]);
    for (const st of r.steps ?? []) {
      rows.push([`  · ${st.name}`, fmt(st.seconds, 3), "", "", "", fmt(st.peakRss / MB, 0), "(sub-step)"]);
    }
    for (const p of peers.get(i) ?? [])
      rows.push([`  peer: ${p.label}`, fmt(p.seconds, 3), "", "", "", "", p.note]);
  });
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i === 0 || i === cells.length - 1 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!)))
      .join("  ");
  console.log(line(header));
  console.log(widths.map((w) => "-".repeat(w)).join("  "));
  for (const r of rows) console.log(line(r).trimEnd());
}

// ---------------------------------------------------------------------------------------------------
// Table benchmark

/** scanpy 1.12.3 `read_h5ad` on this machine class (/work/shared/bench/README.md), wall seconds. */
const SCANPY_READ_H5AD = [
  { cells: 10_000, genes: 2_000, seconds: 0.053 },
  { cells: 50_000, genes: 3_000, seconds: 0.605 },
  { cells: 200_000, genes: 5_000, seconds: 3.45 },
] as const;

/** Indices of `k` distinct random genes, deterministic per seed. */
function sampleGenes(nGenes: number, k: number, seed: number): number[] {
  const perm = new Rng(seed).fork("bench-genes").permutation(nGenes);
  return Array.from(perm.subarray(0, Math.min(k, nGenes)));
}

/** What the write phases leave for the read phases: sizes and paths (the generated table is dropped). */
interface WrittenTable {
  bytes: number;
  xBytes: number;
  zarrDir: string;
  ckpt: string;
}

/** Generate the table, write it as AnnData zarr and as a checkpoint. Nothing generated escapes. */
async function writeTablePhases(o: BenchOptions, work: string): Promise<WrittenTable> {
  const table: Table = await phase(
    "table: generate (bench/generate.ts)",
    null,
    () => generateLargeTable(o.cells, o.genes, o.seed),
    (t) => {
      const x = t.X as Matrix & { kind: "csr" };
      return `nnz ${fmt(x.data.length, 0)} (density ${fmt((100 * x.data.length) / (o.cells * o.genes), 1)}%)`;
    },
  );
  const generatedX = table.X as Matrix;
  const bytes = tableBytes(table, generatedX);
  const xBytes = matrixBytes(generatedX);
  console.log(`  in memory: X ${mb(xBytes)} (CSR float32/int32), obs+var ${mb(bytes - xBytes)}`);

  // AnnData zarr write.
  const zarrDir = path.join(work, "table.zarr");
  await phase("table: writeAnnDataZarr (FsStore)", bytes, () =>
    writeAnnDataZarr(table, new FsStore(zarrDir), "/"),
  );
  const zarrDisk = await diskBytes(zarrDir);
  results.at(-1)!.note = `on disk ${mb(zarrDisk)}, ratio ${fmt(bytes / zarrDisk, 2)}×`;
  console.log(`    ${results.at(-1)!.note}`);

  // Whole checkpoint write (elements + CSC mirror + consolidation + zip).
  const ckpt = path.join(work, "table.sdata.zarr.zip");
  const steps = stepTimer();
  await phase("table: writeCheckpoint (.zarr.zip, CSC mirror)", bytes, async () => {
    const written = await writeCheckpoint(makeSpatialData({ tables: { table } }), ckpt, {
      workDir: work,
      onProgress: steps.mark,
    });
    steps.mark("");
    return written;
  });
  const ckptDisk = await diskBytes(ckpt);
  results.at(-1)!.note =
    `zip ${mb(ckptDisk)} (X twice: CSR + CSC mirror), ratio ${fmt(bytes / ckptDisk, 2)}×`;
  console.log(`    ${results.at(-1)!.note}`);
  steps.report();
  return { bytes, xBytes, zarrDir, ckpt };
}

async function benchTable(o: BenchOptions, work: string): Promise<void> {
  console.log(`\n[table] ${fmt(o.cells, 0)} cells × ${fmt(o.genes, 0)} genes, seed ${o.seed}`);
  const { bytes, xBytes, zarrDir, ckpt } = await writeTablePhases(o, work);

  // AnnData zarr read: metadata + obs/var now, X lazily.
  {
    let read: Table | null = await phase(
      "table: readAnnDataZarr (obs/var, X lazy)",
      null,
      async () => (await readAnnDataZarr(new FsStore(zarrDir), "/")).table,
    );
    results.at(-1)!.bytes = tableBytes(read, null);
    let loaded: Matrix | null = await phase("table: X.load() from zarr", xBytes, () => loadX(read as Table));
    addTotal("table: zarr read total (open + X)", bytes);
    // The peer size nearest to this one in cells·genes, scaled linearly to this size.
    const cg = o.cells * o.genes;
    const peer = [...SCANPY_READ_H5AD].sort(
      (a, b) => Math.abs(Math.log((a.cells * a.genes) / cg)) - Math.abs(Math.log((b.cells * b.genes) / cg)),
    )[0]!;
    const scale = cg / (peer.cells * peer.genes);
    addPeer({
      label: `scanpy read_h5ad ${peer.cells / 1000}k × ${peer.genes / 1000}k`,
      seconds: peer.seconds,
      note: `/work/shared/bench; × ${fmt(scale, 2)} cells·genes ≈ ${fmt(peer.seconds * scale, 2)} s at this size`,
    });
    loaded = null;
    read = null;
    void loaded;
    void read;
  }

  // Checkpoint read: open (sidecar, app state, SpatialData metadata), single genes from the column-major
  // mirror as the viewer reads them (X never loaded), then the whole X. X is read last because a loaded
  // lazy matrix is memoised: it stays resident as long as the opened checkpoint does.
  {
    const cp = await phase("table: openCheckpoint", null, () => openCheckpoint(ckpt));
    const t = cp.sdata.tables.table;
    if (!t) throw new Error(`${ckpt}: the checkpoint has no table "table"`);
    const genes = sampleGenes(o.genes, o.geneSamples + 1, o.seed);
    // The first call also reads and caches the mirror's indptr; timed on its own.
    const first = genes[0]!;
    await phase(
      "table: readGeneFromMirror, first (+indptr)",
      (col: Float32Array) => col.byteLength,
      () => readGeneFromMirror(cp, "table", first),
    );
    const rest = genes.slice(1);
    let colBytes = 0;
    await phase(`table: readGeneFromMirror, mean of ${rest.length}`, null, async () => {
      for (const g of rest) {
        const col = await readGeneFromMirror(cp, "table", g);
        colBytes += col.byteLength;
      }
    });
    const r = results.at(-1)!;
    r.seconds /= Math.max(1, rest.length);
    r.bytes = colBytes / Math.max(1, rest.length);
    r.note = `per gene; ${fmt(r.seconds * 1000, 1)} ms; MB = dense column (${fmt(o.cells, 0)} × 4 B)`;
    console.log(`    ${r.note}`);
    await phase("table: X.load() from checkpoint zip", xBytes, () => loadX(t));
  }
}

async function loadX(t: Table): Promise<Matrix> {
  if (!t.X) throw new Error("table has no X");
  return t.X.kind === "lazy" ? t.X.load() : t.X;
}

// ---------------------------------------------------------------------------------------------------
// h5ad reference read

async function benchH5ad(): Promise<void> {
  if (!existsSync(H5AD_REFERENCE)) {
    console.log(`\n[h5ad] skipped: ${H5AD_REFERENCE} not found`);
    return;
  }
  console.log(`\n[h5ad] ${H5AD_REFERENCE} (10k × 2k reference; no h5ad writer exists, so read only)`);
  // The first call instantiates h5wasm's WebAssembly module; timed apart from a warm read.
  await phase("h5ad: readH5ad, first call (h5wasm init)", null, () => readH5ad(H5AD_REFERENCE));
  const res = await phase("h5ad: readH5ad (obs/var, X lazy)", null, () => readH5ad(H5AD_REFERENCE));
  const x = await phase(
    "h5ad: X.load()",
    (m: Matrix) => matrixBytes(m),
    () => loadX(res.table),
  );
  addTotal("h5ad: read total (open + X), warm", tableBytes(res.table, x));
  results.at(-1)!.note = `on disk ${mb(await diskBytes(H5AD_REFERENCE))}`;
  const peer = SCANPY_READ_H5AD[0];
  addPeer({
    label: "scanpy read_h5ad 10k × 2k",
    seconds: peer.seconds,
    note: "/work/shared/bench; same file class (synth_10k)",
  });
}

// ---------------------------------------------------------------------------------------------------
// Image benchmark

async function benchImage(o: BenchOptions, work: string): Promise<void> {
  console.log(
    `\n[image] ${fmt(o.image, 0)} × ${fmt(o.image, 0)} px × ${o.channels} channels uint16, seed ${o.seed}`,
  );
  let el: ImageElement | null = await phase(
    "image: generate + pyramid (bench/generate.ts)",
    null,
    () => generateLargeImage(o.image, o.channels, { seed: o.seed }),
    (e) => `${e.levels.length} levels`,
  );
  const levelBytes = el.levels.map((lv) => lv.shape.reduce((a, b) => a * b, 1) * 2);
  const allBytes = levelBytes.reduce((a, b) => a + b, 0);
  console.log(`  in memory: level 0 ${mb(levelBytes[0]!)}, all ${el.levels.length} levels ${mb(allBytes)}`);

  const dir = path.join(work, "image.zarr");
  await phase("image: writeRasterElement (all levels)", allBytes, () =>
    writeRasterElement(el as ImageElement, new FsStore(dir), "/images/img"),
  );
  const disk = await diskBytes(dir);
  results.at(-1)!.note = `on disk ${mb(disk)}, ratio ${fmt(allBytes / disk, 2)}×`;
  console.log(`    ${results.at(-1)!.note}`);
  el = null;
  void el;

  const img = await phase("image: readOmeZarrImage (metadata)", null, () =>
    readOmeZarrImage(new FsStore(dir), "/images/img", "img"),
  );
  const l0 = img.levels[0]!;
  {
    let full: unknown = await phase("image: level-0 full read", levelBytes[0]!, () => l0.source.read());
    full = null;
    void full;
  }
  const [, h, w] = l0.shape as [number, number, number];
  const T = 512;
  const rng = new Rng(o.seed).fork("bench-tiles");
  let tileBytes = 0;
  await phase(`image: random ${T}² tile (all channels), mean of ${o.tiles}`, null, async () => {
    for (let i = 0; i < o.tiles; i++) {
      // Tiles on the 512 grid, as a viewer asks for them (each is one chunk per channel).
      const ty = rng.int(Math.max(1, Math.ceil(h / T)));
      const tx = rng.int(Math.max(1, Math.ceil(w / T)));
      const tile = await l0.source.read([
        null,
        [ty * T, Math.min(h, (ty + 1) * T)],
        [tx * T, Math.min(w, (tx + 1) * T)],
      ]);
      tileBytes += tile.data.byteLength;
    }
  });
  const r = results.at(-1)!;
  r.seconds /= Math.max(1, o.tiles);
  r.bytes = tileBytes / Math.max(1, o.tiles);
  r.note = `per tile; ${fmt(r.seconds * 1000, 1)} ms; chunks ${l0.chunks.join("×")}`;
  console.log(`    ${r.note}`);
}

// ---------------------------------------------------------------------------------------------------

/** The generator calls this run makes, for the header and the summary. */
function describeData(o: BenchOptions): string {
  const parts: string[] = [];
  if (o.table && o.cells > 0 && o.genes > 0)
    parts.push(`generateLargeTable(${o.cells}, ${o.genes}, seed ${o.seed})`);
  else parts.push("table skipped");
  if (o.imageOn && o.image > 0)
    parts.push(`generateLargeImage(${o.image}, ${o.channels}, { seed: ${o.seed} })`);
  else parts.push("image skipped");
  return parts.join(", ");
}

async function main(): Promise<void> {
  const o = parseOptions();
  const work = await fsp.mkdtemp(path.join(o.work, "tessera-bench-io-"));
  console.log("Tessera I/O benchmark (bench/io.ts)");
  console.log(`  data generated by bench/generate.ts: ${describeData(o)}${o.quick ? "  [--quick]" : ""}`);
  console.log(
    `  node ${process.version}, ${os.cpus().length} CPUs, ${fmt(os.totalmem() / 2 ** 30, 1)} GiB RAM; work dir ${work}`,
  );
  console.log(
    "  MB/s = uncompressed in-memory bytes moved / wall seconds (MB = 10^6 B); RSS sampled every 50 ms",
  );
  const t0 = performance.now();
  try {
    if (o.table && o.cells > 0 && o.genes > 0) await benchTable(o, work);
    if (o.h5ad) await benchH5ad();
    if (o.imageOn && o.image > 0) await benchImage(o, work);
  } finally {
    if (!o.keep) await fsp.rm(work, { recursive: true, force: true });
    else console.log(`\n(kept ${work})`);
  }
  const total = (performance.now() - t0) / 1000;
  console.log(`\nSummary (data generated by bench/generate.ts: ${describeData(o)})`);
  printTable();
  const maxRss = process.resourceUsage().maxRSS * 1024;
  console.log(
    `\noverall: ${fmt(total, 1)} s; peak RSS sampled ${fmt(sampler.overallPeak() / MB, 0)} MB, ` +
      `resourceUsage().maxRSS ${fmt(maxRss / MB, 0)} MB`,
  );
  await sampler.stop();
}

main().catch(async (err) => {
  console.error(err);
  await sampler.stop();
  process.exitCode = 1;
});
