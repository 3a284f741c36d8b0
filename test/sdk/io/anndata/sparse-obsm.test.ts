/**
 * Sparse matrices (csr_matrix / csc_matrix) in obsm, varm and layers, and a pandas DataFrame in obsm, written by
 * the real anndata (test/data/anndata-sparse-obsm, scripts/fixtures/anndata-sparse-obsm.py): read from h5ad and
 * zarr, listed by `tessera inspect` with kind and width, and kept as they are through a checkpoint.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { inspectCommand } from "../../../../src/adapters/cli/inspect.js";
import type { DenseArray, SparseMatrix } from "../../../../src/sdk/data/arrays.js";
import { columnValue, type DataFrame } from "../../../../src/sdk/data/dataframe.js";
import { inventory } from "../../../../src/sdk/data/inventory.js";
import { loadMatrix, type MatrixSlot, matrixInfo } from "../../../../src/sdk/data/lazy.js";
import type { SpatialData } from "../../../../src/sdk/data/spatialdata.js";
import type { AxisArray, Table } from "../../../../src/sdk/data/table.js";
import { openCheckpoint } from "../../../../src/sdk/io/checkpoint/read.js";
import { writeCheckpoint } from "../../../../src/sdk/io/checkpoint/write.js";
import { openData } from "../../../../src/sdk/io/open.js";

const DATA = new URL("../../../data/anndata-sparse-obsm/", import.meta.url).pathname;
const INPUTS = ["sparse-obsm.h5ad", "sparse-obsm.zarr"] as const;

interface MatrixExpect {
  kind: "dense" | "csr" | "csc";
  width?: number;
  dtype?: string;
  values: number[][];
}
interface FrameExpect {
  kind: "dataframe";
  width: number;
  index: string[];
  columns: Record<string, (number | string)[]>;
}
const expected = JSON.parse(readFileSync(join(DATA, "expected.json"), "utf8")) as {
  obs_names: string[];
  var_names: string[];
  X: number[][];
  obsm: Record<string, MatrixExpect | FrameExpect>;
  varm: Record<string, MatrixExpect>;
  layers: Record<string, MatrixExpect>;
};

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "tessera-sparse-obsm-"));
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

/** A matrix slot as its storage kind, dtype and dense rows (sparse densified: the fixture is tiny). */
async function matrix(slot: MatrixSlot): Promise<{ kind: string; dtype: string; values: number[][] }> {
  const m = (await loadMatrix(slot)) as DenseArray | SparseMatrix;
  const [r, c] = [m.shape[0]!, m.shape[1]!];
  const values = Array.from({ length: r }, () => new Array<number>(c).fill(0));
  if (m.kind === "dense") {
    for (let i = 0; i < r * c; i++) values[Math.floor(i / c)]![i % c] = Number(m.data[i]);
  } else {
    const major = m.kind === "csr" ? r : c;
    for (let a = 0; a < major; a++) {
      for (let k = Number(m.indptr[a]); k < Number(m.indptr[a + 1]); k++) {
        const b = Number(m.indices[k]);
        if (m.kind === "csr") values[a]![b] = Number(m.data[k]);
        else values[b]![a] = Number(m.data[k]);
      }
    }
  }
  return { kind: m.kind, dtype: m.dtype, values };
}

function frame(df: DataFrame) {
  return {
    index: [...df.index.values],
    columns: Object.fromEntries(
      df.columnOrder.map((c) => {
        const col = df.columns[c]!;
        return [c, Array.from({ length: df.index.values.length }, (_, i) => columnValue(col, i))];
      }),
    ),
    kinds: Object.fromEntries(df.columnOrder.map((c) => [c, df.columns[c]!.kind])),
  };
}

/** An obsm/varm entry compared with what anndata wrote. */
async function expectAxis(a: AxisArray | undefined, want: MatrixExpect | FrameExpect, where: string) {
  expect(a, where).toBeDefined();
  if (want.kind === "dataframe") {
    expect(a!.kind, where).toBe("dataframe");
    const f = frame(a as DataFrame);
    expect({ index: f.index, columns: f.columns }, where).toEqual({
      index: want.index,
      columns: want.columns,
    });
    // The integer column stays an integer column and the categorical a categorical.
    expect(f.kinds, where).toEqual({ score: "dense", n_spots: "dense", group: "categorical" });
    expect(((a as DataFrame).columns.n_spots as DenseArray).dtype, where).toBe("int32");
    return;
  }
  expect(a!.kind === "dataframe" ? "dataframe" : matrixInfo(a as MatrixSlot).format, where).toBe(want.kind);
  const m = await matrix(a as MatrixSlot);
  expect(m.values, where).toEqual(want.values);
  if (want.dtype) expect(m.dtype, where).toBe(want.dtype);
}

async function expectTable(t: Table, label: string): Promise<void> {
  expect(t.obs.index.values).toEqual(expected.obs_names);
  expect(t.var.index.values).toEqual(expected.var_names);
  expect((await matrix(t.X!)).values).toEqual(expected.X);
  expect(Object.keys(t.obsm).sort()).toEqual(Object.keys(expected.obsm).sort());
  expect(Object.keys(t.varm).sort()).toEqual(Object.keys(expected.varm).sort());
  expect(Object.keys(t.layers).sort()).toEqual(Object.keys(expected.layers).sort());
  for (const [k, want] of Object.entries(expected.obsm))
    await expectAxis(t.obsm[k], want, `${label} obsm/${k}`);
  for (const [k, want] of Object.entries(expected.varm))
    await expectAxis(t.varm[k], want, `${label} varm/${k}`);
  for (const [k, want] of Object.entries(expected.layers)) {
    const layer = t.layers[k]!;
    expect(matrixInfo(layer).format, `${label} layers/${k}`).toBe(want.kind);
    expect(await matrix(layer), `${label} layers/${k}`).toEqual({
      kind: want.kind,
      dtype: want.dtype,
      values: want.values,
    });
  }
}

function table(sd: SpatialData): Table {
  const t = sd.tables.table;
  if (!t) throw new Error("no table");
  return t;
}

describe("sparse obsm/varm/layers and a DataFrame in obsm (real anndata)", () => {
  for (const name of INPUTS) {
    it(`${name}: every entry reads back with its storage kind, dtype and values`, async () => {
      const { sdata, warnings } = await openData(join(DATA, name));
      expect(warnings).toEqual([]);
      await expectTable(table(sdata), name);
    });

    it(`${name}: tessera inspect lists kind and width (text and --json)`, async () => {
      const { sdata } = await openData(join(DATA, name));
      const entry = inventory(sdata).tables[0]!;
      expect(entry.obsm).toEqual([
        { name: "X_dense", kind: "dense", n_components: 2 },
        { name: "X_sparse", kind: "csr", n_components: 3 },
        { name: "meta", kind: "dataframe", n_components: 3 },
      ]);
      expect(entry.varm).toEqual([
        { name: "PCs", kind: "dense", n_components: 2 },
        { name: "loadings_csc", kind: "csc", n_components: 3 },
      ]);
      expect(entry.layers).toEqual(["counts", "spliced_csc"]);
      expect(entry.layer_entries).toEqual([
        { name: "counts", kind: "csr", dtype: "int32" },
        { name: "spliced_csc", kind: "csc", dtype: "float32" },
      ]);

      const out: string[] = [];
      const spy = vi.spyOn(process.stdout, "write").mockImplementation((s) => {
        out.push(String(s));
        return true;
      });
      try {
        await inspectCommand(join(DATA, name), {});
        await inspectCommand(join(DATA, name), { json: true });
      } finally {
        spy.mockRestore();
      }
      const text = out[0]!;
      expect(text).toContain("    obsm: X_dense (dense, 2), X_sparse (csr, 3), meta (dataframe, 3)\n");
      expect(text).toContain("    varm: PCs (dense, 2), loadings_csc (csc, 3)\n");
      expect(text).toContain("    layers: counts (csr, 4), spliced_csc (csc, 4)\n");
      expect(JSON.parse(out[1]!).tables[0]).toMatchObject({
        obsm: entry.obsm,
        varm: entry.varm,
        layer_entries: entry.layer_entries,
      });
    });

    it(`${name}: a checkpoint keeps every entry as it was (csr stays csr, csc stays csc, the frame a frame)`, async () => {
      const { sdata } = await openData(join(DATA, name));
      const { path } = await writeCheckpoint(sdata, join(dir, `${name}.sdata.zarr.zip`));
      const cp = await openCheckpoint(path);
      expect(cp.warnings).toEqual([]);
      await expectTable(table(cp.sdata), `${name} checkpoint`);
      expect(inventory(cp.sdata).tables[0]).toMatchObject({
        obsm: inventory(sdata).tables[0]!.obsm,
        varm: inventory(sdata).tables[0]!.varm,
        layer_entries: inventory(sdata).tables[0]!.layer_entries,
      });
      expect(cp.sidecar.tables[0]!.obsm).toEqual([
        { name: "X_dense", n_components: 2 },
        { name: "X_sparse", n_components: 3 },
        { name: "meta", n_components: 3 },
      ]);
    });
  }
});
