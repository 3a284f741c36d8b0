/**
 * Worker thread of the served-store rebuild (see `build.ts`): it receives bands of rows of one block
 * of planes (channels) level by level, cuts them into chunks, encodes each chunk (`bytes` + zstd) and
 * writes it as a file, and builds the coarser levels on the way by 2×2 downsampling of the rows it
 * has seen, so that no level is ever held whole: per level it keeps one row of chunks and, for the
 * downsampling, at most one odd row.
 *
 * Chunks that hold only the fill value (0) are not written: a missing chunk reads as the fill value.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parentPort, workerData } from "node:worker_threads";
import Zstd from "numcodecs/zstd";
import { BYTES_PER_ELEMENT, type DType, TYPED_ARRAY_OF, type TypedArray } from "../data/arrays.js";
import { type DownsampleMethod, reduceRows } from "./pyramid.js";

/** One output level as the worker sees it. */
export interface WorkerLevel {
  /** Array path in the output folder (`s0`). */
  readonly path: string;
  readonly h: number;
  readonly w: number;
  /** Chunk edge on y and x. */
  readonly chunk: number;
  /** Fed from the source (bands arrive for it); otherwise made from the level above. */
  readonly fromSource: boolean;
}

/** What the worker is started with. */
export interface BuildWorkerData {
  readonly outDir: string;
  readonly dtype: DType;
  readonly method: DownsampleMethod;
  readonly zstdLevel: number;
  readonly levels: readonly WorkerLevel[];
}

/** Messages to the worker. */
export type ToWorker =
  | { readonly type: "block"; readonly planes: readonly (readonly number[])[] }
  | {
      readonly type: "band";
      readonly level: number;
      readonly y0: number;
      readonly rows: number;
      readonly data: TypedArray;
    }
  | { readonly type: "end" };

/** Messages from the worker. */
export type FromWorker =
  | {
      readonly type: "ack";
      readonly written: number;
      readonly bytes: number;
      /** The band's buffer, handed back for the next band (no garbage per band). */
      readonly buffer: ArrayBuffer;
    }
  | { readonly type: "blockDone"; readonly written: number; readonly bytes: number }
  | { readonly type: "error"; readonly message: string };

interface LevelState {
  rowsIn: number;
  /** One row of chunks: planes × chunk rows × w. */
  buf: TypedArray;
  bufRows: number;
  ty: number;
  /** The last row of the previous band when it had no partner yet (planes × w). */
  carry: TypedArray;
  hasCarry: boolean;
  /** Reused scratch: the carried row followed by a band, and the downsampled rows for the next level. */
  combined: TypedArray | null;
  down: TypedArray | null;
  /** One chunk, reused for every chunk of the level. */
  tile: TypedArray;
}

const data = workerData as BuildWorkerData;
const Ctor = TYPED_ARRAY_OF[data.dtype];
const zstd = Zstd.fromConfig({ level: data.zstdLevel });
/** The fill value in the array's own number kind (64-bit arrays hold BigInts). */
const ZERO = data.dtype === "int64" || data.dtype === "uint64" ? 0n : 0;
const madeDirs = new Set<string>();
let planes: (readonly number[])[] = [];
let states: LevelState[] = [];
let written = 0;
let bytes = 0;

function newArray(n: number): TypedArray {
  return new Ctor(new ArrayBuffer(n * BYTES_PER_ELEMENT[data.dtype]), 0, n);
}

function startBlock(p: readonly (readonly number[])[]): void {
  planes = [...p];
  states = data.levels.map((lv) => ({
    rowsIn: 0,
    buf: newArray(planes.length * lv.chunk * lv.w),
    bufRows: 0,
    ty: 0,
    carry: newArray(planes.length * lv.w),
    hasCarry: false,
    combined: null,
    down: null,
    tile: newArray(lv.chunk * lv.chunk),
  }));
}

/** `cur` when it holds at least `n` values, else a new array of `n` (scratch buffers only grow). */
function atLeast(cur: TypedArray | null, n: number): TypedArray {
  return cur && cur.length >= n ? cur : newArray(n);
}

function allZero(a: TypedArray): boolean {
  const v = a as unknown as ArrayLike<number | bigint>;
  for (let i = 0; i < v.length; i++) if (v[i] !== 0 && v[i] !== 0n) return false;
  return true;
}

/** Encode and write every chunk of level k's buffered chunk row. */
async function emitChunkRow(k: number): Promise<void> {
  const lv = data.levels[k]!;
  const st = states[k]!;
  const t = lv.chunk;
  const nx = Math.ceil(lv.w / t);
  for (let p = 0; p < planes.length; p++) {
    const dir = join(data.outDir, lv.path, "c", ...planes[p]!.map(String), String(st.ty));
    const tile = st.tile;
    for (let tx = 0; tx < nx; tx++) {
      tile.fill(ZERO as never);
      const x0 = tx * t;
      const cols = Math.min(t, lv.w - x0);
      const base = p * t * lv.w;
      for (let r = 0; r < st.bufRows; r++) {
        const from = base + r * lv.w + x0;
        (tile as Uint8Array).set((st.buf as Uint8Array).subarray(from, from + cols), r * t);
      }
      if (allZero(tile)) continue;
      const raw = new Uint8Array(tile.buffer, tile.byteOffset, tile.byteLength);
      const enc = await zstd.encode(raw);
      if (!madeDirs.has(dir)) {
        mkdirSync(dir, { recursive: true });
        madeDirs.add(dir);
      }
      writeFileSync(join(dir, String(tx)), enc);
      written++;
      bytes += enc.byteLength;
    }
  }
  st.bufRows = 0;
  st.ty++;
}

/** Feed rows `[y0, y0 + rows)` of level k (planes × rows × w, C order). */
async function push(k: number, band: TypedArray, y0: number, rows: number): Promise<void> {
  const lv = data.levels[k]!;
  const st = states[k]!;
  if (y0 !== st.rowsIn) throw new Error(`level ${lv.path}: rows ${y0}… arrived, expected ${st.rowsIn}`);
  if (y0 + rows > lv.h) throw new Error(`level ${lv.path}: rows up to ${y0 + rows} of ${lv.h}`);
  const w = lv.w;
  const np = planes.length;
  let off = 0;
  while (off < rows) {
    const m = Math.min(rows - off, lv.chunk - st.bufRows);
    for (let p = 0; p < np; p++) {
      const from = p * rows * w + off * w;
      (st.buf as Uint8Array).set(
        (band as Uint8Array).subarray(from, from + m * w),
        p * lv.chunk * w + st.bufRows * w,
      );
    }
    st.bufRows += m;
    off += m;
    if (st.bufRows === lv.chunk || y0 + off === lv.h) await emitChunkRow(k);
  }
  st.rowsIn += rows;

  const next = data.levels[k + 1];
  if (!next || next.fromSource) return;
  // Rows available for pairing: the carried odd row (index y0 − 1), then this band.
  const carried = st.hasCarry;
  const a = carried ? y0 - 1 : y0;
  const m = rows + (carried ? 1 : 0);
  const pairs = Math.max(0, Math.min(Math.floor(m / 2), next.h - a / 2));
  let combined: TypedArray = band;
  if (carried) {
    st.combined = atLeast(st.combined, np * m * w);
    combined = st.combined;
    for (let p = 0; p < np; p++) {
      (combined as Uint8Array).set((st.carry as Uint8Array).subarray(p * w, (p + 1) * w), p * m * w);
      (combined as Uint8Array).set(
        (band as Uint8Array).subarray(p * rows * w, (p + 1) * rows * w),
        p * m * w + w,
      );
    }
  }
  st.hasCarry = false;
  if (m - 2 * pairs === 1 && a / 2 + pairs < next.h) {
    for (let p = 0; p < np; p++) {
      const from = p * m * w + (m - 1) * w;
      (st.carry as Uint8Array).set((combined as Uint8Array).subarray(from, from + w), p * w);
    }
    st.hasCarry = true;
  }
  if (pairs === 0) return;
  // Output rows [a/2, a/2 + pairs) of every plane, from input rows [a, a + 2·pairs) (plane stride m rows).
  const ow = next.w;
  st.down = atLeast(st.down, np * pairs * ow);
  const down = st.down;
  reduceRows(combined, m, 0, w, down, pairs, ow, np, 0, pairs, data.method, data.dtype);
  await push(k + 1, down, a / 2, pairs);
}

function finishBlock(): void {
  data.levels.forEach((lv, k) => {
    const st = states[k]!;
    if (st.rowsIn !== lv.h) throw new Error(`level ${lv.path}: ${st.rowsIn} of ${lv.h} rows were built`);
  });
}

let chain: Promise<void> = Promise.resolve();
parentPort!.on("message", (msg: ToWorker) => {
  chain = chain.then(async () => {
    try {
      if (msg.type === "block") startBlock(msg.planes);
      else if (msg.type === "band") {
        await push(msg.level, msg.data, msg.y0, msg.rows);
        const buffer = msg.data.buffer as ArrayBuffer;
        parentPort!.postMessage({ type: "ack", written, bytes, buffer } satisfies FromWorker, [buffer]);
      } else {
        finishBlock();
        parentPort!.postMessage({ type: "blockDone", written, bytes } satisfies FromWorker);
      }
    } catch (err) {
      parentPort!.postMessage({
        type: "error",
        message: err instanceof Error ? err.message : String(err),
      } satisfies FromWorker);
    }
  });
});
