/**
 * Where the worker entry is, and how to start it.
 *
 * - Built (this module's URL ends in `.js`): tsup emits the entry as `dist/jobs/worker.js`. This code
 *   may sit in `dist/sdk/index.js` or in a shared chunk at `dist/`, so the candidates are tried in turn.
 * - Source (`.ts`, under vitest or tsx): the entry is `worker.ts` beside this file. Node 20 cannot load
 *   TypeScript in a worker by itself, and tsx's `--import tsx` registers its ESM hooks in the main
 *   thread only on Node 20, so the worker gets an `--import` of a tiny data: module that calls tsx's
 *   `register()` API inside the worker thread.
 */
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { fileURLToPath, pathToFileURL } from "node:url";

/** How to start the worker. */
export interface WorkerEntry {
  /** `file:` URL of the worker module. */
  readonly filename: string;
  /** Extra Node flags for the worker threads. */
  readonly execArgv: string[];
  /** Whether this is the TypeScript source (development) or the built file. */
  readonly mode: "source" | "built";
}

/** URL of tsx's ESM `register` API, resolved from this module. */
function tsxApiUrl(): string {
  const meta = import.meta as ImportMeta & { resolve?: (s: string) => string };
  try {
    if (typeof meta.resolve === "function") return meta.resolve("tsx/esm/api");
  } catch {
    // Fall through to require.resolve (some runners do not provide import.meta.resolve).
  }
  const require = createRequire(import.meta.url);
  const cjs = require.resolve("tsx/esm/api");
  // The `require` condition resolves to the CommonJS build; prefer the ESM sibling when present.
  const esm = cjs.replace(/\.cjs$/, ".mjs");
  return pathToFileURL(existsSync(esm) ? esm : cjs).href;
}

/** The `--import` flag value that registers tsx inside a worker thread. */
export function tsxWorkerImport(): string {
  const code = `import { register } from ${JSON.stringify(tsxApiUrl())}; register();`;
  return `data:text/javascript,${encodeURIComponent(code)}`;
}

/**
 * The worker entry for this build of the SDK (see the module comment). `override` (a path or URL)
 * wins; a `.ts` override also gets the tsx registration.
 */
export function resolveWorkerEntry(override?: string | URL): WorkerEntry {
  if (override !== undefined) {
    const url =
      override instanceof URL
        ? override.href
        : override.startsWith("file:")
          ? override
          : pathToFileURL(override).href;
    const ts = /\.[mc]?ts$/.test(url);
    return {
      filename: url,
      execArgv: ts ? ["--import", tsxWorkerImport()] : [],
      mode: ts ? "source" : "built",
    };
  }
  const here = import.meta.url;
  if (/\.[mc]?ts$/.test(here)) {
    return {
      filename: new URL("./worker.ts", here).href,
      execArgv: ["--import", tsxWorkerImport()],
      mode: "source",
    };
  }
  const candidates = ["./jobs/worker.js", "../jobs/worker.js", "./worker.js"].map(
    (rel) => new URL(rel, here),
  );
  const found = candidates.find((u) => existsSync(fileURLToPath(u)));
  if (!found) {
    throw new Error(
      `worker entry not found: looked for ${candidates.map((u) => fileURLToPath(u)).join(", ")} (was jobs/worker built by tsup?)`,
    );
  }
  return { filename: found.href, execArgv: [], mode: "built" };
}
