/**
 * App state: the audit log and view state a checkpoint carries (`schema_version` 1): compute history,
 * plots and displays, as the service specification defines them. The JSON Schema in
 * `schemas/checkpoint/app-state.schema.json` is generated from these types (`npm run schemas`), and every
 * checkpoint write is validated against it.
 */

/** Status of a history entry. */
export type HistStatus = "pending" | "queued" | "running" | "completed" | "failed" | "cancelled";

/** One executed (or staged) operation. */
export interface HistEntry {
  id: string;
  namespace: string;
  function: string;
  params: { [key: string]: unknown };
  status: HistStatus;
  library_versions: { [library: string]: string };
  started_at: string | null;
  finished_at: string | null;
  /** Slot → keys the operation wrote or removed (`{obsp: ["connectivities"], obs: ["leiden"]}`). */
  structural_diff: { [slot: string]: string[] };
  /** The job's log output. */
  log?: string;
  /** Failure message of a failed entry. */
  error?: string | null;
}

/** Status of a plot. */
export type PlotStatus = "pending" | "queued" | "running" | "drawn" | "invalidated" | "failed";

/** A plot: a `pl` call, the field paths it read, and its state. */
export interface PlotEntry {
  id: string;
  namespace: "pl";
  function: string;
  params: { [key: string]: unknown };
  status: PlotStatus;
  /** Field paths the figure was drawn from; a change to one invalidates the plot. */
  references: string[];
  library_versions: { [library: string]: string };
}

/** A colour (`#rrggbb`, a CSS name). @maxLength 64 */
export type ColorText = string;

/** Category → colour of one colouring. @maxProperties 100000 */
export type CategoryColors = { [category: string]: ColorText };

/** Colouring (a field path) → its category colours. @maxProperties 1000 */
export type CategoryColorsByField = { [colorBy: string]: CategoryColors };

/** Per-channel image settings of a spatial display. */
export interface ChannelSetting {
  contrast_limits?: [number, number];
  color?: ColorText;
  visible?: boolean;
  /**
   * The channel's name as the user renamed it.
   * @maxLength 256
   */
  name?: string;
}

/** Encoding of a spatial canvas (absent fields take the shared defaults). */
export interface SpatialEncoding {
  /**
   * obsm path of the coordinates, e.g. `obsm:spatial`.
   * @maxLength 1000
   */
  coords: string;
  /** @maxLength 1000 */
  color_by?: string | null;
  /** @maxLength 256 */
  image_layer?: string | null;
  /** @maxLength 256 */
  shapes_layer?: string | null;
  point_size?: number;
  opacity?: number;
  /** @maxLength 64 */
  colormap?: string;
  render_mode?: "points" | "points+shapes" | "shapes";
  boundary_style?: "filled" | "outline";
  boundary_line_width?: number;
  invert_x?: boolean;
  invert_y?: boolean;
  background?: "light" | "dark";
  show_minimap?: boolean;
  category_colors?: CategoryColorsByField;
  /** @maxProperties 1000 */
  channels?: { [channelIndex: string]: ChannelSetting };
  /** Whether the colour legend shows (default true). */
  legend_visible?: boolean;
  /**
   * Legend title (default: the column or gene name).
   * @maxLength 256
   */
  legend_title?: string | null;
  /** Multiplies the legend's size (default 1; hosts set it). */
  legend_scale?: number;
  /** Disables all camera interaction (default false; hosts and links set it). */
  lock_view?: boolean;
  /**
   * The one category shown at full opacity (others dimmed), or null.
   * @maxLength 256
   */
  isolated_category?: string | null;
  /** Whether cells are drawn (default true). */
  show_points?: boolean;
  /** Whether the image layer is drawn (default true). */
  show_image?: boolean;
  /** Whether the image channel legend shows (default true). */
  show_channel_legend?: boolean;
  /** Glyph of the cells layer (default circle). */
  point_marker?: "circle" | "square" | "hexagon";
}

/** Encoding of an embedding canvas (UMAP, PCA …). */
export interface EmbeddingEncoding {
  /** @maxLength 256 */
  obsm_key: string;
  /** @asType integer */
  x_component?: number;
  /** @asType integer */
  y_component?: number;
  /** @asType integer */
  z_component?: number;
  is_3d?: boolean;
  /** @maxLength 1000 */
  color_by?: string | null;
  point_size?: number;
  opacity?: number;
  /** @maxLength 64 */
  colormap?: string;
  category_colors?: CategoryColorsByField;
  /** Whether the colour legend shows (default true). */
  legend_visible?: boolean;
  /**
   * Legend title (default: the column or gene name).
   * @maxLength 256
   */
  legend_title?: string | null;
  /** Multiplies the legend's size (default 1; hosts set it). */
  legend_scale?: number;
  /** Disables all camera interaction (default false; hosts and links set it). */
  lock_view?: boolean;
  /**
   * The one category shown at full opacity (others dimmed), or null.
   * @maxLength 256
   */
  isolated_category?: string | null;
  background?: "light" | "dark";
}

/** A spatial display. */
export interface SpatialDisplay {
  /** @maxLength 128 */
  id: string;
  type: "spatial_canvas";
  encoding: SpatialEncoding;
  viewport: { target: ViewTarget; zoom: number };
}

/** A viewport's target point. @maxItems 3 */
export type ViewTarget = number[];

/** An embedding display. */
export interface EmbeddingDisplay {
  /** @maxLength 128 */
  id: string;
  type: "embedding_canvas";
  encoding: EmbeddingEncoding;
  viewport: { target: ViewTarget; zoom: number; rotationX?: number; rotationOrbit?: number };
}

/** A display: a canvas and its settings. */
export type DisplaySpec = SpatialDisplay | EmbeddingDisplay;

/** The app state blob. */
export interface AppState {
  /** Always 1. */
  schema_version: 1;
  /**
   * Session name chosen at save (`name`), adopted by a later load instead of the file name.
   * @maxLength 500
   */
  name?: string;
  compute_history: HistEntry[];
  plots: PlotEntry[];
  /** @maxItems 1000 */
  displays: DisplaySpec[];
}

/** An empty app state. */
export function emptyAppState(): AppState {
  return { schema_version: 1, compute_history: [], plots: [], displays: [] };
}
