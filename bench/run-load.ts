/**
 * Running `bench/http-load.ts` (the closed-loop load generator) in its own process and reading its result, for
 * the benchmarks that put a server under load (http.ts, images.ts).
 */
import { spawn } from "node:child_process";
import { join } from "node:path";

/** What the load generator prints. */
export interface LoadResult {
  requests: number;
  errors: number;
  rps: number;
  p50_ms: number;
  p90_ms: number;
  p99_ms: number;
  mean_bytes: number;
}

/** Load `base` with `conc` connections over `paths` for `seconds`, from a second process. */
export function runLoad(base: string, paths: string[], conc: number, seconds: number): Promise<LoadResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [
        "--import",
        "tsx",
        join(import.meta.dirname, "http-load.ts"),
        base,
        String(seconds),
        String(conc),
        ...paths,
      ],
      { stdio: ["ignore", "pipe", "inherit"] },
    );
    let out = "";
    child.stdout.on("data", (c: Buffer) => {
      out += c.toString();
    });
    child.on("exit", (code) =>
      code === 0 ? resolve(JSON.parse(out) as LoadResult) : reject(new Error(`load exited ${code}`)),
    );
  });
}
