/**
 * Reading an instrument folder off the main thread. Parsing a Xenium folder of half a million cells
 * is seconds of synchronous work (decompression, CSV/parquet decoding, building columns); done on the
 * main thread it would stall every other request. So the parse runs as a job on the worker pool
 * (`worker-read.ts`), its typed arrays come back moved (not copied), and the main thread only reopens
 * the images from their recipes (a header read each).
 */
import type { SpatialData } from "../../data/spatialdata.js";
import { reopenImages } from "./image-recipe.js";
import { vendorReader } from "./recognize.js";
import { WORKER_READ_MODULE, type WorkerReadParams, type WorkerReadResult } from "./worker-read.js";

/** The part of the job pool this needs (`WorkerPool.run`, or a session's pool). */
export interface ReadPool {
  run(
    task: {
      module: string;
      export: string;
      sdata: SpatialData;
      params: Record<string, unknown>;
      table: string;
      seed: number;
      threads: number;
      effect: "compute";
    },
    hooks?: {
      signal?: AbortSignal;
      onProgress?(fraction: number, message?: string): void;
      onLog?(text: string): void;
      name?: string;
    },
  ): Promise<unknown>;
}

/** Job hooks of an off-thread read: cancellation, progress (0–1) and log lines. */
export interface OffThreadHooks {
  readonly signal?: AbortSignal;
  readonly progress?: (fraction: number, message?: string) => void;
  readonly log?: (line: string) => void;
}

/** Reader operations that parse their input eagerly (everything but `io.read_zarr`, which stays lazy). */
const EAGER_READERS = new Set([
  "io.read_10x_h5",
  "io.read_10x_mtx",
  "read.visium",
  "read.vizgen",
  "read.nanostring",
]);

/** Whether reader operation `key` parses eagerly, so it is worth running in a worker. */
export function parsesEagerly(key: string): boolean {
  return EAGER_READERS.has(key) || vendorReader(key) !== null;
}

/**
 * Run `params` (a folder to recognise, or a reader operation with its params) on `pool` and bring the
 * object back with its images reopened here. Errors are the reader's (a `DataError` naming the file
 * arrives as the job's error with the same message).
 */
export async function readOffThread(
  pool: ReadPool,
  params: WorkerReadParams,
  hooks: OffThreadHooks = {},
): Promise<{ sdata: SpatialData; format: string }> {
  const name = "path" in params ? "io (recognised folder)" : params.op.name;
  const out = (await pool.run(
    {
      module: WORKER_READ_MODULE,
      export: "readInWorker",
      sdata: { kind: "spatialdata", images: {}, labels: {}, points: {}, shapes: {}, tables: {}, attrs: {} },
      params: params as unknown as Record<string, unknown>,
      table: "",
      seed: 0,
      threads: 1,
      effect: "compute",
    },
    {
      ...(hooks.signal ? { signal: hooks.signal } : {}),
      ...(hooks.progress ? { onProgress: hooks.progress } : {}),
      ...(hooks.log ? { onLog: hooks.log } : {}),
      name,
    },
  )) as WorkerReadResult;
  hooks.signal?.throwIfAborted();
  return { sdata: await reopenImages(out.sdata, out.images), format: out.format };
}
