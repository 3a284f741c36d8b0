import { describe, expect, it } from "vitest";
import { type DenseArray, dense } from "../../../src/sdk/data/arrays.js";
import { defaultChunks, memoryRasterSource, selectRegion } from "../../../src/sdk/raster/memory-source.js";

/** Values of a dense array as a plain list (number or bigint). */
const vals = (a: DenseArray): unknown[] => Array.from(a.data as Iterable<unknown>);

/** A 2×3×4 array whose value at (c, y, x) is 100c + 10y + x. */
function cube() {
  const data = new Uint16Array(24);
  for (let c = 0; c < 2; c++)
    for (let y = 0; y < 3; y++) for (let x = 0; x < 4; x++) data[c * 12 + y * 4 + x] = 100 * c + 10 * y + x;
  return dense(data, [2, 3, 4]);
}

describe("memoryRasterSource", () => {
  it("reports shape, dtype and chunks", () => {
    const src = memoryRasterSource(cube(), [1, 3, 2]);
    expect(src.shape).toEqual([2, 3, 4]);
    expect(src.dtype).toBe("uint16");
    expect(src.chunks).toEqual([1, 3, 2]);
    expect(memoryRasterSource(cube()).chunks).toEqual([2, 3, 4]);
    expect(() => memoryRasterSource(cube(), [1, 1])).toThrow(/chunks/);
    expect(() => memoryRasterSource(dense(new Uint8Array(5), [2, 2]))).toThrow(/shape/);
  });

  it("reads everything (no selection, all null) as the array itself", async () => {
    const a = cube();
    const src = memoryRasterSource(a);
    expect(await src.read()).toBe(a);
    expect(await src.read([null, null, null])).toBe(a);
    expect(await src.read([[0, 2], null, [0, 99]])).toBe(a);
  });

  it("drops integer-indexed axes and keeps ranges, in C order", async () => {
    const src = memoryRasterSource(cube());
    const plane = await src.read([1, null, null]);
    expect(plane.shape).toEqual([3, 4]);
    expect(vals(plane)).toEqual([100, 101, 102, 103, 110, 111, 112, 113, 120, 121, 122, 123]);
    expect(plane.data).toBeInstanceOf(Uint16Array);

    const box = await src.read([null, [1, 3], [1, 3]]);
    expect(box.shape).toEqual([2, 2, 2]);
    expect(vals(box)).toEqual([11, 12, 21, 22, 111, 112, 121, 122]);

    const col = await src.read([null, null, 2]);
    expect(col.shape).toEqual([2, 3]);
    expect(vals(col)).toEqual([2, 12, 22, 102, 112, 122]);

    const px = await src.read([1, 2, 3]);
    expect(px.shape).toEqual([]);
    expect(vals(px)).toEqual([123]);

    const rows = await src.read([
      [1, 2],
      [0, 2],
    ]);
    expect(rows.shape).toEqual([1, 2, 4]);
    expect(vals(rows)).toEqual([100, 101, 102, 103, 110, 111, 112, 113]);
  });

  it("follows Python slice rules for ranges and numpy rules for negative indices", async () => {
    const src = memoryRasterSource(cube());
    const last = await src.read([-1, -1, [-2, 99]]);
    expect(vals(last)).toEqual([122, 123]);
    const empty = await src.read([0, [2, 1], null]);
    expect(empty.shape).toEqual([0, 4]);
    expect(empty.data.length).toBe(0);
    await expect(src.read([2, null, null])).rejects.toThrow(/axis 0 index 2 is out of range/);
    await expect(src.read([0, 0, 0, 0])).rejects.toThrow(/4 axis selections/);
    await expect(src.read([0.5])).rejects.toThrow(/not an integer/);
  });

  it("rejects when the signal is aborted", async () => {
    const ctl = new AbortController();
    ctl.abort(new Error("stop"));
    await expect(memoryRasterSource(cube()).read(undefined, ctl.signal)).rejects.toThrow("stop");
  });

  it("selectRegion works on bigint arrays and keeps the dtype tag", () => {
    const a = dense(BigInt64Array.from([1n, 2n, 3n, 4n, 5n, 6n]), [2, 3]);
    const r = selectRegion(a, [null, [1, 3]]);
    expect(r.dtype).toBe("int64");
    expect(vals(r)).toEqual([2n, 3n, 5n, 6n]);
    const b = selectRegion(dense(new Uint8Array([1, 0, 1, 1]), [2, 2], "bool"), [1]);
    expect(b.dtype).toBe("bool");
    expect(vals(b)).toEqual([1, 1]);
  });

  it("defaultChunks tiles y and x and takes one of everything else", () => {
    expect(defaultChunks([4, 1000, 300], ["c", "y", "x"])).toEqual([1, 256, 256]);
    expect(defaultChunks([100, 50], ["y", "x"], 64)).toEqual([64, 50]);
  });
});
