/**
 * What the render core reads: cell positions and fields as `FieldData` (decoded from the very Arrow
 * payloads the canvases decode), image tiles composited with the display's channels, and cell
 * boundaries in canvas world space. `sessionRenderSource` reads them from a live session; a test
 * or another host can supply its own.
 */
import { type CanvasShapes, canvasShapes } from "../data/shape-index.js";
import type { SpatialData } from "../data/spatialdata.js";
import type { Transformation } from "../data/transforms.js";
import { type FieldData, fieldFromTable } from "../display/field-data.js";
import { fieldBatch } from "../io/arrow/field-batch.js";
import type { DisplaySpec } from "../io/checkpoint/app-state.js";
import type { ImageInfo } from "../raster/info.js";
import type { Session } from "../session/session.js";

/** One composited image tile (RGB8). */
export interface TileRgb {
  readonly rgb: Uint8ClampedArray | Uint8Array;
  readonly width: number;
  readonly height: number;
}

/** The data a figure is drawn from. */
export interface RenderSource {
  /** A field of the active table (`obs:…`, `X:…`, `obsm:…`) as the canvases decode it. */
  field(path: string): Promise<FieldData>;
  /** Image `name`'s info (levels, placement, tile size); rejects when absent. */
  imageInfo?(name: string): Promise<ImageInfo>;
  /** Tile (`level`, `col`, `row`) of image `name` composited with display `displayId`'s channels. */
  imageTile?(
    name: string,
    level: number,
    col: number,
    row: number,
    displayId: string | undefined,
  ): Promise<TileRgb>;
  /** Boundaries of shapes element `name` in canvas world space; rejects when absent. */
  shapes?(name: string): CanvasShapes;
  /** Names of the shapes elements that may be boundaries (the first is the default boundary layer). */
  shapesNames?(): string[];
  /** Unit of the canvas world's axes (`µm`, `px`, …), for the scale bar. */
  unit(): string;
}

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
      const t = await fieldBatch(data, path, {
        activeTable: table,
        geneReader: async (tname, gene) =>
          s.data.tables[tname]?.X === data.tables[tname]?.X ? s.geneValues(tname, gene) : null,
      });
      return fieldFromTable(t, path);
    },
    imageInfo: (name) => s.imageInfo(name),
    async imageTile(name, level, col, row, displayId) {
      const t = await s.rasters.tileRgb(name, level, col, row, displayId ? { display: displayId } : {});
      return { rgb: t.rgb, width: t.width, height: t.height };
    },
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
