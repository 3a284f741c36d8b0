/**
 * Rebuilding a raster element into the served layout (docs/formats/images.md, "The served raster
 * store"): zarr v3 arrays `s0, s1, …` in a folder, chunks of one plane (channel) by `T × T` pixels,
 * `bytes` + zstd, every level exactly 2× smaller than the one before (floor) down to a longest side
 * of at most `basePx`. Labels keep the levels they have (single-scale unless a pyramid exists).
 *
 * The work is streamed: this thread reads the source one band of rows of one block of planes at a
 * time and hands it to a worker thread (`build-worker.ts`), which chunks, encodes and writes it and
 * makes the coarser levels from the rows on the way. Blocks (one channel, or the channels a source
 * chunk holds together) go to up to `workers` threads at once; each has at most two bands in flight,
 * so memory stays at a few bands however large the image.
 */
import { existsSync } from "node:fs";
import { mkdir, statfs, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import { BYTES_PER_ELEMENT, type DType, TYPED_ARRAY_OF } from "../data/arrays.js";
import type { ImageElement, LabelsElement, RasterSource } from "../data/elements.js";
import { DataError } from "../io/data-error.js";
import { tsxWorkerImport } from "../jobs/entry.js";
import type { FromWorker, ToWorker, WorkerLevel } from "./build-worker.js";
import { type DownsampleMethod, pyramidShapes } from "./pyramid.js";

/** Tile (chunk) edge of the served layout. */
export const SERVED_TILE_SIZE = 512;

/** One level of a served layout plan. */
export interface PlannedLevel {
  /** Array path (`s0`, `s1`, …). */
  readonly path: string;
  /** Shape over the element's axes. */
  readonly shape: readonly number[];
  /** Chunk shape over the element's axes (1 off y/x). */
  readonly chunks: readonly number[];
  /** The element level copied into this one; null when it is made by downsampling the level above. */
  readonly source: RasterSource | null;
}

function nextPow2(n: number): number {
  let p = 1;
  while (p < n) p *= 2;
  return p;
}

/** Chunk edge of a level: `T`, or the next power of two ≥ its longest side when that is smaller. */
export function levelChunkEdge(h: number, w: number, tile: number): number {
  return Math.min(tile, nextPow2(Math.max(h, w, 1)));
}

/**
 * The levels of the served layout of an element: images get the 2× pyramid down to `basePx`
 * (element levels whose shape is the planned one are copied instead of recomputed); labels keep the
 * levels they have.
 */
export function planServedLevels(
  el: ImageElement | LabelsElement,
  basePx: number,
  tile = SERVED_TILE_SIZE,
): PlannedLevel[] {
  const axes = el.axes;
  const yi = axes.indexOf("y");
  const xi = axes.indexOf("x");
  const shapes =
    el.kind === "labels"
      ? el.levels.map((l) => [...l.shape])
      : pyramidShapes(el.levels[0]!.shape, axes, { targetSize: basePx, maxLevels: 32 });
  let reusing = true;
  return shapes.map((shape, k) => {
    const own = el.levels[k];
    reusing = reusing && !!own && own.shape.every((s, i) => s === shape[i]);
    const t = levelChunkEdge(shape[yi]!, shape[xi]!, tile);
    return {
      path: `s${k}`,
      shape,
      chunks: axes.map((a) => (a === "y" || a === "x" ? t : 1)),
      source: reusing || el.kind === "labels" ? own!.source : null,
    };
  });
}

/** Codecs of the served layout: little-endian bytes (no endian for 1-byte types), then zstd. */
export function servedCodecs(dtype: DType, level = 0): Record<string, unknown>[] {
  const oneByte = BYTES_PER_ELEMENT[dtype] === 1;
  return [
    { name: "bytes", configuration: oneByte ? {} : { endian: "little" } },
    { name: "zstd", configuration: { level, checksum: false } },
  ];
}

/** The zarr v3 `zarr.json` of a served level array. */
export function servedArrayMeta(level: PlannedLevel, axes: readonly string[], dtype: DType): object {
  return {
    zarr_format: 3,
    node_type: "array",
    shape: [...level.shape],
    data_type: dtype,
    chunk_grid: { name: "regular", configuration: { chunk_shape: [...level.chunks] } },
    chunk_key_encoding: { name: "default", configuration: { separator: "/" } },
    fill_value: dtype === "bool" ? false : 0,
    codecs: servedCodecs(dtype),
    attributes: {},
    dimension_names: [...axes],
    storage_transformers: [],
  };
}

/** Options of {@link buildServedRaster}. */
export interface BuildServedOptions {
  /** Coarsest level target: longest side ≤ this (images). */
  readonly basePx: number;
  /** Chunk edge T (default 512). */
  readonly tileSize?: number;
  /** Worker threads at most (default 2). */
  readonly workers?: number;
  /** Downsampling of images (default `mean`). */
  readonly method?: DownsampleMethod;
  /** zstd level (default 0 = zstd's default, as spatialdata writes). */
  readonly zstdLevel?: number;
  /** Largest band read at once, bytes (default 64 MiB; at least one chunk row). */
  readonly bandBytes?: number;
  readonly signal?: AbortSignal;
  /** Fraction done, 0…1, after each band. */
  onProgress?(fraction: number): void;
}

/** What a build wrote. */
export interface BuiltRaster {
  readonly levels: PlannedLevel[];
  /** Chunk files written (chunks holding only the fill value are not). */
  readonly chunksWritten: number;
  /** Bytes of chunk files written. */
  readonly bytes: number;
}

/** How to start the worker: the TypeScript source under tsx/vitest, the built file from dist. */
function workerEntry(): { url: URL; execArgv: string[] } {
  const here = import.meta.url;
  if (/\.[mc]?ts$/.test(here))
    return { url: new URL("./build-worker.ts", here), execArgv: ["--import", tsxWorkerImport()] };
  const candidates = ["./raster/build-worker.js", "../raster/build-worker.js", "./build-worker.js"].map(
    (rel) => new URL(rel, here),
  );
  const found = candidates.find((u) => existsSync(fileURLToPath(u)));
  if (!found) throw new Error("raster build worker not found (was raster/build-worker built by tsup?)");
  return { url: found, execArgv: [] };
}

/** A worker with request/answer helpers. */
class BuildThread {
  readonly worker: Worker;
  private waiters: { resolve: (m: FromWorker) => void; reject: (e: Error) => void }[] = [];
  private failure: Error | null = null;
  written = 0;
  bytes = 0;
  /** Band buffers the worker handed back, reused for the next bands. */
  readonly spare: ArrayBuffer[] = [];

  constructor(url: URL, execArgv: string[], workerData: unknown) {
    this.worker = new Worker(url, { execArgv, workerData });
    this.worker.on("message", (m: FromWorker) => {
      if (m.type === "error") return this.fail(new Error(m.message));
      this.written = m.written;
      this.bytes = m.bytes;
      if (m.type === "ack") this.spare.push(m.buffer);
      this.waiters.shift()?.resolve(m);
    });
    this.worker.on("error", (e) => this.fail(e));
    this.worker.on("exit", (code) => {
      if (this.waiters.length) this.fail(new Error(`raster build worker exited with code ${code}`));
    });
  }

  private fail(e: Error): void {
    this.failure ??= e;
    for (const w of this.waiters.splice(0)) w.reject(this.failure);
  }

  /** Post a message (moving `transfer`); the returned promise settles on the worker's answer to it. */
  send(msg: ToWorker, transfer: ArrayBuffer[] = []): Promise<FromWorker> {
    if (this.failure) return Promise.reject(this.failure);
    const p = new Promise<FromWorker>((resolve, reject) => this.waiters.push({ resolve, reject }));
    // A failure after the caller stopped waiting (an abort) must not surface as unhandled.
    p.catch(() => undefined);
    this.worker.postMessage(msg, transfer);
    return p;
  }

  /** Post without expecting an answer (`block`). */
  post(msg: ToWorker): void {
    this.worker.postMessage(msg);
  }
}

/** Blocks of planes over the non-spatial axes, in groups the source chunks hold together. */
function planeBlocks(shape: readonly number[], chunks: readonly number[], nOuter: number): number[][][] {
  const outer = shape.slice(0, nOuter);
  if (outer.length === 0) return [[[]]];
  // Group along the first outer axis (channels) by the source chunk; other outer axes one by one.
  const group = Math.max(1, Math.min(outer[0]!, chunks[0] ?? 1));
  const rest: number[][] = [[]];
  for (const n of outer.slice(1)) {
    const next: number[][] = [];
    for (const r of rest) for (let i = 0; i < n; i++) next.push([...r, i]);
    rest.splice(0, rest.length, ...next);
  }
  const blocks: number[][][] = [];
  for (let c0 = 0; c0 < outer[0]!; c0 += group) {
    for (const r of rest) {
      const block: number[][] = [];
      for (let c = c0; c < Math.min(outer[0]!, c0 + group); c++) block.push([c, ...r]);
      blocks.push(block);
    }
  }
  return blocks;
}

/**
 * Refuse a rebuild the work dir cannot hold, before anything is written: an image declaring 2 TB (a hostile or
 * broken file, or simply too large for this machine) would otherwise stream for hours and fill the disk. The
 * bound is the uncompressed size of every level against the free space of the work dir's file system.
 */
async function checkRoomFor(
  el: ImageElement | LabelsElement,
  levels: readonly { shape: readonly number[] }[],
  outDir: string,
): Promise<void> {
  const bytes =
    levels.reduce((n, l) => n + l.shape.reduce((p, s) => p * s, 1), 0) * BYTES_PER_ELEMENT[el.dtype];
  let parent = dirname(outDir);
  while (!existsSync(parent) && dirname(parent) !== parent) parent = dirname(parent);
  const st = await statfs(parent).catch(() => null);
  if (!st) return;
  const free = st.bavail * st.bsize;
  if (bytes > free) {
    const gb = (b: number) => `${(b / 1e9).toFixed(b < 1e10 ? 1 : 0)} GB`;
    throw new DataError(
      `${el.name}: the image declares ${el.levels[0]!.shape.join(" × ")} ${el.dtype} (${gb(bytes)} once tiled), more than the ${gb(free)} free in the work dir; it cannot be served from here`,
    );
  }
}

/**
 * Rebuild `el` into the served layout under `outDir` (created; level arrays `s0 …` directly inside).
 * Rejects with the signal's reason when aborted (worker threads are stopped; the caller removes the
 * folder).
 */
export async function buildServedRaster(
  el: ImageElement | LabelsElement,
  outDir: string,
  opts: BuildServedOptions,
): Promise<BuiltRaster> {
  const tile = opts.tileSize ?? SERVED_TILE_SIZE;
  const levels = planServedLevels(el, opts.basePx, tile);
  await checkRoomFor(el, levels, outDir);
  const axes = el.axes;
  const nOuter = axes.length - 2;
  if (axes[nOuter] !== "y" || axes[nOuter + 1] !== "x")
    throw new Error(`raster "${el.name}": axes must end with y,x (got ${axes.join(",")})`);
  await mkdir(outDir, { recursive: true });
  for (const lv of levels) {
    await mkdir(join(outDir, lv.path), { recursive: true });
    await writeFile(join(outDir, lv.path, "zarr.json"), JSON.stringify(servedArrayMeta(lv, axes, el.dtype)));
  }
  const level0 = levels[0]!;
  if (level0.shape.some((n) => n === 0)) return { levels, chunksWritten: 0, bytes: 0 };

  const workerLevels: WorkerLevel[] = levels.map((lv) => ({
    path: lv.path,
    h: lv.shape[nOuter]!,
    w: lv.shape[nOuter + 1]!,
    chunk: lv.chunks[nOuter]!,
    fromSource: lv.source !== null,
  }));
  const blocks = planeBlocks(level0.shape, level0.source!.chunks, nOuter);
  const fed = levels.filter((l) => l.source);
  const totalPlanes = blocks.reduce((s, b) => s + b.length, 0);
  const totalRows = totalPlanes * fed.reduce((s, l) => s + l.shape[nOuter]!, 0);
  let rowsDone = 0;
  const nThreads = Math.max(1, Math.min(opts.workers ?? 2, blocks.length));
  const entry = workerEntry();
  const threads = Array.from(
    { length: nThreads },
    () =>
      new BuildThread(entry.url, entry.execArgv, {
        outDir,
        dtype: el.dtype,
        method: opts.method ?? (el.kind === "labels" ? "nearest" : "mean"),
        zstdLevel: opts.zstdLevel ?? 0,
        levels: workerLevels,
      }),
  );
  const signal = opts.signal;
  const bandBytes = opts.bandBytes ?? 64 * 2 ** 20;
  let nextBlock = 0;

  const runThread = async (th: BuildThread): Promise<void> => {
    for (;;) {
      const b = nextBlock++;
      if (b >= blocks.length) return;
      const planes = blocks[b]!;
      th.post({ type: "block", planes });
      for (let k = 0; k < levels.length; k++) {
        const lv = levels[k]!;
        if (!lv.source) continue;
        const h = lv.shape[nOuter]!;
        const w = lv.shape[nOuter + 1]!;
        const t = lv.chunks[nOuter]!;
        // Bands of whole source chunk rows rounded up to whole output chunk rows, within the byte cap.
        const srcRows = lv.source.chunks[nOuter] ?? t;
        const rowBytes = planes.length * w * BYTES_PER_ELEMENT[el.dtype];
        const capRows = Math.max(t, Math.floor(bandBytes / Math.max(1, rowBytes) / t) * t);
        const bandH = Math.min(h, Math.min(capRows, t * Math.max(1, Math.ceil(srcRows / t))));
        const outerSel = planes[0]!.map((i, a) =>
          a === 0 ? ([i, planes[planes.length - 1]![0]! + 1] as [number, number]) : i,
        );
        let inFlight: Promise<FromWorker> | null = null;
        for (let y0 = 0; y0 < h; y0 += bandH) {
          signal?.throwIfAborted();
          const y1 = Math.min(h, y0 + bandH);
          const band = await lv.source.read([...outerSel, [y0, y1], null], signal);
          if (band.data.length !== planes.length * (y1 - y0) * w)
            throw new Error(
              `raster "${el.name}" ${lv.path}: the source gave ${band.data.length} values for rows ${y0}–${y1}`,
            );
          // Copied into a buffer that moves to the worker and comes back with its answer: a band on
          // shared memory would stay alive until both threads have collected it, and unreferenced
          // buffers are collected lazily (GBs of garbage at 20k²).
          const Ctor = TYPED_ARRAY_OF[el.dtype];
          const need = band.data.length * BYTES_PER_ELEMENT[el.dtype];
          const i = th.spare.findIndex((b) => b.byteLength >= need);
          const buf = i >= 0 ? th.spare.splice(i, 1)[0]! : new ArrayBuffer(need);
          const own = new Ctor(buf, 0, band.data.length);
          (own as Uint8Array).set(band.data as Uint8Array);
          const sent = th.send({ type: "band", level: k, y0, rows: y1 - y0, data: own }, [
            own.buffer as ArrayBuffer,
          ]);
          if (inFlight) await inFlight;
          inFlight = sent.then((m) => {
            rowsDone += (y1 - y0) * planes.length;
            opts.onProgress?.(Math.min(1, rowsDone / Math.max(1, totalRows)));
            return m;
          });
        }
        if (inFlight) await inFlight;
      }
      await th.send({ type: "end" });
    }
  };

  const stopAll = () => Promise.all(threads.map((t) => t.worker.terminate()));
  const onAbort = () => void stopAll();
  signal?.addEventListener("abort", onAbort, { once: true });
  try {
    const results = await Promise.allSettled(threads.map(runThread));
    signal?.throwIfAborted();
    const failed = results.find((r): r is PromiseRejectedResult => r.status === "rejected");
    if (failed) throw failed.reason;
  } finally {
    signal?.removeEventListener("abort", onAbort);
    await stopAll();
  }
  return {
    levels,
    chunksWritten: threads.reduce((s, t) => s + t.written, 0),
    bytes: threads.reduce((s, t) => s + t.bytes, 0),
  };
}
