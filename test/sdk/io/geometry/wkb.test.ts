import { describe, expect, it } from "vitest";
import type { Geometry } from "../../../../src/sdk/data/elements.js";
import { decodeWkb, decodeWkbColumn } from "../../../../src/sdk/io/geometry/wkb.js";
import { encodeWkbColumn, geometryBbox } from "../../../../src/sdk/io/geometry/wkb-write.js";

/** A little byte writer for hand-built WKB. */
class Bytes {
  private readonly parts: number[] = [];
  constructor(private readonly little: boolean) {}
  u8(v: number): this {
    this.parts.push(v);
    return this;
  }
  u32(v: number): this {
    const b = new DataView(new ArrayBuffer(4));
    b.setUint32(0, v >>> 0, this.little);
    this.parts.push(...new Uint8Array(b.buffer));
    return this;
  }
  f64(...vs: number[]): this {
    for (const v of vs) {
      const b = new DataView(new ArrayBuffer(8));
      b.setFloat64(0, v, this.little);
      this.parts.push(...new Uint8Array(b.buffer));
    }
    return this;
  }
  header(type: number): this {
    return this.u8(this.little ? 1 : 0).u32(type);
  }
  done(): Uint8Array {
    return new Uint8Array(this.parts);
  }
}

const square = [0, 0, 1, 0, 1, 1, 0, 1, 0, 0];

describe("decodeWkb", () => {
  it("reads a big-endian point", () => {
    const g = decodeWkb(new Bytes(false).header(1).f64(3.5, -2.25).done());
    expect(g.type).toBe("point");
    expect([...g.coords]).toEqual([3.5, -2.25]);
  });

  it("reads an EWKB polygon with SRID and Z flags, dropping z", () => {
    // 0x20000000 (SRID) | 0x80000000 (Z) | 3 (Polygon)
    const b = new Bytes(true).header(0xa0000003).u32(4326).u32(1).u32(5);
    for (let i = 0; i < 5; i++) b.f64(square[2 * i]!, square[2 * i + 1]!, 100 + i);
    const g = decodeWkb(b.done());
    expect(g.type).toBe("polygon");
    expect([...g.coords]).toEqual(square);
    expect([...g.geomOffsets!]).toEqual([0, 1]);
    expect([...g.ringOffsets!]).toEqual([0, 5]);
  });

  it("reads ISO Z (1003) big-endian polygons with holes and ISO ZM (3006) multipolygons", () => {
    const poly = new Bytes(false).header(1003).u32(2).u32(5);
    for (let i = 0; i < 5; i++) poly.f64(square[2 * i]! * 10, square[2 * i + 1]! * 10, 7);
    poly.u32(4).f64(1, 1, 0, 2, 1, 0, 2, 2, 0, 1, 1, 0);
    const g = decodeWkb(poly.done());
    expect([...g.ringOffsets!]).toEqual([0, 5, 9]);
    expect(g.coords[10]).toBe(1);
    expect(g.coords.length).toBe(18);

    // MultiPolygon ZM holding one little-endian and one big-endian polygon (byte order per geometry).
    const inner1 = new Bytes(true)
      .header(3003)
      .u32(1)
      .u32(4)
      .f64(0, 0, 1, 2, 5, 0, 1, 2, 5, 5, 1, 2, 0, 0, 1, 2)
      .done();
    const inner2 = new Bytes(false)
      .header(3003)
      .u32(1)
      .u32(4)
      .f64(9, 9, 0, 0, 8, 9, 0, 0, 8, 8, 0, 0, 9, 9, 0, 0)
      .done();
    const multi = new Uint8Array([...new Bytes(false).header(3006).u32(2).done(), ...inner1, ...inner2]);
    const m = decodeWkb(multi);
    expect(m.type).toBe("multipolygon");
    expect([...m.geomOffsets!]).toEqual([0, 2]);
    expect([...m.polygonOffsets!]).toEqual([0, 1, 2]);
    expect([...m.ringOffsets!]).toEqual([0, 4, 8]);
    expect([...m.coords]).toEqual([0, 0, 5, 0, 5, 5, 0, 0, 9, 9, 8, 9, 8, 8, 9, 9]);
  });

  it("promotes a column mixing Polygon and MultiPolygon to multipolygon", () => {
    const poly = new Bytes(true).header(3).u32(1).u32(4).f64(0, 0, 1, 0, 1, 1, 0, 0).done();
    const multi = new Uint8Array([...new Bytes(true).header(6).u32(1).done(), ...poly]);
    const g = decodeWkbColumn([poly, null, multi]);
    expect(g.type).toBe("multipolygon");
    expect([...g.geomOffsets!]).toEqual([0, 1, 1, 2]);
    expect([...g.polygonOffsets!]).toEqual([0, 1, 2]);
    expect([...g.ringOffsets!]).toEqual([0, 4, 8]);
  });

  it("names unsupported types and truncated bytes", () => {
    const line = new Bytes(true).header(2).u32(2).f64(0, 0, 1, 1).done();
    expect(() => decodeWkbColumn([line], "cells.parquet")).toThrow(
      /cells\.parquet: unsupported geometry type LineString in row 0/,
    );
    const poly = new Bytes(true).header(3).u32(1).u32(4).f64(0, 0, 1, 0, 1, 1, 0, 0).done();
    expect(() => decodeWkbColumn([poly, poly.subarray(0, 40)], "x")).toThrow(/x: truncated WKB in row 1/);
    expect(() => decodeWkb(new Uint8Array([7, 1, 0, 0, 0]))).toThrow(/invalid WKB byte order 7/);
    const pt = new Bytes(true).header(1).f64(0, 0).done();
    expect(() => decodeWkbColumn([pt, poly])).toThrow(/mixes Point and Polygon/);
  });
});

describe("encodeWkbColumn", () => {
  const cases: Geometry[] = [
    { type: "point", coords: new Float64Array([1, 2, 3.25, -4]) },
    {
      type: "polygon",
      coords: new Float64Array([...square, 0.2, 0.2, 0.4, 0.2, 0.4, 0.4, 0.2, 0.2, 5, 5, 6, 5, 6, 6, 5, 5]),
      geomOffsets: new Int32Array([0, 2, 3]),
      ringOffsets: new Int32Array([0, 5, 9, 13]),
    },
    {
      type: "multipolygon",
      coords: new Float64Array([...square, 5, 5, 6, 5, 6, 6, 5, 5, 9, 9, 8, 9, 8, 8, 9, 9]),
      geomOffsets: new Int32Array([0, 2, 3]),
      polygonOffsets: new Int32Array([0, 1, 2, 3]),
      ringOffsets: new Int32Array([0, 5, 9, 13]),
    },
  ];
  for (const g of cases) {
    it(`round-trips ${g.type}`, () => {
      const wkb = encodeWkbColumn(g);
      const back = decodeWkbColumn(wkb);
      expect(back.type).toBe(g.type);
      expect([...back.coords]).toEqual([...g.coords]);
      expect(back.geomOffsets && [...back.geomOffsets]).toEqual(
        g.type === "point" ? undefined : [...g.geomOffsets!],
      );
      expect(back.polygonOffsets && [...back.polygonOffsets]).toEqual(
        g.polygonOffsets && [...g.polygonOffsets],
      );
      expect(back.ringOffsets && [...back.ringOffsets]).toEqual(g.ringOffsets && [...g.ringOffsets]);
    });
  }

  it("writes ISO little-endian WKB", () => {
    const [pt] = encodeWkbColumn(cases[0]!);
    expect([...pt!.subarray(0, 5)]).toEqual([1, 1, 0, 0, 0]);
    expect(geometryBbox(cases[1]!)).toEqual([0, 0, 6, 6]);
  });
});
