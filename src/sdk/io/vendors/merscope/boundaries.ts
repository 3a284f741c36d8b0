/**
 * MERSCOPE cell boundaries: `cell_boundaries.parquet` (GeoParquet 0.1.0 by sfarrow; Polygon or
 * MultiPolygon WKB; `EntityID` int64 kept exact as text), else the per-FOV
 * `cell_boundaries/feature_data_*.hdf5` files (`featuredata/<EntityID>/zIndex_<z>/p_0/coordinates`,
 * 1 × N × 2). One z plane is kept: `zIndex` when given, else the lowest present (spatialdata-io keeps
 * z 0). Polygons come back in the table's cell order, indexed by the table row they describe (the
 * table's instance ids), with an `EntityID` column; cells without a boundary are left out and counted
 * in a warning (the per-FOV files of a subset often cover fewer cells than the table).
 */
import { existsSync, readdirSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { strings } from "../../../data/arrays.js";
import { dataFrame, nRows } from "../../../data/dataframe.js";
import type { Geometry, ShapesElement } from "../../../data/elements.js";
import { geometryRows } from "../../../data/subset.js";
import type { Transformation } from "../../../data/transforms.js";
import { DataError } from "../../data-error.js";
import { openH5Tree } from "../../h5/node.js";
import { readGeoParquet } from "../../shapes/read.js";
import { FsStore } from "../../store/fs-store.js";
import { type FileColumns, textColumn } from "../frame-file.js";

/** Boundaries read, where from and what was noticed. */
export interface MerscopeBoundaries {
  readonly shapes: ShapesElement;
  readonly from: string;
  readonly warnings: string[];
}

function inTableOrder(
  geometry: Geometry,
  ids: readonly string[],
  cellIds: readonly string[],
  name: string,
  transformations: Record<string, Transformation>,
  where: string,
  warnings: string[],
): ShapesElement {
  const at = new Map<string, number>();
  for (let i = 0; i < ids.length; i++) at.set(ids[i]!, i);
  const rows: number[] = [];
  const pos: number[] = [];
  cellIds.forEach((c, row) => {
    const i = at.get(c);
    if (i === undefined) return;
    rows.push(row);
    pos.push(i);
  });
  if (pos.length === 0) throw new DataError(`${where}: no boundary belongs to a cell of the table`);
  if (pos.length < cellIds.length)
    warnings.push(`${where}: ${cellIds.length - pos.length} of ${cellIds.length} cells have no boundary`);
  return {
    kind: "shapes",
    name,
    transformations,
    geometry: geometryRows(geometry, Int32Array.from(pos)),
    frame: dataFrame(rows.map(String), { EntityID: strings(rows.map((r) => cellIds[r]!)) }, "_index"),
  };
}

/** Read the boundaries of a MERSCOPE folder, or null when it has none. */
export async function readMerscopeBoundaries(
  dir: string,
  cellIds: readonly string[],
  name: string,
  transformations: Record<string, Transformation>,
  zIndex?: number | null,
  /** A GeoParquet of boundaries to read instead of `dir/cell_boundaries.parquet` (vpt's output). */
  parquetFile?: string,
): Promise<MerscopeBoundaries | null> {
  const parquet = parquetFile ?? join(dir, "cell_boundaries.parquet");
  if (existsSync(parquet)) {
    let r: Awaited<ReturnType<typeof readGeoParquet>>;
    try {
      r = await readGeoParquet(new FsStore(dirname(parquet)), `/${basename(parquet)}`);
    } catch (err) {
      throw new DataError(`${parquet}: ${(err as Error).message}`, { cause: err });
    }
    const fc: FileColumns = {
      file: parquet,
      nRows: nRows(r.frame),
      order: r.frame.columnOrder,
      columns: r.frame.columns,
    };
    const ids = textColumn(fc, "EntityID");
    let geometry = r.geometry;
    let keptIds = ids;
    const warnings: string[] = [];
    const z = r.frame.columns.ZIndex;
    if (z && z.kind === "dense") {
      const zs = Array.from(z.data as ArrayLike<number>, Number);
      const lowest = zIndex ?? Math.min(...zs);
      const keep = Int32Array.from(zs.flatMap((v, i) => (v === lowest ? [i] : [])));
      if (keep.length === 0) throw new DataError(`${parquet}: no boundary on z plane ${lowest}`);
      if (keep.length !== zs.length) {
        geometry = geometryRows(geometry, keep);
        keptIds = Array.from(keep, (i) => ids[i]!);
        warnings.push(`${parquet}: kept the z plane ${lowest} of ${new Set(zs).size}`);
      }
    }
    return {
      shapes: inTableOrder(geometry, keptIds, cellIds, name, transformations, parquet, warnings),
      from: parquet,
      warnings,
    };
  }
  const h5dir = join(dir, "cell_boundaries");
  if (!existsSync(h5dir)) return null;
  const files = readdirSync(h5dir)
    .filter((f) => /\.hdf5$/i.test(f))
    .sort();
  if (!files.length) return null;
  const rings = new Map<string, Float64Array>();
  for (const f of files) {
    const file = join(h5dir, f);
    let opened: Awaited<ReturnType<typeof openH5Tree>>;
    try {
      opened = await openH5Tree(file, "/featuredata");
    } catch (err) {
      throw new DataError(`${file}: not a MERSCOPE boundaries file (${(err as Error).message})`, {
        cause: err,
      });
    }
    try {
      for (const entity of (await opened.root.children()) ?? []) {
        const g = await opened.root.get(entity);
        const zs = ((await g?.children()) ?? [])
          .filter((c) => /^zIndex_\d+$/.test(c) && (zIndex == null || c === `zIndex_${zIndex}`))
          .sort((a, b) => Number(a.slice(7)) - Number(b.slice(7)));
        for (const zName of zs) {
          const node = await g!.get(`${zName}/p_0/coordinates`);
          if (!node) continue;
          const d = await node.read();
          if (d.kind !== "numeric")
            throw new DataError(`${file}: ${entity}/${zName} coordinates are not numeric`);
          rings.set(entity, Float64Array.from(d.data as ArrayLike<number>, Number));
          break;
        }
      }
    } finally {
      opened.release();
    }
  }
  const ids = [...rings.keys()];
  const nPoly = ids.length;
  const ringOffsets = new Int32Array(nPoly + 1);
  let total = 0;
  ids.forEach((c, i) => {
    total += rings.get(c)!.length / 2;
    ringOffsets[i + 1] = total;
  });
  const coords = new Float64Array(total * 2);
  ids.forEach((c, i) => {
    coords.set(rings.get(c)!, ringOffsets[i]! * 2);
  });
  const geometry: Geometry = {
    type: "polygon",
    coords,
    geomOffsets: Int32Array.from({ length: nPoly + 1 }, (_, i) => i),
    ringOffsets,
  };
  const warnings: string[] = [];
  return {
    shapes: inTableOrder(geometry, ids, cellIds, name, transformations, `${h5dir}/*.hdf5`, warnings),
    from: `${h5dir}/*.hdf5`,
    warnings,
  };
}
