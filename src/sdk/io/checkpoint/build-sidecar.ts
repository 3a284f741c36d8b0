/**
 * Building the viewer sidecar from a SpatialData object: what the serverless viewer needs to lay out
 * every element in one world coordinate system without a backend.
 */
import { toAffine6 } from "../../data/affine.js";
import { levelSize, pointsCount, type SpatialElement, shapesCount } from "../../data/elements.js";
import { tableEntry } from "../../data/inventory.js";
import { coordinateSystems, type SpatialData, transformTo } from "../../data/spatialdata.js";
import { axisArrayWidth } from "../../data/table.js";
import { TESSERA_VERSION } from "../../version.js";
import {
  type Affine6,
  APP_STATE_PATH,
  SIDECAR_VERSION,
  type SidecarFigure,
  type SidecarRaster,
  type ViewerSidecar,
  X_MIRROR_PATH,
} from "./sidecar.js";

/** Inputs of the sidecar besides the object. */
export interface SidecarInput {
  name: string;
  activeTable?: string | null;
  coordinateSystem?: string;
  figures?: SidecarFigure[];
}

/** The world system: the one named, else `global` when present, else the first one. */
export function worldSystem(sd: SpatialData, requested?: string): string {
  const all = coordinateSystems(sd);
  if (requested) return requested;
  return all.includes("global") ? "global" : (all[0] ?? "global");
}

function toWorld(sd: SpatialData, el: SpatialElement, cs: string): Affine6 | null {
  try {
    return toAffine6(transformTo(sd, el, cs, ["x", "y"]));
  } catch {
    return null;
  }
}

/** Build the sidecar; tables with X get a mirror path under `viewer/X_csc/<table>`. */
export function buildSidecar(sd: SpatialData, input: SidecarInput): ViewerSidecar {
  const cs = worldSystem(sd, input.coordinateSystem);
  const tableNames = Object.keys(sd.tables).sort();
  const active =
    input.activeTable !== undefined
      ? input.activeTable
      : tableNames.includes("table")
        ? "table"
        : (tableNames[0] ?? null);
  const raster = (family: "images" | "labels", name: string): SidecarRaster => {
    const el = sd[family][name]!;
    return {
      name,
      path: `${family}/${name}`,
      levels: el.levels.map((l, i) => ({
        level: i,
        ...levelSize(el.axes, l.shape),
        // The writer names levels `s0, s1, …` whatever they were called in memory or in the source.
        path: `${family}/${name}/s${i}`,
      })),
      channels: el.kind === "image" ? [...el.channels] : [],
      dtype: el.dtype,
      pixel_to_world: toWorld(sd, el, cs),
    };
  };
  return {
    version: SIDECAR_VERSION,
    writer: { name: "tessera", version: TESSERA_VERSION },
    name: input.name,
    active_table: active,
    coordinate_system: cs,
    tables: tableNames.map((n) => {
      const t = sd.tables[n]!;
      const e = tableEntry(n, t);
      return {
        name: n,
        n_obs: e.n_obs,
        n_vars: e.n_vars,
        obs: e.obs,
        obsm: Object.entries(t.obsm).map(([k, v]) => ({ name: k, n_components: axisArrayWidth(v) })),
        has_x: t.X !== null,
        x_mirror: t.X !== null ? `${X_MIRROR_PATH}/${n}` : null,
        region: e.region,
      };
    }),
    images: Object.keys(sd.images)
      .sort()
      .map((n) => raster("images", n)),
    labels: Object.keys(sd.labels)
      .sort()
      .map((n) => raster("labels", n)),
    shapes: Object.keys(sd.shapes)
      .sort()
      .map((n) => {
        const el = sd.shapes[n]!;
        return {
          name: n,
          path: `shapes/${n}`,
          n: shapesCount(el),
          geometry: el.geometry.type,
          to_world: toWorld(sd, el, cs),
        };
      }),
    points: Object.keys(sd.points)
      .sort()
      .map((n) => {
        const el = sd.points[n]!;
        return {
          name: n,
          path: `points/${n}`,
          n: pointsCount(el),
          geometry: "points",
          to_world: toWorld(sd, el, cs),
        };
      }),
    figures: input.figures ?? [],
    app_state: APP_STATE_PATH,
  };
}
