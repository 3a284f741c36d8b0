/**
 * The serverless `DataSource`: a `.sdata.zarr.zip` checkpoint read in the browser over HTTP Range
 * with the SDK's own checkpoint reader (client.md 17.3). Fields are materialised into the same Arrow
 * schemas as the live API (`fieldBatch`), genes come from the column-major mirror, var names are
 * searched in memory. Read-only. The reader is loaded on demand (its own chunk).
 */
import type { AppState } from "../sdk/io/checkpoint/app-state.js";
import type { Checkpoint } from "../sdk/io/checkpoint/read.js";
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

/** Options of `openCheckpointSource`. */
export interface CheckpointSourceOptions {
  /** `fetch` for the range reads (the embed's presigned-URL refresh wraps it). */
  fetch?: typeof globalThis.fetch;
}

/** A checkpoint opened in the browser. */
export class CheckpointDataSource implements DataSource {
  readonly readOnly = true;

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

  async getFieldData(path: string): Promise<FieldData> {
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
    return {
      obs: (t?.obs ?? []).map((c) => ({
        name: c.name,
        kind: /^(float|int|uint|numeric|nullable)/i.test(String(c.kind ?? "")) ? "numeric" : "categorical",
      })),
      obsm: t?.obsm ?? [],
      has_x: Boolean(t?.has_x && t.x_mirror),
      var_names_count: t?.n_vars ?? 0,
      images: [],
      shapes: [],
    };
  }

  async getAppState(): Promise<AppState> {
    return this.cp.appState;
  }

  async getElements(): Promise<SourceElements> {
    // Boundaries and images are read by the live server today; the serverless reader of both
    // (row-group pruned GeoParquet, the raster prefix store) is part 2.
    return { shapes: [], images: [], activeTable: this.activeTable };
  }

  async searchVarNames(q: string, limit = 20): Promise<string[]> {
    const t = this.activeTable ? this.cp.sdata.tables[this.activeTable] : undefined;
    if (!t) return [];
    return this.sdk.searchVarNames(t.var.index, q, limit);
  }

  async getShapesGeoArrow(): Promise<PolygonData> {
    throw new Error("cell boundaries are not available in the serverless viewer yet");
  }

  async getImageInfo(): Promise<ImageInfo> {
    throw new Error("images are not available in the serverless viewer yet");
  }

  async openImageLoader(): Promise<ImageLoader> {
    throw new Error("images are not available in the serverless viewer yet");
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
