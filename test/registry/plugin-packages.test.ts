/**
 * Plugins from outside the repository: how a configured list reads (adds to the defaults, `-name`
 * drops one), where a plugin is found (a folder without `./`, an npm package name from the working
 * directory's node_modules, package.json `tessera.plugin`), namespaces a plugin declares, the
 * registry refusing a stale build, and `tessera plugin build` errors as messages.
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildPlugin } from "../../src/registry/build/plugin-build.js";
import { sourceDigest } from "../../src/registry/fresh.js";
import { locatePlugin } from "../../src/registry/locate.js";
import { isNamespaceName, pluginNamespaces } from "../../src/registry/plugin.js";
import { DEFAULT_PLUGINS, pluginList, Registry } from "../../src/registry/registry.js";

const TESSERA_MANIFEST = fileURLToPath(new URL("../../src/plugins/tessera/manifest.json", import.meta.url));
let root: string;

/** A plugin folder holding a manifest with one extract `<ns>.<fn>` in `./ops.js`, and that module. */
async function pluginFolder(dir: string, ns: string, extra: Record<string, unknown> = {}): Promise<void> {
  await mkdir(dir, { recursive: true });
  const manifest = {
    library: { name: `lib-${ns}`, version: "1.0.0", namespaces: [ns], ...extra },
    functions: [
      {
        namespace: ns,
        function: "hello",
        effect_class: "extract",
        summary: "Say hello.",
        json_schema: { type: "object", properties: {}, additionalProperties: false },
        ui_schema: {},
        partially_supported: false,
        unsupported_params: [],
        module: "./ops.js",
        export: "hello",
      },
    ],
  };
  await writeFile(join(dir, "manifest.json"), JSON.stringify(manifest));
  await writeFile(join(dir, "ops.js"), "export async function hello() { return 'hello'; }\n");
}

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "tessera-plugpkg-"));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

describe("the configured list", () => {
  it("adds to the defaults unless it names one; -name drops a plugin", () => {
    expect(pluginList([])).toEqual(DEFAULT_PLUGINS);
    expect(pluginList(["./mine"])).toEqual([...DEFAULT_PLUGINS, "./mine"]);
    expect(pluginList(["tessera", "testkit"])).toEqual(["tessera", "testkit"]);
    expect(pluginList(["-scanpy", " mine "])).toEqual([
      ...DEFAULT_PLUGINS.filter((p) => p !== "scanpy"),
      "mine",
    ]);
    expect(pluginList(["tessera", "tessera"])).toEqual(["tessera"]);
  });
});

describe("locating a plugin", () => {
  it("finds a folder relative to the working directory without a leading ./", async () => {
    await pluginFolder(join(root, "plugins", "mine"), "mine");
    const loc = locatePlugin("plugins/mine", root);
    expect(loc).toMatchObject({ builtin: false, moduleDir: join(root, "plugins", "mine") });
    const reg = await Registry.load({ plugins: ["tessera", "plugins/mine"], cwd: root });
    expect(reg.get("mine.hello")).toMatchObject({ library: "lib-mine", effect_class: "extract" });
    expect(await (await reg.load("mine.hello"))({} as never, {}, {} as never)).toBe("hello");
  });

  it("finds an npm package by name from node_modules of the working directory or above, in the folder package.json names", async () => {
    const pkg = join(root, "node_modules", "@acme", "tessera-qc");
    await pluginFolder(join(pkg, "dist"), "acme.qc");
    await writeFile(
      join(pkg, "package.json"),
      JSON.stringify({ name: "@acme/tessera-qc", version: "1.0.0", tessera: { plugin: "./dist" } }),
    );
    const project = join(root, "project", "sub");
    await mkdir(project, { recursive: true });
    const loc = locatePlugin("@acme/tessera-qc", project);
    expect(loc.manifest).toBe(join(pkg, "dist", "manifest.json"));
    const reg = await Registry.load({ plugins: ["@acme/tessera-qc"], cwd: project });
    // Added to the defaults.
    expect(reg.get("acme.qc.hello")).toBeDefined();
    expect(reg.get("custom.rename_obs_column")).toBeDefined();
    await writeFile(
      join(pkg, "package.json"),
      JSON.stringify({ name: "x", tessera: { plugin: "../../.." } }),
    );
    expect(() => locatePlugin("@acme/tessera-qc", project)).toThrow(
      '"tessera.plugin" must be a folder inside the package',
    );
  });

  it("names what it looked for when nothing matches", () => {
    expect(() => locatePlugin("no-such-plugin", root)).toThrow(
      `plugin "no-such-plugin": not a built-in plugin (`,
    );
  });
});

describe("namespaces", () => {
  it("keeps the built-in ones and lets a plugin declare its own under a name rule", () => {
    expect(isNamespaceName("smooth")).toBe(true);
    expect(isNamespaceName("myorg.qc")).toBe(true);
    for (const bad of ["Smooth", "a..b", "1qc", "a.b.c.d", "qc-x", ""])
      expect(isNamespaceName(bad)).toBe(false);
    const ns = pluginNamespaces({ name: "p", namespace: "sc.pp", namespaces: ["mine"] });
    expect(ns.has("sc.pp") && ns.has("custom") && ns.has("mine")).toBe(true);
    expect(() => pluginNamespaces({ name: "p", namespace: "Bad NS" })).toThrow(
      'namespace "Bad NS" is not a valid name',
    );
  });

  it("refuses a function in a namespace its manifest does not declare", async () => {
    const dir = join(root, "undeclared");
    await pluginFolder(dir, "other");
    const m = JSON.parse(await readFile(join(dir, "manifest.json"), "utf8"));
    m.library.namespaces = [];
    await writeFile(join(dir, "manifest.json"), JSON.stringify(m));
    await expect(Registry.load({ plugins: ["tessera", dir] })).rejects.toThrow(
      'other.hello: namespace "other" is neither built in nor declared in library.namespaces',
    );
  });
});

describe("built plugins", () => {
  it("refuses a build whose sources changed since, and one whose modules were never compiled", async () => {
    const dir = join(root, "stale");
    const source = "export async function hello() { return 'hello'; }\n";
    await pluginFolder(dir, "stale", { sources: { "./ops.ts": sourceDigest(source) } });
    await writeFile(join(dir, "ops.ts"), source);
    await expect(Registry.load({ plugins: ["tessera", dir] })).resolves.toBeDefined();
    await writeFile(join(dir, "ops.ts"), `${source}// edited\n`);
    await expect(Registry.load({ plugins: ["tessera", dir] })).rejects.toThrow(
      /plugin ".*stale": the build is stale: \.\/ops\.ts changed since `tessera plugin build` ran/,
    );
    await writeFile(join(dir, "ops.ts"), source);
    await rm(join(dir, "ops.js"));
    await expect(Registry.load({ plugins: ["tessera", dir] })).rejects.toThrow("./ops.js not built");
  });

  it("reports type errors as file(line,col) messages and writes nothing", async () => {
    const dir = join(root, "broken");
    await mkdir(dir, { recursive: true });
    await writeFile(
      join(dir, "plugin.ts"),
      'export const plugin = { name: "b", version: "1", namespace: "b", modules: ["./ops.js"] };\n',
    );
    await writeFile(join(dir, "ops.ts"), "export const n: number = 'not a number';\n");
    const err = await buildPlugin(dir).catch((e: Error) => e);
    expect(err).toBeInstanceOf(Error);
    expect((err as Error).message).toMatch(
      /^type errors in .*broken:\n {2}ops\.ts\(1,14\): Type 'string' is not assignable to type 'number'/,
    );
    await expect(readFile(join(dir, "manifest.json"))).rejects.toThrow();
    await expect(buildPlugin(join(root, "nowhere"))).rejects.toThrow("no such folder");
    await expect(buildPlugin(root)).rejects.toThrow("no plugin.ts");
  });
});

it("the tessera manifest still loads as a folder path (a copy outside the package is not a built-in)", async () => {
  const dir = join(root, "copy");
  await mkdir(dir);
  await writeFile(
    join(dir, "manifest.json"),
    (await readFile(TESSERA_MANIFEST, "utf8")).replace('"name": "tessera"', '"name": "copy"'),
  );
  expect(locatePlugin(dir).builtin).toBe(false);
});
