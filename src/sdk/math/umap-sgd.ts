/**
 * UMAP's stochastic gradient descent (umap-learn's `optimize_layout_euclidean`, `move_other`) shared
 * among threads, with a layout that does not depend on the thread count.
 *
 * The edges (in row order) are cut into a few blocks of contiguous head rows with like numbers of
 * samples (`sgdBlocks`: it depends on the graph only); each block owns its rows' positions. Within an
 * epoch a block reads its own rows live and every other row from a snapshot taken at the start of
 * the epoch, and a move of a row it does not own (an edge's tail) goes into the block's delta buffer,
 * which the owner adds at the end of the epoch, blocks in order. The threads take whole blocks and
 * meet at two barriers per epoch. Blocks only meet through the snapshot and the deltas, so which
 * thread runs a block, and how many threads there are, changes nothing: the same seed gives the same
 * layout, bit for bit, on any number of threads (one block is the plain sequential SGD). Rows of other
 * blocks are at most one epoch stale, as umap-learn's parallel mode is (where threads race instead).
 *
 * An edge's negative samples are all measured from the head's position after its attractive move,
 * and their (each clipped) gradients summed: the samples then do not wait on each other, which lets
 * the processor overlap them (the sequential chain sqrt → divide → move was most of a sample's time).
 * Both gradient coefficients come from one table read at the bits of d² (`coefTable`), with no square
 * root, power or division per sample.
 */
import { runKernelThreads } from "./row-threads.js";

/**
 * The coefficient tables are read at the float32 bits of a squared distance d²: its exponent and top
 * `COEF_BITS` mantissa bits pick an entry, the rest interpolates linearly to the next one (inside an
 * octave the mantissa is linear in d²). So neither step takes a square root, a power or a division:
 * those were most of a negative sample's time. 2^COEF_BITS entries per octave give a relative error
 * below 3e-4 (linear interpolation of powers of d² down to d^−3.6 over 1/64 of an octave), the same
 * at every distance in range (the distance table it replaces was within 1e-3 beyond d = 1 only).
 */
export const COEF_BITS = 6;
/** Smallest and one past the largest binary exponent of d² the tables cover (beyond: computed). */
export const COEF_MIN_EXP = -30;
export const COEF_MAX_EXP = 20;

/** Entries of a coefficient table (one per 2^−COEF_BITS of an octave, plus the end point). */
export const COEF_SIZE = (COEF_MAX_EXP - COEF_MIN_EXP) << COEF_BITS;

/**
 * The attractive and repulsive gradient coefficients of UMAP's curve 1 / (1 + a·d^(2b)) as functions
 * of d² (umap-learn's `optimize_layout_euclidean`):
 * attractive −2ab·d^(2(b−1)) / (1 + a·d^(2b)), repulsive 2γb / ((0.001 + d²)(1 + a·d^(2b))).
 */
export function attractiveCoeff(d2: number, a: number, b: number): number {
  const pb = Math.exp(b * Math.log(d2));
  return (-2 * a * b * pb) / (d2 * (a * pb + 1));
}

/** See {@link attractiveCoeff}. */
export function repulsiveCoeff(d2: number, a: number, b: number, gamma: number): number {
  const pb = Math.exp(b * Math.log(d2));
  return (2 * gamma * b) / ((0.001 + d2) * (a * pb + 1));
}

/**
 * Both coefficients at the start of every table cell (see `COEF_BITS`), interleaved: entry k holds
 * attractive at [2k] and repulsive at [2k + 1] (one cache line serves both reads of a cell). float32:
 * half the cache lines of float64 (at 200k cells, where a block's positions no longer fit a core's
 * cache, the float64 table made the SGD ~5% slower than the distance table before it; float32 ~4%
 * faster), and its rounding (6e-8) is far below the interpolation's error.
 */
export function coefTable(a: number, b: number, gamma: number): Float32Array {
  const out = new Float32Array(2 * (COEF_SIZE + 1));
  const f = new Float32Array(1);
  const bits = new Int32Array(f.buffer);
  const base = (COEF_MIN_EXP + 127) << COEF_BITS;
  for (let k = 0; k <= COEF_SIZE; k++) {
    bits[0] = (base + k) << (23 - COEF_BITS);
    const d2 = f[0]!;
    out[2 * k] = attractiveCoeff(d2, a, b);
    out[2 * k + 1] = repulsiveCoeff(d2, a, b, gamma);
  }
  return out;
}

/** Everything the threads of one SGD share (arrays on shared memory when there are several threads). */
export interface SgdShared {
  /** Nodes, dimensions, epochs. */
  readonly n: number;
  readonly dim: number;
  readonly nEpochs: number;
  readonly a: number;
  readonly b: number;
  readonly gamma: number;
  readonly initialAlpha: number;
  /** Negative samples per positive one. */
  readonly nsr: number;
  /**
   * Positions (n × dim row-major, updated in place); with B > 1 blocks then B views (block q's copy of
   * every position as the epoch began, its own rows moving live in it: one region per block keeps a
   * block's reads in its own cache-sized array, with no branch on whose row it is) and B delta regions
   * (block q's moves of rows it does not own; where a move goes is an offset computed without a branch,
   * since a branch per sample on a random row mispredicts half the time).
   */
  readonly P: Float32Array;
  /** The positions: the first n × dim values of `P`. */
  readonly Y: Float32Array;
  /** Blocks of rows (see the module comment). */
  readonly blocks: number;
  readonly head: Int32Array;
  readonly tail: Int32Array;
  readonly epochsPerSample: Float64Array;
  /** Block q owns rows rowStart[q]…rowStart[q+1]−1 and edges edgeStart[q]…edgeStart[q+1]−1. */
  readonly rowStart: Int32Array;
  readonly edgeStart: Int32Array;
  /** xorshift128 state per block (4 words each), for the negative samples. */
  readonly seeds: Int32Array;
  /** `coefTable(a, b, gamma)`. */
  readonly table: Float32Array;
  /** [0] barrier generation, [1] arrivals, [2] 0 = run / 1 = stop / 2 = a thread failed. */
  readonly ctrl: Int32Array;
}

/**
 * One thread's part of the SGD: blocks ⌊B·part/parts⌋ … ⌊B·(part+1)/parts⌋ − 1 of the B blocks (see
 * the module comment). Self-contained (its source text runs in the workers as is). `check` (part 0
 * only) says whether to stop; every part then returns at the next barrier. `progress` (part 0 only)
 * gets the fraction of epochs done.
 */
export function sgdPart(
  part: number,
  parts: number,
  s: SgdShared,
  check: (() => boolean) | null,
  progress: ((f: number) => void) | null,
): void {
  const { n, dim, nEpochs, a, b, gamma, initialAlpha, nsr, P, head, tail, table, ctrl } = s;
  const ND = n * dim;
  const eps = s.epochsPerSample;
  const B = s.blocks;
  const q0 = Math.floor((B * part) / parts);
  const q1 = Math.floor((B * (part + 1)) / parts);
  // This thread's rows and edges: its blocks' (contiguous).
  const R0 = s.rowStart[q0]!;
  const R1 = s.rowStart[q1]!;
  const E0 = s.edgeStart[q0]!;
  const E1 = s.edgeStart[q1]!;
  const GEN = 0;
  const ARRIVED = 1;
  const STATE = 2;
  const barrier = (): void => {
    if (parts === 1) return;
    const gen = Atomics.load(ctrl, GEN);
    if (Atomics.add(ctrl, ARRIVED, 1) === parts - 1) {
      Atomics.store(ctrl, ARRIVED, 0);
      Atomics.add(ctrl, GEN, 1);
      Atomics.notify(ctrl, GEN);
      return;
    }
    while (Atomics.load(ctrl, GEN) === gen) {
      Atomics.wait(ctrl, GEN, gen, 200);
      if (Atomics.load(ctrl, STATE) === 2) throw new Error("umap: another thread of the layout failed");
    }
  };
  // Per-edge schedules of this thread's edges (indexed from E0).
  const m = E1 - E0;
  const epochsPerNeg = new Float64Array(m);
  const nextNeg = new Float64Array(m);
  const nextSample = new Float64Array(m);
  for (let i = 0; i < m; i++) {
    const e = eps[E0 + i]!;
    epochsPerNeg[i] = e / nsr;
    nextNeg[i] = e / nsr;
    nextSample[i] = e;
  }
  // Each block's random stream, kept across epochs.
  const rngState = Int32Array.from(s.seeds.subarray(q0 * 4, q1 * 4));
  // The coefficient tables' layout (COEF_BITS, COEF_MIN_EXP, COEF_MAX_EXP; self-contained: no outside
  // references). An entry is picked by the float32 bits of d² shifted right by SHIFT, less LO.
  const SHIFT = 23 - 6;
  const LO = (-30 + 127) << 6;
  const SIZE = (20 - -30) << 6;
  const FRAC = 1 / (1 << SHIFT);
  const CELL = (1 << SHIFT) - 1;
  const f32 = new Float32Array(1);
  const bits32 = new Int32Array(f32.buffer);
  const twoAB = 2 * a * b;
  const twoGB = 2 * gamma * b;
  const INV_2_32 = 1 / 4294967296;
  const current = new Float64Array(dim);
  const grad = new Float64Array(dim);
  if (check?.()) Atomics.store(ctrl, STATE, 1);
  barrier();
  for (let epoch = 0; epoch < nEpochs; epoch++) {
    if (Atomics.load(ctrl, STATE) !== 0) return;
    if ((epoch & 7) === 0) progress?.(epoch / nEpochs);
    const alpha = initialAlpha * (1 - epoch / nEpochs);
    for (let q = q0; q < q1; q++) {
      // The block's view: every position as the epoch began, its own rows then moving live.
      const V = B > 1 ? (1 + q) * ND : 0;
      if (B > 1) P.copyWithin(V, 0, ND);
      const r0 = s.rowStart[q]!;
      const span = s.rowStart[q + 1]! - r0;
      // A move of a row outside the block (far = 1) goes to the block's deltas instead.
      const deltaAt = (1 + B + q) * ND - V;
      const st = (q - q0) * 4;
      let s0 = rngState[st]!;
      let s1 = rngState[st + 1]!;
      let s2 = rngState[st + 2]!;
      let s3 = rngState[st + 3]!;
      for (let e = s.edgeStart[q]!, eEnd = s.edgeStart[q + 1]!; e < eEnd; e++) {
        const i = e - E0;
        if (nextSample[i]! > epoch) continue;
        const j = head[e]!;
        const k = tail[e]!;
        const jo = V + j * dim;
        const ko = V + k * dim;
        const kw = ko + +((k - r0) >>> 0 >= span) * deltaAt;
        if (dim === 2) {
          let cx = P[jo]!;
          let cy = P[jo + 1]!;
          const dx = cx - P[ko]!;
          const dy = cy - P[ko + 1]!;
          const d2 = dx * dx + dy * dy;
          if (d2 > 0) {
            f32[0] = d2;
            const u = bits32[0]!;
            const w = (u >> SHIFT) - LO;
            let coeff: number;
            if (w >= 0 && w < SIZE) {
              const c0 = table[2 * w]!;
              coeff = c0 + (u & CELL) * FRAC * (table[2 * w + 2]! - c0);
            } else {
              const pb = Math.exp(b * Math.log(d2));
              coeff = (-twoAB * pb) / (d2 * (a * pb + 1));
            }
            let gx = coeff * dx;
            let gy = coeff * dy;
            gx = (gx > 4 ? 4 : gx < -4 ? -4 : gx) * alpha;
            gy = (gy > 4 ? 4 : gy < -4 ? -4 : gy) * alpha;
            cx += gx;
            cy += gy;
            P[kw] = P[kw]! - gx;
            P[kw + 1] = P[kw + 1]! - gy;
          }
          nextSample[i]! += eps[e];
          const nNeg = Math.floor((epoch - nextNeg[i]!) / epochsPerNeg[i]!);
          if (nNeg > 0) {
            let sx = 0;
            let sy = 0;
            for (let p = 0; p < nNeg; p++) {
              let t = s3;
              const u = s0;
              s3 = s2;
              s2 = s1;
              s1 = u;
              t ^= t << 11;
              t ^= t >>> 8;
              s0 = t ^ u ^ (u >>> 19);
              const o = ((s0 >>> 0) * n * INV_2_32) | 0;
              if (o === j) continue; // a node is never repelled from itself
              const oi = V + 2 * o;
              const ex = cx - P[oi]!;
              const ey = cy - P[oi + 1]!;
              const e2 = ex * ex + ey * ey;
              if (e2 > 0) {
                f32[0] = e2;
                const u = bits32[0]!;
                const w = (u >> SHIFT) - LO;
                let coeff: number;
                if (w >= 0 && w < SIZE) {
                  const c0 = table[2 * w + 1]!;
                  coeff = c0 + (u & CELL) * FRAC * (table[2 * w + 3]! - c0);
                } else {
                  const pb = Math.exp(b * Math.log(e2));
                  coeff = twoGB / ((0.001 + e2) * (a * pb + 1));
                }
                const gx = coeff * ex;
                const gy = coeff * ey;
                sx += gx > 4 ? 4 : gx < -4 ? -4 : gx;
                sy += gy > 4 ? 4 : gy < -4 ? -4 : gy;
              }
            }
            cx += sx * alpha;
            cy += sy * alpha;
            nextNeg[i]! += nNeg * epochsPerNeg[i]!;
          }
          P[jo] = cx;
          P[jo + 1] = cy;
          continue;
        }
        // Any other dimension.
        for (let d = 0; d < dim; d++) current[d] = P[jo + d]!;
        let d2 = 0;
        for (let d = 0; d < dim; d++) {
          const diff = current[d]! - P[ko + d]!;
          d2 += diff * diff;
        }
        if (d2 > 0) {
          f32[0] = d2;
          const u = bits32[0]!;
          const w = (u >> SHIFT) - LO;
          let coeff: number;
          if (w >= 0 && w < SIZE) {
            const c0 = table[2 * w]!;
            coeff = c0 + (u & CELL) * FRAC * (table[2 * w + 2]! - c0);
          } else {
            const pb = Math.exp(b * Math.log(d2));
            coeff = (-twoAB * pb) / (d2 * (a * pb + 1));
          }
          for (let d = 0; d < dim; d++) {
            let g = coeff * (current[d]! - P[ko + d]!);
            g = (g > 4 ? 4 : g < -4 ? -4 : g) * alpha;
            current[d]! += g;
            P[kw + d] = P[kw + d]! - g;
          }
        }
        nextSample[i]! += eps[e];
        const nNeg = Math.floor((epoch - nextNeg[i]!) / epochsPerNeg[i]!);
        if (nNeg > 0) {
          grad.fill(0);
          for (let p = 0; p < nNeg; p++) {
            let t = s3;
            const u = s0;
            s3 = s2;
            s2 = s1;
            s1 = u;
            t ^= t << 11;
            t ^= t >>> 8;
            s0 = t ^ u ^ (u >>> 19);
            const o = ((s0 >>> 0) * n * INV_2_32) | 0;
            if (o === j) continue;
            const oo = V + o * dim;
            let e2 = 0;
            for (let d = 0; d < dim; d++) {
              const diff = current[d]! - P[oo + d]!;
              e2 += diff * diff;
            }
            if (e2 > 0) {
              f32[0] = e2;
              const u = bits32[0]!;
              const w = (u >> SHIFT) - LO;
              let coeff: number;
              if (w >= 0 && w < SIZE) {
                const c0 = table[2 * w + 1]!;
                coeff = c0 + (u & CELL) * FRAC * (table[2 * w + 3]! - c0);
              } else {
                const pb = Math.exp(b * Math.log(e2));
                coeff = twoGB / ((0.001 + e2) * (a * pb + 1));
              }
              for (let d = 0; d < dim; d++) {
                const g = coeff * (current[d]! - P[oo + d]!);
                grad[d]! += g > 4 ? 4 : g < -4 ? -4 : g;
              }
            }
          }
          for (let d = 0; d < dim; d++) current[d]! += grad[d]! * alpha;
          nextNeg[i]! += nNeg * epochsPerNeg[i]!;
        }
        for (let d = 0; d < dim; d++) P[jo + d] = current[d]!;
      }
      rngState[st] = s0;
      rngState[st + 1] = s1;
      rngState[st + 2] = s2;
      rngState[st + 3] = s3;
    }
    if (B > 1) {
      barrier();
      // This thread's rows: each from its block's view, plus every block's moves of it, blocks in
      // order (a block never moves its own rows through the deltas, so its deltas hold zeros there).
      for (let q = q0; q < q1; q++) {
        const V = (1 + q) * ND;
        for (let k = s.rowStart[q]! * dim, end = s.rowStart[q + 1]! * dim; k < end; k++) P[k] = P[V + k]!;
      }
      for (let q = 0; q < B; q++) {
        const base = (1 + B + q) * ND;
        for (let k = R0 * dim, end = R1 * dim; k < end; k++) {
          const v = P[base + k]!;
          if (v !== 0) {
            P[k] = P[k]! + v;
            P[base + k] = 0;
          }
        }
      }
    }
    if ((epoch & 7) === 7 && check?.()) Atomics.store(ctrl, STATE, 1);
    // Every row complete (and the stop flag seen alike) before the next epoch's views.
    barrier();
  }
  progress?.(1);
}

/** Blocks of an SGD's rows: up to 4, one per 4,000,000 samples (a property of the graph, not of the machine). */
export function sgdBlocks(samples: number, n: number): number {
  return Math.max(1, Math.min(4, n, Math.floor(samples / 4_000_000)));
}

/** Inputs of {@link optimizeLayout}. */
export interface SgdInput {
  readonly a: number;
  readonly b: number;
  /** Weight of the repulsive samples (default 1). */
  readonly gamma?: number;
  /** Initial learning rate (default 1). */
  readonly initialAlpha?: number;
  /** Repulsive samples per attractive one (default 5). */
  readonly negativeSampleRate?: number;
  /** xorshift128 seed words: 4 per thread (drawn from the job's random stream). */
  readonly seed: (word: number) => number;
  readonly signal?: AbortSignal;
  readonly onProgress?: (fraction: number) => void;
  /** Samples (attractive and negative) an extra thread needs to be used (default 2,000,000). */
  readonly minSamplesPerThread?: number;
  /** Blocks of rows (default `sgdBlocks` of the run's samples); the layout depends on it, not on threads. */
  readonly blocks?: number;
}

/** Fewer samples than this per extra thread and a worker's start costs more than it saves. */
const MIN_SAMPLES_PER_THREAD = 2_000_000;

function sharedOf<T extends Float32Array | Int32Array>(
  Ctor: new (b: SharedArrayBuffer | ArrayBuffer, o: number, l: number) => T,
  length: number,
  bytes: number,
  onShared: boolean,
): T {
  const buf = onShared ? new SharedArrayBuffer(length * bytes) : new ArrayBuffer(length * bytes);
  return new Ctor(buf, 0, length);
}

/**
 * Cut rows 0…n−1 (edges in row order, `head` sorted) into `blocks` ranges of about equal samples over
 * the run (an edge is sampled nEpochs / epochsPerSample times). Cuts fall between rows.
 */
function partition(
  head: Int32Array,
  eps: Float64Array,
  n: number,
  nEpochs: number,
  blocks: number,
): { rowStart: Int32Array; edgeStart: Int32Array } {
  const rowStart = new Int32Array(blocks + 1);
  const edgeStart = new Int32Array(blocks + 1);
  let total = 0;
  for (let e = 0; e < eps.length; e++) if (eps[e]! > 0) total += nEpochs / eps[e]!;
  let acc = 0;
  let p = 1;
  for (let e = 0; e < eps.length && p < blocks; e++) {
    if (eps[e]! > 0) acc += nEpochs / eps[e]!;
    if (acc >= (total * p) / blocks && (e + 1 === eps.length || head[e + 1] !== head[e])) {
      edgeStart[p] = e + 1;
      rowStart[p] = e + 1 < head.length ? head[e + 1]! : n;
      p++;
    }
  }
  for (; p <= blocks; p++) {
    edgeStart[p] = eps.length;
    rowStart[p] = n;
  }
  return { rowStart, edgeStart };
}

/** The blocks of a run: asked for (1…n), else `sgdBlocks`. */
function blockCount(opts: SgdInput, samples: number, n: number): number {
  if (opts.blocks === undefined) return sgdBlocks(samples, n);
  return Math.max(1, Math.min(Math.max(1, n), Math.floor(opts.blocks)));
}

/** The sample count of a run (attractive samples, each with its share of negative ones). */
function sampleCount(eps: Float64Array, nEpochs: number, nsr: number): number {
  let total = 0;
  for (let e = 0; e < eps.length; e++) if (eps[e]! > 0) total += nEpochs / eps[e]!;
  return total * (1 + nsr);
}

/** Everything an SGD run needs but the threads, on shared memory when `shared`. */
export function sgdSetup(
  embedding: Float32Array,
  dim: number,
  head: Int32Array,
  tail: Int32Array,
  epochsPerSample: Float64Array,
  nEpochs: number,
  opts: SgdInput,
  shared: boolean,
): SgdShared {
  const n = embedding.length / dim;
  const nsr = opts.negativeSampleRate ?? 5;
  const blocks = blockCount(opts, sampleCount(epochsPerSample, nEpochs, nsr), n);
  const copy = <T extends Float32Array | Float64Array | Int32Array>(src: T): T => {
    if (!shared || src.buffer instanceof SharedArrayBuffer) return src;
    const Ctor = src.constructor as new (b: SharedArrayBuffer, o: number, l: number) => T;
    const out = new Ctor(new SharedArrayBuffer(src.byteLength), 0, src.length);
    out.set(src as never);
    return out;
  };
  const { rowStart, edgeStart } = partition(head, epochsPerSample, n, nEpochs, blocks);
  // Positions, then (several blocks) one view and one delta region per block.
  const P = sharedOf(Float32Array, (blocks > 1 ? 1 + 2 * blocks : 1) * n * dim, 4, shared);
  P.set(embedding);
  const seeds = new Int32Array(blocks * 4);
  for (let w = 0; w < seeds.length; w++) seeds[w] = opts.seed(w) | 0;
  // xorshift128 must not start at all zeros.
  for (let q = 0; q < blocks; q++) seeds[q * 4] = seeds[q * 4]! | 1;
  return {
    n,
    dim,
    nEpochs,
    a: opts.a,
    b: opts.b,
    gamma: opts.gamma ?? 1,
    initialAlpha: opts.initialAlpha ?? 1,
    nsr,
    P,
    Y: P.subarray(0, n * dim),
    blocks,
    head: copy(head),
    tail: copy(tail),
    epochsPerSample: copy(epochsPerSample),
    rowStart,
    edgeStart,
    seeds,
    table: coefTable(opts.a, opts.b, opts.gamma ?? 1),
    ctrl: sharedOf(Int32Array, 3, 4, shared),
  };
}

/**
 * SGD of `embedding` (n × dim, row-major, updated in place) over the edges head[e] → tail[e] (in row
 * order), on up to `threads` threads (see the module comment: the layout does not depend on the
 * thread count). Edge e is sampled every `epochsPerSample[e]` epochs (≤ 0: never).
 */
export async function optimizeLayout(
  embedding: Float32Array,
  dim: number,
  head: Int32Array,
  tail: Int32Array,
  epochsPerSample: Float64Array,
  nEpochs: number,
  threads: number,
  opts: SgdInput,
): Promise<void> {
  const n = embedding.length / dim;
  const samples = sampleCount(epochsPerSample, nEpochs, opts.negativeSampleRate ?? 5);
  const blocks = blockCount(opts, samples, n);
  const perThread = Math.max(1, opts.minSamplesPerThread ?? MIN_SAMPLES_PER_THREAD);
  const parts =
    typeof SharedArrayBuffer !== "undefined"
      ? Math.max(1, Math.min(threads, blocks, Math.floor(samples / perThread)))
      : 1;
  const s = sgdSetup(embedding, dim, head, tail, epochsPerSample, nEpochs, opts, parts > 1);
  const check = () => opts.signal?.aborted ?? false;
  const progress = opts.onProgress ?? null;
  if (parts === 1) sgdPart(0, 1, s, check, progress);
  else
    await runKernelThreads(
      sgdPart,
      parts,
      (p) => (p === 0 ? [0, parts, s, check, progress] : [p, parts, s, null, null]),
      opts.signal,
      { words: s.ctrl, state: 2, wake: 0 },
    );
  opts.signal?.throwIfAborted();
  embedding.set(s.Y);
}
