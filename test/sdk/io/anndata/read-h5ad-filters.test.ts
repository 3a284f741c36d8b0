/**
 * h5ad files written by the real anndata + h5py with `compression="lzf"` and `"gzip"`, and one whose dense
 * layer needs a filter nobody provides (test/data/h5, scripts/fixtures/make-h5-filter-fixtures.py), read
 * through `readH5ad` and compared exactly with the values the script exported.
 */
import { readFileSync } from "node:fs";
import type { Dataset, Group } from "h5wasm";
import { describe, expect, it } from "vitest";
import type { Categorical, DenseArray, SparseMatrix, StringArray } from "../../../../src/sdk/data/arrays.js";
import type { LazyMatrix } from "../../../../src/sdk/data/lazy.js";
import { readH5ad } from "../../../../src/sdk/io/anndata/read-h5ad.js";
import { loadH5wasm } from "../../../../src/sdk/io/h5/h5wasm.js";

const DATA = new URL("../../../data/h5/", import.meta.url).pathname;
const expected = JSON.parse(readFileSync(`${DATA}expected.json`, "utf8"));
const ad = expected.anndata;

/** Filter ids of every filtered dataset in `file`, as h5wasm reports them. */
async function pipelines(file: string): Promise<Record<string, number[]>> {
  const h5 = await loadH5wasm();
  const f = new h5.File(file, "r");
  try {
    const out: Record<string, number[]> = {};
    const walk = (g: Group, at: string) => {
      for (const k of g.keys()) {
        const e = g.get(k);
        if (e instanceof h5.Group) walk(e, `${at}${k}/`);
        else if (e instanceof h5.Dataset) {
          const ids = (e as Dataset).filters.map((x) => x.id);
          if (ids.length) out[`${at}${k}`] = ids;
        }
      }
    };
    walk(f, "/");
    return out;
  } finally {
    f.close();
  }
}

describe.each(["lzf.h5ad", "gzip.h5ad"])("%s (anndata write_h5ad)", (name) => {
  const file = `${DATA}${name}`;

  it("holds the filter pipelines the script wrote", async () => {
    expect(await pipelines(file)).toEqual(expected.files[name].filters);
  });

  it("obs (names, categorical, numeric), var names and obsm read exactly", async () => {
    const { table: t, warnings } = await readH5ad(file);
    expect(warnings).toEqual([]);
    // Variable-length strings: the case the LZF plugin's own decoder fails.
    expect(t.obs.index.values).toEqual(ad.obs_names);
    expect(t.var.index.values).toEqual(ad.var_names);
    const cellType = t.obs.columns.cell_type as Categorical;
    expect((cellType.categories as StringArray).values).toEqual(ad.obs.cell_type.categories);
    expect([...cellType.codes]).toEqual(ad.obs.cell_type.codes);
    const nCounts = t.obs.columns.n_counts as DenseArray;
    expect(nCounts.dtype).toBe("float64");
    expect([...nCounts.data]).toEqual(ad.obs.n_counts);
    const pca = t.obsm.X_pca as DenseArray;
    expect(pca.dtype).toBe("float32");
    expect(pca.shape).toEqual(ad.obsm.X_pca.shape);
    expect([...pca.data]).toEqual(ad.obsm.X_pca.data);
  });

  it("X (CSR) and the dense layer read exactly", async () => {
    const { table: t } = await readH5ad(file);
    const x = (await (t.X as LazyMatrix).load()) as SparseMatrix;
    expect(x).toMatchObject({ kind: "csr", dtype: "float32", shape: ad.X.shape });
    expect([...x.indptr].map(Number)).toEqual(ad.X.indptr);
    expect([...x.indices].map(Number)).toEqual(ad.X.indices);
    expect([...x.data]).toEqual(ad.X.data);
    const dense = (await (t.layers.dense as LazyMatrix).load()) as DenseArray;
    expect(dense).toMatchObject({ dtype: "float32", shape: ad.X.shape });
    expect([...dense.data]).toEqual(ad.layers.dense);
  });
});

describe("unknown-filter.h5ad (layers/dense needs HDF5 filter 305)", () => {
  const file = `${DATA}unknown-filter.h5ad`;

  it("opens, reads everything else, and refuses the layer with a clear error", async () => {
    expect(await pipelines(file)).toEqual({ "/layers/dense": [expected.unknown_filter] });
    const { table: t } = await readH5ad(file);
    expect(t.obs.index.values).toEqual(ad.obs_names);
    expect([...((await (t.X as LazyMatrix).load()) as SparseMatrix).data]).toEqual(ad.X.data);
    await expect((t.layers.dense as LazyMatrix).load()).rejects.toThrow(
      `${file}: /layers/dense: cannot read dataset: it is compressed with HDF5 filter 305, which Tessera cannot decode`,
    );
    // The module is still sound afterwards.
    const { table: again } = await readH5ad(`${DATA}lzf.h5ad`);
    expect(again.obs.index.values).toEqual(ad.obs_names);
  });
});
