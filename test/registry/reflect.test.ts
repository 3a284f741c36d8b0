/**
 * Nothing lists operations by hand: a function added to a copy of the test plugin appears in its
 * manifest and in the registry, validated and callable. Convention breaks fail the build with a
 * message naming the function.
 */
import { readdirSync, readFileSync } from "node:fs";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildManifest, writeManifest } from "../../src/registry/build/build-manifest.js";
import { Registry } from "../../src/registry/registry.js";
import { generateDemo } from "../../src/sdk/demo/generate.js";
import { testContext } from "../plugins/context.js";

const TESTKIT = fileURLToPath(new URL("../plugins/testkit/", import.meta.url));

let root: string;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "tessera-reflect-"));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

/** Copy the plugin's .ts files to `dest`, re-pointing relative imports that leave the folder. */
async function copyPlugin(src: string, dest: string, extra: Record<string, string> = {}): Promise<void> {
  await mkdir(dest, { recursive: true });
  for (const f of readdirSync(src).filter((n) => n.endsWith(".ts"))) {
    const text = readFileSync(join(src, f), "utf8").replace(/from "(\.\.\/[^"]+)"/g, (_m, spec: string) => {
      const rel = relative(dest, resolve(src, spec)).split("\\").join("/");
      return `from "${rel.startsWith(".") ? rel : `./${rel}`}"`;
    });
    await writeFile(join(dest, f), text + (extra[f] ?? ""));
  }
}

const ADDED = `
/** Params of \`added_later\`. */
export interface AddedLaterParams {
  /**
   * How many.
   * @asType integer
   * @minimum 0
   * @default 2
   */
  count?: number;
  /** Obs column of groups. */
  groupby: string;
}

/**
 * Count the active table's cells times \`count\`. Added to a copy of the plugin by a test.
 * @effect extract
 */
export async function added_later(sd: SpatialData, params: AddedLaterParams, ctx: OpContext): Promise<{ n: number }> {
  return { n: nObs(sd.tables[ctx.table]!) * (params.count ?? 2) };
}

/** A helper that is not an operation (its first argument is not a SpatialData). */
export function not_an_operation(x: number, params: AddedLaterParams): number {
  return x + (params.count ?? 0);
}
`;

describe("reflection", () => {
  it("a function added to a plugin appears in its manifest and the registry", async () => {
    const dir = join(root, "testkit-copy");
    await copyPlugin(TESTKIT, dir, { "ops.ts": ADDED });
    await writeManifest(dir);
    const reg = await Registry.load({ plugins: [dir] });
    const e = reg.require("custom.added_later");
    expect(e).toMatchObject({
      effect_class: "extract",
      summary: "Count the active table's cells times `count`.",
      library: "testkit",
      ui_schema: { groupby: { widget: "obs_categorical" }, count: { widget: "number" } },
    });
    expect(e.json_schema).toMatchObject({
      required: ["groupby"],
      properties: { count: { type: "integer", default: 2 } },
    });
    expect(reg.get("custom.not_an_operation")).toBeUndefined();
    // The list names no default plugin, so it adds to them (tessera, scanpy): count the copy's own.
    expect(reg.list().filter((x) => x.library === "testkit")).toHaveLength(9);
    const params = reg.validate("custom.added_later", { groupby: "cell_type" });
    expect(params).toEqual({ groupby: "cell_type", count: 2 });
    const fn = await reg.load("custom.added_later");
    expect(
      await fn(generateDemo({ nCells: 300, imageSize: 256, nTranscripts: 100 }), params, testContext().ctx),
    ).toEqual({ n: 600 });
  });

  it("recognises operations by the contract's types, not their names (an alias, an unnamed change)", async () => {
    const dir = join(root, "by-contract");
    const code = `
type Data = SpatialData;
/** Params of \`by_alias\`. */
export interface ByAliasParams {
  /** A key. */
  key?: string;
}
/** Write no column, with the data model and the change under other names. */
export async function by_alias(sd: Data, params: ByAliasParams, ctx: OpContext): Promise<{ tables: {} }> {
  return { tables: {} };
}
`;
    await copyPlugin(TESTKIT, dir, { "ops.ts": code });
    const m = await buildManifest(dir);
    expect(m.functions.find((f) => f.function === "by_alias")).toMatchObject({
      namespace: "custom",
      effect_class: "compute",
    });
  });

  it("fails the build when an operation has no TSDoc", async () => {
    const dir = join(root, "undocumented");
    await copyPlugin(TESTKIT, dir, {
      "ops.ts": `\nexport interface BareParams { a?: number }\nexport async function bare(_sd: SpatialData, _p: BareParams, _c: OpContext): Promise<Change> { return {}; }\n`,
    });
    await expect(buildManifest(dir)).rejects.toThrow(/ops\.ts: bare: an operation needs a TSDoc comment/);
  });

  it("fails the build on a required callback, an inline params type, an unknown tag value", async () => {
    const cases: [string, RegExp][] = [
      [
        `\nexport interface CbParams { cb: () => void }\n/** Calls back. */\nexport async function cb(_sd: SpatialData, _p: CbParams, _c: OpContext): Promise<Change> { return {}; }\n`,
        /cb: param "cb" cannot be expressed in JSON, so it must be optional/,
      ],
      [
        `\n/** Inline. */\nexport async function inline(_sd: SpatialData, _p: { a: number }, _c: OpContext): Promise<Change> { return {}; }\n`,
        /inline: the params argument must be typed with an exported, named interface or type/,
      ],
      [
        `\nexport interface NsParams { a?: number }\n/**\n * Wrong namespace.\n * @namespace sc.xx\n */\nexport async function ns(_sd: SpatialData, _p: NsParams, _c: OpContext): Promise<Change> { return {}; }\n`,
        /ns: namespace "sc\.xx" is neither built in nor declared by the plugin/,
      ],
      [
        `\nexport interface PlParams { a?: number }\n/**\n * Not a plot.\n * @effect plot\n */\nexport async function notplot(_sd: SpatialData, _p: PlParams, _c: OpContext): Promise<Change> { return {}; }\n`,
        /notplot: a plot operation must return Promise<PlotResult>/,
      ],
    ];
    // One plugin folder per case would build four programs; build them one after another in one copy.
    const dir = join(root, "broken");
    for (const [code, message] of cases) {
      await rm(dir, { recursive: true, force: true });
      await copyPlugin(TESTKIT, dir, { "ops.ts": code });
      await expect(buildManifest(dir)).rejects.toThrow(message);
    }
  });

  it("names a module listed in plugin.ts that does not exist", async () => {
    const dir = join(root, "missing-module");
    await copyPlugin(TESTKIT, dir);
    const plugin = readFileSync(join(dir, "plugin.ts"), "utf8").replace('"./ops.js"', '"./gone.js"');
    await writeFile(join(dir, "plugin.ts"), plugin);
    await expect(buildManifest(dir)).rejects.toThrow(
      /module \.\/gone\.js listed in plugin\.ts has no source .*gone\.ts/,
    );
    expect(dirname(dir)).toBe(root);
  });
});
