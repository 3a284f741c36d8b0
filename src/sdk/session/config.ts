/**
 * Service configuration: every variable of the specification's Limits table, read from the
 * environment under its `TESSERA_` name with the documented default. One reader, so the session
 * store, the HTTP server and the CLI agree on what a variable means.
 */
import { existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { machineCpus, machineMemMb } from "../resources/cgroup.js";

/** The cgroup readers, where the configuration's tests and callers have always found them. */
export { cpuLimit, memLimitMb, type TextReader } from "../resources/cgroup.js";

/** The service configuration (the spec's Limits table, plus the plugin list and recipes folder). */
export interface ServiceConfig {
  /** `TESSERA_DATA_DIR`: the single read-write data folder, absolute (default `./.tessera-data`). */
  readonly dataDir: string;
  /** TESSERA_PORT: the HTTP port (default 8000). */
  readonly port: number;
  /** TESSERA_HOST: the address the HTTP server binds (default 127.0.0.1: the API has no accounts). */
  readonly host: string;
  /**
   * `TESSERA_TOKEN`: the token every HTTP request must carry. Unset: none on a loopback bind, a random
   * one minted at start on any other bind.
   */
  readonly token: string | null;
  /** `TESSERA_ALLOWED_HOSTS`: comma-separated host names accepted in `Host` besides loopback ones. */
  readonly allowedHosts: string[];
  /** `TESSERA_ALLOWED_ORIGINS`: comma-separated origins (embedding pages) allowed to call the API. */
  readonly allowedOrigins: string[];
  /** `TESSERA_WORK_DIR`: working set (unpacked archives, raster caches); default `<tmp>/tessera-work`. */
  readonly workDir: string;
  /** `TESSERA_WORK_DIR_IN_RAM`: the working dir is RAM-backed and counts in admission (default false). */
  readonly workDirInRam: boolean;
  /** `TESSERA_WORK_TMPFS_PCT`: percent of the memory limit the work tmpfs is sized to (default 85). */
  readonly workTmpfsPct: number;
  /** `TESSERA_RASTER_CHUNK_CACHE_MB`: LRU of raw raster chunk bytes, 0 disables (default 256). */
  readonly rasterChunkCacheMb: number;
  /** `TESSERA_CONTAINER_MEM_MB`: memory limit (auto: cgroup, else host RAM, else 8192); 0 disables admission. */
  readonly containerMemMb: number;
  /** `TESSERA_ADMISSION_PCT`: fraction of memory at which new work is refused (default 0.80). */
  readonly admissionPct: number;
  /** `TESSERA_CONTAINER_CPUS`: CPU cores, fractions allowed (auto: cgroup, else host cores). */
  readonly containerCpus: number;
  /**
   * `TESSERA_SESSION_RECOVERY`: journal open sessions in the work dir and bring them back at the next start
   * (default off for the library; `tessera start` turns it on unless this is `0`). See journal.ts.
   */
  readonly sessionRecovery: boolean;
  /** `TESSERA_AUTOSAVE_S`: seconds between autosaves of idle sessions with unsaved data (default 60; 0: only at shutdown). */
  readonly autosaveS: number;
  /** `TESSERA_MAX_SESSIONS`: concurrent in-memory sessions (default 8). */
  readonly maxSessions: number;
  /** `TESSERA_IMAGE_RENDER_CONCURRENCY`: tiles composited at once (auto from CPUs). */
  readonly imageRenderConcurrency: number;
  /** `TESSERA_CLIENT_IMAGE_COMPOSITING`: advertise client-side compositing (default true). */
  readonly clientImageCompositing: boolean;
  /** `TESSERA_CLIENT_IMAGE_MAX_CHANNELS`: channels composited in one shader pass (default 6). */
  readonly clientImageMaxChannels: number;
  /** `TESSERA_RASTER_BASE_PX`: coarsest pyramid level target, longest side (default 1024). */
  readonly rasterBasePx: number;
  /** `TESSERA_RASTER_REBUILD_WORKERS`: workers for ingest re-tiling (auto from CPUs). */
  readonly rasterRebuildWorkers: number;
  /** `TESSERA_STATIC_DIR`: compiled SPA path (default `/app/spa`). */
  readonly staticDir: string;
  /** `TESSERA_N_THREADS`: default for thread-count params (auto from CPUs). */
  readonly nThreads: number;
  /** `TESSERA_COMPUTE_POOL_WORKERS`: worker threads for calls (auto from CPUs). */
  readonly computePoolWorkers: number;
  /** `TESSERA_RESOURCE_HZ`: resource sample cadence (default 2). */
  readonly resourceHz: number;
  /** `TESSERA_PRESENCE_TIMEOUT_S`: heartbeat timeout (default 20). */
  readonly presenceTimeoutS: number;
  /** `TESSERA_LONG_RUNNING_S`: long-running job watchdog (default 120). */
  readonly longRunningS: number;
  /** `TESSERA_APP_URL`: URL quoted by the MCP assistant (default unset). */
  readonly appUrl: string | null;
  /** `TESSERA_MCP_IDLE_RELEASE_S`: agent presence idle release (default 900). */
  readonly mcpIdleReleaseS: number;
  /** `PLATFORM_BASE_URL`, `PLATFORM_CLIENT_ID`, `PLATFORM_CLIENT_SECRET`: all three enable upload. */
  readonly platform: {
    readonly baseUrl: string | null;
    readonly clientId: string | null;
    readonly clientSecret: string | null;
  };
  /** `TESSERA_PLUGINS`: comma-separated plugin list for the registry; null means the built-in default. */
  readonly plugins: string[] | null;
  /** `TESSERA_RECIPES_DIR`: folder of `NN_*.json` recipe files (default: the package's `recipes/`). */
  readonly recipesDir: string;
}

/** Environment variables, as `process.env` has them. */
export type Env = Readonly<Record<string, string | undefined>>;

/**
 * The package's own `recipes/` folder: found by walking up from this module to the folder holding the
 * package's `package.json`, so it works from `src/` (tsx, tests) and from a bundled `dist/` chunk alike.
 */
export const PACKAGE_RECIPES_DIR = join(packageRoot(), "recipes");

function packageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(join(dir, "package.json")) && existsSync(join(dir, "recipes"))) return dir;
    const up = dirname(dir);
    if (up === dir) return process.cwd();
    dir = up;
  }
}

/** Parse one variable; an unparsable value throws an error naming the variable. */
function makeReader(env: Env) {
  const raw = (name: string): string | undefined => {
    const v = env[name];
    return v === undefined || v.trim() === "" ? undefined : v.trim();
  };
  const num = (name: string, dflt: number, opts: { integer?: boolean; min?: number } = {}): number => {
    const v = raw(name);
    if (v === undefined) return dflt;
    const n = Number(v);
    if (
      !Number.isFinite(n) ||
      (opts.integer && !Number.isInteger(n)) ||
      (opts.min !== undefined && n < opts.min)
    ) {
      const what = opts.integer ? "an integer" : "a number";
      throw new Error(
        `${name}=${JSON.stringify(v)}: expected ${what}${opts.min !== undefined ? ` ≥ ${opts.min}` : ""}`,
      );
    }
    return n;
  };
  const bool = (name: string, dflt: boolean): boolean => {
    const v = raw(name);
    if (v === undefined) return dflt;
    if (/^(1|true|yes|on)$/i.test(v)) return true;
    if (/^(0|false|no|off)$/i.test(v)) return false;
    throw new Error(`${name}=${JSON.stringify(v)}: expected 0 or 1`);
  };
  return { raw, num, bool };
}

/**
 * Read the configuration from `env` (default `process.env`). Relative folders resolve against the
 * current directory; "auto" defaults come from cgroup limits, else the host.
 */
export function readConfig(env: Env = process.env): ServiceConfig {
  const { raw, num, bool } = makeReader(env);
  const cpus = num("TESSERA_CONTAINER_CPUS", machineCpus(), { min: 0.1 });
  const wholeCpus = Math.max(1, Math.floor(cpus));
  const plugins = raw("TESSERA_PLUGINS");
  return {
    dataDir: resolve(raw("TESSERA_DATA_DIR") ?? "./.tessera-data"),
    port: num("TESSERA_PORT", 8000, { integer: true, min: 0 }),
    host: raw("TESSERA_HOST") ?? "127.0.0.1",
    token: raw("TESSERA_TOKEN") ?? null,
    allowedHosts: list(raw("TESSERA_ALLOWED_HOSTS")),
    allowedOrigins: list(raw("TESSERA_ALLOWED_ORIGINS")),
    workDir: resolve(raw("TESSERA_WORK_DIR") ?? join(tmpdir(), "tessera-work")),
    workDirInRam: bool("TESSERA_WORK_DIR_IN_RAM", false),
    workTmpfsPct: num("TESSERA_WORK_TMPFS_PCT", 85, { min: 0 }),
    rasterChunkCacheMb: num("TESSERA_RASTER_CHUNK_CACHE_MB", 256, { min: 0 }),
    containerMemMb: num("TESSERA_CONTAINER_MEM_MB", machineMemMb(), { min: 0 }),
    admissionPct: num("TESSERA_ADMISSION_PCT", 0.8, { min: 0 }),
    containerCpus: cpus,
    maxSessions: num("TESSERA_MAX_SESSIONS", 8, { integer: true, min: 1 }),
    sessionRecovery: bool("TESSERA_SESSION_RECOVERY", false),
    autosaveS: num("TESSERA_AUTOSAVE_S", 60, { min: 0 }),
    imageRenderConcurrency: num("TESSERA_IMAGE_RENDER_CONCURRENCY", wholeCpus, { integer: true, min: 1 }),
    clientImageCompositing: bool("TESSERA_CLIENT_IMAGE_COMPOSITING", true),
    clientImageMaxChannels: num("TESSERA_CLIENT_IMAGE_MAX_CHANNELS", 6, { integer: true, min: 1 }),
    rasterBasePx: num("TESSERA_RASTER_BASE_PX", 1024, { integer: true, min: 1 }),
    rasterRebuildWorkers: num("TESSERA_RASTER_REBUILD_WORKERS", wholeCpus, { integer: true, min: 1 }),
    staticDir: resolve(raw("TESSERA_STATIC_DIR") ?? "/app/spa"),
    nThreads: num("TESSERA_N_THREADS", wholeCpus, { integer: true, min: 1 }),
    computePoolWorkers: num("TESSERA_COMPUTE_POOL_WORKERS", wholeCpus, { integer: true, min: 1 }),
    resourceHz: num("TESSERA_RESOURCE_HZ", 2, { min: 0 }),
    presenceTimeoutS: num("TESSERA_PRESENCE_TIMEOUT_S", 20, { min: 0 }),
    longRunningS: num("TESSERA_LONG_RUNNING_S", 120, { min: 0 }),
    appUrl: raw("TESSERA_APP_URL") ?? null,
    mcpIdleReleaseS: num("TESSERA_MCP_IDLE_RELEASE_S", 900, { min: 0 }),
    platform: {
      baseUrl: raw("PLATFORM_BASE_URL") ?? null,
      clientId: raw("PLATFORM_CLIENT_ID") ?? null,
      clientSecret: raw("PLATFORM_CLIENT_SECRET") ?? null,
    },
    plugins: plugins
      ? plugins
          .split(",")
          .map((s) => s.trim())
          .filter(Boolean)
      : null,
    recipesDir: resolve(raw("TESSERA_RECIPES_DIR") ?? PACKAGE_RECIPES_DIR),
  };
}

/** A comma-separated list variable as its non-blank items. */
function list(v: string | undefined): string[] {
  return (v ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
}

/** Whether upload to the data platform is enabled (all three platform variables set). */
export function platformEnabled(config: ServiceConfig): boolean {
  const p = config.platform;
  return Boolean(p.baseUrl && p.clientId && p.clientSecret);
}
