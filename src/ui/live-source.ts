/** The live `DataSource`: one session of a running Tessera server, over its REST routes. */
import { FetchStore } from "@zarrita/storage";
import type { AppState } from "../sdk/io/checkpoint/app-state.js";
import { fieldFromIpc } from "./arrow-field.js";
import type {
  DataSource,
  FieldData,
  ImageInfo,
  ImageLoader,
  PolygonData,
  SourceElements,
  SourceFields,
} from "./data-source.js";
import { polygonsFromIpc } from "./geoarrow.js";
import type { ApiClient } from "./http.js";
import { zarrImageLoader } from "./image-loader.js";

const enc = encodeURIComponent;

/** A session of the server `api` talks to. */
export class LiveDataSource implements DataSource {
  readonly readOnly = false;
  private readonly prefix: string;
  private loaders = new Map<string, Promise<ImageLoader>>();

  constructor(
    readonly api: ApiClient,
    readonly sessionId: string,
  ) {
    this.prefix = `/api/sessions/${enc(sessionId)}`;
  }

  get id(): string {
    return this.sessionId;
  }

  async getFieldData(path: string): Promise<FieldData> {
    return fieldFromIpc(await this.api.bytes(`${this.prefix}/data/${enc(path)}`), path);
  }

  async getFields(): Promise<SourceFields> {
    const s = await this.api.json<{ fields: SourceFields }>(this.prefix);
    return s.fields;
  }

  async getAppState(): Promise<AppState> {
    return (await this.api.json<{ app_state: AppState }>(this.prefix)).app_state;
  }

  async getElements(): Promise<SourceElements> {
    const e = await this.api.json<{
      tables: { name: string; active: boolean }[];
      shapes: { name: string; n: number; geometry: string }[];
      images: { name: string; channels: string[] }[];
    }>(`${this.prefix}/elements`);
    return {
      shapes: e.shapes,
      images: e.images,
      activeTable: e.tables.find((t) => t.active)?.name ?? null,
    };
  }

  async searchVarNames(q: string, limit = 20): Promise<string[]> {
    const r = await this.api.json<{ names: string[] }>(
      `${this.prefix}/var-names?q=${enc(q)}&limit=${Math.max(1, Math.min(1000, limit))}`,
    );
    return r.names;
  }

  async getShapesGeoArrow(
    element: string,
    bbox: readonly number[] | null,
    limit?: number,
  ): Promise<PolygonData> {
    const q = new URLSearchParams();
    if (bbox) q.set("bbox", bbox.map((v) => String(Math.round(v * 100) / 100)).join(","));
    if (limit !== undefined) q.set("limit", String(limit));
    const qs = q.toString();
    return polygonsFromIpc(
      await this.api.bytes(`${this.prefix}/shapes/${enc(element)}/geoarrow${qs ? `?${qs}` : ""}`),
    );
  }

  getImageInfo(element: string): Promise<ImageInfo> {
    return this.api.json<ImageInfo>(`${this.prefix}/image/${enc(element)}/info`);
  }

  openImageLoader(element: string): Promise<ImageLoader> {
    let l = this.loaders.get(element);
    if (!l) {
      l = (async () => {
        const info = await this.getImageInfo(element);
        const store = new FetchStore(this.api.url(info.raster_base_url));
        return zarrImageLoader(store, info);
      })();
      l.catch(() => this.loaders.delete(element));
      this.loaders.set(element, l);
    }
    return l;
  }

  imageThumbnailUrl(element: string, maxPx: number): string {
    return this.api.url(`${this.prefix}/image/${enc(element)}/thumbnail?max_px=${maxPx}`);
  }

  async getPlotFigure(plotId: string, fmt: "svg" | "png" | "pdf"): Promise<Blob | null> {
    try {
      const r = await this.api.fetch(`${this.prefix}/plots/${enc(plotId)}/figure?fmt=${fmt}`);
      return await r.blob();
    } catch {
      return null;
    }
  }
}
