/**
 * Build the web app into static files (`dist/app` by default): the app bundle (`app.js`, its
 * lazy chunks: the serverless checkpoint reader is one of them), the reusable canvas package
 * (`tessera-canvas.js`, usable from any page with `<script type="module">`), `index.html`,
 * `licenses.json` (the client packages bundled, for the About dialog) and a `.gz` beside every text
 * file (served pre-compressed). Run by `npm run build` / `prepare` (tsup's onSuccess) and by the
 * browser tests; `npx tsx scripts/build-app.ts [OUT_DIR]` builds it alone.
 */
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import * as esbuild from "esbuild";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");

/** Options of `buildWebApp`. */
export interface BuildAppOptions {
  /** Output folder (default `dist/app` of the repository). */
  outdir?: string;
  /** Minify (default true). */
  minify?: boolean;
}

/** What was built. */
export interface BuildAppResult {
  outdir: string;
  /** Every file written (relative paths), with raw and gzip sizes. */
  files: { path: string; bytes: number; gzip: number }[];
  /** Raw and gzip bytes of what the app loads at start (`app.js` and its static imports). */
  initial: { bytes: number; gzip: number };
}

function walk(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? walk(p) : [p];
  });
}

/** The npm packages a bundle includes, from esbuild's metafile, with version and licence. */
function bundledPackages(meta: esbuild.Metafile): { name: string; version: string; license: string }[] {
  const seen = new Map<string, { name: string; version: string; license: string }>();
  for (const input of Object.keys(meta.inputs)) {
    const m = /(.*node_modules\/)((?:@[^/]+\/)?[^/]+)\//.exec(input);
    if (!m) continue;
    const dir = join(ROOT, m[1]!, m[2]!);
    if (seen.has(dir)) continue;
    try {
      const pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as {
        name: string;
        version: string;
        license?: string | { type: string };
      };
      const license = typeof pkg.license === "string" ? pkg.license : (pkg.license?.type ?? "UNKNOWN");
      seen.set(dir, { name: pkg.name, version: pkg.version, license });
    } catch {
      /* not a package root */
    }
  }
  return [...seen.values()].sort((a, b) => a.name.localeCompare(b.name) || a.version.localeCompare(b.version));
}

/** Build the app. */
export async function buildWebApp(opts: BuildAppOptions = {}): Promise<BuildAppResult> {
  const outdir = resolve(opts.outdir ?? join(ROOT, "dist/app"));
  if (existsSync(outdir)) rmSync(outdir, { recursive: true, force: true });
  mkdirSync(outdir, { recursive: true });
  const result = await esbuild.build({
    absWorkingDir: ROOT,
    entryPoints: { app: "src/ui/app/main.ts", "tessera-canvas": "src/ui/index.ts" },
    bundle: true,
    splitting: true,
    format: "esm",
    platform: "browser",
    target: "es2022",
    minify: opts.minify ?? true,
    sourcemap: false,
    outdir,
    entryNames: "[name]",
    chunkNames: "chunks/[name]-[hash]",
    // Node-only modules of the SDK are reached through dynamic imports only; they never load.
    external: ["node:*", "worker_threads"],
    metafile: true,
    legalComments: "none",
    logLevel: "silent",
  });
  copyFileSync(join(ROOT, "src/ui/app/index.html"), join(outdir, "index.html"));
  writeFileSync(join(outdir, "licenses.json"), `${JSON.stringify(bundledPackages(result.metafile), null, 1)}\n`);
  const files: BuildAppResult["files"] = [];
  for (const p of walk(outdir)) {
    if (p.endsWith(".gz")) continue;
    const bytes = readFileSync(p);
    const gz = gzipSync(bytes, { level: 9 });
    if (/\.(js|html|json|css)$/.test(p)) writeFileSync(`${p}.gz`, gz);
    files.push({ path: relative(outdir, p), bytes: bytes.length, gzip: gz.length });
  }
  // The initial load: app.js and the chunks it imports statically.
  const outputs = result.metafile.outputs;
  const initialSet = new Set<string>();
  const visit = (out: string) => {
    if (initialSet.has(out) || !outputs[out]) return;
    initialSet.add(out);
    for (const imp of outputs[out]!.imports) if (imp.kind === "import-statement") visit(imp.path);
  };
  const appOut = Object.keys(outputs).find((o) => o.endsWith("/app.js") || o === "app.js");
  if (appOut) visit(appOut);
  const initial = { bytes: 0, gzip: 0 };
  for (const o of initialSet) {
    const rel = relative(outdir, resolve(ROOT, o));
    const f = files.find((x) => x.path === rel);
    if (f) {
      initial.bytes += f.bytes;
      initial.gzip += f.gzip;
    }
  }
  return { outdir, files: files.sort((a, b) => a.path.localeCompare(b.path)), initial };
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const r = await buildWebApp(process.argv[2] ? { outdir: process.argv[2] } : {});
  const kb = (n: number) => `${(n / 1024).toFixed(1)} KiB`;
  for (const f of r.files) process.stdout.write(`${f.path.padEnd(40)} ${kb(f.bytes).padStart(12)} ${kb(f.gzip).padStart(12)} gzip\n`);
  process.stdout.write(`initial load (app.js + static imports): ${kb(r.initial.bytes)}, ${kb(r.initial.gzip)} gzip\n`);
}
