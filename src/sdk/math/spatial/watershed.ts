/**
 * Marker-based watershed of a binary mask, as squidpy's `SegmentationWatershed` does it with SciPy and
 * scikit-image: the exact Euclidean distance of each foreground pixel to the background
 * (`ndi.distance_transform_edt`), its plateau maxima over a 5 × 5 window inside the mask
 * (`peak_local_max(distance, footprint=np.ones((5, 5)), labels=mask)`), those maxima grouped into
 * 4-connected markers (`ndi.label`), and the mask flooded from the markers in order of decreasing
 * distance (`watershed(-distance, markers, mask=mask)`). Images are h × w, row-major.
 */

/**
 * Exact Euclidean distance of every nonzero pixel of `mask` to the nearest zero pixel (0 on zero
 * pixels), by Felzenszwalb and Huttenlocher's two separable passes of the squared distance's lower
 * envelope of parabolas. Pixels beyond the image are not background (SciPy's convention); a mask with
 * no zero pixel gets +∞.
 */
export function distanceTransformEdt(mask: Uint8Array, h: number, w: number): Float64Array {
  const INF = Number.POSITIVE_INFINITY;
  const d2 = new Float64Array(h * w);
  for (let i = 0; i < h * w; i++) d2[i] = mask[i] ? INF : 0;
  const n = Math.max(h, w);
  const f = new Float64Array(n);
  const out = new Float64Array(n);
  const v = new Int32Array(n);
  const z = new Float64Array(n + 1);
  // One 1-D pass over `len` values at `start`, `stride` apart.
  const pass = (start: number, stride: number, len: number) => {
    for (let q = 0; q < len; q++) f[q] = d2[start + q * stride]!;
    let k = -1;
    for (let q = 0; q < len; q++) {
      if (f[q] === INF) continue;
      if (k < 0) {
        k = 0;
        v[0] = q;
        z[0] = -INF;
        z[1] = INF;
        continue;
      }
      let s = (f[q]! + q * q - (f[v[k]!]! + v[k]! * v[k]!)) / (2 * q - 2 * v[k]!);
      while (s <= z[k]!) {
        k--;
        s = (f[q]! + q * q - (f[v[k]!]! + v[k]! * v[k]!)) / (2 * q - 2 * v[k]!);
      }
      k++;
      v[k] = q;
      z[k] = s;
      z[k + 1] = INF;
    }
    if (k < 0) {
      for (let q = 0; q < len; q++) out[q] = INF;
    } else {
      let j = 0;
      for (let q = 0; q < len; q++) {
        while (z[j + 1]! < q) j++;
        const dq = q - v[j]!;
        out[q] = dq * dq + f[v[j]!]!;
      }
    }
    for (let q = 0; q < len; q++) d2[start + q * stride] = out[q]!;
  };
  for (let c = 0; c < w; c++) pass(c, w, h);
  for (let r = 0; r < h; r++) pass(r * w, 1, w);
  for (let i = 0; i < h * w; i++) d2[i] = Math.sqrt(d2[i]!);
  return d2;
}

/**
 * scikit-image's `peak_local_max(image, footprint=ones((size, size)), labels=mask)` with its other
 * defaults (min_distance 1, exclude_border true, no threshold): inside the bounding box of the mask
 * pixels off the image's one-pixel border, pixels outside the mask count as −∞; a peak is a mask pixel
 * equal to the maximum of its size × size window (the box's edge repeated beyond it, `mode="nearest"`)
 * and above the image's minimum. No peak when every pixel of the box equals its window maximum.
 * Returns a 0/1 map of the peaks.
 */
export function peakLocalMax(
  image: Float64Array,
  mask: Uint8Array,
  h: number,
  w: number,
  size = 5,
): Uint8Array {
  const peaks = new Uint8Array(h * w);
  let r0 = h;
  let r1 = -1;
  let c0 = w;
  let c1 = -1;
  for (let r = 1; r < h - 1; r++)
    for (let c = 1; c < w - 1; c++)
      if (mask[r * w + c]) {
        if (r < r0) r0 = r;
        if (r > r1) r1 = r;
        if (c < c0) c0 = c;
        if (c > c1) c1 = c;
      }
  if (r1 < 0) return peaks;
  let min = Number.POSITIVE_INFINITY;
  for (let i = 0; i < h * w; i++) if (image[i]! < min) min = image[i]!;
  const bh = r1 - r0 + 1;
  const bw = c1 - c0 + 1;
  const roi = new Float64Array(bh * bw);
  for (let r = 0; r < bh; r++)
    for (let c = 0; c < bw; c++) {
      const i = (r + r0) * w + (c + c0);
      roi[r * bw + c] = mask[i] ? image[i]! : Number.NEGATIVE_INFINITY;
    }
  // Separable maximum filter (a square footprint), edges repeated.
  const half = Math.floor(size / 2);
  const lo = size - 1 - half;
  const rows = new Float64Array(bh * bw);
  for (let r = 0; r < bh; r++)
    for (let c = 0; c < bw; c++) {
      let m = Number.NEGATIVE_INFINITY;
      for (let d = -half; d <= lo; d++) {
        const cc = Math.min(bw - 1, Math.max(0, c + d));
        const x = roi[r * bw + cc]!;
        if (x > m) m = x;
      }
      rows[r * bw + c] = m;
    }
  const maxed = new Float64Array(bh * bw);
  for (let r = 0; r < bh; r++)
    for (let c = 0; c < bw; c++) {
      let m = Number.NEGATIVE_INFINITY;
      for (let d = -half; d <= lo; d++) {
        const rr = Math.min(bh - 1, Math.max(0, r + d));
        const x = rows[rr * bw + c]!;
        if (x > m) m = x;
      }
      maxed[r * bw + c] = m;
    }
  let trivial = true;
  for (let i = 0; i < bh * bw; i++)
    if (roi[i] !== maxed[i]) {
      trivial = false;
      break;
    }
  if (trivial) return peaks;
  for (let r = 0; r < bh; r++)
    for (let c = 0; c < bw; c++) {
      const x = roi[r * bw + c]!;
      if (x === maxed[r * bw + c] && x > min) peaks[(r + r0) * w + (c + c0)] = 1;
    }
  return peaks;
}

/** 4-connected components of a 0/1 map, numbered 1… in raster order of their first pixel (`ndi.label`). */
export function label4(map: Uint8Array, h: number, w: number): { labels: Int32Array; count: number } {
  const labels = new Int32Array(h * w);
  const queue = new Int32Array(h * w);
  let count = 0;
  for (let s = 0; s < h * w; s++) {
    if (!map[s] || labels[s]) continue;
    labels[s] = ++count;
    let head = 0;
    let tail = 0;
    queue[tail++] = s;
    while (head < tail) {
      const p = queue[head++]!;
      const r = (p / w) | 0;
      const c = p - r * w;
      const visit = (q: number) => {
        if (map[q] && !labels[q]) {
          labels[q] = count;
          queue[tail++] = q;
        }
      };
      if (r > 0) visit(p - w);
      if (c > 0) visit(p - 1);
      if (c < w - 1) visit(p + 1);
      if (r < h - 1) visit(p + w);
    }
  }
  return { labels, count };
}

/**
 * Flood the mask from the markers over `image` (lowest first), 4-connected, as scikit-image's
 * `watershed(image, markers, mask=mask)` without compactness or lines: a pixel takes the label of the
 * queued pixel that reaches it first and costs the larger of its own value and that pixel's cost; the
 * queue (a binary heap) orders by cost, then by the order pixels were queued, markers (pushed in raster
 * order at their own value) all counting as queued first.
 * Neighbours are visited up, left, right, down. Pixels no marker reaches stay 0.
 */
export function watershedFlood(
  image: Float64Array,
  markers: Int32Array,
  mask: Uint8Array,
  h: number,
  w: number,
): Int32Array {
  const out = new Int32Array(h * w);
  // A binary heap of pixel indices, keyed by (value, age).
  let size = 0;
  let heapIdx = new Int32Array(1024);
  let heapVal = new Float64Array(1024);
  let heapAge = new Float64Array(1024);
  // Markers are all queued at age 0 (their ties fall as the heap has them, as in scikit-image); every
  // later pixel gets the next age, so equal values pop first in, first out.
  let age = 1;
  const less = (a: number, b: number) =>
    heapVal[a]! < heapVal[b]! || (heapVal[a] === heapVal[b] && heapAge[a]! < heapAge[b]!);
  const swap = (a: number, b: number) => {
    const i = heapIdx[a]!;
    heapIdx[a] = heapIdx[b]!;
    heapIdx[b] = i;
    const v = heapVal[a]!;
    heapVal[a] = heapVal[b]!;
    heapVal[b] = v;
    const g = heapAge[a]!;
    heapAge[a] = heapAge[b]!;
    heapAge[b] = g;
  };
  const push = (p: number, value: number, a: number) => {
    if (size === heapIdx.length) {
      const n = size * 2;
      const i2 = new Int32Array(n);
      i2.set(heapIdx);
      heapIdx = i2;
      const v2 = new Float64Array(n);
      v2.set(heapVal);
      heapVal = v2;
      const a2 = new Float64Array(n);
      a2.set(heapAge);
      heapAge = a2;
    }
    let k = size++;
    heapIdx[k] = p;
    heapVal[k] = value;
    heapAge[k] = a;
    while (k > 0) {
      const parent = (k - 1) >> 1;
      if (!less(k, parent)) break;
      swap(k, parent);
      k = parent;
    }
  };
  let popped = 0;
  const pop = (): number => {
    const top = heapIdx[0]!;
    popped = heapVal[0]!;
    size--;
    if (size > 0) {
      heapIdx[0] = heapIdx[size]!;
      heapVal[0] = heapVal[size]!;
      heapAge[0] = heapAge[size]!;
      let k = 0;
      for (;;) {
        const l = 2 * k + 1;
        const r = l + 1;
        let m = k;
        if (l < size && less(l, m)) m = l;
        if (r < size && less(r, m)) m = r;
        if (m === k) break;
        swap(k, m);
        k = m;
      }
    }
    return top;
  };
  for (let p = 0; p < h * w; p++)
    if (markers[p] && mask[p]) {
      out[p] = markers[p]!;
      push(p, image[p]!, 0);
    }
  while (size > 0) {
    const p = pop();
    const level = popped;
    const r = (p / w) | 0;
    const c = p - r * w;
    const visit = (q: number) => {
      if (!mask[q] || out[q]) return;
      out[q] = out[p]!;
      // A pixel costs at least what the pixel it is reached from cost (the flood never goes down).
      push(q, Math.max(image[q]!, level), ++age);
    };
    if (r > 0) visit(p - w);
    if (c > 0) visit(p - 1);
    if (c < w - 1) visit(p + 1);
    if (r < h - 1) visit(p + w);
  }
  return out;
}

/**
 * squidpy's watershed segmentation of a foreground mask: distance transform, 5 × 5 plateau maxima as
 * markers (4-connected groups), flood of −distance inside the mask. Returns labels 1… (0 background)
 * and the number of markers.
 */
export function watershedMask(mask: Uint8Array, h: number, w: number): { labels: Int32Array; count: number } {
  const distance = distanceTransformEdt(mask, h, w);
  const peaks = peakLocalMax(distance, mask, h, w, 5);
  const { labels: markers, count } = label4(peaks, h, w);
  const neg = new Float64Array(h * w);
  for (let i = 0; i < h * w; i++) neg[i] = -distance[i]!;
  return { labels: watershedFlood(neg, markers, mask, h, w), count };
}
