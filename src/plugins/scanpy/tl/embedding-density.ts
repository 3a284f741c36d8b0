/**
 * `sc.tl.embedding_density` (scanpy's `tools/_embedding_density.py`): the density of cells in a 2-D
 * embedding by a Gaussian kernel density estimate, over all cells or within each category of an obs column.
 */
import { allocArray } from "../../../sdk/data/arrays.js";
import type { Change } from "../../../sdk/data/change.js";
import { loadMatrix } from "../../../sdk/data/lazy.js";
import type { SpatialData } from "../../../sdk/data/spatialdata.js";
import { nObs } from "../../../sdk/data/table.js";
import { unsFromJson } from "../../../sdk/data/uns.js";
import type { OpContext } from "../../../sdk/jobs/operation.js";
import { activeTable } from "../helpers.js";
import { categoricalObs } from "./helpers.js";

/**
 * scipy's `gaussian_kde(xy)(xy)` in 2-d: Scott's bandwidth (factor n^(-1/6)) on the sample
 * covariance. Kernel terms beyond 8 bandwidths (weight < e⁻³², below float64 resolution of the
 * self term) are skipped through a grid in whitened coordinates, so the cost is near-linear.
 * @internal
 */
export function gaussianKde2d(x: Float64Array, y: Float64Array): Float64Array {
  const n = x.length;
  const out = new Float64Array(n);
  if (n === 0) return out;
  let mx = 0;
  let my = 0;
  for (let i = 0; i < n; i++) {
    mx += x[i]!;
    my += y[i]!;
  }
  mx /= n;
  my /= n;
  let sxx = 0;
  let syy = 0;
  let sxy = 0;
  for (let i = 0; i < n; i++) {
    const a = x[i]! - mx;
    const b = y[i]! - my;
    sxx += a * a;
    syy += b * b;
    sxy += a * b;
  }
  const denom = Math.max(n - 1, 1);
  const f2 = n ** (-2 / 6);
  const cxx = (sxx / denom) * f2;
  const cyy = (syy / denom) * f2;
  const cxy = (sxy / denom) * f2;
  const det = cxx * cyy - cxy * cxy;
  if (!(det > 0))
    throw new Error("embedding_density: the points' covariance is singular (too few or collinear points)");
  // Whitening: Cholesky of the kernel covariance, u = L⁻¹ (p − mean).
  const l11 = Math.sqrt(cxx);
  const l21 = cxy / l11;
  const l22 = Math.sqrt(cyy - l21 * l21);
  const u = new Float64Array(n);
  const v = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const a = x[i]! - mx;
    const b = y[i]! - my;
    u[i] = a / l11;
    v[i] = (b - l21 * u[i]!) / l22;
  }
  const norm = 1 / (n * 2 * Math.PI * Math.sqrt(det));
  const cut = 8;
  let umin = Infinity;
  let vmin = Infinity;
  let umax = -Infinity;
  let vmax = -Infinity;
  for (let i = 0; i < n; i++) {
    umin = Math.min(umin, u[i]!);
    umax = Math.max(umax, u[i]!);
    vmin = Math.min(vmin, v[i]!);
    vmax = Math.max(vmax, v[i]!);
  }
  const gw = Math.max(1, Math.floor((umax - umin) / cut) + 1);
  const gh = Math.max(1, Math.floor((vmax - vmin) / cut) + 1);
  const cell = new Int32Array(n);
  const head = new Int32Array(gw * gh + 1);
  for (let i = 0; i < n; i++) {
    const cx = Math.min(gw - 1, Math.floor((u[i]! - umin) / cut));
    const cy = Math.min(gh - 1, Math.floor((v[i]! - vmin) / cut));
    cell[i] = cy * gw + cx;
    head[cell[i]! + 1]!++;
  }
  for (let c = 0; c < gw * gh; c++) head[c + 1] = head[c + 1]! + head[c]!;
  const members = new Int32Array(n);
  const fill = head.slice(0, gw * gh);
  for (let i = 0; i < n; i++) members[fill[cell[i]!]!++] = i;
  for (let i = 0; i < n; i++) {
    const cx = cell[i]! % gw;
    const cy = (cell[i]! - cx) / gw;
    let s = 0;
    for (let yy = Math.max(0, cy - 1); yy <= Math.min(gh - 1, cy + 1); yy++) {
      for (let xx = Math.max(0, cx - 1); xx <= Math.min(gw - 1, cx + 1); xx++) {
        const c = yy * gw + xx;
        for (let q = head[c]!; q < head[c + 1]!; q++) {
          const j = members[q]!;
          const du = u[i]! - u[j]!;
          const dv = v[i]! - v[j]!;
          s += Math.exp(-0.5 * (du * du + dv * dv));
        }
      }
    }
    out[i] = s * norm;
  }
  return out;
}

/** Params of `embedding_density`. */
export interface EmbeddingDensityParams {
  /**
   * Embedding to estimate densities on: an obsm key or its name without `X_` (`umap`, `tsne`,
   * `diffmap`, `pca`, `draw_graph_fa`; `fa` means `draw_graph_fa`).
   * @default "umap"
   */
  basis?: string;
  /** Categorical obs column: densities are estimated and scaled within each category. */
  groupby?: string;
  /** Name of the obs column written (default `<basis>_density` or `<basis>_density_<groupby>`). */
  key_added?: string;
  /** Two 1-based components, `"1,2"` or `[1, 2]` (for `diffmap` the first, stationary one is skipped). */
  components?: string | number[];
}

/**
 * Density of cells in an embedding (Gaussian KDE with Scott's bandwidth, as scipy's `gaussian_kde`),
 * scaled to [0, 1] over all cells or within each `groupby` category. Writes `obs/<basis>_density[_<groupby>]`
 * and `uns/<key>_params`.
 */
export async function embedding_density(
  sd: SpatialData,
  params: EmbeddingDensityParams,
  ctx: OpContext,
): Promise<Change> {
  const op = "embedding_density";
  const t = activeTable(sd, ctx, op);
  let basis = (params.basis ?? "umap").toLowerCase();
  if (basis === "fa") basis = "draw_graph_fa";
  const obsmKey = t.obsm[basis] ? basis : `X_${basis}`;
  const entry = t.obsm[obsmKey];
  if (!entry || entry.kind === "dataframe") {
    throw new Error(
      `${op}: cannot find the embedded representation obsm["${basis}" | "X_${basis}"]; compute the embedding first`,
    );
  }
  const m = await loadMatrix(entry);
  if (m.kind !== "dense") throw new Error(`${op}: obsm["${obsmKey}"] must be dense`);
  const comps = (
    params.components == null
      ? [1, 2]
      : typeof params.components === "string"
        ? params.components.split(",").map((s) => Number.parseInt(s.trim(), 10))
        : params.components
  ).map((c) => c - 1);
  if (comps.length !== 2 || comps.some((c) => !Number.isInteger(c))) {
    throw new Error(`${op}: please specify exactly 2 components, or none`);
  }
  if (basis === "diffmap") {
    comps[0]! += 1;
    comps[1]! += 1;
  }
  const w = m.shape[1] ?? 1;
  if (comps.some((c) => c < 0 || c >= w))
    throw new Error(`${op}: components out of range for obsm["${obsmKey}"] (${w} columns)`);
  const n = nObs(t);
  const key =
    params.key_added ?? (params.groupby ? `${basis}_density_${params.groupby}` : `${basis}_density`);
  const out = allocArray("float64", n) as Float64Array;
  const scaled = (idx: Int32Array) => {
    const xs = new Float64Array(idx.length);
    const ys = new Float64Array(idx.length);
    for (let r = 0; r < idx.length; r++) {
      xs[r] = Number(m.data[idx[r]! * w + comps[0]!]);
      ys[r] = Number(m.data[idx[r]! * w + comps[1]!]);
    }
    const z = gaussianKde2d(xs, ys);
    let lo = Infinity;
    let hi = -Infinity;
    for (const v of z) {
      lo = Math.min(lo, v);
      hi = Math.max(hi, v);
    }
    for (let r = 0; r < idx.length; r++) out[idx[r]!] = (z[r]! - lo) / (hi - lo);
  };
  if (params.groupby) {
    const { codes, categories } = categoricalObs(t, params.groupby, op);
    for (let g = 0; g < categories.length; g++) {
      ctx.signal.throwIfAborted();
      const idx: number[] = [];
      for (let i = 0; i < n; i++) if (codes[i] === g) idx.push(i);
      if (idx.length > 0) scaled(Int32Array.from(idx));
      ctx.progress((g + 1) / categories.length);
    }
  } else {
    scaled(Int32Array.from({ length: n }, (_, i) => i));
  }
  if (basis !== "diffmap") {
    comps[0]! += 1;
    comps[1]! += 1;
  }
  return {
    tables: {
      [ctx.table]: {
        obs: { [key]: { kind: "dense", dtype: "float64", shape: [n], data: out } },
        uns: { [`${key}_params`]: unsFromJson({ covariate: params.groupby ?? null, components: comps }) },
      },
    },
  };
}
