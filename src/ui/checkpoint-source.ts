/**
 * The serverless `DataSource`: a `.sdata.zarr.zip` checkpoint read in the browser over HTTP Range
 * with the SDK's own checkpoint reader (client.md 17.3). Fields are materialised into the same Arrow
 * schemas as the live API (`fieldBatch`), genes come from the column-major mirror, var names are
 * searched in memory. Read-only. The reader is loaded on demand (its own chunk).
 */

import * as zarr from "zarrita";
import type { ShapeAnnotation } from "../sdk/data/shape-annotations.js";
import type { AppState } from "../sdk/io/checkpoint/app-state.js";
import type { Checkpoint } from "../sdk/io/checkpoint/read.js";
import type { ServedRasterStore } from "../sdk/raster/served-store.js";
import { fieldFromTable } from "./arrow-field.js";
import type {
  DataSource,
  FieldData,
  ImageInfo,
  ImageLoader,
  PolygonData,
  SourceElements,
  SourceFields,
} from "./data-source.js";
import { polygonsFromTable } from "./geoarrow.js";
import { zarrImageLoader } from "./image-loader.js";
import { LocalEdits } from "./local-edits.js";

/** Options of `openCheckpointSource`. */
export interface CheckpointSourceOptions {
  /** `fetch` for the range reads (the embed's presigned-URL refresh wraps it). */
  fetch?: typeof globalThis.fetch;
}

/** A checkpoint opened in the browser. */
export class CheckpointDataSource implements DataSource {
  readonly readOnly = true;
  private infos = new Map<string, Promise<ImageInfo>>();
  private loaders = new Map<string, Promise<ImageLoader>>();

  constructor(
    readonly url: string,
    readonly cp: Checkpoint,
    private readonly sdk: typeof import("./checkpoint-sdk.js"),
  ) {}

  get id(): string {
    return this.url;
  }

  get activeTable(): string | null {
    return this.cp.sidecar.active_table;
  }

  /** Region labels and hidden cells local to this page (client.md 17.5; lost on reload). */
  readonly local = new LocalEdits();

  get hiddenCells(): { rows: Uint8Array; version: number } | null {
    const rows = this.local.hidden;
    return rows ? { rows, version: this.local.hiddenVersion } : null;
  }

  async getFieldData(path: string): Promise<FieldData> {
    const own = this.local.field(path);
    if (own) return own;
    const t = await this.sdk.fieldBatch(this.cp.sdata, path, {
      activeTable: this.activeTable,
      geneReader: async (table, gene) => {
        try {
          return await this.sdk.readGeneFromMirror(this.cp, table, gene);
        } catch {
          return null;
        }
      },
    });
    return fieldFromTable(t, path);
  }

  async getFields(): Promise<SourceFields> {
    const t = this.cp.sidecar.tables.find((x) => x.name === this.activeTable);
    const local = this.local.columnNames;
    return {
      obs: [
        ...(t?.obs ?? [])
          .filter((c) => !local.includes(c.name))
          .map((c) => ({
            name: c.name,
            kind: /^(float|int|uint|numeric|nullable)/i.test(String(c.kind ?? ""))
              ? ("numeric" as const)
              : ("categorical" as const),
          })),
        ...local.map((name) => ({ name, kind: "categorical" as const })),
      ],
      obsm: t?.obsm ?? [],
      has_x: Boolean(t?.has_x && t.x_mirror),
      var_names_count: t?.n_vars ?? 0,
      images: this.cp.sidecar.images.map((i) => i.name),
      shapes: this.boundaryShapes().map((x) => x.name),
    };
  }

  async getAppState(): Promise<AppState> {
    return this.cp.appState;
  }

  /** Polygon shapes elements the boundary overlay may draw (none for a version-1 sidecar). */
  private boundaryShapes(): { name: string; n: number; geometry: string }[] {
    if (!this.cp.boundariesAvailable) return [];
    return this.cp.sidecar.shapes
      .filter((x) => /polygon/i.test(x.geometry) && this.cp.sdata.shapes[x.name])
      .map((x) => ({ name: x.name, n: x.n, geometry: x.geometry }));
  }

  /** The checkpoint's shape annotations (its `annotations` shapes element), as the live API lists them. */
  async getShapeAnnotations(): Promise<ShapeAnnotation[]> {
    return this.sdk.readShapeAnnotations(this.cp.sdata);
  }

  async getElements(): Promise<SourceElements> {
    return {
      shapes: this.boundaryShapes(),
      images: this.cp.sidecar.images.map((i) => ({ name: i.name, channels: [...i.channels] })),
      activeTable: this.activeTable,
    };
  }

  async searchVarNames(q: string, limit = 20): Promise<string[]> {
    const t = this.activeTable ? this.cp.sdata.tables[this.activeTable] : undefined;
    if (!t) return [];
    return this.sdk.searchVarNames(t.var.index, q, limit);
  }

  async getShapesGeoArrow(
    element: string,
    bbox: readonly number[] | null,
    limit?: number,
  ): Promise<PolygonData> {
    if (!this.boundaryShapes().some((x) => x.name === element))
      throw new Error(`no cell boundaries "${element}" in this checkpoint`);
    // The checkpoint reader has the element's GeoParquet decoded (WKB → flat buffers); the SDK places
    // it on the canvas and answers the bbox query exactly as the live route does.
    const shapes = this.sdk.canvasShapes(this.cp.sdata, this.activeTable, element);
    const box = bbox ? ([bbox[0], bbox[1], bbox[2], bbox[3]] as [number, number, number, number]) : null;
    return polygonsFromTable(this.sdk.geoArrowTable(shapes, this.sdk.queryShapes(shapes, box, limit)));
  }

  getImageInfo(element: string): Promise<ImageInfo> {
    let p = this.infos.get(element);
    if (!p) {
      p = this.computeImageInfo(element);
      p.catch(() => this.infos.delete(element));
      this.infos.set(element, p);
    }
    return p;
  }

  /**
   * The info the live server's `/image/{element}/info` answers, computed here from the element's
   * NGFF metadata (as the checkpoint reader parsed it) and the sidecar, with the SDK's own
   * `imageInfoOf` (placement through `P⁻¹ · T_image`, as for the cells) and `coarsestStats`
   * (default windows from the coarsest level's 99.5th percentile) over the zip's served layout.
   */
  private async computeImageInfo(element: string): Promise<ImageInfo> {
    const sd = this.cp.sdata;
    const el = sd.images[element] ?? sd.labels[element];
    const side = [...this.cp.sidecar.images, ...this.cp.sidecar.labels].find((x) => x.name === element);
    if (!el || !side) throw new Error(`no image "${element}" in this checkpoint`);
    const axes = el.axes.map((a) => a.toLowerCase());
    const levels = el.levels.map((l, i) => ({
      level: i,
      path: l.path,
      shape: l.shape,
      chunks: l.chunks,
      width: l.shape[l.shape.length - 1]!,
      height: l.shape[l.shape.length - 2]!,
    }));
    const root = zarr.root(this.cp.store);
    const group = side.path;
    const store = {
      levels,
      axes,
      tileSize: levels[0]?.chunks[levels[0].chunks.length - 1] ?? 512,
      groupPath: group,
      backing: { kind: "source" },
      // What coarsestStats reads: one plane region of a level.
      async region(k: number, outer: readonly number[], y0: number, y1: number, x0: number, x1: number) {
        const lv = levels[k]!;
        const arr = await zarr.open.v3(root.resolve(`${group}/${lv.path}`), { kind: "array" });
        const sel = [...outer, zarr.slice(y0, y1), zarr.slice(x0, x1)];
        return (await zarr.get(arr, sel)).data;
      },
    } as unknown as ServedRasterStore;
    const isRgb = this.sdk.isRgbImage(el);
    const stats = await this.sdk.coarsestStats(store, isRgb);
    return this.sdk.imageInfoOf(sd, this.activeTable, el, store, stats, {
      sessionId: this.url,
      clientCompositing: true,
    });
  }

  openImageLoader(element: string): Promise<ImageLoader> {
    let l = this.loaders.get(element);
    if (!l) {
      l = (async () => zarrImageLoader(this.cp.store, await this.getImageInfo(element)))();
      l.catch(() => this.loaders.delete(element));
      this.loaders.set(element, l);
    }
    return l;
  }

  imageThumbnailUrl(): string | null {
    return null;
  }

  async getPlotFigure(plotId: string, fmt: "svg" | "png" | "pdf"): Promise<Blob | null> {
    const bytes = await this.sdk.readFigure(this.cp, plotId, fmt);
    if (!bytes) return null;
    const type = fmt === "svg" ? "image/svg+xml" : fmt === "png" ? "image/png" : "application/pdf";
    return new Blob([bytes as Uint8Array<ArrayBuffer>], { type });
  }
}

/** Open the checkpoint at `url` (loads the reader chunk first). */
export async function openCheckpointSource(
  url: string,
  opts: CheckpointSourceOptions = {},
): Promise<CheckpointDataSource> {
  const sdk = await import("./checkpoint-sdk.js");
  const cp = await sdk.openCheckpoint(url, opts.fetch ? { fetch: opts.fetch } : {});
  return new CheckpointDataSource(url, cp, sdk);
}
