/**
 * The filter check made before every HDF5 read, and the built-in filters it trusts, read from
 * test/data/h5/builtin-filters.h5 (h5py: shuffle + deflate + fletcher32, szip, nbit, scale-offset;
 * scripts/fixtures/make-h5-filter-fixtures.py).
 */
import { readFileSync } from "node:fs";
import type { Filter } from "h5wasm";
import { describe, expect, it } from "vitest";
import {
  BUILTIN_ONLY,
  type FilterSupport,
  filterError,
  unreadableFilter,
} from "../../../../src/sdk/io/h5/filters.js";
import { openH5Tree } from "../../../../src/sdk/io/h5/node.js";

const DATA = new URL("../../../data/h5/", import.meta.url).pathname;
const expected = JSON.parse(readFileSync(`${DATA}expected.json`, "utf8"));

const filter = (id: number, name = "", cd_values: number[] = []): Filter => ({ id, name, cd_values });
const withPlugins: FilterSupport = {
  ids: new Map([...BUILTIN_ONLY.ids, [32000, "lzf"], [32001, "blosc"], [32026, "blosc2"]]),
  pluginDir: "/plugins",
};

describe("unreadableFilter", () => {
  it("passes pipelines of available filters", () => {
    expect(unreadableFilter([], BUILTIN_ONLY)).toBeNull();
    expect(unreadableFilter([filter(2), filter(1), filter(3)], BUILTIN_ONLY)).toBeNull();
    expect(unreadableFilter([filter(32000, "lzf")], withPlugins)).toBeNull();
    expect(unreadableFilter([filter(32001, "blosc", [2, 2, 4, 400, 5, 1, 1])], withPlugins)).toBeNull();
  });

  it("names the first stage that is not available", () => {
    const u = unreadableFilter([filter(2), filter(32000, "lzf"), filter(305)], BUILTIN_ONLY);
    expect(u?.filter.id).toBe(32000);
  });

  it("refuses blosc codecs the plugin lacks (their code would abort the module)", () => {
    expect(unreadableFilter([filter(32001, "blosc", [2, 2, 4, 400, 5, 1, 4])], withPlugins)?.why).toMatch(
      /zlib codec/,
    );
    expect(unreadableFilter([filter(32001, "blosc", [2, 2, 4, 400, 5, 1, 3])], withPlugins)?.why).toMatch(
      /snappy codec/,
    );
    expect(unreadableFilter([filter(32026, "blosc2", [1, 0, 4, 400, 5, 1, 4])], withPlugins)?.why).toMatch(
      /zlib codec/,
    );
  });
});

describe("filterError", () => {
  it("names the file, the dataset, the filter id and the way out", () => {
    const u = unreadableFilter([filter(305)], withPlugins);
    if (!u) throw new Error("expected an unreadable filter");
    const msg = filterError("/x/a.h5ad: /layers/counts", u, withPlugins).message;
    expect(msg).toMatch(/^\/x\/a\.h5ad: \/layers\/counts: cannot read dataset: /);
    expect(msg).toContain("HDF5 filter 305, which Tessera cannot decode (it reads deflate, ");
    expect(msg).toContain("lzf, blosc, blosc2)");
    expect(msg).toContain('compression="gzip"');
  });

  it("names registered filters, else the stored name's first word, and says when plugins are missing", () => {
    const stored = filter(32000, "HDF5 lzf filter; see https://example.org/filters");
    const a = filterError("f: /d", { filter: stored, why: "which Tessera cannot decode" }, BUILTIN_ONLY);
    expect(a.message).toContain("HDF5 filter 32000 (lzf), which");
    const c = filterError("f: /d", { filter: filter(400, "acme; v2"), why: "x" }, BUILTIN_ONLY);
    expect(c.message).toContain("HDF5 filter 400 (acme), x");
    const b = filterError("f: /d", { filter: filter(32001), why: "using the zlib codec, …" }, withPlugins);
    expect(b.message).toContain("HDF5 filter 32001 (blosc), using the zlib codec");
    expect(a.message).toContain("the h5wasm-plugins package was not found");
    expect(b.message).not.toContain("not found");
  });
});

describe("built-in filters (written by h5py)", () => {
  const file = `${DATA}builtin-filters.h5`;
  const want = expected.files["builtin-filters.h5"];

  it.each(Object.keys(want.filters))("%s reads exactly", async (path) => {
    const { root, release } = await openH5Tree(file);
    try {
      const d = await (await root.get(path))?.read();
      if (d?.kind !== "numeric") throw new Error(`${path}: not numeric`);
      expect([...d.data].map(Number)).toEqual(want.values);
    } finally {
      release();
    }
  });
});
