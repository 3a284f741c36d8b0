/**
 * The SDK facade: what the server does, in a few lines of a script.
 *
 * ```ts
 * const t = await Tessera.start({ dataDir: "data" });
 * const s = await t.open("demo.sdata.zarr.zip");
 * await s.run("custom.rename_obs_column", { old_name: "cell_type", new_name: "label" });
 * const col = await s.values("obs:label");
 * const path = await s.save({ prefix: "demo" });
 * await t.close();
 * ```
 *
 * It wraps a `Service` and its `Session`s (both reachable as `.service` / `.session` for anything
 * the facade does not cover) and turns jobs into promises: `run` resolves when the job is committed
 * and rejects with the job's error when it fails.
 */
import { randomUUID } from "node:crypto";
import { resolve } from "node:path";
import type { FieldTable, FieldValue } from "./data/field.js";
import type { SpatialData } from "./data/spatialdata.js";
import { NotFoundError } from "./errors.js";
import type { EventBus } from "./events/bus.js";
import type { TesseraEvent } from "./events/types.js";
import type { AppState } from "./io/checkpoint/app-state.js";
import { checkRecipe } from "./recipes/check.js";
import { parseRecipe, type Recipe, type RecipeCatalogEntry, stepKey } from "./recipes/model.js";
import type { PreflightResult } from "./recipes/preflight.js";
import type { RecipeValues } from "./recipes/substitute.js";
import type { Descriptor } from "./session/app-state-machine.js";
import type { ServiceConfig } from "./session/config.js";
import { Service, type ServiceOptions } from "./session/service.js";
import type { Session } from "./session/session.js";
import type { JobOutcome, SaveOptions } from "./session/types.js";

/** Options of `Tessera.start`. */
export interface TesseraOptions {
  /** The data dir (default `TESSERA_DATA_DIR`, else `./.tessera-data`); every path must lie under it. */
  dataDir?: string;
  /** Plugins to load (default `TESSERA_PLUGINS`, else the built-in default). */
  plugins?: string[];
  /** Other settings (see `ServiceConfig`). */
  config?: Partial<ServiceConfig>;
  /** Environment to read settings from (default `process.env`). */
  env?: ServiceOptions["env"];
}

/** A job that failed or was cancelled, as `run` rejects with it. */
export class JobFailedError extends Error {
  /** How the job ended. */
  readonly outcome: JobOutcome;
  constructor(what: string, outcome: JobOutcome) {
    super(`${what} ${outcome.status}: ${outcome.error ?? "no message"}`);
    this.name = "JobFailedError";
    this.outcome = outcome;
  }
}

/** Split `sc.pp.normalize_total` into namespace `sc.pp` and function `normalize_total`. */
export function splitKey(key: string): { namespace: string; function: string } {
  const i = key.lastIndexOf(".");
  if (i <= 0 || i === key.length - 1)
    throw new Error(`"${key}" is not a function key like "custom.rename_obs_column"`);
  return { namespace: key.slice(0, i), function: key.slice(i + 1) };
}

async function settled(what: string, done: Promise<JobOutcome>): Promise<JobOutcome> {
  const out = await done;
  if (out.status !== "completed") throw new JobFailedError(what, out);
  return out;
}

/** What `TesseraSession.runRecipe` reports while it runs. */
export interface RecipeRunListeners {
  /** The running step reported progress (`fraction` 0…1). */
  onProgress?: (p: { index: number; key: string; fraction: number; message?: string | undefined }) => void;
  /** A step ended (steps end in order); `log` is what it logged. */
  onStep?: (s: { index: number; key: string; outcome: JobOutcome; log: string }) => void;
}

/** One open dataset (a session) with promise-returning calls. */
export class TesseraSession {
  /** The underlying session (events, staging, displays, state …). */
  readonly session: Session;
  /** The service's event bus (progress of this session's jobs). */
  private readonly bus: EventBus;

  constructor(session: Session, bus: EventBus) {
    this.session = session;
    this.bus = bus;
  }

  /** Session id. */
  get id(): string {
    return this.session.id;
  }

  /** Session name. */
  get name(): string {
    return this.session.name;
  }

  /** The committed data object. */
  get data(): SpatialData {
    return this.session.data;
  }

  /** History, plots and displays. */
  get appState(): AppState {
    return this.session.appState;
  }

  /**
   * Run a registered function (`"sc.pp.pca"`, `"custom.rename_obs_column"` …) and wait for it: a
   * compute resolves once committed (its `result.structural_diff` says what changed), a plot once
   * drawn (`result.plot_id`), an extract with its value in `result`. Rejects with `JobFailedError`.
   */
  async run(key: string, params: Record<string, unknown> = {}): Promise<JobOutcome> {
    const ticket = await this.session.submit({ ...splitKey(key), params });
    return settled(key, ticket.done);
  }

  /** Run an extract and return its value. */
  async extract<T = unknown>(key: string, params: Record<string, unknown> = {}): Promise<T> {
    return (await this.run(key, params)).result as T;
  }

  /** Stage a call as a pending step; returns its id (`session.runPending(id)` runs it). */
  stage(key: string, params: Record<string, unknown> = {}): Promise<string> {
    return this.session.stage({ ...splitKey(key), params });
  }

  /** One field as a column table (`obs:cell_type`, `X:CD3E`, `obsm:spatial` …). */
  field(path: string): Promise<FieldTable> {
    return this.session.field(path);
  }

  /** The values of a one-column field (`obs:<col>`, `X:<gene>`, `var:<col>`), in row order. */
  async values(path: string): Promise<FieldValue[]> {
    const t = await this.session.field(path);
    const col = t.columns[0];
    if (!col) return [];
    return Array.from({ length: t.nRows }, (_, i) => col.get(i));
  }

  /** Save a checkpoint (the whole object) and return its path. */
  async save(opts: SaveOptions = {}): Promise<string> {
    const out = await settled("save", (await this.session.save(opts)).done);
    return (out.result as { path: string }).path;
  }

  /** A drawn plot's figure bytes. */
  async figure(plotId: string, format: "svg" | "png" | "pdf" = "svg"): Promise<Uint8Array> {
    const bytes = await this.session.figure(plotId, format);
    if (!bytes) throw new NotFoundError(`plot ${plotId} has no ${format} figure`);
    return bytes;
  }

  /** Preflight a recipe against this session. */
  preflight(recipe: Recipe, values: RecipeValues = {}): PreflightResult {
    return this.session.preflight(recipe, values);
  }

  /**
   * Run every step of a recipe and wait for all. The recipe is checked first, as
   * {@link Tessera.checkRecipe} does (unknown values and functions, every step's params: one
   * `BadRequestError` listing all, nothing queued). Steps run in order; a failed step does not stop the
   * later ones. Resolves with every step's outcome (check `status`). `opts.onProgress` hears what the
   * running step reports through `ctx.progress`, `opts.onStep` each step as it ends (in order), with
   * its log: what a command line or a notebook shows while a long recipe runs.
   */
  async runRecipe(
    recipe: Recipe,
    values: RecipeValues = {},
    opts: RecipeRunListeners = {},
  ): Promise<JobOutcome[]> {
    const run = await this.session.runRecipe(recipe, { values, mode: "run" });
    const stepOf = new Map(run.tickets.map((t, i) => [t.job_id, i]));
    const onProgress = opts.onProgress;
    const stop = onProgress
      ? this.bus.subscribe((e) => {
          if (e.event !== "job.progress") return;
          const d = e.data as { job_id: string; fraction: number; message?: string };
          const i = stepOf.get(d.job_id);
          if (i !== undefined)
            onProgress({
              index: i,
              key: stepKey(recipe.steps[i]!),
              fraction: d.fraction,
              message: d.message,
            });
        }, this.bus.lastId)
      : () => {};
    try {
      const outcomes: JobOutcome[] = [];
      for (const [i, ticket] of run.tickets.entries()) {
        const outcome = await ticket.done;
        outcomes.push(outcome);
        opts.onStep?.({
          index: i,
          key: stepKey(recipe.steps[i]!),
          outcome,
          log: this.session.job(ticket.job_id).log,
        });
      }
      return outcomes;
    } finally {
      stop();
    }
  }

  /** The completed analysis as a recipe. */
  exportRecipe(): Recipe {
    return this.session.exportRecipe();
  }
}

/** The engine for a script (see the module comment). */
export class Tessera {
  /** The underlying service (registry, pool, bus, sessions). */
  readonly service: Service;

  private constructor(service: Service) {
    this.service = service;
  }

  /** Start the engine: configuration, registry, worker pool, recipes. */
  static async start(opts: TesseraOptions = {}): Promise<Tessera> {
    const config: Partial<ServiceConfig> = {
      ...opts.config,
      ...(opts.dataDir ? { dataDir: resolve(opts.dataDir) } : {}),
    };
    const service = await Service.start({
      config,
      ...(opts.plugins ? { plugins: opts.plugins } : {}),
      ...(opts.env ? { env: opts.env } : {}),
    });
    return new Tessera(service);
  }

  /** The data dir (absolute). */
  get dataDir(): string {
    return this.service.config.dataDir;
  }

  /**
   * Open a dataset or checkpoint (`path` absolute or relative to the data dir) and wait until it is
   * loaded. A checkpoint restores its history, plots and displays.
   */
  async open(
    path: string,
    opts: { name?: string; onLoading?: (pct: number, message: string) => void } = {},
  ): Promise<TesseraSession> {
    const loadId = randomUUID();
    const onLoading = opts.onLoading;
    const stop = onLoading
      ? this.service.bus.subscribe((e) => {
          if (e.event !== "session.loading") return;
          const d = e.data as { load_id: string; message: string; pct: number; done?: boolean };
          if (d.load_id === loadId && !d.done) onLoading(d.pct, d.message);
        }, this.service.bus.lastId)
      : () => {};
    try {
      const s = await this.service.createSession({
        source: { kind: "load", path },
        load_id: loadId,
        ...(opts.name ? { name: opts.name } : {}),
      });
      return await this.whenReady(s);
    } finally {
      stop();
    }
  }

  /** Open a dataset with a reader (`"read.read_data"`, `"io.visium"` …) and wait until it is loaded. */
  async read(
    key: string,
    params: Record<string, unknown>,
    opts: { name?: string } = {},
  ): Promise<TesseraSession> {
    const { namespace, function: fn } = splitKey(key);
    if (namespace !== "read" && namespace !== "io")
      throw new Error(`${key} is not a reader (namespace read or io)`);
    const s = await this.service.createSession({
      source: { kind: "read", namespace, function: fn, params },
      ...(opts.name ? { name: opts.name } : {}),
    });
    return this.whenReady(s);
  }

  /** The registered functions and library versions (`GET /api/functions`). */
  functions(): ReturnType<Service["registry"]["envelope"]> {
    return this.service.registry.envelope();
  }

  /** The recipes found at startup. */
  recipes(): RecipeCatalogEntry[] {
    return this.service.recipes.list();
  }

  /** A discovered recipe by name, or a recipe object checked for format. */
  recipe(nameOrJson: string | object): Recipe {
    if (typeof nameOrJson !== "string") return parseRecipe(nameOrJson);
    const r = this.service.recipes.get(nameOrJson);
    if (!r)
      throw new NotFoundError(
        `no recipe "${nameOrJson}" (have: ${
          this.recipes()
            .map((x) => x.name)
            .join(", ") || "none"
        })`,
      );
    return r;
  }

  /**
   * Check a recipe with `values` before loading anything: unknown values, required params without
   * one, unknown functions and every step's params against its schema. Throws a `BadRequestError`
   * (400) listing every problem; `tessera run` calls it before it opens the input, and
   * {@link TesseraSession.runRecipe} runs the same check before any step is queued.
   */
  checkRecipe(recipe: Recipe, values: RecipeValues = {}): void {
    checkRecipe(recipe, this.service.functions, values);
  }

  /** Follow the event stream; returns the unsubscribe function. */
  on(listener: (e: TesseraEvent) => void): () => void {
    return this.service.bus.subscribe(listener, this.service.bus.lastId);
  }

  /** Close every session and stop the workers. */
  close(): Promise<void> {
    return this.service.close();
  }

  private async whenReady(s: Session): Promise<TesseraSession> {
    await s.ready;
    if (s.status !== "ready") {
      const error = s.summary().error;
      await this.service.deleteSession(s.id);
      throw new Error(error ?? "the session did not load");
    }
    return new TesseraSession(s, this.service.bus);
  }
}

/** A descriptor from a key and params (`descriptor("sc.pp.pca", {n_comps: 30})`). */
export function descriptor(key: string, params: Record<string, unknown> = {}): Descriptor {
  return { ...splitKey(key), params };
}
