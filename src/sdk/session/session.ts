/**
 * Session: one in-memory SpatialData object, its app state (history, pending steps, plots, displays),
 * its data versions and its FIFO job queue. Every transition of the spec's state table happens here
 * and emits its event.
 *
 * Reads (`data`, `field`, `state`) always see the last committed object: a job runs in the worker
 * pool on the committed object (shared zero-copy), and its result is committed in one synchronous
 * step (`applyChange`, the version bumps, the history update and plot invalidation), so there is no
 * moment at which a half-applied change is visible. A failed, crashed or cancelled job commits
 * nothing.
 */
import { randomUUID } from "node:crypto";
import { applyChange, type Change } from "../data/change.js";
import { type FieldTable, readField } from "../data/field.js";
import { elementBytes, tableBytes, toMb } from "../data/sizes.js";
import { ELEMENT_KINDS, makeSpatialData, type SpatialData } from "../data/spatialdata.js";
import { nObs, nVars } from "../data/table.js";
import { BadRequestError, NotFoundError, StateError, TesseraError } from "../errors.js";
import {
  type AppState,
  type DisplaySpec,
  emptyAppState,
  type PlotEntry,
} from "../io/checkpoint/app-state.js";
import { mirroredGene } from "../io/checkpoint/mirror-gene.js";
import { type Checkpoint, readFigure } from "../io/checkpoint/read.js";
import { validateAppState } from "../io/checkpoint/validate.js";
import { datasetName, type FigureFile } from "../io/checkpoint/write.js";
import { estimateFolderNeed } from "../io/vendors/need.js";
import { parsesEagerly, readOffThread } from "../io/vendors/off-thread.js";
import type { OpContext } from "../jobs/operation.js";
import { SerialQueue } from "../jobs/queue.js";
import { Rng } from "../math/rng.js";
import type { RasterHub, RenderedImage, RenderOptions, SessionRasters } from "../raster/hub.js";
import type { ImageInfo } from "../raster/info.js";
import type { ServedBytes, ServedRasterStore } from "../raster/served-store.js";
import { checkRecipe } from "../recipes/check.js";
import { type ExportRecipeOptions, exportRecipe } from "../recipes/export.js";
import { type Recipe, stepKey } from "../recipes/model.js";
import { type PreflightResult, preflight } from "../recipes/preflight.js";
import { type RecipeValues, substituteSteps } from "../recipes/substitute.js";
import {
  addEntry,
  type Descriptor,
  discardEntry,
  entryDescriptor,
  findEntry,
  invalidatePlots,
  pendingIds,
  putDisplay,
  removePlot,
  requireEntry,
  settleLoadedState,
  transition,
  updatePendingParams,
} from "./app-state-machine.js";
import { checkSelection, type ExportSelection, isExport } from "./export-selection.js";
import { defaultActiveTable, describeFields } from "./fields.js";
import type { SessionFunctions } from "./functions.js";
import {
  computeResult,
  type FigureSet,
  isSpatialData,
  type JobRecord,
  logHook,
  makeJobRecord,
  plotFigures,
  poolTask,
  progressHook,
  readerResult,
  seedOf,
} from "./job-runner.js";
import { openLoadPath, restorePlan } from "./load.js";
import { containParams, containPath } from "./paths.js";
import { resolveSaveTarget, type SaveTarget, type SaveTicket, targetPaths } from "./save.js";
import { reopenWritten, writeSave } from "./save-job.js";
import { checkShapeBounds, type TableShape } from "./shape-bounds.js";
import { tableShape } from "./table-shape.js";
import type {
  EngineBus,
  EngineFunction,
  EnginePool,
  JobAnswer,
  JobKind,
  JobStatus,
  JobTicket,
  QueueItem,
  SaveOptions,
  SessionSource,
  SessionState,
  SessionStatus,
  SessionSummary,
} from "./types.js";
import { bumpVersions, type DataVersions } from "./versions.js";

/** What a session is given by its service. */
export interface SessionDeps {
  readonly functions: SessionFunctions;
  readonly pool: EnginePool;
  readonly bus: EngineBus;
  /** Data dir (absolute), thread budget per job, and the working folder for save staging. */
  readonly config: { readonly dataDir: string; readonly nThreads: number; readonly workDir: string };
  /** The service's raster hub (caches, tiles, render limit), shared by its sessions. */
  readonly rasters: RasterHub;
  /**
   * Memory admission by need: throws (503) when a job's estimated peak does not fit below the admission
   * threshold. Absent: every job is admitted.
   */
  readonly admitNeed?: (what: string, bytes: number, why: string) => void;
}

/** Options of `Session.create`. */
export interface SessionInit {
  readonly source: SessionSource;
  readonly name?: string;
  readonly loadId?: string;
  readonly parentId?: string | null;
  /** Recovery after a restart (see journal.ts): what to load instead of the source, and the state to reach. */
  readonly restore?: SessionRestore;
}

/** How a session recorded in a journal comes back. */
export interface SessionRestore {
  /** The session's autosave (a path in the work dir, trusted), loaded instead of the source; null: the source. */
  readonly checkpoint: string | null;
  /** The journal's app state: displays and pending steps are restored, later computations replayed. */
  readonly appState: AppState;
  /** The user's checkpoint it was last saved to or loaded from, and whether the data equalled it. */
  readonly savedPath: string | null;
  readonly saved: boolean;
  readonly activeTable: string | null;
}

/** A recipe run's answer. */
export interface RecipeRun {
  /** Tickets of the steps queued (mode `run`), in order. */
  tickets: JobTicket[];
  /** Ids of the steps staged (mode `stage`), in order. */
  staged: string[];
}

const now = () => new Date().toISOString();

function message(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** A session (see the module comment). Create with `Session.create` (through `Service`). */
export class Session {
  /** Session id (uuid). */
  readonly id: string;
  /** When the session was created (ISO 8601). */
  readonly createdAt: string;
  /** Id of the session this one was subset from. */
  readonly parentId: string | null;
  /** Where the data came from. */
  readonly source: SessionSource;
  /** Resolves when the load ends, whatever its outcome (see `status`). */
  readonly ready: Promise<void>;

  private readonly deps: SessionDeps;
  private readonly queue: SerialQueue;
  private readonly jobs = new Map<string, JobRecord>();
  private readonly figureBytes = new Map<string, FigureSet>();
  private sessionName: string;
  /** Whether the creator named the session (a checkpoint's recorded name then does not replace it). */
  private readonly explicitName: boolean;
  private sessionStatus: SessionStatus = "loading";
  private errorMessage: string | null = null;
  private committed: SpatialData = makeSpatialData();
  private app: AppState = emptyAppState();
  private versions: DataVersions = {};
  private active: string | null = null;
  private checkpoint: Checkpoint | null = null;
  private isSaved = false;
  private storePath: string | null = null;
  private closed = false;
  private rasterState: SessionRasters | null = null;
  /** Set while a recovered session loads: the journal state it is brought up to once loaded. */
  private restoring: SessionRestore | null = null;

  private constructor(deps: SessionDeps, init: SessionInit, id: string) {
    this.deps = deps;
    this.id = id;
    this.createdAt = now();
    this.parentId = init.parentId ?? null;
    this.source = init.source;
    this.explicitName = Boolean(init.name?.trim());
    this.sessionName =
      init.name?.trim() ||
      (init.source.kind === "load"
        ? datasetName(init.source.path)
        : datasetName(String(init.source.params.path ?? init.source.function)));
    this.queue = new SerialQueue({
      onError: (jobId, err) => console.error(`tessera session ${this.id}: job ${jobId}:`, err),
    });
    let resolveReady!: () => void;
    this.ready = new Promise((r) => {
      resolveReady = r;
    });
    this.readyResolve = resolveReady;
  }

  private readonly readyResolve: () => void;

  /**
   * Create a session from `init.source` and start loading it as its first job. Paths are checked
   * against the data dir first (a `PathError` rejects the call, no session is made); the session
   * comes back at once with status `loading`; `ready` resolves when the load ends.
   */
  static async create(deps: SessionDeps, init: SessionInit, id: string = randomUUID()): Promise<Session> {
    const src = init.source;
    let loadPath: string | null = null;
    let reader: {
      entry: EngineFunction;
      params: Record<string, unknown>;
      opParams: Record<string, unknown>;
    } | null = null;
    if (init.restore?.checkpoint) {
      // An autosave the service itself wrote in its work dir (outside the data dir by design).
      loadPath = init.restore.checkpoint;
    } else if (src?.kind === "load") {
      loadPath = await containPath(deps.config.dataDir, src.path, "path");
    } else if (src?.kind === "read") {
      if (src.namespace !== "read" && src.namespace !== "io") {
        throw new BadRequestError(
          `source.namespace must be "read" or "io", got ${JSON.stringify(src.namespace)}`,
        );
      }
      const key = `${src.namespace}.${src.function}`;
      const entry = deps.functions.require(key);
      if (entry.effect_class !== "read")
        throw new BadRequestError(`${key} is not a reader (effect class ${entry.effect_class})`);
      const params = deps.functions.validate(key, src.params ?? {});
      reader = { entry, params, opParams: await containParams(deps.config.dataDir, params, entry) };
    } else {
      throw new BadRequestError(`source.kind must be "read" or "load"`);
    }
    // A raw-input load is admitted by its estimated need, like any job (a 503 before a session exists).
    const need = init.restore ? null : estimateFolderNeed(loadPath ?? String(reader?.opParams.path ?? ""));
    if (need) deps.admitNeed?.(reader ? reader.entry.key : "session load", need.bytes, need.why);
    const s = new Session(deps, init, id);
    s.restoring = init.restore ?? null;
    s.emit("session.created", { summary: s.summary() });
    s.startLoad(init.loadId ?? s.id, loadPath, reader);
    return s;
  }

  /**
   * A session over an object already in memory (a subset child): ready at once, no load job. Its
   * app state is settled like a loaded checkpoint's (work in flight cannot resume). Emits
   * `session.created`.
   */
  static fromData(
    deps: SessionDeps,
    init: SessionInit & {
      readonly data: SpatialData;
      readonly appState: AppState;
      readonly activeTable?: string | null;
    },
    id: string = randomUUID(),
  ): Session {
    const s = new Session(deps, init, id);
    s.committed = init.data;
    s.app = settleLoadedState(init.appState);
    s.active = defaultActiveTable(init.data, init.activeTable);
    s.sessionStatus = "ready";
    s.readyResolve();
    s.emit("session.created", { summary: s.summary() });
    return s;
  }

  // ---------------------------------------------------------------- reading

  /** The session's name. */
  get name(): string {
    return this.sessionName;
  }

  /** `loading`, `ready` or `errored`. */
  get status(): SessionStatus {
    return this.sessionStatus;
  }

  /** The last committed data object (never a half-applied change). */
  get data(): SpatialData {
    return this.committed;
  }

  /** The app state (a snapshot; the session replaces, never mutates, it). */
  get appState(): AppState {
    return this.app;
  }

  /** Field path → number of commits that touched it. */
  get dataVersions(): DataVersions {
    return { ...this.versions };
  }

  /** The table jobs run against and field paths resolve in. */
  get activeTable(): string | null {
    return this.active;
  }

  /** Whether the committed object equals the session's own checkpoint. */
  get saved(): boolean {
    return this.isSaved;
  }

  /** The checkpoint the session last loaded from or saved to. */
  get checkpointPath(): string | null {
    return this.storePath;
  }

  /** The spec's SessionSummary. */
  summary(): SessionSummary {
    return {
      id: this.id,
      name: this.sessionName,
      status: this.sessionStatus,
      resident_mb: this.residentMb(),
      parent_id: this.parentId,
      created_at: this.createdAt,
      saved: this.isSaved,
      read_only: false,
      error: this.errorMessage,
    };
  }

  /** The spec's SessionState. */
  state(): SessionState {
    const figures: SessionState["figures"] = {};
    for (const p of this.app.plots) {
      if (p.status !== "drawn") continue;
      const mem = this.figureBytes.get(p.id);
      if (mem)
        figures[p.id] = Object.fromEntries(
          Object.entries(mem).map(([f, b]) => [f, (b as Uint8Array).length]),
        );
      else {
        const cp = this.checkpoint?.sidecar.figures.find((f) => f.plot_id === p.id);
        if (cp) figures[p.id] = { ...cp.formats };
      }
    }
    return {
      summary: this.summary(),
      app_state: this.app,
      queue: this.queueView(),
      fields: describeFields(this.committed, this.active),
      figures,
      data_versions: this.dataVersions,
    };
  }

  /** Running and queued jobs, in order. */
  queueView(): QueueItem[] {
    const ids = [...(this.queue.running ? [this.queue.running] : []), ...this.queue.queued];
    return ids.map((id) => ({
      job_id: id,
      descriptor: this.jobs.get(id)?.descriptor ?? null,
      status: id === this.queue.running ? ("running" as const) : ("queued" as const),
      position: this.queue.position(id) ?? 0,
    }));
  }

  /** A job's status and log (`GET /jobs/{id}` and `/jobs/{id}/log`). */
  job(jobId: string): {
    job_id: string;
    kind: JobKind;
    status: JobStatus;
    log: string;
    error: string | null;
    /** What the completed job reported (as on `job.completed`), or null. */
    result: Record<string, unknown> | null;
  } {
    const rec = this.jobs.get(jobId);
    if (!rec) throw new NotFoundError(`session ${this.id} has no job "${jobId}"`);
    return {
      job_id: rec.id,
      kind: rec.kind,
      status: rec.status,
      log: rec.log.join("\n"),
      error: rec.error ?? null,
      result: rec.result ?? null,
    };
  }

  /** One field of the committed object (`obs:cell_type`, `X:CD3E`, `obsm:spatial` …) as a column table. */
  async field(path: string): Promise<FieldTable> {
    return readField(this.committed, path, this.active ?? undefined);
  }

  /**
   * One gene of `table`'s X read from the column-major mirror of the checkpoint the session was
   * loaded from, or null when that is not possible or no longer current (then read X itself).
   */
  async geneValues(table: string, gene: string): Promise<Float32Array | null> {
    if (!this.checkpoint) return null;
    return mirroredGene(this.checkpoint, table, gene, this.committed.tables[table]?.X);
  }

  /**
   * A job's gene reader (`OpContext.mirrorGene`): genes from the checkpoint's column mirror while it
   * holds the very X the job runs on (`sdata`'s), so a plot colouring or grouping by genes reads one
   * column each instead of scanning the CSR X on its worker.
   */
  private mirrorReader(sdata: SpatialData): (table: string, gene: string) => Promise<Float32Array | null> {
    return async (table, gene) => {
      const cp = this.checkpoint;
      return cp ? mirroredGene(cp, table, gene, sdata.tables[table]?.X) : null;
    };
  }

  /** A drawn plot's figure in `format`: this session's render, else the checkpoint it was loaded from. */
  async figure(plotId: string, format: "svg" | "pdf" | "png"): Promise<Uint8Array | null> {
    const p = this.app.plots.find((x) => x.id === plotId);
    if (!p) throw new NotFoundError(`session ${this.id} has no plot "${plotId}"`);
    if (p.status !== "drawn") return null;
    const mem = this.figureBytes.get(plotId);
    if (mem) return mem[format] ?? null;
    return this.checkpoint ? readFigure(this.checkpoint, plotId, format) : null;
  }

  // ---------------------------------------------------------------- images

  /** The session's rasters: served stores, info, tiles (made on first use). */
  get rasters(): SessionRasters {
    this.assertOpen();
    this.rasterState ??= this.deps.rasters.forSession(this.id, {
      data: () => this.committed,
      activeTable: () => this.active,
      display: (id) => this.app.displays.find((d) => d.id === id),
      emit: (event, data) => this.emit(event, data),
    });
    return this.rasterState;
  }

  /** Image info of an image or labels element (its served store is built first when needed). */
  imageInfo(element: string): Promise<ImageInfo> {
    return this.rasters.info(element);
  }

  /** The served raster store of an image or labels element (rebuilt once when needed). */
  rasterStore(element: string): Promise<ServedRasterStore> {
    return this.rasters.store(element);
  }

  /** One key of an element's served raster store (`zarr.json`, a chunk key …), or null. */
  rasterKey(element: string, key: string): Promise<ServedBytes | null> {
    return this.rasters.raw(element, key);
  }

  /** A composited WebP tile of an element's served pyramid. */
  renderTile(
    element: string,
    level: number,
    col: number,
    row: number,
    opts: RenderOptions = {},
  ): Promise<RenderedImage> {
    return this.rasters.tile(element, level, col, row, opts);
  }

  /** A composited WebP of the whole element, fitting inside `maxPx`. */
  thumbnail(element: string, maxPx?: number, opts: RenderOptions = {}): Promise<RenderedImage> {
    return this.rasters.thumbnail(element, maxPx, opts);
  }

  /** Resolves when no job is queued or running. */
  idle(): Promise<void> {
    return this.queue.idle();
  }

  /** Whether no job is queued or running. */
  isIdle(): boolean {
    return this.queue.running === null && this.queue.queued.length === 0;
  }

  // ---------------------------------------------------------------- jobs

  /**
   * Submit a descriptor. Validated (defaults filled) and path-checked now, so a bad call throws here.
   * Computes, readers and plots join the FIFO queue (`job.queued`); an extract runs at once on the
   * committed object and never enters history.
   */
  async submit(descriptor: Descriptor): Promise<JobTicket> {
    this.assertOpen();
    const { entry, params, opParams } = await this.prepare(descriptor);
    const desc: Descriptor = { namespace: entry.namespace, function: entry.function, params };
    if (entry.effect_class === "extract") return this.runExtract(entry, desc, opParams);
    this.admit(entry, params);
    const id = randomUUID();
    this.app = addEntry(
      this.app,
      id,
      desc,
      "queued",
      this.deps.functions.versionsFor(entry),
      entry.effect_class,
    );
    return this.enqueue(id, id, entry, desc, opParams, false);
  }

  /**
   * Submit a descriptor and answer the way every face does (`POST /jobs`, the MCP tool, a script): a
   * queued job answers at once with its id and status; an extract, which runs outside the queue, is
   * awaited and answers with its value (or error). `submit` decides which it is, once.
   */
  async dispatch(descriptor: Descriptor): Promise<JobAnswer> {
    const ticket = await this.submit(descriptor);
    if (!ticket.immediate) return { job_id: ticket.job_id, status: ticket.status };
    const out = await ticket.done;
    return { job_id: out.job_id, status: out.status, result: out.result ?? null, error: out.error ?? null };
  }

  /** Stage a descriptor as a `pending` step (validated, not run). Returns its id. */
  async stage(descriptor: Descriptor): Promise<string> {
    this.assertOpen();
    const { entry, params } = await this.prepare(descriptor);
    if (entry.effect_class === "extract")
      throw new BadRequestError(`${entry.key} is an extract; extracts run at once and cannot be staged`);
    const id = randomUUID();
    this.app = addEntry(
      this.app,
      id,
      { namespace: entry.namespace, function: entry.function, params },
      "pending",
      this.deps.functions.versionsFor(entry),
      entry.effect_class,
    );
    return id;
  }

  /** Replace the params of a pending step (validated against its function). */
  async updatePending(id: string, params: Record<string, unknown>): Promise<void> {
    this.assertOpen();
    const found = requireEntry(this.app, id);
    if (found.entry.status !== "pending")
      throw new StateError(`"${id}" is ${found.entry.status}; only pending steps can be edited`);
    const { params: valid } = await this.prepare({ ...entryDescriptor(found.entry), params });
    this.app = updatePendingParams(this.app, id, valid);
  }

  /** Queue a pending step. */
  async runPending(id: string): Promise<JobTicket> {
    this.assertOpen();
    const found = requireEntry(this.app, id);
    if (found.entry.status !== "pending")
      throw new StateError(`"${id}" is ${found.entry.status}; only pending steps can be run`);
    const { entry, params, opParams } = await this.prepare(entryDescriptor(found.entry));
    this.admit(entry, params);
    this.app = transition(this.app, id, "queued");
    return this.enqueue(
      id,
      id,
      entry,
      { namespace: entry.namespace, function: entry.function, params },
      opParams,
      false,
    );
  }

  /** Queue every pending step, in the order they were staged. */
  async runAllPending(): Promise<JobTicket[]> {
    const out: JobTicket[] = [];
    for (const id of pendingIds(this.app)) out.push(await this.runPending(id));
    return out;
  }

  /** Delete a pending, failed or cancelled entry; queued, running, completed and drawn ones are refused. */
  deleteEntry(id: string): void {
    this.assertOpen();
    this.app = discardEntry(this.app, id);
  }

  /** Cancel a queued job (true); a running or finished job cannot be cancelled (false). */
  cancel(jobId: string): boolean {
    const rec = this.jobs.get(jobId);
    if (!rec) throw new NotFoundError(`session ${this.id} has no job "${jobId}"`);
    if (!this.queue.cancel(jobId)) return false;
    this.cancelled(rec, "cancelled before it started");
    return true;
  }

  /** Draw a plot again (after invalidation, a failure, or to refresh a drawn one). */
  async redraw(plotId: string): Promise<JobTicket> {
    this.assertOpen();
    const plot = this.app.plots.find((p) => p.id === plotId);
    if (!plot) throw new NotFoundError(`session ${this.id} has no plot "${plotId}"`);
    if (!["drawn", "invalidated", "failed"].includes(plot.status))
      throw new StateError(`plot "${plotId}" is ${plot.status}; it cannot be redrawn now`);
    const { entry, params, opParams } = await this.prepare(entryDescriptor(plot));
    const wasDrawn = plot.status !== "failed";
    this.app = transition(this.app, plotId, "queued", {
      library_versions: this.deps.functions.versionsFor(entry),
    });
    return this.enqueue(
      randomUUID(),
      plotId,
      entry,
      { namespace: entry.namespace, function: entry.function, params },
      opParams,
      wasDrawn,
    );
  }

  /**
   * Save as a checkpoint (a queued job, so it holds every change queued before it). The request is
   * checked now (400s). The whole-object form becomes the session's own checkpoint; with `include`,
   * `levels` or `slots` it is an export that leaves `saved` and the checkpoint path alone.
   */
  async save(opts: SaveOptions = {}): Promise<SaveTicket> {
    this.assertOpen();
    if (isExport(opts) && this.sessionStatus !== "ready")
      throw new StateError(`session ${this.id} is ${this.sessionStatus}; an export needs a ready session`);
    const drawn = this.app.plots.filter((p) => p.status === "drawn").map((p) => p.id);
    const target = await resolveSaveTarget(opts, this.deps.config.dataDir, this.sessionName, drawn);
    const selection = checkSelection(opts, { data: this.committed, app: this.app, activeTable: this.active });
    const own = [this.storePath, this.checkpoint?.location];
    if (selection && target.kind === "path" && own.includes(target.path))
      throw new BadRequestError(
        `save: an export cannot replace the session's own checkpoint ${target.path}; choose another path`,
      );
    const id = randomUUID();
    const descriptor: Descriptor = { namespace: "session", function: "save", params: { ...opts } };
    const rec = this.newJob(id, "save", descriptor, null, false);
    this.queue.push(id, (signal) => this.executeSave(rec, target, signal, selection));
    this.emit("job.queued", { job_id: id, descriptor, position: this.queue.position(id) ?? 0 });
    return {
      job_id: id,
      status: rec.status,
      done: rec.done,
      ...targetPaths(target),
      export: selection !== null,
    };
  }

  /**
   * Queue one of the service's own jobs (subset, shape annotations): not a registered function, so it
   * makes no history entry and never reaches a recipe. When its turn comes `run` gets the committed
   * object; a returned `change` is committed like a compute's (data versions, plot invalidation), and
   * `result` rides on `job.completed` and the outcome. A throw fails the job and commits nothing.
   */
  queueOwnJob(
    kind: JobKind,
    descriptor: Descriptor,
    run: (ctx: { data: SpatialData; activeTable: string | null; signal: AbortSignal }) => Promise<{
      change?: Change;
      result?: Record<string, unknown>;
    }>,
  ): JobTicket {
    this.assertOpen();
    const id = randomUUID();
    const rec = this.newJob(id, kind, descriptor, null, false);
    this.queue.push(id, async (signal) => {
      this.startJob(rec);
      try {
        if (this.sessionStatus !== "ready") throw new Error(`session ${this.id} is ${this.sessionStatus}`);
        const out = await run({ data: this.committed, activeTable: this.active, signal });
        signal.throwIfAborted();
        let diff: Record<string, string[]> = {};
        let invalidated: string[] = [];
        if (out.change) {
          // The commit, as `commit` does for a compute: nothing awaits from here on.
          const applied = applyChange(this.committed, out.change);
          this.committed = applied.sdata;
          this.versions = bumpVersions(this.versions, applied.touched);
          if (applied.touched.length) this.isSaved = false;
          diff = applied.diff;
          const inv = invalidatePlots(this.app, applied.touched, this.active);
          this.app = inv.state;
          for (const pid of inv.ids) this.figureBytes.delete(pid);
          invalidated = inv.ids;
        }
        this.finish(rec, { ...(out.change ? { structural_diff: diff } : {}), ...out.result });
        if (invalidated.length) this.emit("plot.invalidated", { plot_ids: invalidated });
      } catch (err) {
        this.failJob(rec, err);
      }
    });
    this.emit("job.queued", { job_id: id, descriptor, position: this.queue.position(id) ?? 0 });
    return { job_id: id, status: rec.status, done: rec.done };
  }

  /** Add a display (a new id is minted) and return it. */
  addDisplay(spec: Omit<DisplaySpec, "id">): DisplaySpec {
    return this.putDisplay({ ...spec, id: randomUUID() } as DisplaySpec);
  }

  /** Set a display (create or replace by id); validated with the app state schema. */
  putDisplay(spec: DisplaySpec): DisplaySpec {
    this.assertOpen();
    const next = putDisplay(this.app, spec);
    try {
      validateAppState(next);
    } catch (err) {
      throw new BadRequestError(`invalid display: ${message(err)}`);
    }
    this.app = next;
    this.emit("display.updated", { display_id: spec.id, spec });
    return spec;
  }

  // ---------------------------------------------------------------- recipes

  /** What running `recipe` with `values` would produce, leave unresolved, or fail to find. */
  preflight(recipe: Recipe, values: RecipeValues = {}): PreflightResult {
    return preflight(recipe, this.deps.functions, values);
  }

  /**
   * Run (`mode: "run"`, queue every step) or stage (`"stage"`, pending steps) a recipe. Every step is
   * resolved and validated before anything is queued, so a bad recipe changes nothing.
   */
  async runRecipe(
    recipe: Recipe,
    opts: { values?: RecipeValues; mode?: "run" | "stage" } = {},
  ): Promise<RecipeRun> {
    this.assertOpen();
    const values = opts.values ?? {};
    // The recipe alone (values, functions, every step's params): the check `Tessera.checkRecipe` runs
    // before loading, every problem in one 400.
    checkRecipe(recipe, this.deps.functions, values);
    const steps = substituteSteps(recipe, values);
    // Hundreds of steps are validated and staged in turns, letting other requests through between.
    const turn = (i: number) => (i > 0 && i % 100 === 0 ? new Promise<void>((r) => setImmediate(r)) : null);
    for (const [i, s] of steps.entries()) {
      await turn(i);
      try {
        await this.prepare(s);
      } catch (err) {
        const status = err instanceof TesseraError ? err.status : 400;
        throw new (status === 400 ? BadRequestError : TesseraError)(
          `recipe ${recipe.meta.name}, step ${i + 1} (${stepKey(s)}): ${message(err)}`,
          status,
        );
      }
    }
    const run: RecipeRun = { tickets: [], staged: [] };
    for (const [i, s] of steps.entries()) {
      await turn(i);
      if (opts.mode === "stage") run.staged.push(await this.stage(s));
      else run.tickets.push(await this.submit(s));
    }
    return run;
  }

  /** The session's completed analysis steps as a recipe. */
  exportRecipe(opts: ExportRecipeOptions = {}): Recipe {
    const source = this.source.kind === "load" ? this.source.path : String(this.source.params.path ?? "");
    return exportRecipe(this.app, this.sessionName, { source, ...opts });
  }

  // ---------------------------------------------------------------- lifecycle

  /**
   * Close the session: queued jobs are cancelled, a running one is stopped, and the call resolves
   * once the queue is empty. The service emits `session.removed`.
   */
  async close(): Promise<void> {
    if (this.closed) return this.queue.idle();
    this.closed = true;
    for (const id of this.queue.queued) {
      const rec = this.jobs.get(id);
      if (this.queue.cancel(id) && rec) this.cancelled(rec, "session closed");
    }
    const running = this.queue.running;
    if (running) this.queue.abort(running, new Error("session closed"));
    // Rebuilds stop and the session's raster cache is removed with it.
    await Promise.all([this.queue.idle(), this.rasterState?.dispose()]);
  }

  // ---------------------------------------------------------------- internals

  private assertOpen(): void {
    if (this.closed) throw new StateError(`session ${this.id} is closed`);
  }

  private emit(event: string, data: object): void {
    this.deps.bus.emit(event, { session_id: this.id, ...data });
  }

  private residentMb(): number {
    let bytes = 0;
    for (const t of Object.values(this.committed.tables)) bytes += tableBytes(t);
    for (const k of ["points", "shapes"] as const)
      for (const el of Object.values(this.committed[k])) bytes += elementBytes(el);
    return toMb(bytes);
  }

  /** Look up, validate (defaults filled) and path-check a descriptor. */
  private async prepare(
    d: Descriptor,
  ): Promise<{ entry: EngineFunction; params: Record<string, unknown>; opParams: Record<string, unknown> }> {
    if (!d || typeof d.namespace !== "string" || typeof d.function !== "string") {
      throw new BadRequestError("a descriptor needs a namespace and a function");
    }
    const key = stepKey(d);
    const entry = this.deps.functions.require(key);
    const params = this.deps.functions.validate(key, d.params ?? {});
    if (entry.effect_class !== "read") checkShapeBounds(key, entry.effect_class, params, this.activeShape());
    const opParams = await containParams(this.deps.config.dataDir, params, entry);
    return { entry, params, opParams };
  }

  /**
   * Refuse a job whose estimated peak memory (its `@peakMemory`, from the active table's shape and its params)
   * does not fit below the admission threshold: a 503 naming the estimate and the headroom, before the job
   * exists, so nothing is queued or taken.
   */
  private admit(entry: EngineFunction, params: Record<string, unknown>): void {
    if (!this.deps.admitNeed) return;
    const t = this.active ? this.committed.tables[this.active] : undefined;
    const shape = t ? tableShape(t) : { n_obs: 0, n_vars: 0, nnz: 0, x_bytes: 0, dense_bytes: 0 };
    const bytes = this.deps.functions.peakMemory(entry.key, shape, params);
    const why = t
      ? `estimated for ${shape.n_obs.toLocaleString("en")} × ${shape.n_vars.toLocaleString("en")} with these params`
      : "estimated for this object";
    this.deps.admitNeed(entry.key, bytes, why);
  }

  /** The active table's name and shape (null when the session has none). */
  private activeShape(): TableShape | null {
    const t = this.active ? this.committed.tables[this.active] : undefined;
    return t ? { name: this.active!, nObs: nObs(t), nVars: nVars(t) } : null;
  }

  private newJob(
    id: string,
    kind: JobKind,
    descriptor: Descriptor | null,
    entryId: string | null,
    redraw: boolean,
  ): JobRecord {
    const rec = makeJobRecord(id, kind, descriptor, entryId, redraw);
    this.jobs.set(id, rec);
    return rec;
  }

  private enqueue(
    jobId: string,
    entryId: string,
    entry: EngineFunction,
    desc: Descriptor,
    opParams: Record<string, unknown>,
    redraw: boolean,
  ): JobTicket {
    const rec = this.newJob(jobId, entry.effect_class, desc, entryId, redraw);
    this.queue.push(jobId, (signal) => this.execute(rec, entry, opParams, signal));
    this.emit("job.queued", { job_id: jobId, descriptor: desc, position: this.queue.position(jobId) ?? 0 });
    return { job_id: jobId, status: rec.status, done: rec.done };
  }

  /** The progress hook of a job (`job.progress`, throttled). */
  private progressTo(rec: JobRecord): (fraction: number, message?: string) => void {
    return progressHook(rec, (event, data) => this.emit(event, data));
  }

  /** The log hook of a job (kept on the record, sent as `job.log`). */
  private logTo(rec: JobRecord): (text: string) => void {
    return logHook(rec, (event, data) => this.emit(event, data));
  }

  private startJob(rec: JobRecord): void {
    rec.status = "running";
    if (rec.entryId) this.app = transition(this.app, rec.entryId, "running", { started_at: now() });
    this.emit("job.started", { job_id: rec.id });
  }

  /** Run one queued job: the operation in the pool (readers on this thread), then the commit. */
  private async execute(
    rec: JobRecord,
    entry: EngineFunction,
    opParams: Record<string, unknown>,
    signal: AbortSignal,
  ): Promise<void> {
    if (this.sessionStatus !== "ready") {
      // Only reachable when the load failed: nothing to run on.
      this.startJob(rec);
      this.failJob(
        rec,
        new Error(`session ${this.id} is ${this.sessionStatus}: ${this.errorMessage ?? "no data"}`),
      );
      return;
    }
    this.startJob(rec);
    try {
      const result =
        entry.effect_class === "read"
          ? await this.runReader(entry, opParams, signal, this.logTo(rec), this.progressTo(rec))
          : await this.deps.pool.run(
              poolTask(entry, this.committed, opParams, this.active, this.deps.config.nThreads),
              {
                signal,
                onLog: this.logTo(rec),
                onProgress: this.progressTo(rec),
                name: entry.key,
                geneReader: this.mirrorReader(this.committed),
              },
            );
      this.commit(rec, entry, result);
    } catch (err) {
      this.failJob(rec, err);
    }
  }

  /** Apply a job's result in one synchronous step. Throws (committing nothing) on a malformed result. */
  private commit(rec: JobRecord, entry: EngineFunction, result: unknown): void {
    const finished = now();
    if (entry.effect_class === "plot") {
      const { figures, references } = plotFigures(entry, result);
      this.figureBytes.set(rec.entryId!, figures);
      this.app = transition(this.app, rec.entryId!, "drawn", { references });
      this.finish(rec, { plot_id: rec.entryId });
      this.emit("plot.drawn", { plot_id: rec.entryId });
      return;
    }
    const { sdata, diff, touched } =
      entry.effect_class === "read"
        ? readerResult(entry, this.committed, result)
        : computeResult(this.committed, result);
    // The commit: from here to the end of the function nothing awaits.
    this.committed = sdata;
    this.versions = bumpVersions(this.versions, touched);
    this.active = defaultActiveTable(sdata, this.active);
    if (touched.length) this.isSaved = false;
    this.app = transition(this.app, rec.entryId!, "completed", {
      finished_at: finished,
      structural_diff: diff,
      log: rec.log.join("\n"),
    });
    const inv = invalidatePlots(this.app, touched, this.active);
    this.app = inv.state;
    for (const id of inv.ids) this.figureBytes.delete(id);
    this.finish(rec, { structural_diff: diff });
    if (inv.ids.length) this.emit("plot.invalidated", { plot_ids: inv.ids });
  }

  private finish(rec: JobRecord, result: Record<string, unknown>): void {
    rec.status = "completed";
    rec.result = result;
    this.emit("job.completed", { job_id: rec.id, kind: rec.kind, ...result });
    rec.settle({ job_id: rec.id, kind: rec.kind, status: "completed", result });
  }

  private failJob(rec: JobRecord, err: unknown): void {
    const error = message(err);
    rec.status = "failed";
    rec.error = error;
    rec.log.push(`error: ${error}`);
    if (rec.entryId) {
      const e = findEntry(this.app, rec.entryId);
      if (e?.list === "history")
        this.app = transition(this.app, rec.entryId, "failed", {
          finished_at: now(),
          log: rec.log.join("\n"),
          error,
        });
      else if (e?.list === "plots") this.app = transition(this.app, rec.entryId, "failed");
    }
    this.emit("job.failed", { job_id: rec.id, error });
    rec.settle({ job_id: rec.id, kind: rec.kind, status: "failed", error });
  }

  private cancelled(rec: JobRecord, why: string): void {
    rec.status = "cancelled";
    rec.error = why;
    if (rec.entryId) {
      const e = findEntry(this.app, rec.entryId);
      if (e?.list === "history")
        this.app = transition(this.app, rec.entryId, "cancelled", { finished_at: now() });
      else if (e?.list === "plots") {
        // A first draw disappears; a redraw leaves the plot stale (its old figure is not current).
        this.app = rec.redraw ? this.restorePlot(e.entry) : removePlot(this.app, rec.entryId);
      }
    }
    this.emit("job.cancelled", { job_id: rec.id });
    rec.settle({ job_id: rec.id, kind: rec.kind, status: "cancelled", error: why });
  }

  private restorePlot(p: PlotEntry): AppState {
    this.figureBytes.delete(p.id);
    return {
      ...this.app,
      plots: this.app.plots.map((x) => (x.id === p.id ? { ...x, status: "invalidated" as const } : x)),
    };
  }

  /** An extract: run at once on the committed object, no queue, no history. */
  private async runExtract(
    entry: EngineFunction,
    desc: Descriptor,
    opParams: Record<string, unknown>,
  ): Promise<JobTicket> {
    await this.ready;
    const rec = this.newJob(randomUUID(), "extract", desc, null, false);
    const done = (async () => {
      if (this.sessionStatus !== "ready") {
        this.failJob(rec, new Error(`session ${this.id} is ${this.sessionStatus}`));
        return;
      }
      this.startJob(rec);
      try {
        const value = await this.deps.pool.run(
          {
            ...poolTask(entry, this.committed, opParams, this.active, this.deps.config.nThreads),
            effect: "extract",
          },
          { onLog: (t) => rec.log.push(t), name: entry.key },
        );
        rec.status = "completed";
        this.emit("job.completed", { job_id: rec.id, kind: "extract" });
        rec.settle({ job_id: rec.id, kind: "extract", status: "completed", result: value });
      } catch (err) {
        this.failJob(rec, err);
      }
    })();
    void done;
    return { job_id: rec.id, status: rec.status, done: rec.done, immediate: true };
  }

  /**
   * Run a reader. A registered reader goes through the pool, which runs reads on this thread (their
   * results hold store handles that cannot cross threads) with the usual cancellation and watchdog;
   * the built-in `read.read_data` is called directly.
   */
  private async runReader(
    entry: EngineFunction,
    params: Record<string, unknown>,
    signal: AbortSignal,
    log: (t: string) => void,
    progress: (f: number, m?: string) => void,
  ): Promise<SpatialData> {
    let out: unknown;
    if (parsesEagerly(entry.key)) {
      // An instrument reader parses for seconds: on a job worker, its images reopened here.
      const op = { module: entry.module, export: entry.export, name: entry.key };
      out = (await readOffThread(this.deps.pool, { op, params }, { signal, log, progress })).sdata;
    } else if (this.deps.functions.isBuiltin(entry.key)) {
      const op = await this.deps.functions.load(entry.key);
      const ctx: OpContext = {
        table: this.active ?? "",
        signal,
        rng: new Rng(seedOf(params)),
        threads: this.deps.config.nThreads,
        progress,
        log,
      };
      out = await op(makeSpatialData(), params, ctx);
      signal.throwIfAborted();
    } else {
      out = await this.deps.pool.run(
        {
          ...poolTask(entry, makeSpatialData(), params, this.active, this.deps.config.nThreads),
          effect: "read",
        },
        { signal, onLog: log, onProgress: progress, name: entry.key },
      );
    }
    if (!isSpatialData(out)) throw new Error(`${entry.key} returned no SpatialData object`);
    return out;
  }

  /** Queue the load as the session's first job. */
  private startLoad(
    loadId: string,
    path: string | null,
    reader: {
      entry: EngineFunction;
      params: Record<string, unknown>;
      opParams: Record<string, unknown>;
    } | null,
  ): void {
    const jobId = randomUUID();
    const progress = (message: string, pct: number, extra: object = {}) =>
      this.deps.bus.emit("session.loading", { load_id: loadId, session_id: this.id, message, pct, ...extra });
    let rec: JobRecord;
    if (reader) {
      const desc: Descriptor = {
        namespace: reader.entry.namespace,
        function: reader.entry.function,
        params: reader.params,
      };
      this.app = addEntry(this.app, jobId, desc, "queued", this.deps.functions.versionsFor(reader.entry));
      rec = this.newJob(jobId, "read", desc, jobId, false);
    } else {
      rec = this.newJob(
        jobId,
        "load",
        { namespace: "session", function: "load", params: { path } },
        null,
        false,
      );
    }
    this.queue.push(jobId, async (signal) => {
      this.startJob(rec);
      progress(reader ? `reading with ${reader.entry.key}` : `opening ${path}`, 0);
      try {
        if (reader) {
          const sdata = await this.runReader(reader.entry, reader.opParams, signal, this.logTo(rec), (f, m) =>
            progress(m ?? "reading", Math.round(Math.max(0, Math.min(1, f)) * 100)),
          );
          this.committed = sdata;
          this.active = defaultActiveTable(sdata);
          this.versions = {};
          const diff = Object.fromEntries(
            ELEMENT_KINDS.map((k) => [k, Object.keys(sdata[k])]).filter(([, v]) => v.length),
          );
          this.app = transition(this.app, jobId, "completed", {
            finished_at: now(),
            structural_diff: diff,
            log: rec.log.join("\n"),
          });
        } else {
          await this.loadPath(path!, progress, signal, rec);
        }
        const restore = this.restoring;
        this.restoring = null;
        if (restore) this.applyRestore(restore);
        this.sessionStatus = "ready";
        rec.status = "completed";
        progress("ready", 100, { done: true });
        this.emit("job.completed", { job_id: jobId, kind: rec.kind });
        this.emit("session.updated", { summary: this.summary() });
        rec.settle({ job_id: jobId, kind: rec.kind, status: "completed" });
      } catch (err) {
        const error = message(err);
        this.sessionStatus = "errored";
        this.errorMessage = error;
        this.failJob(rec, err);
        progress(`failed: ${error}`, 100, { done: true, error });
        this.emit("session.errored", { error });
        this.emit("session.updated", { summary: this.summary() });
      } finally {
        this.readyResolve();
      }
    });
  }

  /**
   * Bring a recovered session, just loaded (from its autosave or its source), up to its journal: the journal's
   * displays, its plots (drawn ones as invalidated: their figures were not kept), its pending steps, and every
   * computation the loaded state lacks queued again in order with its recorded parameters.
   */
  private applyRestore(r: SessionRestore): void {
    const { appState: app, replay } = restorePlan(this.app, r.appState, this.deps.functions);
    this.app = app;
    this.storePath = r.savedPath;
    this.isSaved = r.saved && replay.length === 0;
    if (r.activeTable && this.committed.tables[r.activeTable]) this.active = r.activeTable;
    if (replay.length === 0) return;
    this.isSaved = false;
    // Queued behind this load job, in the journal's order; a step that no longer validates is logged and skipped.
    void (async () => {
      for (const e of replay) {
        try {
          const { entry, params, opParams } = await this.prepare(entryDescriptor(e));
          const desc: Descriptor = { namespace: entry.namespace, function: entry.function, params };
          this.app = addEntry(
            this.app,
            e.id,
            desc,
            "queued",
            this.deps.functions.versionsFor(entry),
            entry.effect_class,
          );
          this.enqueue(e.id, e.id, entry, desc, opParams, false);
        } catch (err) {
          console.error(`tessera session ${this.id}: cannot replay ${stepKey(e)} (${e.id}): ${message(err)}`);
        }
      }
    })();
  }

  /** Open a checkpoint (restoring its app state) or any other dataset, and take it as the session's data. */
  private async loadPath(
    path: string,
    progress: (m: string, pct: number) => void,
    signal: AbortSignal,
    rec: JobRecord,
  ): Promise<void> {
    const loaded = await openLoadPath(path, progress, signal, {
      pool: this.deps.pool,
      log: this.logTo(rec),
      progress: this.progressTo(rec),
    });
    this.committed = loaded.data;
    if (loaded.appState) this.app = loaded.appState;
    this.active = loaded.activeTable;
    if (loaded.checkpoint) {
      this.checkpoint = loaded.checkpoint;
      if (loaded.recordedName && !this.explicitName) this.sessionName = loaded.recordedName;
      this.storePath = path;
      this.isSaved = true;
    }
    this.versions = {};
  }

  /** Write the checkpoint of a save job. */
  private async executeSave(
    rec: JobRecord,
    target: SaveTarget,
    signal: AbortSignal,
    selection: ExportSelection | null = null,
  ): Promise<void> {
    this.startJob(rec);
    try {
      if (this.sessionStatus !== "ready")
        throw new Error(`session ${this.id} is ${this.sessionStatus}: nothing to save`);
      const data = this.committed;
      const name = target.name ?? this.app.name ?? this.sessionName;
      const figures = await this.figureFiles(target.figures);
      const log = this.logTo(rec);
      // A whole save may replace the file the session reads from: keep its figures in memory first.
      if (!selection) await this.keepFigures();
      const written = await writeSave({
        data,
        appState: this.app,
        activeTable: this.active,
        name,
        target,
        selection,
        figures,
        workDir: this.deps.config.workDir,
        signal,
        log,
      });
      // The session reads on from the file just written: a save over its own checkpoint renamed a
      // new file over the one its lazy arrays read from, and those reads would now fail. An export
      // lands there only under the same content-hash name, so with the same bytes.
      const reopened =
        !selection || written.path === this.checkpoint?.location
          ? await reopenWritten(written.path, log)
          : null;
      const unchanged = data === this.committed;
      if (reopened && unchanged) {
        this.committed = reopened.sdata;
        this.checkpoint = reopened;
      }
      if (selection) {
        this.finish(rec, { path: written.path, export: true });
        return;
      }
      // Adopted as the session's own checkpoint only if nothing was committed meanwhile (nothing can
      // be: the save holds the queue), and renamed when asked.
      this.app = { ...this.app, name };
      this.sessionName = name;
      this.storePath = written.path;
      this.isSaved = unchanged;
      this.finish(rec, { path: written.path, export: false });
      this.emit("session.updated", { summary: this.summary() });
    } catch (err) {
      this.failJob(rec, err);
    }
  }

  /** Hold every drawn plot's figure in memory (those read from a checkpoint file so far). */
  private async keepFigures(): Promise<void> {
    for (const p of this.app.plots) {
      if (p.status !== "drawn" || this.figureBytes.has(p.id)) continue;
      const set: FigureSet = {};
      for (const format of ["svg", "png", "pdf"] as const) {
        const bytes = await this.figure(p.id, format).catch(() => null);
        if (bytes) set[format] = bytes;
      }
      if (Object.keys(set).length) this.figureBytes.set(p.id, set);
    }
  }

  /** Figure files of the drawn plots a save carries (`ids` null: all). */
  private async figureFiles(ids: string[] | null): Promise<FigureFile[]> {
    const out: FigureFile[] = [];
    for (const p of this.app.plots) {
      if (p.status !== "drawn" || (ids && !ids.includes(p.id))) continue;
      for (const format of ["svg", "png", "pdf"] as const) {
        const bytes = await this.figure(p.id, format);
        if (bytes) out.push({ plotId: p.id, format, bytes });
      }
    }
    return out;
  }
}
