/**
 * The job-worker side of reading an instrument folder off the main thread (see `off-thread.ts`): a
 * pool operation that parses the folder — by recognition, or through a named reader operation — and
 * returns the object with its images' recipes. Tables, shapes and points come back as transferred
 * typed arrays (`packResult`), string indexes as their backing (a points frame's `0 … n−1` index as two
 * numbers, cell ids as packed UTF-8: no string per row on the main thread), images as markers the main
 * thread reopens from their recipes.
 */
import { threadId } from "node:worker_threads";
import type { SpatialData } from "../../data/spatialdata.js";
import type { OpContext } from "../../jobs/operation.js";
import type { ReaderReport } from "./common.js";
import { type ImageRecipes, recipesOf } from "./image-recipe.js";
import "./readers.js";
import { readVendorFolder } from "./recognize.js";

/** Which reader the worker runs. */
export type WorkerReadParams =
  /** Recognise the folder `path` and read it with that reader's defaults (a `kind: "load"` session). */
  | { readonly path: string }
  /** Call a reader operation (`io.xenium` …) by its module and export with validated params. */
  | {
      readonly op: { readonly module: string; readonly export: string; readonly name: string };
      readonly params: Record<string, unknown>;
    };

/** What the worker sends back. */
export interface WorkerReadResult {
  readonly sdata: SpatialData;
  /** How to reopen each image on the main thread. */
  readonly images: ImageRecipes;
  /** The format or reader that read it (`xenium`, `io.xenium`). */
  readonly format: string;
}

/** This module's URL: what the main thread names as the task's module. */
export const WORKER_READ_MODULE = import.meta.url;

/** Read in the worker (the pool operation; `_sd` is unused). Progress and log go to the job. */
export async function readInWorker(
  _sd: SpatialData,
  p: WorkerReadParams,
  ctx: OpContext,
): Promise<WorkerReadResult> {
  const report: ReaderReport = {
    progress: (f, m) => ctx.progress(f, m),
    log: (t) => ctx.log(t),
    signal: ctx.signal,
  };
  // Said in the job's log: which thread parsed (0 would be the main thread).
  ctx.log(`parsing on worker thread ${threadId}`);
  if ("path" in p) {
    const r = await readVendorFolder(p.path, report);
    for (const w of r.warnings) ctx.log(`warning: ${w}`);
    return {
      sdata: r.sdata,
      images: r.images ?? {},
      format: r.sdata.source?.format ?? r.reader,
    };
  }
  const mod = (await import(p.op.module)) as Record<string, unknown>;
  const fn = mod[p.op.export];
  if (typeof fn !== "function") throw new Error(`${p.op.name}: module has no export "${p.op.export}"`);
  const sdata = (await fn(_sd, p.params, ctx)) as SpatialData;
  return { sdata, images: recipesOf(sdata), format: p.op.name };
}
