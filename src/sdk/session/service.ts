/**
 * Service: the session store. It owns the configuration, the function registry, the worker pool,
 * the event bus and the recipe catalog, and holds up to `TESSERA_MAX_SESSIONS` sessions. The HTTP
 * server, the MCP endpoint, the CLI and scripts all drive the engine through one of these.
 */

import { mkdir } from "node:fs/promises";
import { Registry } from "../../registry/registry.js";
import { nRows } from "../data/dataframe.js";
import { subsetSpatialData } from "../data/subset.js";
import { BadRequestError, LimitError, NotFoundError, TesseraError } from "../errors.js";
import { EventBus } from "../events/bus.js";
import { type SweptScrap, sweepScraps } from "../io/store/pending-writes.js";
import { WorkerPool } from "../jobs/pool.js";
import { RasterHub } from "../raster/hub.js";
import { discoverRecipes, type RecipeCatalog } from "../recipes/discover.js";
import { ResourceMonitor } from "../resources/monitor.js";
import { type Env, readConfig, type ServiceConfig } from "./config.js";
import { checkCreateSessionRequest, parseCreateSessionRequest } from "./create-request.js";
import { SessionFunctions } from "./functions.js";
import { type Caller, type GateOptions, passGate } from "./gate.js";
import { SessionJournal } from "./journal.js";
import { Presence } from "./presence.js";
import { requireReady } from "./readiness.js";
import { Session, type SessionDeps } from "./session.js";
import { childAppState, childName, prepareSubset, type SubsetRequest } from "./subset.js";
import type { CreateSessionRequest, JobTicket, SessionSummary } from "./types.js";

/** Options of `Service.start`; anything not given comes from the environment. */
export interface ServiceOptions {
  /** Environment to read the configuration from (default `process.env`). */
  env?: Env;
  /** Overrides of individual settings (applied after the environment). */
  config?: Partial<ServiceConfig>;
  /** Plugins for the registry (default: the configuration's, else the registry's default). */
  plugins?: string[];
  /** Use this registry instead of loading one. */
  registry?: Registry;
  /** Use this pool instead of starting one (it is then not destroyed by `close`). */
  pool?: WorkerPool;
  /** Use this event bus instead of a new one. */
  bus?: EventBus;
}

/** The session store (see the module comment). */
/**
 * The JS heap each compute worker may grow to: its share of the memory the admission threshold allows
 * (between 256 MB and 8 GB), so a runaway job fails alone (the worker is replaced) instead of taking the
 * server past its limit. Large arrays live outside the heap (shared buffers) and are not counted here.
 * None when the memory limit is disabled (`TESSERA_CONTAINER_MEM_MB=0`).
 */
export function workerHeapLimit(config: ServiceConfig): { maxOldGenerationSizeMb?: number } {
  if (!(config.containerMemMb > 0)) return {};
  const share = (config.containerMemMb * config.admissionPct) / Math.max(1, config.computePoolWorkers);
  return { maxOldGenerationSizeMb: Math.round(Math.min(8192, Math.max(256, share))) };
}

/** One log line naming what the startup sweep removed (nothing when it removed nothing). */
function reportSweep(removed: readonly SweptScrap[]): void {
  if (removed.length === 0) return;
  const mb = removed.reduce((n, r) => n + r.bytes, 0) / 2 ** 20;
  const names = removed.map((r) => r.path).join(", ");
  process.stderr.write(
    `tessera: removed ${removed.length} leftover(s) of interrupted saves (${mb.toFixed(1)} MB): ${names}\n`,
  );
}

/**
 * The session store: the configuration, the function registry, the worker pool, the event bus and
 * the open sessions. The HTTP server, the CLI and the `Tessera` facade are thin layers over one.
 */
export class Service {
  readonly config: ServiceConfig;
  readonly registry: Registry;
  readonly pool: WorkerPool;
  readonly bus: EventBus;
  /** The registry plus the built-in readers. */
  readonly functions: SessionFunctions;
  /** Recipes discovered in `config.recipesDir` at startup. */
  readonly recipes: RecipeCatalog;
  /** Viewers and the per-session edit locks. */
  readonly presence: Presence;
  /** Resource samples and memory admission. */
  readonly resources: ResourceMonitor;
  /** The raster caches, tiles and render limit every session of this service shares. */
  readonly rasters: RasterHub;
  private readonly sessionMap = new Map<string, Session>();
  /** Jobs of sessions closed by a subset (session id → job id → last status), newest last, bounded. */
  private readonly retiredJobs = new Map<string, Map<string, ReturnType<Session["job"]>>>();
  private readonly ownsPool: boolean;
  private creating = 0;
  private closed = false;
  /** The session journal when `sessionRecovery` is on (journal.ts), else null. */
  private readonly journal: SessionJournal | null;
  private autosaveTimer: NodeJS.Timeout | null = null;

  private constructor(
    config: ServiceConfig,
    registry: Registry,
    pool: WorkerPool,
    bus: EventBus,
    recipes: RecipeCatalog,
    ownsPool: boolean,
  ) {
    this.config = config;
    this.registry = registry;
    this.pool = pool;
    this.bus = bus;
    this.functions = new SessionFunctions(registry);
    this.recipes = recipes;
    this.ownsPool = ownsPool;
    this.presence = new Presence({
      timeoutS: config.presenceTimeoutS,
      agentTimeoutS: config.mcpIdleReleaseS,
      sessionExists: (id) => this.sessionMap.has(id),
      onChange: (view) => bus.emit("presence.updated", view),
    });
    this.presence.startSweeper();
    this.rasters = new RasterHub(config);
    this.resources = new ResourceMonitor({
      config,
      perSession: () => Object.fromEntries(this.sessions().map((s) => [s.id, s.summary().resident_mb])),
      emit: (event, data) => bus.emit(event, data as never),
      // Every session's rebuilt raster stores on disk (sessions share this service's hub).
      rastersMb: () => this.rasters.cacheBytes() / 2 ** 20,
    });
    // Sampling (resource.sample events) is started by whoever serves clients (the HTTP server);
    // admission works without it.
    this.journal = config.sessionRecovery ? new SessionJournal(config.workDir, config.dataDir) : null;
    if (this.journal) {
      const journal = this.journal;
      // Every event naming a session may follow a change of its state: journal it a moment later.
      bus.subscribe((e) => {
        const d = e.data as { session_id?: unknown; summary?: { id?: unknown } };
        const id = typeof d?.session_id === "string" ? d.session_id : d?.summary?.id;
        const s = typeof id === "string" ? this.sessionMap.get(id) : undefined;
        if (s) journal.schedule(s);
      });
      if (config.autosaveS > 0) {
        this.autosaveTimer = setInterval(() => void this.autosaveAll(), config.autosaveS * 1000);
        this.autosaveTimer.unref();
      }
    }
  }

  /**
   * Start a service: read the configuration, create the data dir, sweep what interrupted saves left,
   * load the registry, start the worker pool and discover the recipes (broken recipe files are
   * reported on stderr, not fatal).
   */
  static async start(opts: ServiceOptions = {}): Promise<Service> {
    const config: ServiceConfig = { ...readConfig(opts.env ?? process.env), ...opts.config };
    await mkdir(config.dataDir, { recursive: true });
    // Before anything else writes there: what a crashed or killed save left (pending-writes.ts).
    reportSweep(await sweepScraps(config.workDir, config.dataDir));
    const registry =
      opts.registry ??
      (await Registry.load(
        (opts.plugins ?? config.plugins) ? { plugins: opts.plugins ?? config.plugins ?? [] } : {},
      ));
    const functions = new SessionFunctions(registry);
    const recipes = await discoverRecipes(config.recipesDir, functions);
    for (const p of recipes.problems) process.stderr.write(`tessera: recipe skipped: ${p.message}\n`);
    const pool =
      opts.pool ??
      new WorkerPool({
        threads: config.computePoolWorkers,
        longRunningS: config.longRunningS,
        ...workerHeapLimit(config),
      });
    const service = new Service(config, registry, pool, opts.bus ?? new EventBus(), recipes, !opts.pool);
    await service.recover();
    return service;
  }

  /**
   * Bring back the sessions a previous run of the server left open (journal.ts): each under its id, loaded from
   * its autosave or its source and brought up to its journal. A session that cannot come back (its source
   * gone and no autosave) is reported on stderr and forgotten.
   */
  private async recover(): Promise<void> {
    if (!this.journal) return;
    const found = await this.journal.recoverable();
    const restored: string[] = [];
    for (const { record, autosavePath } of found) {
      if (this.sessionMap.size >= this.config.maxSessions) {
        process.stderr.write(
          `tessera: session ${record.id} (${record.name}) not restored: TESSERA_MAX_SESSIONS reached\n`,
        );
        continue;
      }
      try {
        if (record.parent_id && !autosavePath)
          throw new Error("a subset session comes back only from an autosave, and it has none");
        const s = await Session.create(
          this.sessionDeps(),
          {
            source: record.source,
            name: record.name,
            parentId: record.parent_id,
            restore: {
              checkpoint: autosavePath,
              appState: record.app_state,
              savedPath: record.saved_path,
              saved: record.saved,
              activeTable: record.active_table,
            },
          },
          record.id,
        );
        if (record.autosave) this.journal.pin(s.id, record.autosave);
        this.sessionMap.set(s.id, s);
        restored.push(`${record.name} (${autosavePath ? "autosave" : "source"})`);
      } catch (err) {
        process.stderr.write(
          `tessera: session ${record.id} (${record.name}) cannot be restored: ${err instanceof Error ? err.message : String(err)}\n`,
        );
        await this.journal.forget(record.id);
      }
    }
    if (restored.length)
      process.stderr.write(`tessera: restored ${restored.length} session(s): ${restored.join(", ")}\n`);
  }

  /** Autosave every idle session whose data changed since it was saved (journal.ts). */
  async autosaveAll(opts: { force?: boolean } = {}): Promise<void> {
    if (!this.journal) return;
    for (const s of this.sessions()) await this.journal.autosave(s, opts);
  }

  /** What every session of this service is given: functions, pool, bus, settings, and admission by need. */
  private sessionDeps(): SessionDeps {
    return {
      functions: this.functions,
      pool: this.pool,
      bus: this.bus,
      config: this.config,
      rasters: this.rasters,
      admitNeed: (what, bytes, why) => this.resources.admitNeed(what, bytes, why),
    };
  }

  /**
   * Create a session (`POST /api/sessions`). Paths are checked first (a `PathError` rejects the
   * call); the session comes back at once with status `loading` and loads as its first job.
   * Refused with a `LimitError` when `TESSERA_MAX_SESSIONS` sessions are open.
   */
  async createSession(req: CreateSessionRequest): Promise<Session> {
    if (this.closed) throw new BadRequestError("the service is shut down");
    if (this.sessionMap.size + this.creating >= this.config.maxSessions) {
      throw new LimitError(
        `at most ${this.config.maxSessions} sessions may be open (TESSERA_MAX_SESSIONS); close one first`,
      );
    }
    this.resources.admit("opening a session");
    this.creating++;
    try {
      const s = await Session.create(this.sessionDeps(), {
        source: req.source,
        ...(req.name ? { name: req.name } : {}),
        ...(req.load_id ? { loadId: req.load_id } : {}),
      });
      this.sessionMap.set(s.id, s);
      return s;
    } finally {
      this.creating--;
    }
  }

  /**
   * Create a session from a client's request body (`POST /api/sessions`, the MCP tool), checked
   * strictly first (`create-request.ts`): unknown fields, wrong types, a missing source, an unknown
   * reader, a path outside the data dir or one that does not exist are a 400 naming the field, and
   * nothing is created. Then as `createSession`.
   */
  async createSessionFromBody(body: unknown): Promise<Session> {
    const req = parseCreateSessionRequest(body);
    await checkCreateSessionRequest(req, this.config.dataDir, this.functions);
    return this.createSession(req);
  }

  /** The session `id`, or a NotFoundError. */
  session(id: string): Session {
    const s = this.sessionMap.get(id);
    if (!s) throw new NotFoundError(`no session "${id}"`);
    return s;
  }

  /** The session `id` with its data loaded: 404 unknown, 409 loading or failed (`requireReady`). */
  readySession(id: string, what: string): Session {
    const s = this.session(id);
    requireReady(s, what);
    return s;
  }

  /**
   * The session `id` for a call that changes it, after the mutation gate every face shares
   * (`gate.ts`): 404 unknown, 423 while another viewer holds the edit lock (a caller with a client id
   * takes a free one), 503 when `opts.work` is set and memory is past admission, 409 when
   * `opts.ready` is set and the data is not loaded.
   */
  mutableSession(id: string, caller: Caller = {}, opts: GateOptions = {}): Session {
    const s = this.session(id);
    passGate(s, this.presence, this.resources, caller, opts);
    return s;
  }

  /** Every open session. */
  sessions(): Session[] {
    return [...this.sessionMap.values()];
  }

  /** Summaries of every open session (`GET /api/sessions`). */
  list(): SessionSummary[] {
    return this.sessions().map((s) => s.summary());
  }

  /**
   * Close and remove a session (`DELETE /api/sessions/{id}`), saving it first when `save` is set.
   * Emits `session.removed` with reason `closed`.
   */
  async deleteSession(id: string, opts: { save?: boolean } = {}): Promise<void> {
    const s = this.session(id);
    if (opts.save) {
      // Asked to save: a session with no loaded object cannot be, and closing it anyway would drop
      // what the caller meant to keep. A failed save leaves the session open (500: nothing the
      // request did wrong), so the user can retry or save elsewhere.
      requireReady(s, "saving before closing (there is nothing to save: close it without save)");
      const out = await (await s.save()).done;
      if (out.status !== "completed")
        throw new TesseraError(
          `session ${id}: save before closing failed: ${out.error}; the session is still open`,
          500,
        );
      // Closed by another call while the save ran: it already emitted session.removed.
      if (this.sessionMap.get(id) !== s) return;
    }
    this.sessionMap.delete(id);
    this.presence.dropSession(id);
    await s.close();
    // Closed by the user: nothing to bring back at the next start.
    await this.journal?.forget(id);
    this.bus.emit("session.removed", { session_id: id, reason: "closed" });
  }

  /**
   * A job's status and log (`GET /jobs/{id}`): from the open session, else from the record kept of a
   * session a subset closed (so its subset job can still be awaited by polling). 404 otherwise.
   */
  job(sessionId: string, jobId: string): ReturnType<Session["job"]> {
    const open = this.sessionMap.get(sessionId);
    if (open) return open.job(jobId);
    const rec = this.retiredJobs.get(sessionId)?.get(jobId);
    if (!rec) throw new NotFoundError(`no session "${sessionId}"`);
    return rec;
  }

  /**
   * Subset a session (`POST /subset`): the request is checked now (400/409), then a job on the parent's
   * queue builds the subset object and creates the child session from it (`session.created`, parent_id
   * set; `job.completed` carries `child_id`). Once the job has completed the parent is closed
   * (`session.removed`, reason `subset`, `child_id`); jobs queued behind the subset are cancelled, and
   * the parent's edit lock passes to the same client on the child. A failed subset leaves the parent open.
   */
  async subset(parentId: string, req: SubsetRequest): Promise<JobTicket> {
    const parent = this.session(parentId);
    const prep = await prepareSubset(parent, req);
    const ticket = parent.queueOwnJob("subset", prep.descriptor, async ({ data, activeTable, signal }) => {
      const t = activeTable ? data.tables[activeTable] : undefined;
      if (activeTable !== prep.table || !t || nRows(t.obs) !== prep.selection.mask.length)
        throw new Error("the active table changed while the subset was queued; select the cells again");
      const sdata = await subsetSpatialData(data, prep.table, prep.selection.mask, {
        ...(prep.selection.polygons ? { polygons: prep.selection.polygons } : {}),
        invert: req.invert ?? false,
        ...(prep.coordinateSystem ? { coordinateSystem: prep.coordinateSystem } : {}),
        signal,
      });
      const child = Session.fromData(this.sessionDeps(), {
        source: parent.source,
        name: childName(parent.name),
        parentId: parent.id,
        data: sdata,
        appState: childAppState(parent.appState),
        activeTable: prep.table,
      });
      this.sessionMap.set(child.id, child);
      return { result: { child_id: child.id } };
    });
    void ticket.done.then(async (out) => {
      const childId = (out.result as { child_id?: string } | undefined)?.child_id;
      // A parent deleted meanwhile was already removed (reason `closed`).
      if (out.status !== "completed" || !childId || this.sessionMap.get(parentId) !== parent) return;
      const holder = this.presence.lockHolder(parentId);
      this.retiredJobs.set(parentId, new Map([[ticket.job_id, parent.job(ticket.job_id)]]));
      while (this.retiredJobs.size > 64) this.retiredJobs.delete(this.retiredJobs.keys().next().value!);
      this.sessionMap.delete(parentId);
      this.presence.dropSession(parentId);
      await parent.close();
      const child = this.sessionMap.get(childId);
      if (this.journal && child) {
        // The child's data is in no source file: autosave it now, and only then forget the parent's journal.
        await this.journal.autosave(child, { force: true });
        await this.journal.forget(parentId);
      }
      this.bus.emit("session.removed", { session_id: parentId, reason: "subset", child_id: childId });
      // Unless another client took the child meanwhile (takeLock would throw 409 in this detached chain).
      if (holder && this.sessionMap.has(childId) && !this.presence.lockHolder(childId))
        this.presence.takeLock(childId, holder);
    });
    return ticket;
  }

  /**
   * Close every session and stop the worker pool (when the service started it). With session recovery on,
   * sessions with unsaved data are autosaved first and every session's journal is kept, so the next start
   * brings them back; the caller waits for running jobs before (the server gives them its grace period).
   */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.presence.stop();
    this.resources.stop();
    if (this.autosaveTimer) clearInterval(this.autosaveTimer);
    if (this.journal) {
      await this.autosaveAll({ force: true });
      await this.journal.flush(this.sessions());
      for (const s of this.sessions()) {
        this.sessionMap.delete(s.id);
        await s.close();
        this.bus.emit("session.removed", { session_id: s.id, reason: "closed" });
      }
    }
    for (const id of [...this.sessionMap.keys()]) await this.deleteSession(id);
    if (this.ownsPool) await this.pool.destroy();
  }
}
