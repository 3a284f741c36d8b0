/**
 * The test-only `testkit` plugin is not shipped: it lives in test/plugins/, is not a built-in, and is
 * found by name only through `TESSERA_PLUGIN_PATH` (which vitest.config.ts sets for every test).
 */
import { delimiter, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { builtinPlugins, locatePlugin, pluginPath } from "../../src/registry/locate.js";
import { Registry } from "../../src/registry/registry.js";

const TEST_PLUGINS = fileURLToPath(new URL("../plugins", import.meta.url));
const saved = process.env.TESSERA_PLUGIN_PATH;
afterEach(() => {
  process.env.TESSERA_PLUGIN_PATH = saved;
});

describe("TESSERA_PLUGIN_PATH", () => {
  it("testkit is not a built-in plugin", () => {
    expect(builtinPlugins()).not.toContain("testkit");
    expect(builtinPlugins()).toContain("scanpy");
  });

  it("is set for the tests, and finds testkit by name in test/plugins", () => {
    expect(pluginPath()).toContain(TEST_PLUGINS);
    expect(locatePlugin("testkit", "/")).toEqual({
      spec: "testkit",
      builtin: false,
      manifest: join(TEST_PLUGINS, "testkit", "manifest.json"),
      moduleDir: join(TEST_PLUGINS, "testkit"),
    });
  });

  it("splits like PATH and skips empty entries", () => {
    expect(pluginPath({ TESSERA_PLUGIN_PATH: `/a${delimiter}${delimiter} /b ` })).toEqual(["/a", "/b"]);
    expect(pluginPath({})).toEqual([]);
  });

  it("without it, testkit is unknown and the error says where it looked", async () => {
    delete process.env.TESSERA_PLUGIN_PATH;
    expect(() => locatePlugin("testkit", "/")).toThrow(/plugin "testkit": not a built-in plugin \(.*scanpy/);
    await expect(Registry.load({ plugins: ["tessera", "testkit"], cwd: "/" })).rejects.toThrow(
      /plugin "testkit"/,
    );
  });

  it("a built-in name wins over a folder of the same name on the path", () => {
    process.env.TESSERA_PLUGIN_PATH = fileURLToPath(new URL("../../src/plugins", import.meta.url));
    expect(locatePlugin("scanpy", "/").builtin).toBe(true);
  });
});
