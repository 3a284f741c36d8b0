#!/usr/bin/env node
// Launcher for the `tessera` command: runs the built CLI (npm install builds it through `prepare`).
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath, pathToFileURL } from "node:url";

const built = fileURLToPath(new URL("../dist/cli.js", import.meta.url));
if (!existsSync(built)) {
  console.error("tessera: dist/cli.js is missing; run `npm install` (or `npm run build`) in the repository first.");
  process.exit(1);
}

// The server is long-running and its jobs allocate and free arrays of hundreds of MB on many threads.
// glibc's malloc keeps what they free in per-thread arenas and raises its mmap threshold after each large
// free, so RSS stays near its peak after sessions close (8 sessions on 20k × 2,000: 294 → 1,369 MB). With
// at most two arenas and a fixed mmap threshold, large buffers are mapped and returned to the system when
// freed (same load: 281 → 449 MB). The variables must be set before the process starts, so `start`
// re-executes itself once with them; TESSERA_MALLOC_TUNE=0 (or setting the variables yourself) skips it.
const glibc = process.platform === "linux" && Boolean(process.report?.getReport?.().header?.glibcVersionRuntime);
const args = process.argv.slice(2);
const wantsTune =
  glibc &&
  args[0] === "start" &&
  !args.includes("--help") &&
  !args.includes("-h") &&
  process.env.TESSERA_MALLOC_TUNE !== "0" &&
  process.env.MALLOC_ARENA_MAX === undefined &&
  process.env.MALLOC_MMAP_THRESHOLD_ === undefined;

if (wantsTune) {
  const child = spawn(process.execPath, [...process.execArgv, ...process.argv.slice(1)], {
    stdio: "inherit",
    env: {
      ...process.env,
      MALLOC_ARENA_MAX: "2",
      MALLOC_MMAP_THRESHOLD_: "131072",
      TESSERA_MALLOC_TUNE: "0",
      TESSERA_LAUNCHER_PID: String(process.pid),
    },
  });
  // Ctrl-C reaches the whole process group, the server included: the launcher only waits. A signal sent to
  // the launcher alone (a process manager's SIGTERM) is passed on; the server ignores a repeated one.
  process.on("SIGINT", () => {});
  for (const signal of ["SIGTERM", "SIGHUP"]) process.on(signal, () => child.kill(signal));
  child.on("exit", (code, signal) => process.exit(code ?? (signal === "SIGINT" ? 130 : 1)));
} else {
  await import(pathToFileURL(built).href);
}
