import { copyFile, mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import FileSystemStore from "@zarrita/storage/fs";
import { afterAll, describe, expect, it } from "vitest";
import type { Categorical, DenseArray, StringArray } from "../../../../src/sdk/data/arrays.js";
import { columnValue } from "../../../../src/sdk/data/dataframe.js";
import {
  type ByteStore,
  openParquet,
  openParquetDataset,
  readParquetColumns,
  readParquetFrame,
} from "../../../../src/sdk/io/parquet/index.js";
import { fixture } from "../../../fixtures.js";

const BLOBS_FULL = fixture("vitessce-sdata-blobs-0.3-full/blobs.sdata.zarr");
const XENIUM = fixture("vitessce-python-xenium-points/xenium_rep1_io.points_only.spatialdata.zarr");

/** Wraps a store and counts the bytes it hands out. */
function counting(inner: FileSystemStore): ByteStore & { bytes: number; ranged: number } {
  const s = {
    bytes: 0,
    ranged: 0,
    async get(key: `/${string}`) {
      const v = await inner.get(key);
      s.bytes += v?.byteLength ?? 0;
      return v;
    },
    async getRange(key: `/${string}`, range: { offset: number; length: number } | { suffixLength: number }) {
      const v = await inner.getRange(key, range);
      s.bytes += v?.byteLength ?? 0;
      s.ranged++;
      return v;
    },
  };
  return s;
}

const temps: string[] = [];
afterAll(async () => {
  for (const t of temps) await rm(t, { recursive: true, force: true });
});

describe("parquet datasets", () => {
  it("reads a dask points folder: int64 exact, pandas categorical, dask index", async () => {
    const { frame, dataset } = await readParquetFrame(
      new FileSystemStore(BLOBS_FULL),
      "/points/blobs_points/points.parquet",
    );
    expect(dataset.parts.length).toBe(1);
    expect(frame.columnOrder).toEqual(["x", "y", "genes", "instance_id"]);
    expect(frame.index.values.length).toBe(200);
    expect(frame.index.values[0]).toBe("0");
    expect(frame.index.values[199]).toBe("199");
    const x = frame.columns.x as DenseArray;
    expect(x.dtype).toBe("int64");
    expect(x.data).toBeInstanceOf(BigInt64Array);
    expect(x.data.buffer).toBeInstanceOf(SharedArrayBuffer);
    expect([x.data[0], x.data[199]]).toEqual([46n, 144n]);
    const genes = frame.columns.genes as Categorical;
    expect(genes.kind).toBe("categorical");
    expect((genes.categories as StringArray).values).toEqual(["gene_a", "gene_b"]);
    expect([columnValue(genes, 0), columnValue(genes, 199)]).toEqual(["gene_b", "gene_a"]);
    expect(Array.from(genes.codes).filter((c) => c === 1).length).toBe(110);
  });

  it("concatenates 8 dask parts in numeric order (213 191 Xenium transcripts)", async () => {
    const store = counting(new FileSystemStore(XENIUM));
    const ds = await openParquetDataset(store, "/points/transcripts/points.parquet");
    expect(ds.parts.map((p) => p.key.split("/").pop())).toEqual(
      [0, 1, 2, 3, 4, 5, 6, 7].map((i) => `part.${i}.parquet`),
    );
    expect(ds.numRows).toBe(213191);
    const footerBytes = store.bytes;
    const cols = await readParquetColumns(ds.parts, ["x", "feature_name"]);
    const x = cols.x as DenseArray;
    expect(x.dtype).toBe("float32");
    expect(x.data.length).toBe(213191);
    expect(x.data[0]).toBeCloseTo(4.3958420753479, 6);
    expect(x.data[213190]).toBeCloseTo(5208.6259765625, 4);
    const f = cols.feature_name as Categorical;
    expect((f.categories as StringArray).values.length).toBe(541);
    expect(columnValue(f, 0)).toBe("SEC11C");
    expect(columnValue(f, 213190)).toBe("LUM");
    // Only the footers and two of six column chunks were fetched: well under the parts' total size.
    let total = 0;
    for (let i = 0; i < 8; i++)
      total += (await stat(join(XENIUM, `points/transcripts/points.parquet/part.${i}.parquet`))).size;
    expect(footerBytes).toBeLessThan(40_000);
    expect(store.bytes).toBeLessThan(total * 0.6);
  });

  it("reads the full Xenium frame with the dask index as strings", async () => {
    const { frame } = await readParquetFrame(
      new FileSystemStore(XENIUM),
      "/points/transcripts/points.parquet",
    );
    expect(frame.columnOrder).toEqual(["x", "y", "z", "feature_name", "cell_id"]);
    expect(frame.index.values[213190]).toBe("638000");
    const cell = frame.columns.cell_id as DenseArray;
    expect(cell.dtype).toBe("int32");
    expect([cell.data[0], cell.data[213190]]).toEqual([565, 135946]);
  });

  it("matches the CSV twin of a single parquet file (sfe-toy Xenium transcripts)", async () => {
    const dir = fixture("sfe-toy/xenium");
    const { frame } = await readParquetFrame(new FileSystemStore(dir), "/transcripts.parquet");
    const csv = gunzipSync(await readFile(join(dir, "transcripts.csv.gz")))
      .toString("utf8")
      .trim()
      .split("\n");
    const header = csv[0]!.split(",").map((h) => h.replace(/"/g, ""));
    const rows = csv.slice(1).map((l) => l.split(",").map((v) => v.replace(/"/g, "")));
    expect(rows.length).toBe(frame.index.values.length);
    expect(frame.index.values.length).toBe(5260);
    const tid = frame.columns.transcript_id as DenseArray;
    expect(tid.dtype).toBe("int64");
    const iT = header.indexOf("transcript_id");
    const iF = header.indexOf("feature_name");
    const iX = header.indexOf("x_location");
    for (const r of [0, 1, 2637, 5259]) {
      expect(String(tid.data[r])).toBe(rows[r]![iT]);
      expect(columnValue(frame.columns.feature_name!, r)).toBe(rows[r]![iF]);
      expect(Number(columnValue(frame.columns.x_location!, r))).toBeCloseTo(Number(rows[r]![iX]), 6);
    }
  });

  it("keeps MERSCOPE EntityIDs above 2^53 exact", async () => {
    const dir = fixture("sfe-toy/vizgen_cellbound");
    const src = await openParquet(new FileSystemStore(dir), "/cell_boundaries.parquet");
    const cols = await readParquetColumns([src], ["EntityID", "Name"]);
    const ids = cols.EntityID as DenseArray<BigInt64Array>;
    const firstCsv = (await readFile(join(dir, "cell_metadata.csv"), "utf8")).split("\n")[1]!.split(",")[0];
    expect(ids.data[0]!.toString()).toBe("112824700230101249");
    expect(ids.data[0]!.toString()).toBe(firstCsv);
    expect(ids.data[1057]).toBe(112824700330100974n);
    // An all-null boolean column keeps its nulls.
    const name = cols.Name!;
    expect(name.kind).toBe("nullable");
    expect(columnValue(name as never, 0)).toBe(null);
  });

  it("works on a store without getRange", async () => {
    const inner = new FileSystemStore(BLOBS_FULL);
    const plain: ByteStore = { get: (k) => inner.get(k) };
    const { frame } = await readParquetFrame(plain, "/points/blobs_points/points.parquet");
    expect(frame.index.values.length).toBe(200);
  });

  it("throws clear errors naming the file for missing, truncated and corrupt files", async () => {
    const dir = await mkdtemp(join(tmpdir(), "tessera-pq-"));
    temps.push(dir);
    const src = join(BLOBS_FULL, "shapes/blobs_polygons/shapes.parquet");
    const bytes = await readFile(src);
    await writeFile(join(dir, "truncated.parquet"), bytes.subarray(0, Math.floor(bytes.length / 2)));
    const bad = Buffer.from(bytes);
    bad.writeUInt32LE(bytes.length * 4, bytes.length - 8); // footer length beyond the file
    await writeFile(join(dir, "badlen.parquet"), bad);
    const garbled = Buffer.from(bytes);
    const metaLen = bytes.readUInt32LE(bytes.length - 8);
    garbled.fill(0xff, bytes.length - 8 - metaLen, bytes.length - 8);
    await writeFile(join(dir, "garbled.parquet"), garbled);
    await copyFile(src, join(dir, "ok.parquet"));
    const store = new FileSystemStore(dir);
    await expect(openParquet(store, "/truncated.parquet")).rejects.toThrow(
      /\/truncated\.parquet: not a parquet file or truncated/,
    );
    await expect(openParquet(store, "/badlen.parquet")).rejects.toThrow(
      /\/badlen\.parquet: corrupt parquet footer/,
    );
    await expect(openParquet(store, "/garbled.parquet")).rejects.toThrow(
      /\/garbled\.parquet: corrupt parquet footer/,
    );
    await expect(openParquet(store, "/missing.parquet")).rejects.toThrow(
      /\/missing\.parquet: parquet file not found/,
    );
    await expect(openParquetDataset(store, "/nothing.parquet")).rejects.toThrow(
      /\/nothing\.parquet: no parquet data/,
    );
    // A file cut inside its column chunks but with its footer re-attached: the chunk read fails clearly.
    const footer = bytes.subarray(bytes.length - 8 - metaLen);
    await writeFile(join(dir, "cut.parquet"), Buffer.concat([bytes.subarray(0, 40), footer]));
    const cut = await openParquet(store, "/cut.parquet");
    await expect(readParquetColumns([cut], ["geometry"])).rejects.toThrow(/\/cut\.parquet: /);
    expect((await openParquet(store, "/ok.parquet")).numRows).toBe(5);
  });
});
