import { describe, expect, it } from "vitest";
import type { SparseMatrix } from "../../../src/sdk/data/arrays.js";
import { dense } from "../../../src/sdk/data/arrays.js";
import { cscColumn, denseToCsc, switchCompression, toCsc } from "../../../src/sdk/math/sparse.js";

// 3 × 4:
// [1 0 2 0]
// [0 0 3 4]
// [5 0 0 0]
const csr: SparseMatrix = {
  kind: "csr",
  dtype: "float32",
  shape: [3, 4],
  data: Float32Array.from([1, 2, 3, 4, 5]),
  indices: Int32Array.from([0, 2, 2, 3, 0]),
  indptr: Int32Array.from([0, 2, 4, 5]),
};

describe("sparse layout conversions", () => {
  it("CSR → CSC gives sorted columns with the right values", () => {
    const csc = switchCompression(csr);
    expect(csc.kind).toBe("csc");
    expect([...csc.indptr]).toEqual([0, 2, 2, 4, 5]);
    expect([...csc.indices]).toEqual([0, 2, 0, 1, 1]);
    expect([...csc.data]).toEqual([1, 5, 2, 3, 4]);
    expect(csc.data.buffer).toBeInstanceOf(SharedArrayBuffer);
    expect([...cscColumn(csc, 2)]).toEqual([2, 3, 0]);
    expect([...cscColumn(csc, 1)]).toEqual([0, 0, 0]);
  });

  it("round-trips CSR → CSC → CSR", () => {
    const back = switchCompression(switchCompression(csr));
    expect(back.kind).toBe("csr");
    expect([...back.indptr]).toEqual([...csr.indptr]);
    expect([...back.indices]).toEqual([...csr.indices]);
    expect([...back.data]).toEqual([...csr.data]);
  });

  it("dense → CSC equals CSR → CSC", () => {
    const d = dense(Float32Array.from([1, 0, 2, 0, 0, 0, 3, 4, 5, 0, 0, 0]), [3, 4]);
    const a = denseToCsc(d);
    const b = toCsc(csr);
    expect([...a.indptr]).toEqual([...b.indptr]);
    expect([...a.indices]).toEqual([...b.indices]);
    expect([...a.data]).toEqual([...b.data]);
  });
});
