/**
 * A small closed-loop HTTP load generator, run as its own process so it does not share the server's
 * event loop: `concurrency` keep-alive connections each issue requests back to back for `seconds`,
 * cycling through the given paths. Prints one JSON line: requests, errors, requests/s, p50/p90/p99
 * latency (ms) and mean response bytes.
 *
 *   tsx bench/http-load.ts <base-url> <seconds> <concurrency> <path> [<path> …]
 *
 * A server that needs a token (one bound off loopback) gets it from `TESSERA_TOKEN`.
 */
import { Agent, request } from "node:http";

const [base, secondsArg, concArg, ...paths] = process.argv.slice(2);
if (!base || !secondsArg || !concArg || paths.length === 0) {
  console.error("usage: http-load.ts <base-url> <seconds> <concurrency> <path> [<path> …]");
  process.exit(2);
}
const seconds = Number(secondsArg);
const concurrency = Number(concArg);
const agent = new Agent({ keepAlive: true, maxSockets: concurrency });
const token = process.env.TESSERA_TOKEN?.trim();
const headers: Record<string, string> = {
  "accept-encoding": "identity",
  ...(token ? { authorization: `Bearer ${token}` } : {}),
};
const latencies: number[] = [];
let errors = 0;
let bytes = 0;
let next = 0;

function once(path: string): Promise<void> {
  return new Promise((resolve) => {
    const t0 = performance.now();
    const req = request(`${base}${path}`, { agent, headers }, (res) => {
      let n = 0;
      res.on("data", (c: Buffer) => {
        n += c.length;
      });
      res.on("end", () => {
        if (res.statusCode !== 200) errors++;
        else {
          latencies.push(performance.now() - t0);
          bytes += n;
        }
        resolve();
      });
    });
    req.on("error", () => {
      errors++;
      resolve();
    });
    req.end();
  });
}

const deadline = performance.now() + seconds * 1000;
const t0 = performance.now();
await Promise.all(
  Array.from({ length: concurrency }, async () => {
    while (performance.now() < deadline) await once(paths[next++ % paths.length]!);
  }),
);
const elapsed = (performance.now() - t0) / 1000;
latencies.sort((a, b) => a - b);
const q = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))] ?? NaN;
process.stdout.write(
  `${JSON.stringify({
    requests: latencies.length,
    errors,
    rps: latencies.length / elapsed,
    p50_ms: q(0.5),
    p90_ms: q(0.9),
    p99_ms: q(0.99),
    mean_bytes: latencies.length ? bytes / latencies.length : 0,
  })}\n`,
);
agent.destroy();
