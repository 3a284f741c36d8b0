/**
 * Image benchmark: the served raster store of a large generated image, then the image routes on a
 * real server on loopback.
 *
 *   npm run bench:images                       # 20,000² × 8-channel uint16 (6.4 GB of pixels)
 *   npm run bench:images -- --size 10000       # 10,000² (1.6 GB)
 *   npm run bench:images -- --quick            # 4,000² smoke run
 *
 * The image is procedural: a `RasterSource` that computes any band on request (tissue-like smooth
 * texture per channel plus noise and empty background), so it never exists whole in memory and the
 * rebuild's peak RSS is the pipeline's own. A real source adds its own decode time on this thread.
 *
 * Figures: rebuild time and peak RSS (sampled every 50 ms, worker threads included), then through
 * HTTP (load generator in this process, sequential unless said): warm 512² WebP tiles with 1…6
 * channels (chunks decoded and cached, the WebP itself not: each request has a new window), cold
 * tiles (chunks never read), cached WebP tiles, raw chunks (cached and not), thumbnails; then 8
 * concurrent clients on warm tiles and on cached raw chunks, from bench/http-load.ts in its own process.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { startServer } from "../src/adapters/http/server.js";
import { allocArray, type DenseArray } from "../src/sdk/data/arrays.js";
import type { AxisSelection, ImageElement, RasterSource } from "../src/sdk/data/elements.js";
import { makeSpatialData } from "../src/sdk/data/spatialdata.js";
import { Session } from "../src/sdk/session/session.js";
import { runLoad } from "./run-load.js";

const { values: args } = parseArgs({
  options: {
    size: { type: "string" },
    channels: { type: "string" },
    quick: { type: "boolean" },
    work: { type: "string" },
    requests: { type: "string" },
  },
});
const size = Number(args.size ?? process.env.BENCH_IMAGE_PX ?? (args.quick ? 4000 : 20000));
const nChannels = Number(args.channels ?? 8);
const nReq = Number(args.requests ?? 60);
const log = (s: string) => process.stdout.write(`${s}\n`);
const ms = (v: number) => `${v.toFixed(1)} ms`;

/** Deterministic tissue-like uint16 planes, computed band by band. */
function proceduralSource(side: number, channels: number): RasterSource {
  const rowBase: Uint16Array[] = [];
  const colBase: Uint16Array[] = [];
  for (let c = 0; c < channels; c++) {
    const r = new Uint16Array(side);
    const k = new Uint16Array(side);
    for (let i = 0; i < side; i++) {
      r[i] = Math.round(800 + 700 * Math.sin((i / side) * (7 + c) * Math.PI) ** 2);
      k[i] = Math.round(600 + 500 * Math.cos((i / side) * (5 + 2 * c) * Math.PI) ** 2);
    }
    rowBase.push(r);
    colBase.push(k);
  }
  const shape = [channels, side, side];
  return {
    shape,
    dtype: "uint16",
    chunks: [1, 1024, side],
    async read(selection?: readonly AxisSelection[]): Promise<DenseArray> {
      const sel = selection ?? [];
      const range = (s: AxisSelection | undefined, n: number): [number, number] =>
        s === null || s === undefined
          ? [0, n]
          : typeof s === "number"
            ? [s, s + 1]
            : [s[0], Math.min(n, s[1])];
      const [c0, c1] = range(sel[0], channels);
      const [y0, y1] = range(sel[1], side);
      const [x0, x1] = range(sel[2], side);
      const h = y1 - y0;
      const w = x1 - x0;
      const out = allocArray("uint16", (c1 - c0) * h * w) as Uint16Array;
      let o = 0;
      for (let c = c0; c < c1; c++) {
        const rb = rowBase[c]!;
        const cb = colBase[c]!;
        for (let y = y0; y < y1; y++) {
          const ry = rb[y]!;
          // Background outside a disc of tissue: zeros compress away and leave fill-value chunks.
          const dy = y - side / 2;
          for (let x = x0; x < x1; x++) {
            const dx = x - side / 2;
            if (dx * dx + dy * dy > 0.22 * side * side) {
              out[o++] = 0;
              continue;
            }
            const hsh = Math.imul(x * 73856093 + y * 19349663 + c * 83492791, 0x9e3779b1) >>> 26;
            out[o++] = ry + cb[x]! + hsh;
          }
        }
      }
      const outShape = [
        ...(typeof sel[0] === "number" ? [] : [c1 - c0]),
        ...(typeof sel[1] === "number" ? [] : [h]),
        ...(typeof sel[2] === "number" ? [] : [w]),
      ];
      return { kind: "dense", dtype: "uint16", shape: outShape, data: out };
    },
  };
}

function pct(v: number[], p: number): number {
  const s = [...v].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(p * (s.length - 1)))]!;
}

async function timed(url: string): Promise<{ ms: number; bytes: number; status: number }> {
  const t0 = performance.now();
  const r = await fetch(url);
  const b = await r.arrayBuffer();
  return { ms: performance.now() - t0, bytes: b.byteLength, status: r.status };
}

async function series(urls: string[]): Promise<{ p50: number; p99: number; mean: number; bytes: number }> {
  const t: number[] = [];
  let bytes = 0;
  for (const u of urls) {
    const r = await timed(u);
    if (r.status !== 200) throw new Error(`${u} → ${r.status}`);
    t.push(r.ms);
    bytes += r.bytes;
  }
  return {
    p50: pct(t, 0.5),
    p99: pct(t, 0.99),
    mean: t.reduce((a, b) => a + b, 0) / t.length,
    bytes: bytes / urls.length,
  };
}

async function main(): Promise<void> {
  const work = await mkdtemp(join(args.work ?? tmpdir(), "tessera-bench-images-"));
  log(
    `image: ${size}² × ${nChannels} channels uint16 = ${((size * size * nChannels * 2) / 1e9).toFixed(2)} GB of pixels (procedural source)`,
  );
  const source = proceduralSource(size, nChannels);
  const el: ImageElement = {
    kind: "image",
    name: "big",
    axes: ["c", "y", "x"],
    channels: Array.from({ length: nChannels }, (_, i) => `ch${i}`),
    dtype: "uint16",
    levels: [
      { path: "0", shape: source.shape, chunks: source.chunks, dtype: "uint16", levelTransform: [], source },
    ],
    transformations: { global: { type: "identity" } },
  };
  const server = await startServer({
    env: {},
    plugins: ["tessera"],
    config: { dataDir: join(work, "data"), workDir: join(work, "work"), resourceHz: 0 },
    port: 0,
    host: "127.0.0.1",
  });
  try {
    const service = server.service;
    const session = Session.fromData(
      {
        functions: service.functions,
        pool: service.pool,
        bus: service.bus,
        config: service.config,
        rasters: service.rasters,
      },
      {
        source: { kind: "load", path: "bench" },
        name: "bench",
        data: makeSpatialData({ images: { big: el } }),
        appState: { schema_version: 1, compute_history: [], plots: [], displays: [] },
      },
    );
    // The bench's session is not opened from a file: register it with the service by hand.
    (service as unknown as { sessionMap: Map<string, Session> }).sessionMap.set(session.id, session);
    log(
      `config: rebuild workers ${service.config.rasterRebuildWorkers}, render concurrency ${service.config.imageRenderConcurrency}, chunk cache ${service.config.rasterChunkCacheMb} MB, base ${service.config.rasterBasePx} px`,
    );

    // ---- rebuild
    const rss0 = process.memoryUsage().rss;
    let peak = rss0;
    const sampler = setInterval(() => {
      peak = Math.max(peak, process.memoryUsage().rss);
    }, 50);
    const t0 = performance.now();
    const info = await session.imageInfo("big");
    const rebuildS = (performance.now() - t0) / 1000;
    clearInterval(sampler);
    const store = await session.rasterStore("big");
    log(
      `rebuild: ${rebuildS.toFixed(1)} s (${((size * size * nChannels * 2) / 1e6 / rebuildS).toFixed(0)} MB/s of pixels), peak RSS ${(peak / 1e6).toFixed(0)} MB (before: ${(rss0 / 1e6).toFixed(0)} MB), cache on disk ${(session.rasters.cacheBytes() / 1e6).toFixed(0)} MB`,
    );
    log(
      `levels: ${info.levels.map((l) => l.width).join(" → ")}, tile ${info.tile_size}, store ${store.backing.kind}`,
    );

    const base = `${server.url}/api/sessions/${session.id}`;
    const T = info.tile_size;
    const nt = Math.ceil(size / T);
    const mid = Math.floor(nt / 2);
    // Tiles near the centre (inside the tissue); a 4 × 4 block is reused for the warm runs.
    const block: [number, number][] = [];
    for (let dy = 0; dy < 4; dy++) for (let dx = 0; dx < 4; dx++) block.push([mid - 2 + dx, mid - 2 + dy]);
    const chans = (n: number, salt: number) =>
      Array.from({ length: n }, (_, c) => `${c}::0:${3000 + salt}`)
        .map((e, c) => e.replace("::", `:${["blue", "green", "magenta", "yellow", "orange", "cyan"][c]}:`))
        .join(",");
    // Warm the block's chunks for all 6 channels.
    for (const [x, y] of block)
      await timed(`${base}/image/big/tile/0/${x}/${y}?channels=${encodeURIComponent(chans(6, -1))}`);

    log("\nwarm 512² WebP tiles (chunks cached, WebP rendered each time), sequential:");
    for (let n = 1; n <= 6; n++) {
      const urls = Array.from({ length: nReq }, (_, i) => {
        const [x, y] = block[i % block.length]!;
        return `${base}/image/big/tile/0/${x}/${y}?channels=${encodeURIComponent(chans(n, i))}`;
      });
      const s = await series(urls);
      log(
        `  ${n} channel${n > 1 ? "s" : " "}: p50 ${ms(s.p50)}, p99 ${ms(s.p99)}, ${(s.bytes / 1024).toFixed(0)} KiB`,
      );
    }

    const cached = await series(
      Array.from(
        { length: nReq },
        () => `${base}/image/big/tile/0/${mid}/${mid}?channels=${encodeURIComponent(chans(4, 0))}`,
      ),
    );
    log(`cached WebP tile (4 channels, same request): p50 ${ms(cached.p50)}, p99 ${ms(cached.p99)}`);

    const coldUrls: string[] = [];
    for (let i = 0; i < Math.min(30, nt * nt); i++) {
      const x = (mid + 5 + i * 3) % nt;
      const y = (mid + 7 + i * 5) % nt;
      coldUrls.push(`${base}/image/big/tile/0/${x}/${y}?channels=${encodeURIComponent(chans(4, 1000 + i))}`);
    }
    const cold = await series(coldUrls);
    log(
      `cold tile (4 channels, chunks read from disk and decoded): p50 ${ms(cold.p50)}, p99 ${ms(cold.p99)}`,
    );

    const chunkKey = `${base}/raster/big/images/big/s0/c/0/${mid}/${mid}`;
    await timed(chunkKey);
    const rawCached = await series(Array.from({ length: 200 }, () => chunkKey));
    log(
      `raw chunk through HTTP, cached: p50 ${ms(rawCached.p50)}, p99 ${ms(rawCached.p99)} (${(rawCached.bytes / 1024).toFixed(0)} KiB)`,
    );
    const clampT = (v: number) => Math.max(0, Math.min(nt - 1, v));
    const rawCold = await series(
      Array.from(
        { length: 48 },
        (_, i) =>
          `${base}/raster/big/images/big/s0/c/${6 + (i % 2)}/${clampT(mid - 2 + Math.floor(i / 12))}/${clampT(mid - 6 + (i % 12))}`,
      ),
    );
    log(`raw chunk through HTTP, not cached: p50 ${ms(rawCold.p50)}, p99 ${ms(rawCold.p99)}`);

    const th = await timed(`${base}/image/big/thumbnail?max_px=384`);
    const th2 = await timed(`${base}/image/big/thumbnail?max_px=1024&channels=0,1,2,3`);
    const thc = await timed(`${base}/image/big/thumbnail?max_px=384`);
    log(
      `thumbnail 384 px (6 channels): ${ms(th.ms)}; 1024 px (4 channels): ${ms(th2.ms)}; cached: ${ms(thc.ms)}`,
    );

    // ---- 8 concurrent clients, from a load generator in its own process (bench/http-load.ts): warm
    // chunks, every request a new window, so every tile is composited and encoded.
    const paths = Array.from({ length: 4000 }, (_, i) => {
      const [x, y] = block[i % block.length]!;
      return `/api/sessions/${session.id}/image/big/tile/0/${x}/${y}?channels=${encodeURIComponent(chans(4, 10_000 + i))}`;
    });
    const conc = await runLoad(server.url, paths, 8, 5);
    log(
      `8 concurrent clients (own process), 4-channel warm tiles: ${conc.rps.toFixed(0)} tiles/s, p50 ${ms(conc.p50_ms)}, p90 ${ms(conc.p90_ms)}, p99 ${ms(conc.p99_ms)}, errors ${conc.errors}`,
    );
    const rawPaths = Array.from(
      { length: 16 },
      (_, i) =>
        `/api/sessions/${session.id}/raster/big/images/big/s0/c/${i % 4}/${block[i]![1]}/${block[i]![0]}`,
    );
    const rawConc = await runLoad(server.url, rawPaths, 8, 5);
    log(
      `8 concurrent clients (own process), cached raw chunks: ${rawConc.rps.toFixed(0)} chunks/s, p50 ${ms(rawConc.p50_ms)}, p99 ${ms(rawConc.p99_ms)}`,
    );
  } finally {
    await server.close();
    await rm(work, { recursive: true, force: true });
  }
}

await main();
