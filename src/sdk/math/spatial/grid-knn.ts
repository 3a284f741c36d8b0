/**
 * Exact k-nearest neighbours of 2-d points through a uniform grid of buckets (about two points per
 * bucket): each query scans rings of buckets around its own until the ring's nearest possible
 * distance exceeds its k-th best. For spatial coordinates (cells spread over a tissue) this is
 * several times faster than a k-d tree; results are the same (ascending distance, ties by index).
 */

/** Neighbours of every point, itself left out: n × k indices and distances (−1 / Infinity past the end). */
export function gridKnnSelf(
  points: ArrayLike<number>,
  n: number,
  k: number,
): { indices: Int32Array; distances: Float64Array } {
  const xs = new Float64Array(n);
  const ys = new Float64Array(n);
  let x0 = Number.POSITIVE_INFINITY;
  let y0 = Number.POSITIVE_INFINITY;
  let x1 = Number.NEGATIVE_INFINITY;
  let y1 = Number.NEGATIVE_INFINITY;
  for (let i = 0; i < n; i++) {
    const x = points[2 * i] as number;
    const y = points[2 * i + 1] as number;
    if (!Number.isFinite(x) || !Number.isFinite(y)) {
      throw new Error(`kNN: point ${i} has a coordinate that is not a finite number (${x}, ${y})`);
    }
    xs[i] = x;
    ys[i] = y;
    x0 = Math.min(x0, x);
    x1 = Math.max(x1, x);
    y0 = Math.min(y0, y);
    y1 = Math.max(y1, y);
  }
  const indices = new Int32Array(n * k).fill(-1);
  const distances = new Float64Array(n * k).fill(Number.POSITIVE_INFINITY);
  if (n === 0) return { indices, distances };
  const w = Math.max(x1 - x0, 1e-12);
  const h = Math.max(y1 - y0, 1e-12);
  // About two points per bucket, at most 2^22 buckets.
  const target = Math.min(Math.max(1, n / 2), 1 << 22);
  const size = Math.sqrt((w * h) / target) || 1;
  const nx = Math.max(1, Math.min(1 << 11, Math.ceil(w / size)));
  const ny = Math.max(1, Math.min(1 << 11, Math.ceil(h / size)));
  const sx = nx / w;
  const sy = ny / h;
  const cellOf = (i: number) => {
    const cx = Math.min(nx - 1, Math.floor(((xs[i] as number) - x0) * sx));
    const cy = Math.min(ny - 1, Math.floor(((ys[i] as number) - y0) * sy));
    return cy * nx + cx;
  };
  // Counting sort of the points by bucket; coordinates copied in bucket order for locality.
  const start = new Int32Array(nx * ny + 1);
  const cell = new Int32Array(n);
  for (let i = 0; i < n; i++) {
    const c = cellOf(i);
    cell[i] = c;
    start[c + 1]++;
  }
  for (let c = 0; c < nx * ny; c++) start[c + 1] = (start[c + 1] as number) + (start[c] as number);
  const fill = start.slice(0, nx * ny);
  const ids = new Int32Array(n);
  const bx = new Float64Array(n);
  const by = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const p = fill[cell[i] as number]++;
    ids[p] = i;
    bx[p] = xs[i] as number;
    by[p] = ys[i] as number;
  }
  const bestD = new Float64Array(k);
  const bestI = new Int32Array(k);
  const cw = w / nx;
  const ch = h / ny;
  for (let q = 0; q < n; q++) {
    const qx = xs[q] as number;
    const qy = ys[q] as number;
    const c = cell[q] as number;
    const cx = c % nx;
    const cy = (c - cx) / nx;
    let count = 0;
    bestD.fill(Number.POSITIVE_INFINITY);
    for (let r = 0; ; r++) {
      // The nearest a point in ring r can be: r − 1 whole buckets plus the query's offset in its own.
      if (r > 0 && count === k) {
        const ox = Math.min(qx - (x0 + cx * cw), x0 + (cx + 1) * cw - qx);
        const oy = Math.min(qy - (y0 + cy * ch), y0 + (cy + 1) * ch - qy);
        const reach = Math.min((r - 1) * cw + Math.max(0, ox), (r - 1) * ch + Math.max(0, oy));
        if (reach > 0 && reach * reach > (bestD[k - 1] as number)) break;
      }
      if (cx - r < 0 && cy - r < 0 && cx + r >= nx && cy + r >= ny) break;
      for (let gy = cy - r; gy <= cy + r; gy++) {
        if (gy < 0 || gy >= ny) continue;
        const edge = gy === cy - r || gy === cy + r;
        for (let gx = cx - r; gx <= cx + r; gx += edge ? 1 : 2 * r) {
          if (gx >= 0 && gx < nx) {
            const b = gy * nx + gx;
            for (let p = start[b] as number; p < (start[b + 1] as number); p++) {
              const id = ids[p] as number;
              if (id === q) continue;
              const dx = qx - (bx[p] as number);
              const dy = qy - (by[p] as number);
              const d = dx * dx + dy * dy;
              if (count === k) {
                const wd = bestD[k - 1] as number;
                if (d > wd || (d === wd && id > (bestI[k - 1] as number))) continue;
              } else count++;
              let j = count - 1;
              while (j > 0) {
                const pd = bestD[j - 1] as number;
                if (pd < d || (pd === d && (bestI[j - 1] as number) < id)) break;
                bestD[j] = pd;
                bestI[j] = bestI[j - 1] as number;
                j--;
              }
              bestD[j] = d;
              bestI[j] = id;
            }
          }
          if (r === 0) break;
        }
      }
    }
    for (let j = 0; j < count; j++) {
      indices[q * k + j] = bestI[j] as number;
      distances[q * k + j] = Math.sqrt(bestD[j] as number);
    }
  }
  return { indices, distances };
}
