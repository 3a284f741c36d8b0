/**
 * The built-in demo dataset: a synthetic but true-to-life tissue section, generated in memory from a
 * seed (no download) and identical byte for byte for the same options.
 *
 * Coordinates: the `global` coordinate system is in micrometres. Shapes, points and `obsm/spatial`
 * are in µm with identity transformations; the morphology image and the label image have square
 * pixels of `pixelSize` µm (0.5 by default) and map to `global` by a scale, so everything overlays.
 */
import { allocArray, type Categorical, type DenseArray, strings } from "../data/arrays.js";
import { dataFrame } from "../data/dataframe.js";
import type { ImageElement, LabelsElement, PointsElement, ShapesElement } from "../data/elements.js";
import { makeSpatialData, type SpatialData } from "../data/spatialdata.js";
import { makeTable, type Table } from "../data/table.js";
import { defaultAxes, type Transformation } from "../data/transforms.js";
import { unsDict } from "../data/uns.js";
import { Rng } from "../math/rng.js";
import { buildPyramid } from "../raster/pyramid.js";
import { buildCells, type CellGeometry } from "./cells.js";
import { buildExpressionModel, sampleCounts } from "./expression.js";
import { smoothField } from "./field.js";
import { CELL_TYPES, geneIds, panelGenes } from "./genes.js";
import { MORPHOLOGY_CHANNELS, MORPHOLOGY_COLORS, renderMorphology } from "./morphology.js";
import { rasterizePolygons } from "./rasterize.js";
import { assignCellTypes, makeOutline, placeCells } from "./tissue.js";
import { sampleTranscripts } from "./transcripts.js";

/** Options of `generateDemo`; every field has a default. */
export interface DemoOptions {
  /** Seed of every random choice (default 0). */
  readonly seed?: number;
  /** Number of cells (default 4000). */
  readonly nCells?: number;
  /** Number of genes (default 300; at least 29). */
  readonly nGenes?: number;
  /** Width and height of the image and label rasters, in pixels (default 2048). */
  readonly imageSize?: number;
  /** Number of transcripts (default 50 000). */
  readonly nTranscripts?: number;
  /** Micrometres per pixel (default 0.5). */
  readonly pixelSize?: number;
}

/** The defaults of `generateDemo`. */
export const DEMO_DEFAULTS = {
  seed: 0,
  nCells: 4000,
  nGenes: 300,
  imageSize: 2048,
  nTranscripts: 50_000,
  pixelSize: 0.5,
} as const satisfies Required<DemoOptions>;

/** Element names of the demo. */
export const DEMO_ELEMENTS = {
  image: "morphology",
  labels: "cell_labels",
  shapes: "cell_boundaries",
  points: "transcripts",
  table: "table",
} as const;

const GLOBAL = "global";

function cs(name: string, axes: readonly string[]) {
  return { name, axes: defaultAxes(axes) };
}

function identityTo(axes: readonly string[]): Record<string, Transformation> {
  return { [GLOBAL]: { type: "identity", input: cs(axes.join(""), axes), output: cs(GLOBAL, axes) } };
}

function scaleTo(axes: readonly string[], pixelSize: number): Record<string, Transformation> {
  const scale = axes.map((a) => (a === "x" || a === "y" ? pixelSize : 1));
  return { [GLOBAL]: { type: "scale", scale, input: cs(axes.join(""), axes), output: cs(GLOBAL, axes) } };
}

function categorical(codes: Int32Array, categories: readonly string[]): Categorical {
  return { kind: "categorical", codes, categories: strings(categories), ordered: false };
}

function check(name: string, v: number, min: number): number {
  if (!Number.isInteger(v) || v < min) throw new Error(`demo: ${name} must be an integer ≥ ${min}, got ${v}`);
  return v;
}

/** Contrast window per channel: the 0.1 and 99.9 percentiles of a level (a uint16 `[c, y, x]` array). */
function channelWindows(level: DenseArray): { start: number; end: number }[] {
  const [nc, h, w] = level.shape as [number, number, number];
  const data = level.data as Uint16Array;
  const out: { start: number; end: number }[] = [];
  for (let c = 0; c < nc; c++) {
    const hist = new Uint32Array(65536);
    const plane = data.subarray(c * h * w, (c + 1) * h * w);
    for (let i = 0; i < plane.length; i++) hist[plane[i]!]!++;
    const lo = plane.length * 0.001;
    const hi = plane.length * 0.999;
    let acc = 0;
    let start = 0;
    let end = 65535;
    for (let v = 0; v < 65536; v++) {
      const before = acc;
      acc += hist[v]!;
      if (before <= lo && acc > lo) start = v;
      if (before <= hi && acc > hi) {
        end = v;
        break;
      }
    }
    out.push({ start, end: Math.max(end, start + 1) });
  }
  return out;
}

function polygonShapes(cells: CellGeometry, ids: Int32Array): ShapesElement {
  const n = ids.length;
  const geomOffsets = allocArray("int32", n + 1) as Int32Array;
  for (let i = 0; i <= n; i++) geomOffsets[i] = i;
  return {
    kind: "shapes",
    name: DEMO_ELEMENTS.shapes,
    transformations: identityTo(["x", "y"]),
    geometry: { type: "polygon", coords: cells.coords, geomOffsets, ringOffsets: cells.ringOffsets },
    frame: dataFrame(strings(Array.from(ids, String)), {}, "cell_id"),
  };
}

/**
 * Generate the demo SpatialData: `morphology` (4-channel uint16 image pyramid), `cell_labels`
 * (uint32 label pyramid), `cell_boundaries` (polygons), `transcripts` (points) and `table` (AnnData
 * of raw counts annotating `cell_boundaries`). Same options → identical bytes.
 */
export function generateDemo(opts: DemoOptions = {}): SpatialData {
  const seed = opts.seed ?? DEMO_DEFAULTS.seed;
  const nCells = check("nCells", opts.nCells ?? DEMO_DEFAULTS.nCells, 1);
  const nGenes = opts.nGenes ?? DEMO_DEFAULTS.nGenes;
  const size = check("imageSize", opts.imageSize ?? DEMO_DEFAULTS.imageSize, 16);
  const nTranscripts = check("nTranscripts", opts.nTranscripts ?? DEMO_DEFAULTS.nTranscripts, 0);
  const ps = opts.pixelSize ?? DEMO_DEFAULTS.pixelSize;
  if (!(ps > 0) || !Number.isFinite(ps)) throw new Error(`demo: pixelSize must be > 0, got ${ps}`);
  const genes = panelGenes(nGenes);
  const root = new Rng(seed);
  const world = size * ps;

  // Tissue, cells and their types.
  const outline = makeOutline(root.fork("outline"), world, world);
  const seeds = placeCells(root.fork("seeds"), outline, nCells);
  if (seeds.spacing / ps < 6) {
    throw new Error(
      `demo: ${nCells} cells do not fit a ${size}×${size} image (cells would be ${(seeds.spacing / ps).toFixed(1)} px apart; need ≥ 6): use fewer cells or a larger imageSize`,
    );
  }
  const layout = assignCellTypes(root.fork("types"), outline, seeds);
  const types = layout.types;
  const orientation = smoothField(root.fork("orientation"), 8 * seeds.spacing, 30 * seeds.spacing);
  const cells = buildCells(root.fork("polygons"), seeds, types, orientation);
  const ids = allocArray("int32", nCells) as Int32Array;
  for (let i = 0; i < nCells; i++) ids[i] = i + 1;
  const { labels } = rasterizePolygons(cells.coords, cells.ringOffsets, ids, size, size, ps);

  // Expression: size factors follow cell area; a few damaged cells leak mitochondrial reads; hypoxia
  // genes follow a smooth gradient across the section.
  const model = buildExpressionModel(root.fork("expression-model"), genes);
  const rngCells = root.fork("cell-state");
  let meanArea = 0;
  for (let i = 0; i < nCells; i++) meanArea += cells.area[i]! / nCells;
  const sizeFactors = new Float64Array(nCells);
  const damaged = new Uint8Array(nCells);
  for (let i = 0; i < nCells; i++) {
    sizeFactors[i] = (cells.area[i]! / meanArea) * Math.exp(0.25 * rngCells.normal());
    damaged[i] = rngCells.next() < 0.03 ? 1 : 0;
  }
  const hypoxia = smoothField(root.fork("hypoxia"), world / 2, world * 1.5, 4);
  const counts = sampleCounts(root.fork("counts"), model, types, sizeFactors, (i, mu) => {
    if (damaged[i]) for (const g of model.mtGenes) mu[g]! *= 6;
    const f = Math.exp(1.2 * hypoxia(cells.centroidX[i]!, cells.centroidY[i]!));
    for (const g of model.hypoxiaGenes) mu[g]! *= f;
  });

  // Rasters.
  const image = renderMorphology(root.fork("morphology"), {
    width: size,
    height: size,
    pixelSize: ps,
    labels,
    cells,
    types,
    outline,
  });
  const imageLevels = buildPyramid(image, ["c", "y", "x"], { method: "mean", targetSize: 256, maxLevels: 4 });
  const labelLevels = buildPyramid(
    { kind: "dense", dtype: "uint32", shape: [size, size], data: labels },
    ["y", "x"],
    {
      method: "nearest",
      targetSize: 256,
      maxLevels: 4,
    },
  );
  const coarsest = (imageLevels[imageLevels.length - 1]!.source as unknown as { array: DenseArray }).array;
  const windows = channelWindows(coarsest);
  const morphology: ImageElement = {
    kind: "image",
    name: DEMO_ELEMENTS.image,
    transformations: scaleTo(["c", "y", "x"], ps),
    axes: ["c", "y", "x"],
    channels: [...MORPHOLOGY_CHANNELS],
    dtype: "uint16",
    levels: imageLevels,
    omero: {
      name: DEMO_ELEMENTS.image,
      channels: MORPHOLOGY_CHANNELS.map((label, c) => ({
        label,
        color: MORPHOLOGY_COLORS[c],
        active: true,
        window: { min: 0, max: 65535, start: windows[c]!.start, end: windows[c]!.end },
      })),
      rdefs: { defaultT: 0, defaultZ: 0, model: "color" },
    },
  };
  const cellLabels: LabelsElement = {
    kind: "labels",
    name: DEMO_ELEMENTS.labels,
    transformations: scaleTo(["y", "x"], ps),
    axes: ["y", "x"],
    dtype: "uint32",
    levels: labelLevels,
  };

  // Transcripts.
  const tx = sampleTranscripts(root.fork("transcripts"), {
    counts: counts.matrix,
    cells,
    cellIds: ids,
    labels,
    width: size,
    height: size,
    pixelSize: ps,
    outline,
    nTranscripts,
  });
  const nTx = tx.x.length;
  const transcripts: PointsElement = {
    kind: "points",
    name: DEMO_ELEMENTS.points,
    transformations: identityTo(["x", "y"]),
    axes: ["x", "y"],
    frame: dataFrame(
      strings(Array.from({ length: nTx }, (_, i) => String(i))),
      {
        x: { kind: "dense", dtype: "float32", shape: [nTx], data: tx.x },
        y: { kind: "dense", dtype: "float32", shape: [nTx], data: tx.y },
        gene: categorical(tx.gene, genes),
        cell_id: { kind: "dense", dtype: "int32", shape: [nTx], data: tx.cellId },
      },
      "index",
    ),
    featureKey: "gene",
    instanceKey: "cell_id",
  };

  // Table.
  const spatial = allocArray("float64", 2 * nCells) as Float64Array;
  const totalCounts = allocArray("float32", nCells) as Float32Array;
  const cellArea = allocArray("float64", nCells) as Float64Array;
  const nucleusArea = allocArray("float64", nCells) as Float64Array;
  for (let i = 0; i < nCells; i++) {
    spatial[2 * i] = cells.centroidX[i]!;
    spatial[2 * i + 1] = cells.centroidY[i]!;
    totalCounts[i] = counts.totals[i]!;
    cellArea[i] = cells.area[i]!;
    nucleusArea[i] = Math.PI * cells.nucleusA[i]! * cells.nucleusB[i]!;
  }
  const typeNames = CELL_TYPES.map((t) => t.name);
  const table: Table = makeTable({
    X: counts.matrix,
    obs: dataFrame(strings(Array.from(ids, String)), {
      cell_id: { kind: "dense", dtype: "int32", shape: [nCells], data: ids },
      region: categorical(new Int32Array(nCells), [DEMO_ELEMENTS.shapes]),
      cell_type: categorical(Int32Array.from(types), typeNames),
      total_counts: { kind: "dense", dtype: "float32", shape: [nCells], data: totalCounts },
      cell_area: { kind: "dense", dtype: "float64", shape: [nCells], data: cellArea },
      nucleus_area: { kind: "dense", dtype: "float64", shape: [nCells], data: nucleusArea },
    }),
    var: dataFrame(strings(genes), {
      gene_ids: strings(geneIds(genes)),
      feature_types: categorical(new Int32Array(genes.length), ["Gene Expression"]),
    }),
    obsm: { spatial: { kind: "dense", dtype: "float64", shape: [nCells, 2], data: spatial } },
    uns: unsDict({
      cell_type_colors: strings(CELL_TYPES.map((t) => t.color)),
      demo: unsDict({
        seed,
        n_cells: nCells,
        n_genes: nGenes,
        image_size: size,
        n_transcripts: nTx,
        pixel_size_um: ps,
        nb_dispersion: model.dispersion,
        domains: strings(layout.domains),
      }),
    }),
    annotation: { region: DEMO_ELEMENTS.shapes, regionKey: "region", instanceKey: "cell_id" },
  });

  return makeSpatialData({
    images: { [DEMO_ELEMENTS.image]: morphology },
    labels: { [DEMO_ELEMENTS.labels]: cellLabels },
    points: { [DEMO_ELEMENTS.points]: transcripts },
    shapes: { [DEMO_ELEMENTS.shapes]: polygonShapes(cells, ids) },
    tables: { [DEMO_ELEMENTS.table]: table },
    attrs: {
      tessera: {
        demo: {
          seed,
          n_cells: nCells,
          n_genes: nGenes,
          image_size: size,
          pixel_size_um: ps,
          unit: "micrometer",
          generator: "tessera generateDemo",
        },
      },
    },
  });
}
