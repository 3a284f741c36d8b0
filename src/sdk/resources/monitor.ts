/**
 * The resource monitor: samples memory and CPU at `TESSERA_RESOURCE_HZ`, emits `resource.sample`
 * (spec "Events"), warns with `memory.warning` when memory crosses the admission threshold, and
 * answers admission: past `TESSERA_ADMISSION_PCT` of the memory limit, new jobs, reads and renders
 * are refused with a 503 (`LimitError`) so a running analysis can finish instead of the process being
 * killed. `TESSERA_CONTAINER_MEM_MB=0` disables the percentage: admission never blocks.
 */
import { LimitError } from "../errors.js";
import { CpuMeter, folderMb, rssMb } from "./measure.js";

/** The `resource.sample` payload. */
export interface ResourceSample {
  global: {
    rss_mb: number;
    work_dir_mb: number;
    rss_pct: number;
    cpu_pct: number;
    cpu_count: number;
    rasters_mb: number;
  };
  per_session: Record<string, number>;
}

/** What the monitor reads of the configuration. */
export interface MonitorConfig {
  readonly containerMemMb: number;
  readonly admissionPct: number;
  readonly containerCpus: number;
  readonly resourceHz: number;
  readonly workDir: string;
  readonly workDirInRam: boolean;
}

/** Options of a `ResourceMonitor`. */
export interface MonitorOptions {
  config: MonitorConfig;
  /** Resident MB per open session (its data), for `per_session`. */
  perSession(): Record<string, number>;
  /** Total MB of raster caches (0 until rasters are cached). */
  rastersMb?(): number;
  /** Where samples and warnings go. */
  emit(event: "resource.sample" | "memory.warning", data: object): void;
  /** Memory reading in MB (tests). */
  rss?: () => number;
}

const round1 = (x: number) => Math.round(x * 10) / 10;

/** Samples resources and gates admission (see the module comment). */
export class ResourceMonitor {
  private readonly opts: MonitorOptions;
  private readonly cpu = new CpuMeter();
  private timer: ReturnType<typeof setInterval> | null = null;
  private workDirMb = 0;
  private overThreshold = false;

  constructor(opts: MonitorOptions) {
    this.opts = opts;
  }

  /** Start sampling at the configured rate (no-op when `resourceHz` is 0); the timer is unref'd. */
  start(): void {
    const hz = this.opts.config.resourceHz;
    if (this.timer || !(hz > 0)) return;
    this.timer = setInterval(() => void this.tick(), Math.max(50, 1000 / hz));
    this.timer.unref?.();
  }

  /** Stop sampling. */
  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** Effective memory (RSS plus a RAM-backed working dir) as percent of the limit; 0 when disabled. */
  memoryPct(): number {
    const limit = this.opts.config.containerMemMb;
    if (!(limit > 0)) return 0;
    const rss = this.opts.rss ? this.opts.rss() : rssMb();
    return ((rss + (this.opts.config.workDirInRam ? this.workDirMb : 0)) / limit) * 100;
  }

  /** Throw a 503 `LimitError` when memory is past the admission threshold; `what` names the refused request. */
  admit(what: string): void {
    if (!(this.opts.config.containerMemMb > 0)) return;
    const pct = this.memoryPct();
    const threshold = this.opts.config.admissionPct * 100;
    if (pct >= threshold)
      throw new LimitError(
        `${what} refused: memory is at ${pct.toFixed(0)}% of the ${this.opts.config.containerMemMb} MB limit (admission threshold ${threshold.toFixed(0)}%); retry when running work has finished or close a session`,
      );
  }

  /**
   * Throw a 503 `LimitError` when a job's estimated peak (`bytes`) does not fit in the memory left below the
   * admission threshold; `what` names the job and `why` how the estimate was made. No-op without a limit.
   */
  admitNeed(what: string, bytes: number, why: string): void {
    const limit = this.opts.config.containerMemMb;
    if (!(limit > 0) || !(bytes > 0)) return;
    const threshold = this.opts.config.admissionPct * limit;
    const used = (this.memoryPct() / 100) * limit;
    const headroom = Math.max(0, threshold - used);
    const need = bytes / 2 ** 20;
    if (need > headroom)
      throw new LimitError(
        `${what} refused: it needs about ${need < 10 ? need.toFixed(1) : need.toFixed(0)} MB at its peak (${why}), and ${headroom.toFixed(0)} MB are free below the admission threshold (${(this.opts.config.admissionPct * 100).toFixed(0)}% of the ${limit} MB limit); save and close a session, or work on a subset`,
      );
  }

  /** One sample (also what the timer emits). */
  async sample(): Promise<ResourceSample> {
    const c = this.opts.config;
    if (c.workDirInRam) this.workDirMb = await folderMb(c.workDir);
    const rss = this.opts.rss ? this.opts.rss() : rssMb();
    return {
      global: {
        rss_mb: round1(rss),
        work_dir_mb: round1(c.workDirInRam ? this.workDirMb : 0),
        rss_pct: round1(this.memoryPct()),
        cpu_pct: round1(this.cpu.read()),
        cpu_count: c.containerCpus,
        rasters_mb: round1(this.opts.rastersMb?.() ?? 0),
      },
      per_session: this.opts.perSession(),
    };
  }

  private async tick(): Promise<void> {
    const s = await this.sample();
    this.opts.emit("resource.sample", s);
    const threshold = this.opts.config.admissionPct * 100;
    const over = this.opts.config.containerMemMb > 0 && s.global.rss_pct >= threshold;
    if (over && !this.overThreshold)
      this.opts.emit("memory.warning", {
        message: `memory at ${s.global.rss_pct.toFixed(0)}% of the limit: new jobs and reads are refused until it falls below ${threshold.toFixed(0)}%`,
      });
    this.overThreshold = over;
  }
}
