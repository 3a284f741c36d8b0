/**
 * The operation contract: what a plugin function receives and returns. An operation is a plain
 * exported async function `(sd, params, ctx) => result`; the registry reflects its params type into a
 * JSON Schema, and the engine runs it in a worker thread on the committed object.
 */
import type { Change } from "../data/change.js";
import type { SpatialData } from "../data/spatialdata.js";
import type { Rng } from "../math/rng.js";

/** How the engine treats an operation's result. */
export type EffectClass = "compute" | "plot" | "extract" | "read";

/** What an operation is given besides the data and its params. */
export interface OpContext {
  /** Name of the active table (the one the session colours and analyses). */
  readonly table: string;
  /** Aborted when the job is cancelled or the long-running watchdog fires; check it in long loops. */
  readonly signal: AbortSignal;
  /** Seeded random stream for this job (seed from the params' `random_state`/`seed`, else 0). */
  readonly rng: Rng;
  /** Threads the operation may use (its share of TESSERA_N_THREADS). */
  readonly threads: number;
  /** Report progress: `fraction` in [0, 1], with an optional message. */
  progress(fraction: number, message?: string): void;
  /** Append to the job's log. */
  log(text: string): void;
  /**
   * Gene `gene` of `table`'s X from the session's column mirror (the column-major copy of X in the
   * checkpoint the session was loaded from, read and cached by the session): one column without
   * scanning a CSR X. Null when the session has none, or it no longer holds the X this job runs on;
   * then read X itself. Absent where no session answers (a direct call). Do not write into the result.
   */
  mirrorGene?(table: string, gene: string): Promise<Float32Array | null>;
}

/** A plot's result: the figure (SVG, optionally PNG/PDF) and the field paths it read. */
export interface PlotResult {
  readonly kind: "plot";
  readonly svg: string;
  readonly png?: Uint8Array;
  readonly pdf?: Uint8Array;
  /** Field paths drawn from; a later change to one invalidates the plot. */
  readonly references: string[];
}

/** What each effect class returns. */
export interface OperationResults {
  compute: Change;
  plot: PlotResult;
  /** Any JSON-serialisable value. */
  extract: unknown;
  read: SpatialData;
}

/** An operation function. */
export type Operation<P = Record<string, unknown>, R = unknown> = (
  sd: SpatialData,
  params: P,
  ctx: OpContext,
) => Promise<R> | R;
