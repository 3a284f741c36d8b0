/**
 * HTTP benchmark: requests per second and p50/p99 latency of the data routes on a large session,
 * with a load generator in a second process on loopback (bench/http-load.ts).
 *
 *   npm run bench:http                    # 1,000,000 cells × 2,000 genes, 500,000 polygons
 *   npm run bench:http -- --quick         # 100,000 cells, 50,000 polygons
 *   npm run bench:http -- --cells 200000 --genes 100 --polygons 200000 --seconds 5 --concurrency 8
 *
 * Scenarios: `GET /data/X:<gene>` over random genes (from the checkpoint's column-major mirror),
 * `GET /data/obsm:spatial` (all coordinates), and `GET /shapes/cells/geoarrow?bbox=` over random
 * viewport-sized boxes. Responses are requested uncompressed (gzip is measured separately once).
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { startServer } from "../src/adapters/http/server.js";
import { writeCheckpointNamed } from "../src/sdk/io/checkpoint/write.js";
import { Rng } from "../src/sdk/math/rng.js";
import { buildHttpDataset, CELL_SPACING_UM, tissueSide } from "./http-dataset.js";
import { runLoad } from "./run-load.js";

const { values: args } = parseArgs({
  options: {
    quick: { type: "boolean" },
    cells: { type: "string" },
    genes: { type: "string" },
    polygons: { type: "string" },
    seconds: { type: "string" },
    concurrency: { type: "string" },
    seed: { type: "string" },
  },
});
const quick = Boolean(args.quick);
const nCells = Number(args.cells ?? (quick ? 100_000 : 1_000_000));
const nGenes = Number(args.genes ?? 2000);
const nPolygons = Number(args.polygons ?? (quick ? 50_000 : 500_000));
const seconds = Number(args.seconds ?? (quick ? 3 : 10));
const concurrency = Number(args.concurrency ?? 8);
const seed = Number(args.seed ?? 0);

const mb = (b: number) => (b / 1e6).toFixed(1);
const log = (s: string) => process.stdout.write(`${s}\n`);

const dir = await mkdtemp(join(tmpdir(), "tessera-bench-http-"));
try {
  log(
    `dataset: ${nCells.toLocaleString()} cells × ${nGenes} genes, ${nPolygons.toLocaleString()} polygons (seed ${seed})`,
  );
  let t = performance.now();
  const sd = buildHttpDataset(nCells, nGenes, nPolygons, seed);
  log(`  generated in ${((performance.now() - t) / 1000).toFixed(1)} s`);
  t = performance.now();
  const written = await writeCheckpointNamed(sd, dir, "bench", { name: "bench" });
  log(
    `  checkpoint written in ${((performance.now() - t) / 1000).toFixed(1)} s (${mb(written.bytes ?? 0)} MB)`,
  );

  const server = await startServer({
    env: {},
    config: { dataDir: dir, workDir: join(dir, ".work") },
    port: 0,
  });
  t = performance.now();
  const session = await server.service.createSession({ source: { kind: "load", path: written.path } });
  await session.ready;
  if (session.status !== "ready") throw new Error(`load failed: ${session.summary().error}`);
  log(
    `  session loaded in ${((performance.now() - t) / 1000).toFixed(1)} s; RSS ${mb(process.memoryUsage().rss)} MB`,
  );
  const api = `/api/sessions/${session.id}`;

  const rng = new Rng(seed).fork("bench-http");
  const genes = session.data.tables.table!.var.index.values;
  const genePaths = Array.from(
    { length: 64 },
    () => `${api}/data/${encodeURIComponent(`X:${genes[rng.int(genes.length)]}`)}`,
  );
  const side = Math.sqrt(nPolygons) * CELL_SPACING_UM;
  const full = tissueSide(nCells);
  // Viewport-sized boxes (about 40 × 25 cells) inside the polygon-covered part of the tissue.
  const boxes = Array.from({ length: 256 }, () => {
    const w = 40 * CELL_SPACING_UM;
    const h = 25 * CELL_SPACING_UM;
    const x = rng.uniform(0, Math.max(1, Math.min(side, full) - w));
    const y = rng.uniform(0, Math.max(1, (nPolygons / Math.ceil(Math.sqrt(nCells))) * CELL_SPACING_UM - h));
    return `${api}/shapes/cells/geoarrow?bbox=${x.toFixed(1)},${y.toFixed(1)},${(x + w).toFixed(1)},${(y + h).toFixed(1)}`;
  });
  const scenarios: [string, string[], number][] = [
    ["GET /data/X:<gene> (random genes)", genePaths, concurrency],
    ["GET /data/obsm:spatial", [`${api}/data/obsm:spatial`], Math.min(concurrency, 4)],
    ["GET /shapes/cells/geoarrow?bbox= (viewport boxes)", boxes, concurrency],
  ];
  // Warm-up: first requests build caches (mirror indptr, spatial index).
  for (const [name, paths] of scenarios) {
    const t0 = performance.now();
    const r = await fetch(`${server.url}${paths[0]}`);
    const body = new Uint8Array(await r.arrayBuffer());
    log(`  first ${name}: ${r.status}, ${(performance.now() - t0).toFixed(0)} ms, ${mb(body.length)} MB`);
  }
  {
    const t0 = performance.now();
    const r = await fetch(`${server.url}${api}/data/obsm:spatial`, {
      headers: { "accept-encoding": "gzip" },
    });
    const n = (await r.arrayBuffer()).byteLength;
    log(
      `  obsm:spatial with gzip: ${(performance.now() - t0).toFixed(0)} ms (${r.headers.get("content-encoding") ?? "identity"})`,
    );
    void n;
  }
  log("");
  log(`| request | concurrency | req/s | p50 ms | p90 ms | p99 ms | MB/response | errors |`);
  log(`|---|---|---|---|---|---|---|---|`);
  for (const [name, paths, conc] of scenarios) {
    const r = await runLoad(server.url, paths, conc, seconds);
    log(
      `| ${name} | ${conc} | ${r.rps.toFixed(0)} | ${r.p50_ms.toFixed(1)} | ${r.p90_ms.toFixed(1)} | ${r.p99_ms.toFixed(1)} | ${mb(r.mean_bytes)} | ${r.errors} |`,
    );
  }
  log(`\npeak RSS of the server process: ${mb(process.resourceUsage().maxRSS * 1024)} MB`);
  await server.close();
} finally {
  await rm(dir, { recursive: true, force: true });
}
