/**
 * What the render core reads: cell positions and fields as `FieldData` (decoded from the very Arrow
 * payloads the canvases decode), image regions' raw planes with the display's channels, and cell
 * boundaries in canvas world space. `sessionRenderSource` reads them from a live session; a test
 * or another host can supply its own.
 */
import type { TypedArray } from "../data/arrays.js";
import { type CanvasShapes, canvasShapes } from "../data/shape-index.js";
import type { SpatialData } from "../data/spatialdata.js";
import type { Transformation } from "../data/transforms.js";
import { type FieldData, fieldFromTable } from "../display/field-data.js";
import { fieldBatch } from "../io/arrow/field-batch.js";
import type { DisplaySpec } from "../io/checkpoint/app-state.js";
import type { ImageInfo } from "../raster/info.js";
import type { ChannelRender } from "../raster/render.js";
import type { Session } from "../session/session.js";

/** The raw planes of an image region and the channels to composite them with (the raster store's `regionPlanes`). */
export interface RegionPlanes {
  readonly kind: "image" | "labels";
  readonly planes: readonly TypedArray[];
  readonly channels: readonly ChannelRender[];
}

/** The data a figure is drawn from. */
export interface RenderSource {
  /** A field of the active table (`obs:…`, `X:…`, `obsm:…`) as the canvases decode it. */
  field(path: string): Promise<FieldData>;
  /** Image `name`'s info (levels, placement, tile size); rejects when absent. */
  imageInfo?(name: string): Promise<ImageInfo>;
  /**
   * The raw pixels of `[x0, x1) × [y0, y1)` at `level` of image `name` and display `displayId`'s
   * channels for them (composited while drawing, on the figure thread).
   */
  imageRegion?(
    name: string,
    level: number,
    x0: number,
    y0: number,
    x1: number,
    y1: number,
    displayId: string | undefined,
  ): Promise<RegionPlanes>;
  /** Boundaries of shapes element `name` in canvas world space; rejects when absent. */
  shapes?(name: string): CanvasShapes;
  /** Names of the shapes elements that may be boundaries (the first is the default boundary layer). */
  shapesNames?(): string[];
  /** Unit of the canvas world's axes (`µm`, `px`, …), for the scale bar. */
  unit(): string;
}

/**
 * Decoded obsm fields by the matrix object they came from. Every snapshot and preview reads the
 * positions again, and at a million cells decoding two float32 columns out of the matrix held the
 * event loop about 15 ms each time; a commit that changes an entry replaces the object, so an entry
 * here never outlives the data it shows (and goes with it).
 */
const obsmFields = new WeakMap<object, Map<string, FieldData>>();

/**
 * A render source over a live session, pinned to the object committed when it is made: every read
 * of one render (positions, the colour field, boundaries, the unit) comes from that one object, so
 * a job that commits while the render awaits its reads cannot give it positions from before and
 * colours from after. A commit never mutates an object (it swaps in a new one), so the pinned one
 * stays whole; the render simply shows the state at its start, as the spec's reads do. A gene is read
 * from the checkpoint's mirror only while the pinned X is still the one the mirror holds.
 */
export function sessionRenderSource(s: Session): RenderSource {
  const data = s.data;
  const table = s.activeTable;
  return {
    async field(path) {
      // an obsm entry (positions, an embedding) is decoded once per matrix object (see `obsmFields`)
      const key = /^obsm:(.+)$/.exec(path)?.[1];
      const matrix = key !== undefined && table ? data.tables[table]?.obsm[key] : undefined;
      const known = matrix && obsmFields.get(matrix)?.get(path);
      if (known) return known;
      const t = await fieldBatch(data, path, {
        activeTable: table,
        geneReader: async (tname, gene) =>
          s.data.tables[tname]?.X === data.tables[tname]?.X ? s.geneValues(tname, gene) : null,
      });
      const f = fieldFromTable(t, path);
      if (matrix && f.kind === "components") {
        const byPath = obsmFields.get(matrix) ?? new Map<string, FieldData>();
        byPath.set(path, f);
        obsmFields.set(matrix, byPath);
      }
      return f;
    },
    imageInfo: (name) => s.imageInfo(name),
    imageRegion: (name, level, x0, y0, x1, y1, displayId) =>
      s.rasters.regionPlanes(name, level, y0, y1, x0, x1, displayId ? { display: displayId } : {}),
    shapes: (name) => canvasShapes(data, table, name),
    shapesNames: () => Object.keys(data.shapes).filter((n) => !n.startsWith("_")),
    unit: () => worldUnit(data),
  };
}

/** The unit of the world system's x axis as a short label, `units` when none is recorded. */
function worldUnit(data: SpatialData): string {
  for (const kind of ["shapes", "images", "points", "labels"] as const) {
    for (const el of Object.values(data[kind])) {
      for (const t of Object.values(el.transformations) as Transformation[]) {
        const u = t.output?.axes.find((a) => a.name === "x")?.unit;
        if (u) return shortUnit(u);
      }
    }
  }
  return "units";
}

/** `micrometer` → `µm` and the like; other names as they are. */
export function shortUnit(u: string): string {
  const map: Record<string, string> = {
    micrometer: "µm",
    micron: "µm",
    um: "µm",
    nanometer: "nm",
    millimeter: "mm",
    pixel: "px",
    unit: "units",
  };
  return map[u.toLowerCase()] ?? u;
}

/** Display specs the core draws. */
export type { DisplaySpec };
