/**
 * `tessera run RECIPE --input PATH --output OUT.sdata.zarr.zip [--param k=v]…`: load the input, run
 * every step of the recipe headlessly (a failed step is logged and the later steps still run), save
 * the checkpoint, and report whether every step succeeded. All the work is calls of the SDK facade
 * (`Tessera`, the same calls a script makes); this module parses arguments and prints.
 */
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { dirname, resolve, sep } from "node:path";
import { parseRecipe, type Recipe } from "../../sdk/recipes/model.js";
import { coerceParamValue } from "../../sdk/recipes/substitute.js";
import type { JobOutcome } from "../../sdk/session/types.js";
import { JobFailedError, Tessera, type TesseraSession } from "../../sdk/tessera.js";

/** Options of `tessera run`. */
export interface RunOptions {
  /** A recipe file path, or the name of a recipe in the recipes folder. */
  recipe: string;
  input: string;
  output: string;
  /** `k=v` strings. */
  params: string[];
  /** Data dir (default `TESSERA_DATA_DIR`, else the deepest folder holding both input and output). */
  dataDir?: string;
  /** Plugins (default `TESSERA_PLUGINS`, else the registry's default). */
  plugins?: string[];
}

/** Where `tessera run` writes its progress. */
export interface RunIo {
  out(line: string): void;
  err(line: string): void;
  /** Replace the live progress line (`""` clears it); absent where nothing live can be shown. */
  progress?(line: string): void;
}

/** `[#######.............]  35%`. */
export function progressBar(fraction: number, width = 20): string {
  const f = Math.min(1, Math.max(0, Number.isFinite(fraction) ? fraction : 0));
  const full = Math.round(f * width);
  return `[${"#".repeat(full)}${".".repeat(width - full)}] ${String(Math.round(f * 100)).padStart(3)}%`;
}

const STD_IO: RunIo = {
  out: (l) => process.stdout.write(`${l}\n`),
  err: (l) => process.stderr.write(`${l}\n`),
  // Only on a terminal: a line rewritten in place (carriage return, then clear to the end of the line).
  ...(process.stderr.isTTY
    ? {
        progress: (l: string) =>
          process.stderr.write(`\r${l.slice(0, (process.stderr.columns ?? 80) - 1)}\x1b[K`),
      }
    : {}),
};

/** The deepest folder containing every path. */
function commonFolder(paths: string[]): string {
  const parts = paths.map((p) => resolve(p).split(sep));
  const out: string[] = [];
  for (let i = 0; ; i++) {
    const seg = parts[0]![i];
    if (seg === undefined || !parts.every((p) => p[i] === seg)) break;
    out.push(seg);
  }
  return out.join(sep) || sep;
}

/** A recipe file (JSON), else the name of a recipe the engine found at startup. */
async function loadRecipe(spec: string, t: Tessera): Promise<Recipe> {
  if (existsSync(spec)) {
    let json: unknown;
    try {
      json = JSON.parse(await readFile(spec, "utf8"));
    } catch (err) {
      throw new Error(`${spec}: not valid JSON (${(err as Error).message})`);
    }
    return parseRecipe(json, spec);
  }
  if (!t.recipes().some((r) => r.name === spec)) {
    const have = t.recipes().map((x) => x.name);
    throw new Error(`no recipe file or recipe named "${spec}" (recipes: ${have.join(", ") || "none"})`);
  }
  return t.recipe(spec);
}

function parseValues(recipe: Recipe, pairs: string[]): Record<string, unknown> {
  const values: Record<string, unknown> = {};
  for (const pair of pairs) {
    const eq = pair.indexOf("=");
    if (eq <= 0) throw new Error(`--param ${pair}: expected NAME=VALUE`);
    const name = pair.slice(0, eq);
    const param = recipe.params?.find((p) => p.name === name);
    if (!param) {
      const known = (recipe.params ?? []).map((p) => p.name);
      throw new Error(
        `--param ${name}: recipe ${recipe.meta.name} has no such param (params: ${known.join(", ") || "none"})`,
      );
    }
    values[name] = coerceParamValue(param, pair.slice(eq + 1));
  }
  return values;
}

const secs = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

/** What a completed step wrote, from its structural diff (`obs: a, b; obsm: X_pca`). */
function wrote(outcome: JobOutcome): string {
  const diff = (outcome.result as { structural_diff?: Record<string, string[]> } | undefined)
    ?.structural_diff;
  return diff
    ? Object.entries(diff)
        .map(([slot, keys]) => `${slot}: ${keys.join(", ")}`)
        .join("; ")
    : "";
}

/**
 * Run `tessera run`; resolves to the exit code: 0 when every step completed and the checkpoint was
 * written, 1 when a step failed (the checkpoint is still written) or the load or save failed. Every
 * step is a call of the SDK facade (`Tessera`); this function only prints.
 */
export async function runCommand(opts: RunOptions, io: RunIo = STD_IO): Promise<number> {
  if (!opts.output.endsWith(".zarr.zip"))
    throw new Error(`${opts.output}: the output must be a .sdata.zarr.zip file`);
  const input = resolve(opts.input);
  const output = resolve(opts.output);
  const dataDir = resolve(
    opts.dataDir ?? process.env.TESSERA_DATA_DIR ?? commonFolder([dirname(input), dirname(output)]),
  );
  const t = await Tessera.start({ dataDir, ...(opts.plugins ? { plugins: opts.plugins } : {}) });
  try {
    const recipe = await loadRecipe(opts.recipe, t);
    const values = parseValues(recipe, opts.params);
    // Params and functions are checked before the input is loaded (a large dataset takes minutes).
    t.checkRecipe(recipe, values);

    const t0 = Date.now();
    io.out(`loading ${input}`);
    let session: TesseraSession;
    try {
      session = await t.open(input, {
        onLoading: (pct, message) => io.out(`  ${String(pct).padStart(3)}%  ${message}`),
      });
    } catch (err) {
      io.err(`tessera run: cannot load ${input}: ${err instanceof Error ? err.message : String(err)}`);
      return 1;
    }
    io.out(`loaded ${session.name} in ${secs(Date.now() - t0)}`);

    const pre = session.preflight(recipe, values);
    if (pre.produced.length)
      io.out(
        `recipe ${recipe.meta.name}: ${recipe.steps.length} step(s), will write ${pre.produced.join(", ")}`,
      );
    const n = recipe.steps.length;
    let failed = 0;
    let started = Date.now();
    await session.runRecipe(recipe, values, {
      // A live progress line on a terminal (stderr), from what the running step reports.
      onProgress: (p) =>
        io.progress?.(
          `[${p.index + 1}/${n}] ${p.key} ${progressBar(p.fraction)}${p.message ? ` ${p.message}` : ""}`,
        ),
      onStep: ({ index, key, outcome, log }) => {
        const tag = `[${index + 1}/${n}] ${key}`;
        io.progress?.("");
        if (outcome.status === "completed") {
          const w = wrote(outcome);
          io.out(`${tag} ok (${secs(Date.now() - started)})${w ? ` — ${w}` : ""}`);
        } else {
          failed++;
          io.err(`${tag} ${outcome.status}: ${outcome.error}`);
          for (const line of log.trim() ? log.trim().split("\n") : []) io.err(`    ${line}`);
        }
        started = Date.now();
      },
    });

    io.out(`saving ${output}`);
    try {
      await session.save({ path: output });
    } catch (err) {
      const why = err instanceof JobFailedError ? err.outcome.error : (err as Error).message;
      io.err(`tessera run: saving ${output} failed: ${why}`);
      return 1;
    }
    io.out(`wrote ${output} (${n - failed}/${n} step(s) completed, ${secs(Date.now() - t0)})`);
    if (failed) io.err(`tessera run: ${failed} of ${n} step(s) failed`);
    return failed ? 1 : 0;
  } finally {
    await t.close();
  }
}
