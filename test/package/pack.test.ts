/**
 * The package as a user gets it: `npm pack`, installed offline from the npm cache into an empty
 * project, used from TypeScript checked against the shipped declarations, then run with node. Then
 * the example plugin (examples/plugin-example) built with the packed `tessera plugin build`, tested,
 * packed itself, installed beside Tessera and loaded by its package name: listed by `tessera
 * functions`, run through the SDK and over HTTP on 127.0.0.1, bad params answered 400 naming the
 * field. One suite so both share one tarball and one install (the slow parts).
 *
 * The tarball is packed from `dist/` as `npm ci` (its prepare script) or `npm run build` left it;
 * without a build it builds first (tsup, about 2 minutes).
 */
import { execFile } from "node:child_process";
import {
  copyFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { reference } from "../fixtures.js";

const run = promisify(execFile);
const REPO = fileURLToPath(new URL("../../", import.meta.url));
const EXAMPLE = join(REPO, "examples", "plugin-example");
const INPUT = reference("synth_10k/input.h5ad");

let work: string;
let project: string;
let tarball: string;

/** Run a command, failing with its stderr (not a bare exit code) when it fails. */
async function sh(
  cmd: string,
  args: string[],
  cwd: string,
  env: NodeJS.ProcessEnv = {},
): Promise<{ stdout: string; stderr: string }> {
  try {
    return await run(cmd, args, {
      cwd,
      env: { ...process.env, npm_config_update_notifier: "false", ...env },
      maxBuffer: 64 * 1024 * 1024,
    });
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string; message: string };
    throw new Error(
      `${cmd} ${args.join(" ")} (in ${cwd}) failed: ${e.message}\n${e.stdout ?? ""}\n${e.stderr ?? ""}`,
    );
  }
}

/** `npm install` of local tarballs, offline: every dependency must come from the npm cache. */
function npmInstall(cwd: string, tgz: string[]): Promise<unknown> {
  return sh("npm", ["install", "--offline", "--no-audit", "--no-fund", "--ignore-scripts", ...tgz], cwd);
}

type LockEntry = Record<string, unknown> & { dev?: boolean };

/**
 * An empty user project that depends on the packed tarball, with a lockfile pinning Tessera's
 * dependency tree to the repository's lockfile (its non-dev entries) plus `@types/node`, so that
 * `npm ci --offline` needs nothing but the tarballs `npm ci` of the repository left in the npm cache
 * (a fresh CI machine has those, and no registry metadata to resolve version ranges with).
 */
function writeUserProject(dir: string, tgz: string): void {
  const pkg = JSON.parse(readFileSync(join(REPO, "package.json"), "utf8"));
  const lock = JSON.parse(readFileSync(join(REPO, "package-lock.json"), "utf8")) as {
    packages: Record<string, LockEntry>;
  };
  const typesNode = pkg.devDependencies["@types/node"] as string;
  const h5wasm = lock.packages["node_modules/h5wasm"]!.version as string;
  const overrides = JSON.parse(
    JSON.stringify(pkg.overrides ?? {}).replaceAll('"$h5wasm"', JSON.stringify(h5wasm)),
  );
  const root = {
    name: "tessera-user-project",
    private: true,
    type: "module",
    dependencies: { "tessera-omics": `file:${tgz}` },
    devDependencies: { "@types/node": typesNode },
    overrides,
  };
  const packages: Record<string, LockEntry> = {
    "": { name: root.name, dependencies: root.dependencies, devDependencies: root.devDependencies },
    "node_modules/tessera-omics": {
      version: pkg.version,
      resolved: `file:${tgz}`,
      license: pkg.license,
      dependencies: pkg.dependencies,
      bin: pkg.bin,
      engines: pkg.engines,
    },
  };
  for (const [path, entry] of Object.entries(lock.packages)) if (path && !entry.dev) packages[path] = entry;
  for (const path of ["node_modules/@types/node", "node_modules/undici-types"])
    packages[path] = lock.packages[path]!;
  // The registry URL of each tarball (this repository's lockfile leaves it out): with it and the
  // integrity, npm takes the tarball from its cache without asking the registry for metadata.
  for (const [path, entry] of Object.entries(packages)) {
    if (!path || entry.resolved || entry.link) continue;
    const name = path.slice(path.lastIndexOf("node_modules/") + "node_modules/".length);
    const base = name.slice(name.lastIndexOf("/") + 1);
    packages[path] = {
      ...entry,
      resolved: `https://registry.npmjs.org/${name}/-/${base}-${entry.version}.tgz`,
    };
  }
  writeFileSync(join(dir, "package.json"), `${JSON.stringify(root, null, 2)}\n`);
  writeFileSync(
    join(dir, "package-lock.json"),
    `${JSON.stringify({ name: root.name, lockfileVersion: 3, requires: true, packages }, null, 2)}\n`,
  );
}

/** The packed CLI of the installed package. */
function tessera(args: string[], env: NodeJS.ProcessEnv = {}) {
  return sh(
    process.execPath,
    [join(project, "node_modules/tessera-omics/bin/tessera.js"), ...args],
    project,
    env,
  );
}

/** A data dir holding a copy of the input (a session opens only files under its data dir). */
function dataDir(name: string): string {
  const dir = join(work, name);
  mkdirSync(dir, { recursive: true });
  copyFileSync(INPUT, join(dir, "input.h5ad"));
  return dir;
}

/** Type-check `script.ts` against the installed declarations, compile it, run it; its stdout is JSON. */
async function runScript(name: string, code: string, args: string[] = []): Promise<Record<string, unknown>> {
  writeFileSync(join(project, `${name}.ts`), code);
  const tsc = join(project, "node_modules/typescript/bin/tsc");
  const opts = ["--module", "nodenext", "--moduleResolution", "nodenext", "--target", "es2022", "--strict"];
  await sh(process.execPath, [tsc, "--noEmit", ...opts, "--skipLibCheck", `${name}.ts`], project);
  await sh(process.execPath, [tsc, ...opts, "--skipLibCheck", "--outDir", "out", `${name}.ts`], project);
  const { stdout } = await sh(process.execPath, [join(project, "out", `${name}.js`), ...args], project);
  return JSON.parse(stdout.trim().split("\n").at(-1)!) as Record<string, unknown>;
}

beforeAll(async () => {
  if (!existsSync(join(REPO, "dist/sdk/index.d.ts")) || !existsSync(join(REPO, "dist/plugin.d.ts")))
    await sh("npx", ["tsup"], REPO);
  work = mkdtempSync(join(tmpdir(), "tessera-pack-"));
  const { stdout } = await sh(
    "npm",
    ["pack", "--ignore-scripts", "--json", "--pack-destination", work],
    REPO,
  );
  tarball = join(work, (JSON.parse(stdout) as { filename: string }[])[0]!.filename);
  project = join(work, "project");
  mkdirSync(project);
  writeUserProject(project, `../${basename(tarball)}`);
  await sh("npm", ["ci", "--offline", "--no-audit", "--no-fund", "--ignore-scripts"], project);
}, 600_000);

// Removing two installed node_modules trees took over a minute on a loaded machine.
afterAll(() => {
  if (work) rmSync(work, { recursive: true, force: true });
}, 300_000);

describe("the packed SDK", () => {
  it("ships type declarations for its three entries and nothing of the repository's sources", () => {
    const pkg = join(project, "node_modules/tessera-omics");
    for (const f of ["dist/sdk/index.d.ts", "dist/plugin.d.ts", "dist/server.d.ts", "bin/tessera.js"])
      expect(existsSync(join(pkg, f)), f).toBe(true);
    expect(existsSync(join(pkg, "src"))).toBe(false);
    expect(existsSync(join(pkg, "test"))).toBe(false);
  });

  it("opens a fixture, runs normalize_total, log1p and pca, saves and reopens (tsc against the shipped types, then node)", async () => {
    const out = await runScript("pipeline", PIPELINE, ["input.h5ad", dataDir("data")]);
    expect(out.nObs).toBe(10_000);
    expect(out.pcaShape).toEqual([10_000, 10]);
    // normalize_total(target_sum 1e4) then log1p: expm1 of each saved row sums to 1e4.
    for (const s of out.rowSums as number[]) expect(Math.abs(s - 1e4)).toBeLessThan(1e4 * 1e-4);
    // The variance ratios decrease and the reopened checkpoint holds what the session computed.
    const vr = out.varianceRatio as number[];
    expect(vr).toHaveLength(10);
    for (let i = 1; i < vr.length; i++) expect(vr[i]!).toBeLessThanOrEqual(vr[i - 1]!);
    expect(out.reopenedPcaEqual).toBe(true);
    expect(out.history).toEqual(["sc.pp.normalize_total", "sc.pp.log1p", "sc.pp.pca"]);
  }, 240_000);
});

describe("the example plugin, from its packed tarball", () => {
  let pluginTgz: string;

  beforeAll(async () => {
    // A plugin author's checkout: the example's sources, in a folder of the project (so its peer,
    // the installed Tessera, resolves from node_modules above it, as a dev install would give).
    const dev = join(project, "plugin-dev");
    cpSync(EXAMPLE, dev, {
      recursive: true,
      filter: (src) => !/node_modules|manifest\.json$|\.js$|\.tgz$/.test(src.slice(EXAMPLE.length)),
    });
    const bin = join(project, "node_modules/tessera-omics/bin/tessera.js");
    const built = await sh(process.execPath, [bin, "plugin", "build"], dev);
    expect(built.stdout).toContain("example 0.1.0: 2 operation(s)");
    await sh(process.execPath, ["--test", "test/"], dev);
    const { stdout } = await sh(
      "npm",
      ["pack", "--ignore-scripts", "--json", "--pack-destination", work],
      dev,
    );
    pluginTgz = join(work, (JSON.parse(stdout) as { filename: string }[])[0]!.filename);
    await npmInstall(project, [pluginTgz]);
  }, 300_000);

  it("ships its built modules and manifest, whose schemas come from the TypeScript params", () => {
    const dir = join(project, "node_modules/tessera-plugin-example");
    const files = readdirSync(dir).sort();
    expect(files).toEqual(expect.arrayContaining(["manifest.json", "plugin.js", "qc.js", "totals.js"]));
    const manifest = JSON.parse(readFileSync(join(dir, "manifest.json"), "utf8"));
    expect(manifest.library).toMatchObject({ name: "example", version: "0.1.0", namespaces: ["example"] });
    const top = manifest.functions.find((f: { function: string }) => f.function === "top_genes");
    expect(top.json_schema.properties.n_top).toMatchObject({
      type: "integer",
      minimum: 1,
      maximum: 100,
      default: 5,
    });
  });

  it("is listed by tessera functions when named by its package name", async () => {
    const { stdout } = await tessera(["functions", "--json"], { TESSERA_PLUGINS: "tessera-plugin-example" });
    const keys = (
      JSON.parse(stdout) as { functions: { namespace: string; function: string }[] }
    ).functions.map((f) => `${f.namespace}.${f.function}`);
    // Added to the defaults, not in place of them.
    expect(keys).toEqual(
      expect.arrayContaining(["example.flag_low_counts", "example.top_genes", "sc.pp.pca"]),
    );
  });

  it("runs through the SDK and over HTTP, and answers bad params with a 400 naming the field", async () => {
    const out = await runScript("plugin", PLUGIN_SCRIPT, ["input.h5ad", dataDir("data-plugin")]);
    // flag_low_counts against the same rule computed here from X (row sums under 300).
    expect(out.flagged).toBe(out.expectedFlagged);
    expect((out.flagged as number) > 0).toBe(true);
    expect(out.topGenes).toHaveLength(3);
    expect(out.httpTop).toEqual(out.topGenes);
    expect(out.badStatus).toBe(400);
    expect(out.badDetail).toMatch(/n_top/);
    expect(out.badDetail).toMatch(/<= 100/);
  }, 240_000);
});

/** The pipeline script a user writes (type-checked against the shipped declarations). */
const PIPELINE = `
import { loadMatrix, openData, Tessera, unsGet, type SparseMatrix, type DenseArray } from "tessera-omics";

const [input, dataDir] = process.argv.slice(2) as [string, string];
const t = await Tessera.start({ dataDir });
try {
  const s = await t.open(input);
  await s.run("sc.pp.normalize_total", { target_sum: 1e4 });
  await s.run("sc.pp.log1p", {});
  await s.run("sc.pp.pca", { n_comps: 10, random_state: 0 });
  const pc1 = await s.values("obsm:X_pca");
  const saved = await s.save({ prefix: "packed" });
  const { sdata } = await openData(saved);
  const table = Object.values(sdata.tables)[0]!;
  const x = (await loadMatrix(table.X!)) as SparseMatrix | DenseArray;
  const rowSums: number[] = [];
  for (let r = 0; r < 20; r++) {
    let sum = 0;
    if (x.kind === "csr") for (let k = Number(x.indptr[r]); k < Number(x.indptr[r + 1]); k++) sum += Math.expm1(Number(x.data[k]));
    else if (x.kind === "dense") for (let c = 0; c < x.shape[1]!; c++) sum += Math.expm1(Number(x.data[r * x.shape[1]! + c]));
    rowSums.push(sum);
  }
  const pca = table.obsm.X_pca as DenseArray;
  const reopened = await t.open(saved);
  const pc1Again = await reopened.values("obsm:X_pca");
  const vr = (unsGet(table.uns, "pca/variance_ratio") as DenseArray).data;
  console.log(JSON.stringify({
    nObs: x.shape[0],
    pcaShape: pca.shape,
    rowSums,
    varianceRatio: Array.from(vr as ArrayLike<number>, Number),
    reopenedPcaEqual: pc1.length === pc1Again.length && pc1.every((v, i) => v === pc1Again[i]),
    history: s.session.appState.compute_history
      .filter((h) => h.status === "completed" && h.namespace.startsWith("sc."))
      .map((h) => h.namespace + "." + h.function),
  }));
} finally {
  await t.close();
}
`;

/** The plugin script: the SDK and the HTTP server from the installed package, the plugin by name. */
const PLUGIN_SCRIPT = `
import { loadMatrix, Tessera, type SparseMatrix } from "tessera-omics";
import { startServer } from "tessera-omics/server";

const [input, dataDir] = process.argv.slice(2) as [string, string];
const t = await Tessera.start({ dataDir, plugins: ["tessera-plugin-example"] });
const server = await startServer({ service: t.service, port: 0, host: "127.0.0.1" });
try {
  const s = await t.open(input);
  const x = (await loadMatrix(Object.values(s.session.data.tables)[0]!.X!)) as SparseMatrix;
  let expectedFlagged = 0;
  for (let r = 0; r < x.shape[0]; r++) {
    let sum = 0;
    for (let k = Number(x.indptr[r]); k < Number(x.indptr[r + 1]); k++) sum += Number(x.data[k]);
    if (sum < 300) expectedFlagged++;
  }
  await s.run("example.flag_low_counts", { min_counts: 300, key_added: "low" });
  const flags = await s.values("obs:low");
  const topGenes = await s.extract("example.top_genes", { n_top: 3 });
  const post = (params: unknown) =>
    fetch(server.url + "/api/sessions/" + s.id + "/jobs", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ namespace: "example", function: "top_genes", params }),
    });
  const good = (await (await post({ n_top: 3 })).json()) as { result?: unknown };
  const bad = await post({ n_top: 1000 });
  console.log(JSON.stringify({
    flagged: flags.filter((v) => Number(v) === 1).length,
    expectedFlagged,
    topGenes,
    httpTop: good.result,
    badStatus: bad.status,
    badDetail: ((await bad.json()) as { detail: string }).detail,
  }));
} finally {
  await server.close();
  await t.close();
}
`;
