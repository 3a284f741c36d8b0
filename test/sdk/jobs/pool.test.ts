/**
 * The worker pool with real worker threads, running the test operations of `./ops/`.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { allocArray, type DenseArray, dense } from "../../../src/sdk/data/arrays.js";
import { applyChange, type Change } from "../../../src/sdk/data/change.js";
import { dataFrame } from "../../../src/sdk/data/dataframe.js";
import { makeSpatialData, type SpatialData } from "../../../src/sdk/data/spatialdata.js";
import { makeTable } from "../../../src/sdk/data/table.js";
import { unsDict } from "../../../src/sdk/data/uns.js";
import { resolveWorkerEntry } from "../../../src/sdk/jobs/entry.js";
import {
  JobCancelledError,
  JobTimeoutError,
  OperationError,
  WorkerCrashError,
} from "../../../src/sdk/jobs/errors.js";
import type { EffectClass } from "../../../src/sdk/jobs/operation.js";
import { type RunHooks, WorkerPool, type WorkerTask } from "../../../src/sdk/jobs/pool.js";
import { SerialQueue } from "../../../src/sdk/jobs/queue.js";

const OPS = {
  basic: new URL("./ops/basic.ts", import.meta.url).href,
  crash: new URL("./ops/crash.ts", import.meta.url).href,
  data: new URL("./ops/data.ts", import.meta.url).href,
};

function tableSd(n: number, uns: Record<string, DenseArray> = {}): SpatialData {
  const table = makeTable({
    obs: dataFrame(Array.from({ length: n }, (_, i) => `cell${i}`)),
    var: dataFrame(["g0"]),
    uns: unsDict(uns),
  });
  return makeSpatialData({ tables: { table } });
}

const EMPTY = makeSpatialData();

function task(
  mod: keyof typeof OPS,
  fn: string,
  params: Record<string, unknown> = {},
  sdata: SpatialData = EMPTY,
  effect: EffectClass = "compute",
): WorkerTask {
  return { module: OPS[mod], export: fn, sdata, params, table: "table", seed: 7, threads: 1, effect };
}

async function rejection(p: Promise<unknown>): Promise<Error> {
  try {
    await p;
  } catch (e) {
    return e as Error;
  }
  throw new Error("expected a rejection");
}

let pool: WorkerPool;

beforeAll(async () => {
  pool = new WorkerPool({ threads: 2, minThreads: 2, longRunningS: 30, abortGraceMs: 300 });
  // Warm both threads so timings below do not include worker start-up.
  await Promise.all([
    pool.run(task("basic", "sleep", { ms: 50, steps: 1 })),
    pool.run(task("basic", "sleep", { ms: 50, steps: 1 })),
  ]);
});

afterAll(async () => {
  await pool.destroy();
});

describe("WorkerPool: results", () => {
  it("runs in the source tree from worker.ts with tsx registered in the worker", () => {
    expect(pool.mode).toBe("source");
    const entry = resolveWorkerEntry();
    expect(entry.filename).toMatch(/\/src\/sdk\/jobs\/worker\.ts$/);
    expect(entry.execArgv[0]).toBe("--import");
    expect(decodeURIComponent(entry.execArgv[1]!)).toMatch(/register\(\)/);
  });

  it("passes params, table, threads and a seeded rng to the operation", async () => {
    const out = (await pool.run(task("basic", "echo", { a: [1, "b"] }, tableSd(3), "extract"))) as Record<
      string,
      unknown
    >;
    expect(out).toMatchObject({ params: { a: [1, "b"] }, table: "table", threads: 1, tables: ["table"] });
    const again = (await pool.run(task("basic", "echo", {}, EMPTY, "extract"))) as { draw: number };
    expect(again.draw).toBe(out.draw);
  });

  it("returns a big Change whose buffers arrive intact (moved), and it commits with applyChange", async () => {
    const n = 50_000;
    const sd = tableSd(n);
    const change = (await pool.run(task("data", "bigChange", { cols: 10 }, sd))) as Change;
    const emb = change.tables!.table!.obsm!.X_big as DenseArray<Float32Array>;
    expect(emb.shape).toEqual([n, 10]);
    expect(emb.data).toBeInstanceOf(Float32Array);
    expect(emb.data.length).toBe(n * 10);
    expect(emb.data.buffer).not.toBeInstanceOf(SharedArrayBuffer);
    expect([emb.data[0], emb.data[1], emb.data[n * 10 - 1]]).toEqual([0, 0.5, (n * 10 - 1) * 0.5]);
    const { sdata, diff, touched } = applyChange(sd, change);
    expect(diff).toEqual({ obsm: ["X_big"], obs: ["score"] });
    expect(touched).toContain("tables:table:obsm:X_big");
    expect((sdata.tables.table!.obs.columns.score as DenseArray).data[n - 1]).toBe(n - 1 + 0.25);
    expect(sd.tables.table!.obsm.X_big).toBeUndefined();
  });

  it("delivers progress and log messages in order, all before the job settles", async () => {
    const progress: [number, string | undefined][] = [];
    const logs: string[] = [];
    let started = 0;
    await pool.run(task("basic", "sleep", { ms: 60, steps: 20, tag: "t" }), {
      onStart: () => started++,
      onProgress: (f, m) => progress.push([f, m]),
      onLog: (t) => logs.push(t),
    });
    expect(started).toBe(1);
    expect(progress).toHaveLength(20);
    expect(progress.map(([f]) => f)).toEqual(Array.from({ length: 20 }, (_, i) => (i + 1) / 20));
    expect(progress[19]![1]).toBe("step 20");
    expect(logs).toEqual(Array.from({ length: 20 }, (_, i) => `t ${i + 1}`));
  });

  it("big string arrays cross packed: untouched ones come back as the very same objects", async () => {
    const n = 30_000;
    const sd = tableSd(n);
    const index = sd.tables.table!.obs.index;
    const out = (await pool.run(task("data", "sameObs", {}, sd, "extract"))) as {
      obs: typeof sd.tables.table.obs;
    };
    expect(out.obs.index === index).toBe(true);
    const change = (await pool.run(task("data", "relabel", {}, sd))) as Change;
    const t = change.replaceTables!.table!;
    expect(t.obs.index === index).toBe(true);
    const label = t.obs.columns.label!;
    expect(label.kind).toBe("string");
    const values = (label as unknown as { values: (string | null)[] }).values;
    expect(values.length).toBe(n);
    expect([values[0], values[1], values[n - 1]]).toEqual([null, "cell1→é", `cell${n - 1}→é`]);
    expect(applyChange(sd, change).sdata.tables.table!.obs.columnOrder).toEqual(["label"]);
  });

  it("answers a job's mirrorGene through the run's geneReader (null without one, or when it throws)", async () => {
    const asked: string[] = [];
    const geneReader = async (table: string, gene: string) => {
      asked.push(`${table}/${gene}`);
      if (gene === "bad") throw new Error("unreadable");
      return gene === "g1" ? Float32Array.of(1, 2.5, 3) : null;
    };
    const out = (await pool.run(task("basic", "mirrorGenes", { genes: ["g1", "g2", "bad"] }), {
      geneReader,
    })) as { got: (number[] | null)[] };
    expect(out.got).toEqual([[1, 2.5, 3], null, null]);
    expect(asked.sort()).toEqual(["table/bad", "table/g1", "table/g2"]);
    const none = (await pool.run(task("basic", "mirrorGenes", { genes: ["g1"] }))) as {
      got: (number[] | null)[];
    };
    expect(none.got).toEqual([null]);
  });

  it("a failing operation rejects with its own message, keeps its stack, and delivers its log", async () => {
    const logs: string[] = [];
    const err = await rejection(
      pool.run(task("basic", "fail", { n: -3 }), { name: "test.fail", onLog: (t) => logs.push(t) }),
    );
    expect(err).toBeInstanceOf(OperationError);
    expect(err.message).toBe("n must be positive, got -3");
    expect((err as OperationError).operationErrorName).toBe("TypeError");
    expect(err.stack).toMatch(/ops\/basic\.ts/);
    expect(logs).toEqual(["about to fail"]);
  });

  it("a result a worker cannot send back fails the job with a clear message", async () => {
    const err = await rejection(pool.run(task("crash", "badResult"), { name: "test.bad" }));
    expect(err).toBeInstanceOf(OperationError);
    expect(err.message).toMatch(/result of test\.bad: fn is a function/);
  });

  it("a missing export fails the job naming module and export", async () => {
    const err = await rejection(pool.run(task("basic", "nope")));
    expect(err.message).toMatch(/has no exported function "nope"/);
  });
});

describe("WorkerPool: read operations run on the main thread", () => {
  it("keeps the reader's lazy values live and reports progress and log", async () => {
    const progress: number[] = [];
    const logs: string[] = [];
    const sd = (await pool.run(task("data", "fakeRead", { n: 5 }, EMPTY, "read"), {
      onProgress: (f) => progress.push(f),
      onLog: (t) => logs.push(t),
    })) as SpatialData;
    const X = sd.tables.table!.X!;
    expect(X.kind).toBe("lazy");
    const m = await (X as { load(): Promise<DenseArray<Float64Array>> }).load();
    expect(Array.from(m.data)).toEqual([0, 1, 2, 3, 4]);
    expect(progress).toEqual([0.5]);
    expect(logs).toEqual(["reading"]);
  });

  it("cancels and times out like worker jobs", async () => {
    const ac = new AbortController();
    const p = pool.run(task("data", "slowRead", {}, EMPTY, "read"), { signal: ac.signal, name: "read.slow" });
    setTimeout(() => ac.abort(), 30);
    await expect(p).rejects.toMatchObject({ name: "AbortError", message: "read.slow was cancelled" });
    const quick = new WorkerPool({ threads: 1, minThreads: 0, longRunningS: 0.1 });
    try {
      await expect(
        quick.run(task("data", "slowRead", {}, EMPTY, "read"), { name: "read.slow" }),
      ).rejects.toThrow(/read\.slow exceeded TESSERA_LONG_RUNNING_S \(0\.1 s\)/);
    } finally {
      await quick.destroy();
    }
  });
});

describe("WorkerPool: crashes", () => {
  it("process.exit in the worker rejects naming the operation, and the pool keeps serving", async () => {
    const err = await rejection(pool.run(task("crash", "exit"), { name: "crash.exit" }));
    expect(err).toBeInstanceOf(WorkerCrashError);
    expect(err.message).toMatch(/^worker crashed while running crash\.exit: worker exited with code: 3/);
    const ok = await pool.run(task("basic", "echo", {}, EMPTY, "extract"));
    expect(ok).toMatchObject({ table: "table" });
  });

  it("an uncaught error in the worker is a crash too, and other jobs carry on", async () => {
    const other = pool.run(task("basic", "sleep", { ms: 300, steps: 3 }));
    const err = await rejection(pool.run(task("crash", "uncaught"), { name: "crash.uncaught" }));
    expect(err.message).toBe("worker crashed while running crash.uncaught: async boom");
    await expect(other).resolves.toMatchObject({ tag: null });
    await expect(pool.run(task("basic", "noop"))).resolves.toEqual({});
  });

  it("running out of heap (resourceLimits) crashes only that job", async () => {
    const small = new WorkerPool({ threads: 1, maxOldGenerationSizeMb: 32, longRunningS: 30 });
    try {
      const err = await rejection(small.run(task("crash", "oom"), { name: "crash.oom" }));
      expect(err).toBeInstanceOf(WorkerCrashError);
      expect(err.message).toMatch(/^worker crashed while running crash\.oom: .*(memory|heap)/i);
      await expect(small.run(task("basic", "noop"))).resolves.toEqual({});
    } finally {
      await small.destroy();
    }
  });
});

describe("WorkerPool: cancellation and the watchdog", () => {
  it("aborting a running job rejects with AbortError ('cancelled') promptly (cooperative)", async () => {
    const ac = new AbortController();
    const t0 = performance.now();
    const p = pool.run(task("basic", "sleep", { ms: 5000, steps: 50 }), {
      signal: ac.signal,
      name: "sleepy",
    });
    setTimeout(() => ac.abort(), 150);
    const err = await rejection(p);
    expect(err).toBeInstanceOf(JobCancelledError);
    expect(err.name).toBe("AbortError");
    expect(err.message).toBe("sleepy was cancelled");
    expect(performance.now() - t0).toBeLessThan(1000);
  });

  it("a synchronous loop sees the shared abort flag without an event-loop turn", async () => {
    const ac = new AbortController();
    const t0 = performance.now();
    const p = pool.run(task("basic", "busyPolling", { ms: 5000 }), { signal: ac.signal });
    setTimeout(() => ac.abort(), 150);
    const err = await rejection(p);
    expect(err.name).toBe("AbortError");
    // Well under the grace period plus the loop: it stopped on its own.
    expect(performance.now() - t0).toBeLessThan(400);
  });

  it("an operation that ignores the signal is terminated after the grace period; the pool recovers", async () => {
    const ac = new AbortController();
    const t0 = performance.now();
    const p = pool.run(task("basic", "spin", { ms: 10_000 }), { signal: ac.signal });
    setTimeout(() => ac.abort(), 100);
    const err = await rejection(p);
    const elapsed = performance.now() - t0;
    expect(err.name).toBe("AbortError");
    expect(elapsed).toBeGreaterThanOrEqual(350);
    expect(elapsed).toBeLessThan(2000);
    await expect(pool.run(task("basic", "noop"))).resolves.toEqual({});
  });

  it("an already aborted signal rejects at once; a job waiting for a thread is dropped without starting", async () => {
    const ac0 = new AbortController();
    ac0.abort();
    await expect(pool.run(task("basic", "noop"), { signal: ac0.signal })).rejects.toThrow(/cancelled/);

    const busy = [
      pool.run(task("basic", "sleep", { ms: 400, steps: 4 })),
      pool.run(task("basic", "sleep", { ms: 400, steps: 4 })),
    ];
    const ac = new AbortController();
    let started = false;
    const waiting = pool.run(task("basic", "noop"), {
      signal: ac.signal,
      onStart: () => {
        started = true;
      },
    });
    setTimeout(() => ac.abort(), 50);
    const t0 = performance.now();
    const err = await rejection(waiting);
    expect(err.name).toBe("AbortError");
    expect(performance.now() - t0).toBeLessThan(250);
    expect(started).toBe(false);
    await Promise.all(busy);
  });

  it("the watchdog stops a job that runs longer than longRunningS", async () => {
    const quick = new WorkerPool({ threads: 1, longRunningS: 0.3, abortGraceMs: 200 });
    try {
      const t0 = performance.now();
      const err = await rejection(
        quick.run(task("basic", "sleep", { ms: 5000, steps: 50 }), { name: "slow.op" }),
      );
      expect(err).toBeInstanceOf(JobTimeoutError);
      expect(err.name).toBe("TimeoutError");
      expect(err.message).toBe("slow.op exceeded TESSERA_LONG_RUNNING_S (0.3 s) and was stopped");
      expect(performance.now() - t0).toBeLessThan(2500);
      // A job under the limit is untouched.
      await expect(quick.run(task("basic", "sleep", { ms: 50, steps: 2 }))).resolves.toMatchObject({
        tag: null,
      });
    } finally {
      await quick.destroy();
    }
  });

  it("rejects new jobs after destroy", async () => {
    const p = new WorkerPool({ threads: 1, minThreads: 0 });
    await p.destroy();
    await expect(p.run(task("basic", "noop"))).rejects.toThrow(/shut down/);
  });
});

describe("WorkerPool with SerialQueue", () => {
  type Times = { started: number; finished: number; tag: string };

  it("FIFO inside a queue: jobs run one after another in order", async () => {
    const q = new SerialQueue();
    const results: Times[] = [];
    for (const tag of ["a", "b", "c"]) {
      q.push(tag, async (signal) => {
        results.push(
          (await pool.run(task("basic", "sleep", { ms: 80, steps: 2, tag }), { signal })) as Times,
        );
      });
    }
    expect(q.queued).toEqual(["b", "c"]);
    await q.idle();
    expect(results.map((r) => r.tag)).toEqual(["a", "b", "c"]);
    expect(results[0]!.finished).toBeLessThanOrEqual(results[1]!.started);
    expect(results[1]!.finished).toBeLessThanOrEqual(results[2]!.started);
  });

  it("two queues (sessions) run at the same time: their time windows overlap", async () => {
    const q1 = new SerialQueue();
    const q2 = new SerialQueue();
    const out: Times[] = [];
    const job = (tag: string) => async (signal: AbortSignal) => {
      out.push((await pool.run(task("basic", "sleep", { ms: 300, steps: 3, tag }), { signal })) as Times);
    };
    const t0 = performance.now();
    q1.push("x", job("s1"));
    q2.push("x", job("s2"));
    await Promise.all([q1.idle(), q2.idle()]);
    const [a, b] = out as [Times, Times];
    expect(Math.max(a.started, b.started)).toBeLessThan(Math.min(a.finished, b.finished));
    expect(performance.now() - t0).toBeLessThan(550);
  });

  it("cancel of a queued job: it never reaches the pool; abort of the running one rejects it", async () => {
    const q = new SerialQueue();
    const seen: string[] = [];
    const hooks = (tag: string): RunHooks => ({ onStart: () => seen.push(`start ${tag}`) });
    const errors: string[] = [];
    q.push("a", async (signal) => {
      try {
        await pool.run(task("basic", "sleep", { ms: 3000, steps: 30 }), { ...hooks("a"), signal });
      } catch (e) {
        errors.push((e as Error).name);
      }
    });
    q.push("b", async (signal) => {
      await pool.run(task("basic", "noop"), { ...hooks("b"), signal });
    });
    q.push("c", async (signal) => {
      await pool.run(task("basic", "noop"), { ...hooks("c"), signal });
    });
    expect(q.cancel("b")).toBe(true);
    expect(q.position("c")).toBe(1);
    await new Promise((r) => setTimeout(r, 100));
    expect(q.abort("a")).toBe(true);
    await q.idle();
    expect(errors).toEqual(["AbortError"]);
    expect(seen).toEqual(["start a", "start c"]);
  });
});

describe("zero-copy dispatch", () => {
  it("a 100 MB shared matrix reaches the worker without a copy (same memory, no RSS growth per job)", async () => {
    const n = (100 * 2 ** 20) / 8;
    const big = allocArray("float64", n) as Float64Array;
    for (let i = 0; i < n; i += 4096) big[i] = 1;
    const scratch = allocArray("uint8", 8) as Uint8Array;
    const sd = tableSd(10, { big: dense(big), scratch: dense(scratch) });
    const run = (marker: number) =>
      pool.run(task("data", "probeShared", { marker }, sd, "extract")) as Promise<{
        shared: boolean;
        scratchShared: boolean;
        bytes: number;
        sum: number;
      }>;
    await run(1); // warm: module import in both workers
    await run(2);
    const rss0 = process.memoryUsage().rss;
    const times: number[] = [];
    for (let k = 3; k <= 8; k++) {
      const t0 = performance.now();
      const out = await run(k);
      times.push(performance.now() - t0);
      // (a) the worker wrote into the very memory the main thread holds.
      expect(scratch[0]).toBe(k);
      expect(out).toMatchObject({ shared: true, scratchShared: true, bytes: 100 * 2 ** 20, sum: n / 4096 });
    }
    const grownMb = (process.memoryUsage().rss - rss0) / 2 ** 20;
    // (b) six jobs on 100 MB: a copy per job would add ~600 MB.
    expect(grownMb).toBeLessThan(60);
    const mean = times.reduce((a, b) => a + b, 0) / times.length;
    expect(mean).toBeLessThan(200);
    console.log(
      `zero-copy: 6 jobs on a 100 MB matrix, mean ${mean.toFixed(1)} ms, RSS +${grownMb.toFixed(1)} MB`,
    );
  });
});
