/**
 * Soak: many sessions running pipelines for minutes over real HTTP, with readers beside them. Prints the
 * errors (failed jobs, 5xx, refused requests), read latency p50/p99, the RSS over time and its slope after
 * warm-up, and the RSS once every session has closed, against the start. The issue's goals: 0 errors, no
 * growth after warm-up, back within 300 MB of the start after the sessions close.
 *
 *   npm run bench:soak                                   # 8 sessions × 10 minutes on 20,000 × 2,000
 *   npm run bench:soak -- --sessions 2 --minutes 1 --cells 5000
 *
 * The server runs in this process (its RSS is what is sampled); the readers and job drivers are plain
 * `fetch` loops against it on 127.0.0.1.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { startServer } from "../src/adapters/http/server.js";
import { makeSpatialData } from "../src/sdk/data/spatialdata.js";
import { writeCheckpointNamed } from "../src/sdk/io/checkpoint/write.js";
import { generateLargeTable } from "./generate.js";

const { values } = parseArgs({
  options: {
    sessions: { type: "string", default: "8" },
    minutes: { type: "string", default: "10" },
    cells: { type: "string", default: "20000" },
    genes: { type: "string", default: "2000" },
  },
});
const nSessions = Number(values.sessions);
const seconds = Number(values.minutes) * 60;
const MB = 2 ** 20;
const log = (s: string) => process.stdout.write(`${s}\n`);
const HEADERS = { "x-tessera-client": "1" };

/** The pipeline each session runs, again and again (each round reopens the data: the pipeline is not idempotent). */
const PIPELINE = [
  ["sc.pp", "normalize_total", {}],
  ["sc.pp", "log1p", {}],
  ["sc.pp", "highly_variable_genes", { n_top_genes: 500 }],
  ["sc.pp", "pca", { n_comps: 20 }],
  ["sc.pp", "neighbors", {}],
  ["sc.tl", "leiden", {}],
] as const;

const dir = await mkdtemp(join(tmpdir(), "tessera-soak-"));
try {
  const table = generateLargeTable(Number(values.cells), Number(values.genes), 0);
  const { path } = await writeCheckpointNamed(makeSpatialData({ tables: { table } }), dir, "soak");
  const server = await startServer({
    env: {},
    config: {
      dataDir: dir,
      workDir: join(dir, ".work"),
      recipesDir: join(dir, "no-recipes"),
      maxSessions: nSessions + 1,
      containerMemMb: 0,
    },
    port: 0,
  });
  const base = `${server.url}/api`;
  const call = async (p: string, init: RequestInit = {}) => {
    const json: Record<string, string> = init.body ? { "content-type": "application/json" } : {};
    const r = await fetch(`${base}${p}`, {
      ...init,
      headers: { ...HEADERS, ...json, ...((init.headers as Record<string, string> | undefined) ?? {}) },
    });
    const body = r.headers.get("content-type")?.includes("json") ? await r.json() : await r.arrayBuffer();
    return { status: r.status, body: body as Record<string, unknown> };
  };
  const startRss = process.memoryUsage().rss;
  log(
    `server up; RSS ${(startRss / MB).toFixed(0)} MB; ${nSessions} sessions × ${seconds} s on ${values.cells} × ${values.genes}`,
  );

  const errors: string[] = [];
  const latencies: number[] = [];
  let jobs = 0;
  const deadline = Date.now() + seconds * 1000;
  const rss: [number, number][] = [];
  const sampler = setInterval(() => rss.push([Date.now(), process.memoryUsage().rss]), 1000);

  /** One session's life: open, run the pipeline, read while it runs, close; again until the deadline. */
  const driver = async (k: number) => {
    while (Date.now() < deadline) {
      const opened = await call("/sessions", {
        method: "POST",
        body: JSON.stringify({ source: { kind: "load", path }, name: `soak ${k}` }),
      });
      if (opened.status >= 300) {
        errors.push(`open ${opened.status} ${JSON.stringify(opened.body)}`);
        await new Promise((r) => setTimeout(r, 1000));
        continue;
      }
      const id = (opened.body.session as { id: string } | undefined)?.id ?? (opened.body.id as string);
      for (;;) {
        const s = await call(`/sessions/${id}`);
        const status =
          (s.body.summary as { status?: string } | undefined)?.status ?? (s.body.status as string);
        if (status === "ready") break;
        if (status === "errored") {
          errors.push(`load errored: ${JSON.stringify(s.body).slice(0, 200)}`);
          break;
        }
        await new Promise((r) => setTimeout(r, 200));
      }
      let reading = true;
      const reader = (async () => {
        while (reading) {
          const t = performance.now();
          const r = await call(`/sessions/${id}/data/obs:cell_type`);
          latencies.push(performance.now() - t);
          if (r.status >= 500) errors.push(`read ${r.status}`);
          await new Promise((res) => setTimeout(res, 50));
        }
      })();
      for (const [namespace, fn, params] of PIPELINE) {
        if (Date.now() > deadline) break;
        const sub = await call(`/sessions/${id}/jobs`, {
          method: "POST",
          body: JSON.stringify({ namespace, function: fn, params }),
        });
        if (sub.status >= 300) {
          errors.push(`${fn} submit ${sub.status} ${JSON.stringify(sub.body).slice(0, 200)}`);
          break;
        }
        for (;;) {
          const j = await call(`/sessions/${id}/jobs/${sub.body.job_id}`);
          const st = j.body.status as string;
          if (st === "completed") break;
          if (st === "failed" || st === "cancelled" || j.status >= 400) {
            errors.push(`${fn} ${st ?? j.status}: ${String(j.body.error ?? "").slice(0, 200)}`);
            break;
          }
          await new Promise((r) => setTimeout(r, 250));
        }
        jobs++;
      }
      reading = false;
      await reader;
      const closed = await call(`/sessions/${id}`, { method: "DELETE" });
      if (closed.status >= 300) errors.push(`close ${closed.status}`);
    }
  };
  await Promise.all(Array.from({ length: nSessions }, (_, k) => driver(k)));
  clearInterval(sampler);

  // Workers stop 10 s after their last job, and a closed session's shared arrays are given back when the
  // last thread that saw them exits. On a loaded machine that takes longer than a fixed wait (measured:
  // ArrayBuffers 211 MB 30 s after the last close, 47 MB 15 s later), so wait until RSS settles: sampled
  // every 5 s after a collection, done when two samples in a row differ by under 5 MB (at most 3 minutes).
  const settleStart = performance.now();
  let last = Number.POSITIVE_INFINITY;
  for (;;) {
    await new Promise((r) => setTimeout(r, 5_000));
    (globalThis as { gc?: () => void }).gc?.();
    const now = process.memoryUsage.rss();
    if (Math.abs(now - last) < 5 * MB || performance.now() - settleStart > 180_000) break;
    last = now;
  }
  const endMem = process.memoryUsage();
  log(
    `memory settled ${((performance.now() - settleStart) / 1000).toFixed(0)} s after the last session closed`,
  );
  const endRss = endMem.rss;
  latencies.sort((a, b) => a - b);
  const q = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))] ?? 0;
  // Slope of RSS over the second half (after warm-up), by least squares.
  const half = rss.slice(Math.floor(rss.length / 2));
  const t0 = half[0]?.[0] ?? 0;
  const xs = half.map(([t]) => (t - t0) / 60_000);
  const ys = half.map(([, v]) => v / MB);
  const mx = xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
  const my = ys.reduce((a, b) => a + b, 0) / Math.max(1, ys.length);
  const slope =
    xs.reduce((a, x, i) => a + (x - mx) * (ys[i]! - my), 0) /
    Math.max(
      1e-9,
      xs.reduce((a, x) => a + (x - mx) ** 2, 0),
    );
  log(`jobs completed: ${jobs}; reads: ${latencies.length}`);
  log(
    `errors: ${errors.length}${errors.length ? `\n  ${[...new Set(errors)].slice(0, 10).join("\n  ")}` : ""}`,
  );
  log(`read obs:cell_type p50 ${q(0.5).toFixed(1)} ms, p99 ${q(0.99).toFixed(1)} ms`);
  log(
    `RSS peak ${(Math.max(...rss.map(([, v]) => v)) / MB).toFixed(0)} MB; slope after warm-up ${slope.toFixed(1)} MB/min`,
  );
  log(
    `RSS at start ${(startRss / MB).toFixed(0)} MB, after every session closed ${(endRss / MB).toFixed(0)} MB (${endRss - startRss > 300 * MB ? "ABOVE" : "within"} 300 MB)`,
  );
  log(
    `after close: JS heap ${(endMem.heapUsed / MB).toFixed(0)} MB, ArrayBuffers ${(endMem.arrayBuffers / MB).toFixed(0)} MB, external ${(endMem.external / MB).toFixed(0)} MB (the rest of RSS is allocator-held or code)`,
  );
  await server.close();
} finally {
  await rm(dir, { recursive: true, force: true });
}
