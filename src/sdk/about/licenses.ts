/**
 * The licences of the software the service runs on (`GET /api/about/licenses`): every npm package
 * the installed Tessera package depends on at run time, found by walking `node_modules` the way
 * Node resolves packages, starting from Tessera's own `package.json` `dependencies` (plus installed
 * optional and peer dependencies) and following each package's own dependencies transitively.
 * Nothing is hand-written: the names, versions and licences are read from the installed
 * `package.json` files, so the list follows whatever `npm install` put on disk. Development-only
 * packages (test runner, linter, bundler) are not part of the running service and are not listed.
 */
import { existsSync } from "node:fs";
import { readdir, readFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** One installed npm package and its licence. */
export interface NpmLicense {
  name: string;
  version: string;
  /** The SPDX expression of the package's `license` field (legacy `licenses` arrays are joined with OR), or `UNKNOWN`. */
  license: string;
}

/** The answer of `GET /api/about/licenses`. */
export interface LicenseReport {
  /** Python packages: none (Tessera runs no Python). */
  python: NpmLicense[];
  /** npm packages, sorted by name then version. */
  npm: NpmLicense[];
}

interface PackageJson {
  name?: string;
  version?: string;
  license?: unknown;
  licenses?: unknown;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
}

/** The licence of a package.json: `license` (string or legacy `{type}`), else legacy `licenses`. */
export function licenseOf(pkg: { license?: unknown; licenses?: unknown }): string {
  const one = (v: unknown): string | null =>
    typeof v === "string" && v.trim()
      ? v.trim()
      : v && typeof v === "object" && typeof (v as { type?: unknown }).type === "string"
        ? (v as { type: string }).type
        : null;
  const direct = one(pkg.license);
  if (direct) return direct;
  if (Array.isArray(pkg.licenses)) {
    const all = pkg.licenses.map(one).filter((x): x is string => Boolean(x));
    if (all.length) return all.length === 1 ? all[0]! : `(${all.join(" OR ")})`;
  }
  return one(pkg.licenses) ?? "UNKNOWN";
}

async function readPackage(dir: string): Promise<PackageJson | null> {
  try {
    return JSON.parse(await readFile(join(dir, "package.json"), "utf8")) as PackageJson;
  } catch {
    return null;
  }
}

/** Licence file headers that name an SPDX licence unambiguously. */
const LICENSE_FILE_HEADERS: [RegExp, string][] = [
  [/^\s*(the\s+)?mit\s+license/i, "MIT"],
  [/^\s*isc\s+license/i, "ISC"],
  [/^\s*apache\s+license\s*,?\s*version\s+2\.0/i, "Apache-2.0"],
  [/^\s*bsd\s+2-clause/i, "BSD-2-Clause"],
  [/^\s*bsd\s+3-clause/i, "BSD-3-Clause"],
];

/**
 * The licence a package's LICENSE file names when its package.json has none (png-js, a dependency of
 * pdfkit, ships an MIT LICENSE file and no `license` field). Only a recognised first line counts.
 */
async function licenseFromFile(dir: string): Promise<string | null> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return null;
  }
  for (const name of names) {
    if (!/^(licen[cs]e|copying)(\.(md|txt))?$/i.test(name)) continue;
    const head = (await readFile(join(dir, name), "utf8").catch(() => "")).slice(0, 200);
    for (const [pattern, spdx] of LICENSE_FILE_HEADERS) if (pattern.test(head)) return spdx;
  }
  return null;
}

/** Where Node would find package `name` required from the package at `fromDir` (walking up `node_modules`). */
function resolvePackageDir(fromDir: string, name: string): string | null {
  for (let dir = fromDir; ; dir = dirname(dir)) {
    const candidate = join(dir, "node_modules", name);
    if (existsSync(join(candidate, "package.json"))) return candidate;
    if (dirname(dir) === dir) return null;
  }
}

/**
 * The licences of every package the package at `rootDir` depends on at run time, transitively.
 * Optional and peer dependencies that are not installed are skipped (they are not running).
 */
export async function installedLicenses(rootDir: string): Promise<NpmLicense[]> {
  const root = await readPackage(rootDir);
  if (!root) throw new Error(`no package.json in ${rootDir}`);
  const seen = new Map<string, NpmLicense>();
  const visited = new Set<string>();
  const depsOf = (p: PackageJson) =>
    Object.keys({ ...p.peerDependencies, ...p.optionalDependencies, ...p.dependencies });
  const queue: { from: string; name: string }[] = depsOf(root).map((name) => ({ from: rootDir, name }));
  while (queue.length) {
    const { from, name } = queue.shift()!;
    const dir = resolvePackageDir(from, name);
    if (!dir || visited.has(dir)) continue;
    visited.add(dir);
    const pkg = await readPackage(dir);
    if (!pkg) continue;
    const entry: NpmLicense = {
      name: pkg.name ?? name,
      version: pkg.version ?? "unknown",
      license: licenseOf(pkg),
    };
    if (entry.license === "UNKNOWN") entry.license = (await licenseFromFile(dir)) ?? "UNKNOWN";
    seen.set(`${entry.name}@${entry.version}`, entry);
    for (const dep of depsOf(pkg)) queue.push({ from: dir, name: dep });
  }
  return [...seen.values()].sort((a, b) =>
    a.name === b.name ? (a.version < b.version ? -1 : 1) : a.name < b.name ? -1 : 1,
  );
}

/** The folder of the installed Tessera package (the nearest `package.json` above this module). */
export function packageRoot(from: string = dirname(fileURLToPath(import.meta.url))): string {
  for (let dir = from; ; dir = dirname(dir)) {
    if (existsSync(join(dir, "package.json"))) return dir;
    if (dirname(dir) === dir) return from;
  }
}

let cached: Promise<LicenseReport> | null = null;

/** The licence report of this installation (read once per process: installed packages do not change under it). */
export function licenseReport(): Promise<LicenseReport> {
  cached ??= installedLicenses(packageRoot()).then((npm) => ({ python: [], npm }));
  cached.catch(() => {
    cached = null;
  });
  return cached;
}
