/** `tessera functions [--json] [--coverage] [--plugins a,b]` through the CLI entry point. */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { main } from "../../src/adapters/cli/main.js";
import { TESSERA_VERSION } from "../../src/sdk/version.js";

let out = "";
let prev: string | undefined;
beforeEach(() => {
  out = "";
  prev = process.env.TESSERA_PLUGINS;
  process.env.TESSERA_PLUGINS = "tessera,testkit";
  vi.spyOn(process.stdout, "write").mockImplementation((chunk: string | Uint8Array) => {
    out += String(chunk);
    return true;
  });
});
afterEach(() => {
  vi.restoreAllMocks();
  if (prev === undefined) delete process.env.TESSERA_PLUGINS;
  else process.env.TESSERA_PLUGINS = prev;
});

describe("tessera functions", () => {
  it("--json prints the GET /api/functions envelope", async () => {
    expect(await main(["functions", "--json"])).toBe(0);
    const env = JSON.parse(out) as {
      functions: { key: string; module?: string }[];
      library_versions: object;
    };
    expect(env.library_versions).toEqual({ tessera: TESSERA_VERSION, testkit: TESSERA_VERSION });
    expect(env.functions.map((f) => f.key)).toContain("custom.annotate_cells");
    expect(env.functions).toHaveLength(16);
    expect(env.functions[0]).not.toHaveProperty("module");
  });

  it("--plugins chooses the plugins instead of TESSERA_PLUGINS, in the same syntax", async () => {
    expect(await main(["functions", "--json", "--plugins", "tessera"])).toBe(0);
    const env = JSON.parse(out) as { library_versions: object };
    expect(env.library_versions).toEqual({ tessera: TESSERA_VERSION });
  });

  it("prints a readable table", async () => {
    expect(await main(["functions"])).toBe(0);
    expect(out).toMatch(/^FUNCTION\s+EFFECT\s+SUMMARY\n/);
    expect(out).toMatch(
      /custom\.annotate_cells\s+compute\s+Label chosen cells into a categorical obs column \(a region set\)\.\n\s+params: region_set\*, category\*, cell_indices, polygons\n/,
    );
    expect(out).toMatch(/params: scale, \(on_value\), \(rng\)/);
    expect(out).toMatch(/16 functions .*libraries: tessera \d+\.\d+\.\d+, testkit/);
  });

  it("--coverage lists unmatched terms, most used first", async () => {
    expect(await main(["functions", "--coverage"])).toBe(0);
    expect(out.split("\n")[0]).toBe("   2  message  (custom.fail, custom.sleep)");
  });
});
