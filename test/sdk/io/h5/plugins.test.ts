/**
 * h5wasm-plugins 0.2.1 (built for h5wasm 0.8) under our h5wasm 0.10.3: every codec an h5ad may use,
 * written by h5wasm through the plugin and read back through Tessera's HDF5 reader. (h5wasm cannot write
 * compressed strings; the LZF string case, which the plugin's own decoder fails, is read from the h5py
 * file in test/sdk/io/anndata/read-h5ad-filters.test.ts.)
 */
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { NodeData } from "../../../../src/sdk/io/anndata/node.js";
import { BUILTIN_ONLY } from "../../../../src/sdk/io/h5/filters.js";
import { filterSupport, type H5Wasm, loadH5wasm } from "../../../../src/sdk/io/h5/h5wasm.js";
import { openH5Tree } from "../../../../src/sdk/io/h5/node.js";
import { PLUGIN_FILTERS, pluginFolder, registerFilterPlugins } from "../../../../src/sdk/io/h5/plugins.js";

let h5: H5Wasm;
let dir: string;
beforeAll(async () => {
  h5 = await loadH5wasm();
  dir = mkdtempSync(join(tmpdir(), "tessera-h5-plugins-"));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Compressible float32 values: a few distinct values repeating. */
const values = Float32Array.from({ length: 20_000 }, (_, i) => (i % 97) * 0.25);

async function roundTrip(name: string, compression: number, opts: number[]): Promise<NodeData> {
  const file = join(dir, `${name}.h5`);
  const f = new h5.File(file, "w");
  f.create_dataset({
    name: "d",
    data: values,
    shape: [200, 100],
    chunks: [50, 100],
    compression,
    compression_opts: opts,
  });
  f.close();
  const { root, release } = await openH5Tree(file);
  try {
    const node = await root.get("d");
    if (!node) throw new Error("no dataset d");
    return await node.read();
  } finally {
    release();
  }
}

describe("h5wasm-plugins under h5wasm 0.10.3", () => {
  it("the filter table names every plugin the package ships", () => {
    const folder = pluginFolder();
    expect(folder).not.toBeNull();
    const shipped = readdirSync(folder as string)
      .map((f) => /^libH5Z(.+)\.so$/.exec(f)?.[1])
      .filter((n) => n !== undefined)
      .sort();
    expect(shipped).toEqual(Object.keys(PLUGIN_FILTERS).sort());
    expect([...filterSupport().ids.keys()].sort((a, b) => a - b)).toEqual(
      [1, 2, 3, 4, 5, 6, ...Object.values(PLUGIN_FILTERS)].sort((a, b) => a - b),
    );
  });

  it("registers the folder first in the HDF5 plugin search path, once", () => {
    const folder = pluginFolder() as string;
    registerFilterPlugins(h5.Module);
    const paths = h5.Module.get_plugin_search_paths();
    expect(paths[0]).toBe(folder);
    expect(paths.filter((p) => p === folder)).toHaveLength(1);
  });

  it("without a plugin folder reports the built-in filters only", () => {
    expect(registerFilterPlugins(h5.Module, null)).toBe(BUILTIN_ONLY);
  });

  // [name, filter id, parameters]: blosc's 7th is the codec (0 blosclz, 1 lz4, 2 lz4hc, 5 zstd).
  const codecs: [string, number, number[]][] = [
    ["lzf", 32000, []],
    ["blosc-blosclz", 32001, [0, 0, 0, 0, 5, 1, 0]],
    ["blosc-lz4", 32001, [0, 0, 0, 0, 5, 1, 1]],
    ["blosc-lz4hc", 32001, [0, 0, 0, 0, 5, 2, 2]],
    ["blosc-zstd", 32001, [0, 0, 0, 0, 5, 1, 5]],
    ["blosc2-lz4", 32026, [0, 0, 0, 0, 5, 1, 1]],
    ["blosc2-zstd", 32026, [0, 0, 0, 0, 5, 1, 5]],
    ["bzip2", 307, [9]],
    ["lz4", 32004, [0]],
    ["zstd", 32015, [3]],
    ["bitshuffle-lz4", 32008, [0, 2]],
    ["bitshuffle-zstd", 32008, [0, 3, 0, 3]],
  ];
  it.each(codecs)("%s round-trips exactly", async (name, id, opts) => {
    const d = await roundTrip(name, id, opts);
    expect(d.kind).toBe("numeric");
    if (d.kind !== "numeric") return;
    expect(d.shape).toEqual([200, 100]);
    expect(d.data).toEqual(values);
  });
});
