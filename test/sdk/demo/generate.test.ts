import { createHash } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import type { Categorical, DenseArray, SparseMatrix, StringArray } from "../../../src/sdk/data/arrays.js";
import type {
  ImageElement,
  LabelsElement,
  PointsElement,
  ShapesElement,
} from "../../../src/sdk/data/elements.js";
import { type SpatialData, transformTo } from "../../../src/sdk/data/spatialdata.js";
import type { Table } from "../../../src/sdk/data/table.js";
import { CELL_TYPES, generateDemo, MIN_GENES } from "../../../src/sdk/demo/index.js";

const SMALL = { seed: 7, nCells: 500, nGenes: 120, imageSize: 512, nTranscripts: 6000 } as const;

/** SHA-256 over every typed array, string and number reachable from a value, in key order. */
function hashValue(v: unknown): string {
  const h = createHash("sha256");
  const seen = new Set<unknown>();
  const walk = (x: unknown): void => {
    if (x === null || x === undefined) {
      h.update(String(x));
    } else if (ArrayBuffer.isView(x)) {
      h.update(`${x.constructor.name}:${x.byteLength}:`);
      h.update(new Uint8Array(x.buffer, x.byteOffset, x.byteLength));
    } else if (typeof x === "function") {
      // Sources are read through their arrays, reached as fields below.
    } else if (typeof x === "object") {
      if (seen.has(x)) return;
      seen.add(x);
      if (Array.isArray(x)) {
        h.update("[");
        for (const e of x) walk(e);
        h.update("]");
      } else {
        for (const k of Object.keys(x).sort()) {
          h.update(`{${k}:`);
          walk((x as Record<string, unknown>)[k]);
        }
      }
    } else {
      h.update(`${typeof x}:${String(x)};`);
    }
  };
  walk(v);
  return h.digest("hex");
}

function levelArray(el: ImageElement | LabelsElement, k: number): DenseArray {
  return (el.levels[k]!.source as unknown as { array: DenseArray }).array;
}

function inRing(coords: Float64Array, v0: number, v1: number, x: number, y: number): boolean {
  let inside = false;
  for (let v = v0; v < v1; v++) {
    const ax = coords[2 * v]!;
    const ay = coords[2 * v + 1]!;
    const bx = coords[2 * v + 2]!;
    const by = coords[2 * v + 3]!;
    if (ay <= y !== by <= y && x < ax + ((y - ay) * (bx - ax)) / (by - ay)) inside = !inside;
  }
  return inside;
}

describe("generateDemo (small)", () => {
  let sd: SpatialData;
  let table: Table;
  let shapes: ShapesElement;
  let labels: LabelsElement;
  let image: ImageElement;
  let points: PointsElement;
  let X: SparseMatrix;
  const n = SMALL.nCells;
  const ps = 0.5;

  beforeAll(() => {
    sd = generateDemo(SMALL);
    table = sd.tables.table!;
    shapes = sd.shapes.cell_boundaries!;
    labels = sd.labels.cell_labels!;
    image = sd.images.morphology!;
    points = sd.points.transcripts!;
    X = table.X as SparseMatrix;
  });

  it("is deterministic: same options give identical bytes, another seed differs", () => {
    const again = generateDemo(SMALL);
    expect(hashValue(again)).toBe(hashValue(sd));
    const other = generateDemo({ ...SMALL, seed: 8 });
    expect(hashValue(other.tables.table!.X)).not.toBe(hashValue(table.X));
    expect(hashValue(other.shapes.cell_boundaries!.geometry)).not.toBe(hashValue(shapes.geometry));
  });

  it("has the five elements, all in the global coordinate system", () => {
    expect(Object.keys(sd.images)).toEqual(["morphology"]);
    expect(Object.keys(sd.labels)).toEqual(["cell_labels"]);
    expect(Object.keys(sd.shapes)).toEqual(["cell_boundaries"]);
    expect(Object.keys(sd.points)).toEqual(["transcripts"]);
    expect(Object.keys(sd.tables)).toEqual(["table"]);
    for (const el of [image, labels, shapes, points])
      expect(Object.keys(el.transformations)).toEqual(["global"]);
    // Rasters are 0.5 µm pixels; shapes and points are already in µm.
    expect(transformTo(sd, image, "global")).toEqual([
      [ps, 0, 0],
      [0, ps, 0],
      [0, 0, 1],
    ]);
    expect(transformTo(sd, labels, "global")).toEqual(transformTo(sd, image, "global"));
    expect(transformTo(sd, shapes, "global")).toEqual([
      [1, 0, 0],
      [0, 1, 0],
      [0, 0, 1],
    ]);
  });

  it("has a table shaped like a spatial AnnData", () => {
    expect(X.kind).toBe("csr");
    expect(X.dtype).toBe("float32");
    expect(X.shape).toEqual([n, SMALL.nGenes]);
    expect(X.data).toBeInstanceOf(Float32Array);
    expect(X.data.buffer).toBeInstanceOf(SharedArrayBuffer);
    expect(table.annotation).toEqual({
      region: "cell_boundaries",
      regionKey: "region",
      instanceKey: "cell_id",
    });
    const obs = table.obs.columns;
    expect(table.obs.columnOrder).toEqual([
      "cell_id",
      "region",
      "cell_type",
      "total_counts",
      "cell_area",
      "nucleus_area",
    ]);
    expect(Array.from((obs.cell_id as DenseArray).data as Int32Array)).toEqual(
      Array.from({ length: n }, (_, i) => i + 1),
    );
    expect(table.obs.index.values.slice(0, 3)).toEqual(["1", "2", "3"]);
    const region = obs.region as Categorical;
    expect((region.categories as StringArray).values).toEqual(["cell_boundaries"]);
    expect(region.codes.every((c) => c === 0)).toBe(true);
    const ct = obs.cell_type as Categorical;
    expect((ct.categories as StringArray).values).toEqual(CELL_TYPES.map((t) => t.name));
    const genes = table.var.index.values as string[];
    expect(genes).toHaveLength(SMALL.nGenes);
    expect([...genes].sort()).toEqual(genes);
    expect(genes.filter((g) => g.startsWith("MT-")).length).toBeGreaterThanOrEqual(5);
    for (const g of ["CD3E", "EPCAM", "COL1A1", "MS4A1", "PECAM1", "CD68", "ACTA2", "MKI67"])
      expect(genes).toContain(g);
    const ids = (table.var.columns.gene_ids as StringArray).values;
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids[0]).toMatch(/^ENSG\d{11}$/);
    const spatial = table.obsm.spatial as DenseArray;
    expect(spatial.shape).toEqual([n, 2]);
    expect(spatial.dtype).toBe("float64");
    expect(((table.uns.entries.cell_type_colors as StringArray).values as string[]).length).toBe(8);
  });

  it("holds raw counts: non-negative integers in a well-formed CSR, totals matching", () => {
    const { data, indices, indptr } = X;
    const totals = (table.obs.columns.total_counts as DenseArray).data;
    expect(indptr[0]).toBe(0);
    expect(indptr[n]).toBe(data.length);
    let bad = 0;
    for (let i = 0; i < n; i++) {
      let s = 0;
      for (let k = indptr[i]!; k < indptr[i + 1]!; k++) {
        const v = data[k] as number;
        if (!(v > 0 && Number.isInteger(v))) bad++;
        if (k > indptr[i]! && indices[k]! <= indices[k - 1]!) bad++;
        if (indices[k]! < 0 || indices[k]! >= SMALL.nGenes) bad++;
        s += v;
      }
      if (s !== totals[i]) bad++;
    }
    expect(bad).toBe(0);
    const mean = Array.from(totals as Float32Array).reduce((a, b) => a + b, 0) / n;
    expect(mean).toBeGreaterThan(150);
    expect(mean).toBeLessThan(800);
  });

  it("expresses each type's markers far above the other types", () => {
    const genes = table.var.index.values as string[];
    const codes = (table.obs.columns.cell_type as Categorical).codes;
    CELL_TYPES.forEach((t, ti) => {
      const g = genes.indexOf(t.markers[0]!);
      let inSum = 0;
      let inN = 0;
      let outSum = 0;
      let outN = 0;
      for (let i = 0; i < n; i++) {
        let v = 0;
        for (let k = X.indptr[i]!; k < X.indptr[i + 1]!; k++) if (X.indices[k] === g) v = X.data[k] as number;
        if (codes[i] === ti) {
          inSum += v;
          inN++;
        } else {
          outSum += v;
          outN++;
        }
      }
      if (inN >= 5) expect(inSum / inN).toBeGreaterThan(5 * (outSum / outN + 0.05));
    });
  });

  it("clusters cell types in space (6-NN same-type share well above random)", () => {
    const codes = (table.obs.columns.cell_type as Categorical).codes;
    const sp = (table.obsm.spatial as DenseArray).data as Float64Array;
    const freq = new Array(8).fill(0);
    for (const c of codes) freq[c]++;
    const expected = freq.reduce((a, f) => a + (f / n) ** 2, 0);
    let same = 0;
    for (let i = 0; i < n; i++) {
      const d: [number, number][] = [];
      for (let j = 0; j < n; j++)
        if (j !== i) d.push([(sp[2 * i]! - sp[2 * j]!) ** 2 + (sp[2 * i + 1]! - sp[2 * j + 1]!) ** 2, j]);
      d.sort((a, b) => a[0] - b[0]);
      for (let k = 0; k < 6; k++) if (codes[d[k]![1]] === codes[i]) same++;
    }
    const observed = same / (6 * n);
    expect(observed).toBeGreaterThan(expected + 0.15);
  });

  it("has closed, counter-clockwise 10–16-gons whose centroids are obsm/spatial", () => {
    const g = shapes.geometry;
    expect(g.type).toBe("polygon");
    expect(shapes.frame.index.values).toEqual(table.obs.index.values);
    const ro = g.ringOffsets!;
    expect(Array.from(g.geomOffsets!)).toEqual(Array.from({ length: n + 1 }, (_, i) => i));
    const sp = (table.obsm.spatial as DenseArray).data as Float64Array;
    const area = (table.obs.columns.cell_area as DenseArray).data as Float64Array;
    const c = g.coords;
    for (let i = 0; i < n; i++) {
      const v0 = ro[i]!;
      const v1 = ro[i + 1]! - 1;
      expect(v1 - v0).toBeGreaterThanOrEqual(10);
      expect(v1 - v0).toBeLessThanOrEqual(16);
      expect([c[2 * v1], c[2 * v1 + 1]]).toEqual([c[2 * v0], c[2 * v0 + 1]]);
      let A = 0;
      let cx = 0;
      let cy = 0;
      for (let v = v0; v < v1; v++) {
        const cr = c[2 * v]! * c[2 * v + 3]! - c[2 * v + 2]! * c[2 * v + 1]!;
        A += cr;
        cx += (c[2 * v]! + c[2 * v + 2]!) * cr;
        cy += (c[2 * v + 1]! + c[2 * v + 3]!) * cr;
      }
      A /= 2;
      expect(A).toBeGreaterThan(0);
      expect(Math.abs(A - area[i]!)).toBeLessThan(1e-9 * A);
      expect(Math.abs(cx / (6 * A) - sp[2 * i]!)).toBeLessThan(1e-6);
      expect(Math.abs(cy / (6 * A) - sp[2 * i + 1]!)).toBeLessThan(1e-6);
      expect(inRing(c, v0, v1, sp[2 * i]!, sp[2 * i + 1]!)).toBe(true);
    }
  });

  it("has no overlapping cells", () => {
    const c = shapes.geometry.coords;
    const ro = shapes.geometry.ringOffsets!;
    const sp = (table.obsm.spatial as DenseArray).data as Float64Array;
    let overlaps = 0;
    for (let i = 0; i < n; i++) {
      for (let j = 0; j < n; j++) {
        if (i === j || Math.hypot(sp[2 * i]! - sp[2 * j]!, sp[2 * i + 1]! - sp[2 * j + 1]!) > 40) continue;
        for (let v = ro[j]!; v < ro[j + 1]! - 1; v++)
          if (inRing(c, ro[i]!, ro[i + 1]! - 1, c[2 * v]!, c[2 * v + 1]!)) overlaps++;
      }
    }
    expect(overlaps).toBe(0);
  });

  it("has a label image consistent with the polygons", () => {
    expect(labels.axes).toEqual(["y", "x"]);
    expect(labels.dtype).toBe("uint32");
    const lab = levelArray(labels, 0);
    expect(lab.shape).toEqual([SMALL.imageSize, SMALL.imageSize]);
    const d = lab.data as Uint32Array;
    const pixels = new Float64Array(n + 1);
    for (const v of d) pixels[v]!++;
    const area = (table.obs.columns.cell_area as DenseArray).data as Float64Array;
    const sp = (table.obsm.spatial as DenseArray).data as Float64Array;
    for (let i = 0; i < n; i++) {
      // Rasterised area within 20% of the polygon's (cells are ~20 px across).
      expect(Math.abs(pixels[i + 1]! * ps * ps - area[i]!) / area[i]!).toBeLessThan(0.2);
      const col = Math.floor(sp[2 * i]! / ps);
      const row = Math.floor(sp[2 * i + 1]! / ps);
      expect(d[row * SMALL.imageSize + col]).toBe(i + 1);
    }
    expect(pixels[0]).toBeGreaterThan(0);
    // Coarser levels keep only existing ids (nearest sampling, never averaged).
    for (let k = 1; k < labels.levels.length; k++) {
      expect(Math.max(...(levelArray(labels, k).data as Uint32Array))).toBeLessThanOrEqual(n);
    }
    expect(labels.levels.map((l) => l.shape)).toEqual([
      [512, 512],
      [256, 256],
    ]);
  });

  it("has a 4-channel uint16 morphology pyramid with nuclei where the cells are", async () => {
    expect(image.axes).toEqual(["c", "y", "x"]);
    expect(image.channels).toEqual(["DAPI", "Membrane", "PanCK", "CD45"]);
    expect(image.dtype).toBe("uint16");
    expect(image.levels.map((l) => l.shape)).toEqual([
      [4, 512, 512],
      [4, 256, 256],
    ]);
    expect(image.levels[1]!.levelTransform).toEqual([{ type: "scale", scale: [1, 2, 2] }]);
    expect(image.levels[0]!.chunks).toEqual([1, 256, 256]);
    const dapi = await image.levels[0]!.source.read([0, null, null]);
    expect(dapi.shape).toEqual([512, 512]);
    const sp = (table.obsm.spatial as DenseArray).data as Float64Array;
    let atNuclei = 0;
    for (let i = 0; i < n; i++)
      atNuclei += dapi.data[Math.floor(sp[2 * i + 1]! / ps) * 512 + Math.floor(sp[2 * i]! / ps)] as number;
    const corner = (dapi.data as Uint16Array).subarray(0, 20);
    const glass = Array.from(corner).reduce((a, b) => a + b, 0) / corner.length;
    expect(atNuclei / n).toBeGreaterThan(10 * glass);
    const omero = image.omero as { channels: { label: string; window: { start: number; end: number } }[] };
    expect(omero.channels.map((c) => c.label)).toEqual(image.channels);
    for (const c of omero.channels) expect(c.window.end).toBeGreaterThan(c.window.start);
  });

  it("has transcripts drawn from the counts, inside their cells", () => {
    const f = points.frame;
    expect(f.columnOrder).toEqual(["x", "y", "gene", "cell_id"]);
    expect(points.featureKey).toBe("gene");
    expect(points.instanceKey).toBe("cell_id");
    const x = (f.columns.x as DenseArray).data as Float32Array;
    const y = (f.columns.y as DenseArray).data as Float32Array;
    const gene = (f.columns.gene as Categorical).codes;
    const cid = (f.columns.cell_id as DenseArray).data as Int32Array;
    expect(x.length).toBe(SMALL.nTranscripts);
    expect((f.columns.gene as Categorical).categories).toEqual(table.var.index);
    const lab = levelArray(labels, 0).data as Uint32Array;
    const perCellGene = new Map<number, number>();
    let background = 0;
    let labelAgrees = 0;
    for (let t = 0; t < x.length; t++) {
      const px = lab[Math.floor(y[t]! / ps) * 512 + Math.floor(x[t]! / ps)]!;
      if (cid[t] === -1) {
        background++;
        expect(px).toBe(0);
        continue;
      }
      if (px === cid[t]) labelAgrees++;
      const key = (cid[t]! - 1) * SMALL.nGenes + gene[t]!;
      perCellGene.set(key, (perCellGene.get(key) ?? 0) + 1);
    }
    expect(background / x.length).toBeGreaterThan(0.05);
    expect(background / x.length).toBeLessThan(0.12);
    expect(labelAgrees / (x.length - background)).toBeGreaterThan(0.95);
    for (const [key, count] of perCellGene) {
      const i = Math.floor(key / SMALL.nGenes);
      const g = key % SMALL.nGenes;
      let v = 0;
      for (let k = X.indptr[i]!; k < X.indptr[i + 1]!; k++) if (X.indices[k] === g) v = X.data[k] as number;
      expect(count).toBeLessThanOrEqual(v);
    }
  });

  it("rejects impossible options with clear messages", () => {
    expect(() => generateDemo({ nCells: 5000, imageSize: 128 })).toThrow(/do not fit/);
    expect(() => generateDemo({ nGenes: MIN_GENES - 1 })).toThrow(/nGenes/);
    expect(() => generateDemo({ nCells: 0 })).toThrow(/nCells/);
  });
});

describe("generateDemo (pinned bytes)", () => {
  it("produces the same bytes on every run and platform", () => {
    // If a deliberate change to the generator moves this, update the hash and say so in the commit.
    const sd = generateDemo({ seed: 1, nCells: 60, nGenes: 30, imageSize: 128, nTranscripts: 500 });
    const X = sd.tables.table!.X as SparseMatrix;
    const h = createHash("sha256");
    for (const a of [
      X.data,
      X.indices,
      X.indptr,
      sd.shapes.cell_boundaries!.geometry.coords,
      levelArray(sd.labels.cell_labels!, 0).data,
      levelArray(sd.images.morphology!, 0).data,
      (sd.points.transcripts!.frame.columns.x as DenseArray).data,
    ]) {
      h.update(new Uint8Array(a.buffer, a.byteOffset, a.byteLength));
    }
    expect(h.digest("hex")).toBe("747251ed89fe69f2255c065dc45fbe323e58666eab2a012b243a8340b3575d69");
  });
});

describe("generateDemo (default size)", () => {
  it("makes 4000 cells × 300 genes over a 2048² image, quickly", () => {
    const t0 = performance.now();
    const sd = generateDemo();
    const ms = performance.now() - t0;
    const table = sd.tables.table!;
    expect((table.X as SparseMatrix).shape).toEqual([4000, 300]);
    expect(sd.images.morphology!.levels.map((l) => l.shape[1])).toEqual([2048, 1024, 512, 256]);
    expect(sd.labels.cell_labels!.levels).toHaveLength(4);
    expect(sd.points.transcripts!.frame.index.values).toHaveLength(50_000);
    // 3 s on an idle 2-core machine; allow for a loaded test runner.
    expect(ms).toBeLessThan(15_000);
  });
});
