/**
 * The streamed column-major mirror equals the CSC of X for every layout (dense, sorted and unsorted CSR, CSC),
 * dtype (float64, int64) and block/chunk seam, and a checkpoint's mirror serves the same gene as X.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as zarr from "zarrita";
import { dense, type Matrix, type SparseMatrix, strings } from "../../../../src/sdk/data/arrays.js";
import { dataFrame } from "../../../../src/sdk/data/dataframe.js";
import { makeSpatialData } from "../../../../src/sdk/data/spatialdata.js";
import { makeTable } from "../../../../src/sdk/data/table.js";
import { openCheckpoint, readGeneFromMirror } from "../../../../src/sdk/io/checkpoint/read.js";
import { writeCheckpoint } from "../../../../src/sdk/io/checkpoint/write.js";
import { writeXMirror } from "../../../../src/sdk/io/checkpoint/x-mirror.js";
import { MemoryStore } from "../../../../src/sdk/io/store/memory-store.js";
import { type NumericRead, readZarrArray } from "../../../../src/sdk/io/zarr/arrays.js";
import { registerCodecs } from "../../../../src/sdk/io/zarr/codecs.js";
import { toCsc } from "../../../../src/sdk/math/sparse.js";

const ROWS = 37;
const COLS = 23;

/** A deterministic matrix with ~40 % zeros and some empty columns (3 and 17). */
function denseValues(): Float64Array {
  const out = new Float64Array(ROWS * COLS);
  for (let i = 0; i < ROWS; i++)
    for (let j = 0; j < COLS; j++) {
      const h = ((i * 7919 + j * 104729) % 97) / 97;
      out[i * COLS + j] = j === 3 || j === 17 || h < 0.4 ? 0 : Math.round((h - 0.5) * 1000) / 10;
    }
  return out;
}

function csrOf(values: Float64Array, shuffle: boolean): SparseMatrix {
  const indptr = new Int32Array(ROWS + 1);
  const indices: number[] = [];
  const data: number[] = [];
  for (let i = 0; i < ROWS; i++) {
    const row: [number, number][] = [];
    for (let j = 0; j < COLS; j++) if (values[i * COLS + j] !== 0) row.push([j, values[i * COLS + j]!]);
    if (shuffle) row.reverse();
    for (const [j, v] of row) {
      indices.push(j);
      data.push(v);
    }
    indptr[i + 1] = indices.length;
  }
  return {
    kind: "csr",
    dtype: "float32",
    shape: [ROWS, COLS],
    data: Float32Array.from(data),
    indices: Int32Array.from(indices),
    indptr,
  };
}

/** The mirror written at `/m` of a fresh memory store, read back as plain arrays. */
async function mirrorOf(m: Matrix, blockValues: number, chunkValues: number) {
  registerCodecs();
  const store = new MemoryStore();
  await zarr.create(zarr.root(store), { attributes: {} });
  await writeXMirror(zarr.root(store).resolve("m"), m, { blockValues, chunkValues });
  const read = async (name: string) => {
    const arr = await zarr.open.v3(zarr.root(store).resolve(`m/${name}`), { kind: "array" });
    const got = (await readZarrArray(arr)) as NumericRead;
    return Array.from(got.data as ArrayLike<number | bigint>, Number);
  };
  const group = await zarr.open.v3(zarr.root(store).resolve("m"), { kind: "group" });
  return {
    attrs: group.attrs,
    indptr: await read("indptr"),
    indices: await read("indices"),
    data: await read("data"),
  };
}

function expected(values: Float64Array) {
  const csc = toCsc(dense(values, [ROWS, COLS]));
  return {
    indptr: Array.from(csc.indptr as ArrayLike<number>, Number),
    indices: Array.from(csc.indices as ArrayLike<number>, Number),
    data: Array.from(Float32Array.from(csc.data as Float64Array)),
  };
}

describe("writeXMirror", () => {
  const values = denseValues();
  const want = expected(values);
  const layouts: [string, () => Matrix][] = [
    ["dense float64", () => dense(values, [ROWS, COLS])],
    [
      "dense int64",
      () =>
        dense(
          BigInt64Array.from(values, (v) => BigInt(Math.round(v * 10))),
          [ROWS, COLS],
        ),
    ],
    ["sorted CSR", () => csrOf(values, false)],
    ["unsorted CSR", () => csrOf(values, true)],
    ["CSC", () => toCsc(csrOf(values, false))],
  ];
  // One block for everything, blocks of ~1 column, and blocks that end mid-chunk.
  const seams: [number, number][] = [
    [1 << 20, 1 << 20],
    [1, 7],
    [50, 16],
  ];
  for (const [name, make] of layouts) {
    it.each(seams)(`${name}: block %i, chunk %i`, async (blockValues, chunkValues) => {
      const got = await mirrorOf(make(), blockValues, chunkValues);
      expect(got.attrs).toMatchObject({ "encoding-type": "csc_matrix", shape: [ROWS, COLS] });
      expect(got.indptr).toEqual(want.indptr);
      expect(got.indices).toEqual(want.indices);
      if (name === "dense int64") {
        expect(got.data).toEqual(want.data.map((v) => Math.round(v * 10)));
      } else {
        expect(got.data).toEqual(want.data);
      }
    });
  }

  it("writes an empty mirror for an all-zero X", async () => {
    const got = await mirrorOf(dense(new Float32Array(ROWS * COLS), [ROWS, COLS]), 10, 10);
    expect(got.indptr).toEqual(new Array(COLS + 1).fill(0));
    expect(got.indices).toEqual([]);
  });
});

describe("a checkpoint of a dense X", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "tessera-x-mirror-"));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("serves every gene from the mirror equal to X's column", async () => {
    const values = denseValues();
    const table = makeTable({
      X: dense(Float32Array.from(values), [ROWS, COLS]),
      obs: dataFrame(strings(Array.from({ length: ROWS }, (_, i) => `c${i}`))),
      var: dataFrame(strings(Array.from({ length: COLS }, (_, j) => `g${j}`))),
    });
    const out = join(dir, "dense.sdata.zarr.zip");
    await writeCheckpoint(makeSpatialData({ tables: { table } }), out);
    const cp = await openCheckpoint(out);
    for (const j of [0, 3, 11, COLS - 1]) {
      const gene = await readGeneFromMirror(cp, "table", `g${j}`);
      const column = Array.from({ length: ROWS }, (_, i) => Math.fround(values[i * COLS + j]!));
      expect(Array.from(gene)).toEqual(column);
    }
  });
});
