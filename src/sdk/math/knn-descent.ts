/**
 * Approximate kNN by a random-projection forest and NN-descent (Dong et al. 2011, as pynndescent
 * does it), shared among threads and computed with WebAssembly SIMD distances.
 *
 * The whole search is one self-contained kernel (`nnDescentPart`) that every thread runs on shared
 * memory, meeting at barriers between phases:
 *
 * 1. Forest: each thread builds its share of the trees (tree t from its own seed), keeping the leaves.
 * 2. Leaf joins: every pair inside a leaf is a candidate neighbour.
 * 3. NN-descent rounds: each row samples new/old candidates among its neighbours and reverse
 *    neighbours (by a hashed priority), then every pair in a row's candidate lists is compared.
 *
 * Comparing pairs is split by contiguous ranges of work among threads, which write the pairs worth
 * offering into their own buffers; then each thread offers them, in the canonical order, to the heaps
 * of the rows it owns (row p belongs to thread p mod parts). A pair left out because a heap's threshold
 * was stale would have been refused anyway, so the graph is exactly what one thread offering every
 * pair in order would build: the same seed gives the same graph whatever the thread count.
 *
 * The rows are searched in a Z-order of their leading columns (`locality-order.ts`), copied so into
 * the SIMD memory: a row's candidates then mostly sit near it in memory, which matters more than the
 * arithmetic on machines with slow memory. The graph is mapped back to the caller's row order.
 */
import { heapsToGraph, type KnnGraph, type KnnMetric, nonFinite } from "./knn-graph.js";
import { mortonOrder } from "./locality-order.js";
import type { Rng } from "./rng.js";
import { runKernelThreads } from "./row-threads.js";
import { isSharedMemory, paddedWidth, simdMemory, simdModuleBytes } from "./simd.js";

/** Options of the NN-descent search. */
export interface KnnDescentOptions {
  readonly metric?: KnnMetric;
  readonly signal?: AbortSignal;
  readonly progress?: (f: number) => void;
  /** Seeds the forest's splits and the candidate sampling. */
  readonly rng: Rng;
  /** Random-projection trees for the initial graph (default min(32, 5 + round(√n / 20))). */
  readonly nTrees?: number;
  /** Largest leaf of a tree (default max(24, 2k)). */
  readonly leafSize?: number;
  /** NN-descent rounds at most (default max(5, round(log2 n))). */
  readonly maxIterations?: number;
  /** Candidates sampled per point and round (default min(60, max(30, k))). */
  readonly maxCandidates?: number;
  /** Stop when a round makes fewer than delta·n·k updates (default 0.001). */
  readonly delta?: number;
  /** Threads to share the search among (default 1; more only from `MIN_ROWS_PER_THREAD` rows each). */
  readonly threads?: number;
}

/** Fewer rows than this per thread and starting a worker (~30 ms) costs more than it saves. */
export const MIN_ROWS_PER_THREAD = 10000;

/** Sizes and settings every thread reads (plain numbers, cloned to the workers). */
interface DescentConfig {
  n: number;
  /** Padded row width in floats (a multiple of 4). */
  dp: number;
  /** Heap size: k − 1 neighbours besides the row itself. */
  h: number;
  /** 0 = squared euclidean, 1 = L1. */
  metric: number;
  seed: number;
  nTrees: number;
  leafSize: number;
  maxIter: number;
  maxCand: number;
  /** Stop when a round's successful offers are at most this. */
  stopUpdates: number;
  /** Pair buffer capacity per thread. */
  cap: number;
  /** Rows (NN-descent) per round of generate-then-offer. */
  chunkRows: number;
  /** Byte offset of the per-thread scratch blocks in the memory. */
  scratch: number;
  /** Bytes of one thread's scratch block: a split normal, then a row list and its distances. */
  scratchBytes: number;
  /** Entries of a scratch row list (the most rows one local join compares). */
  listCap: number;
}

/** The shared state of one search (every array on shared memory when threads > 1). */
interface DescentShared {
  cfg: DescentConfig;
  wasm: Uint8Array<ArrayBuffer>;
  memory: WebAssembly.Memory;
  /** Barrier words and per-thread round results. */
  ctrl: Int32Array;
  /** Successful offers per thread, cumulative. */
  stats: Float64Array;
  hi: Int32Array;
  hd: Float32Array;
  flag: Uint8Array;
  perm: Int32Array;
  /** 1 where a leaf starts, per tree position (tree t's positions at t·n…). */
  leafStart: Uint8Array;
  newIdx: Int32Array;
  newPri: Uint32Array;
  newCnt: Int32Array;
  oldIdx: Int32Array;
  oldPri: Uint32Array;
  oldCnt: Int32Array;
  bufPairs: Int32Array;
  bufDist: Float32Array;
}

/**
 * One thread's part of the search. Self-contained (its source text runs in the workers as is): no
 * outside references, the distances come from the WebAssembly module in `s.wasm`. `check` (part 0
 * only) says whether to stop early; every part then returns at the next barrier. `progress` (part 0
 * only) gets the fraction done.
 */
export function nnDescentPart(
  part: number,
  parts: number,
  s: DescentShared,
  check: (() => boolean) | null,
  progress: ((f: number) => void) | null,
): void {
  const { n, dp, h, metric, seed, nTrees, leafSize, maxIter, maxCand, stopUpdates, cap } = s.cfg;
  const { ctrl, stats, hi, hd, flag, perm, leafStart, bufPairs, bufDist } = s;
  const { newIdx, newPri, newCnt, oldIdx, oldPri, oldCnt } = s;
  const instance = new WebAssembly.Instance(new WebAssembly.Module(s.wasm), { env: { memory: s.memory } });
  const kernels = instance.exports as unknown as {
    sqdist(a: number, b: number, nvec: number): number;
    l1dist(a: number, b: number, nvec: number): number;
    dot(a: number, b: number, nvec: number): number;
    sqdistList(a: number, list: number, count: number, out: number, nvec: number, rowBytes: number): void;
    l1distList(a: number, list: number, count: number, out: number, nvec: number, rowBytes: number): void;
  };
  const distFn = metric === 1 ? kernels.l1dist : kernels.sqdist;
  const distList = metric === 1 ? kernels.l1distList : kernels.sqdistList;
  const dot = kernels.dot;
  const rowBytes = dp * 4;
  const nvec = dp >> 2;
  const dist = (a: number, b: number): number => distFn(a * rowBytes, b * rowBytes, nvec);
  const X = new Float32Array(s.memory.buffer, 0, n * dp);
  // This thread's scratch: the split normal, then the rows of one local join and their distances.
  const normalAt = s.cfg.scratch + part * s.cfg.scratchBytes;
  const listAt = normalAt + rowBytes;
  const outAt = listAt + s.cfg.listCap * 4;
  const list = new Int32Array(s.memory.buffer, listAt, s.cfg.listCap);
  const listDist = new Float32Array(s.memory.buffer, outAt, s.cfg.listCap);

  // ctrl: [0] barrier generation, [1] arrivals, [2] 0 = run / 1 = stop / 2 = a thread failed,
  // then per thread: where its round stopped, where its range ended, pairs it wrote.
  const GEN = 0;
  const ARRIVED = 1;
  const STATE = 2;
  const STOP_AT = 3;
  const END_AT = 3 + parts;
  const COUNT = 3 + 2 * parts;

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
      if (Atomics.load(ctrl, STATE) === 2) throw new Error("knn: another thread of the search failed");
    }
  };
  /** Meet the other threads; true when the search is to stop (part 0 saw `check()`). */
  const sync = (): boolean => {
    if (check?.()) Atomics.store(ctrl, STATE, 1);
    barrier();
    return Atomics.load(ctrl, STATE) !== 0;
  };

  // Seeded 32-bit hashing (murmur3's finaliser) for every random choice: a choice depends on what it
  // is for (tree, row, round), never on which thread makes it or when.
  const fmix = (v: number): number => {
    let x = v | 0;
    x = Math.imul(x ^ (x >>> 16), 0x85ebca6b);
    x = Math.imul(x ^ (x >>> 13), 0xc2b2ae35);
    return (x ^ (x >>> 16)) >>> 0;
  };
  let rngState = 0;
  /** Next uniform [0, 1) of the stream started by `rngState = fmix(...)` (mulberry32). */
  const next = (): number => {
    rngState = (rngState + 0x6d2b79f5) | 0;
    let t = Math.imul(rngState ^ (rngState >>> 15), 1 | rngState);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const randInt = (m: number): number => Math.floor(next() * m);

  /** Offer q as a neighbour of p (a max-heap of size h); 1 if it entered. */
  const push = (p: number, q: number, dd: number): number => {
    const base = p * h;
    if (dd >= hd[base]) return 0;
    for (let j = 0; j < h; j++) if (hi[base + j] === q) return 0;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= h) break;
      const r = l + 1;
      const c = r < h && hd[base + r] > hd[base + l] ? r : l;
      if (hd[base + c] <= dd) break;
      hi[base + i] = hi[base + c];
      hd[base + i] = hd[base + c];
      flag[base + i] = flag[base + c];
      i = c;
    }
    hi[base + i] = q;
    hd[base + i] = dd;
    flag[base + i] = 1;
    return 1;
  };

  /** Offer the pairs of thread t's buffer (count c) to the heaps this thread owns. */
  const offer = (t: number, c: number): number => {
    let made = 0;
    const o = t * cap;
    for (let e = o; e < o + c; e++) {
      const a = bufPairs[2 * e];
      const b = bufPairs[2 * e + 1];
      const dd = bufDist[e];
      if (a % parts === part) made += push(a, b, dd);
      if (b % parts === part) made += push(b, a, dd);
    }
    return made;
  };

  /**
   * Generate-then-offer over units 0…U−1 (leaves or rows) in rounds of `chunk` units: each thread
   * writes the pairs of its contiguous share of a round (stopping early if its buffer would overflow),
   * then all offer the complete prefix in order; the next round starts where the prefix ended.
   * `gen(u, at)` writes unit u's pairs from buffer slot `at` and returns the next free slot; `worst(u)`
   * bounds how many it may write. False when the search is to stop.
   */
  const rounds = (
    U: number,
    chunk: number,
    worst: (u: number) => number,
    gen: (u: number, at: number) => number,
    onProgress: (done: number) => void,
  ): boolean => {
    let pos = 0;
    const o = part * cap;
    while (pos < U) {
      const end = Math.min(U, pos + chunk);
      const span = end - pos;
      const my0 = pos + Math.floor((span * part) / parts);
      const my1 = pos + Math.floor((span * (part + 1)) / parts);
      let at = o;
      let u = my0;
      for (; u < my1; u++) {
        if (at - o + worst(u) > cap) break;
        at = gen(u, at);
      }
      Atomics.store(ctrl, STOP_AT + part, u);
      Atomics.store(ctrl, END_AT + part, my1);
      Atomics.store(ctrl, COUNT + part, at - o);
      if (sync()) return false;
      let nextPos = end;
      let made = 0;
      for (let t = 0; t < parts; t++) {
        made += offer(t, Atomics.load(ctrl, COUNT + t));
        const stop = Atomics.load(ctrl, STOP_AT + t);
        if (stop < Atomics.load(ctrl, END_AT + t)) {
          nextPos = stop;
          break;
        }
      }
      stats[part] += made;
      if (sync()) return false;
      pos = nextPos;
      onProgress(pos);
    }
    return true;
  };

  /**
   * The local join of the rows in `list[0…total)`: each of the first `nA` against every row after it
   * (one SIMD call per row), writing from slot `at0` the pairs that may enter either heap; returns the
   * next free slot.
   */
  const joinList = (nA: number, total: number, at0: number): number => {
    let at = at0;
    for (let a = 0; a < nA; a++) {
      const count = total - a - 1;
      if (count <= 0) break;
      const pa = list[a];
      distList(pa * rowBytes, listAt + (a + 1) * 4, count, outAt, nvec, rowBytes);
      const ta = hd[pa * h];
      for (let j = 0; j < count; j++) {
        const pb = list[a + 1 + j];
        const dd = listDist[j];
        if (pb !== pa && (dd < ta || dd < hd[pb * h])) {
          bufPairs[2 * at] = pa;
          bufPairs[2 * at + 1] = pb;
          bufDist[at] = dd;
          at++;
        }
      }
    }
    return at;
  };

  try {
    // 1. Forest: tree t splits by the hyperplane halfway between two random points of a node.
    const side = new Uint8Array(n);
    const tmp = new Int32Array(n);
    const normal = new Float32Array(s.memory.buffer, normalAt, dp);
    const stack: number[] = [];
    for (let t = part; t < nTrees; t += parts) {
      rngState = fmix(seed ^ fmix(t + 0x1000));
      const pt = t * n;
      for (let i = 0; i < n; i++) perm[pt + i] = i;
      stack.push(0, n);
      while (stack.length > 0) {
        const hiEnd = stack.pop() as number;
        const lo = stack.pop() as number;
        const size = hiEnd - lo;
        if (size <= leafSize) {
          leafStart[pt + lo] = 1;
          continue;
        }
        const ia = perm[pt + lo + randInt(size)];
        let ib = perm[pt + lo + randInt(size)];
        for (let tries = 0; ib === ia && tries < 4; tries++) ib = perm[pt + lo + randInt(size)];
        let offset = 0;
        for (let u = 0; u < dp; u++) {
          const a = X[ia * dp + u];
          const b = X[ib * dp + u];
          normal[u] = a - b;
          offset -= (a - b) * (a + b) * 0.5;
        }
        let left = 0;
        for (let i = lo; i < hiEnd; i++) {
          const v = dot(normalAt, perm[pt + i] * rowBytes, nvec) + offset;
          const goLeft = v > 0 || (v === 0 && next() < 0.5);
          side[i - lo] = goLeft ? 1 : 0;
          if (goLeft) left++;
        }
        if (left === 0 || left === size) {
          // Degenerate split (duplicates): halve at random.
          left = size >> 1;
          for (let i = 0; i < size; i++) side[i] = i < left ? 1 : 0;
          for (let i = size - 1; i > 0; i--) {
            const j = randInt(i + 1);
            const v = side[i];
            side[i] = side[j];
            side[j] = v;
          }
        }
        // Stable partition of perm[lo, hiEnd) by side.
        for (let i = 0; i < size; i++) tmp[i] = perm[pt + lo + i];
        let wl = pt + lo;
        let wr = pt + lo + left;
        for (let i = 0; i < size; i++) {
          if (side[i]) perm[wl++] = tmp[i];
          else perm[wr++] = tmp[i];
        }
        stack.push(lo + left, hiEnd, lo, lo + left);
      }
      if (part === 0) progress?.((0.15 * (t + 1)) / nTrees);
    }
    if (sync()) return;

    // 2. Leaf joins, leaves in tree order: leaf u is perm[starts[u] … starts[u + 1]) over the trees'
    // concatenated positions (every tree starts with a leaf, so a leaf never spans two trees).
    const total = nTrees * n;
    let nUnits = 0;
    for (let i = 0; i < total; i++) nUnits += leafStart[i];
    const starts = new Int32Array(nUnits + 1);
    for (let i = 0, u = 0; i < total; i++) if (leafStart[i]) starts[u++] = i;
    starts[nUnits] = total;
    const leafWorst = (u: number): number => {
      const size = starts[u + 1] - starts[u];
      return (size * (size - 1)) / 2;
    };
    const leafGen = (u: number, at0: number): number => {
      const a0 = starts[u];
      const size = starts[u + 1] - a0;
      for (let i = 0; i < size; i++) list[i] = perm[a0 + i];
      return joinList(size - 1, size, at0);
    };
    const leafChunk = Math.max(parts, Math.floor(cap / ((leafSize * (leafSize - 1)) / 2 + 1)) * parts);
    const leavesDone = rounds(nUnits, leafChunk, leafWorst, leafGen, (done) => {
      if (part === 0) progress?.(0.15 + (0.15 * done) / nUnits);
    });
    if (!leavesDone) return;

    // Rows whose heap is not full yet (tiny leaves, duplicates): random fill, by the owner.
    for (let p = part; p < n; p += parts) {
      rngState = fmix(seed ^ fmix(p + 0x2000000));
      for (let guard = 0; hi[p * h] === -1 && guard < 4 * h + 10; guard++) {
        const q = randInt(n);
        if (q !== p) push(p, q, dist(p, q));
      }
    }
    if (sync()) return;

    // 3. NN-descent rounds.
    /** Add q to p's candidates: a bounded max-heap on priority keeps the smallest (a uniform sample). */
    const addCand = (
      idx: Int32Array,
      pri: Uint32Array,
      cnt: Int32Array,
      p: number,
      q: number,
      r: number,
    ): void => {
      const base = p * maxCand;
      const c = cnt[p];
      for (let j = 0; j < c; j++) if (idx[base + j] === q) return;
      if (c < maxCand) {
        let i = c;
        while (i > 0) {
          const parent = (i - 1) >> 1;
          if (pri[base + parent] >= r) break;
          idx[base + i] = idx[base + parent];
          pri[base + i] = pri[base + parent];
          i = parent;
        }
        idx[base + i] = q;
        pri[base + i] = r;
        cnt[p] = c + 1;
        return;
      }
      if (r >= pri[base]) return;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        if (l >= maxCand) break;
        const rr = l + 1;
        const ch = rr < maxCand && pri[base + rr] > pri[base + l] ? rr : l;
        if (pri[base + ch] <= r) break;
        idx[base + i] = idx[base + ch];
        pri[base + i] = pri[base + ch];
        i = ch;
      }
      idx[base + i] = q;
      pri[base + i] = r;
    };
    const rowWorst = (p: number): number => {
      const nc = newCnt[p];
      return (nc * (nc - 1)) / 2 + nc * oldCnt[p];
    };
    const rowGen = (p: number, at0: number): number => {
      // New candidates first, then old: each new one meets the new ones after it and every old one.
      const cb = p * maxCand;
      const nc = newCnt[p];
      const oc = oldCnt[p];
      for (let a = 0; a < nc; a++) list[a] = newIdx[cb + a];
      for (let b = 0; b < oc; b++) list[nc + b] = oldIdx[cb + b];
      return joinList(nc, nc + oc, at0);
    };
    for (let iter = 0; iter < maxIter; iter++) {
      for (let p = part; p < n; p += parts) {
        newCnt[p] = 0;
        oldCnt[p] = 0;
      }
      // Every thread reads the whole graph, keeping the candidates of the rows it owns.
      const iterKey = fmix(seed ^ fmix(iter + 0x3000000));
      for (let p = 0; p < n; p++) {
        const base = p * h;
        const ownP = p % parts === part;
        for (let j = 0; j < h; j++) {
          const q = hi[base + j];
          if (q < 0) continue;
          const ownQ = q % parts === part;
          if (!ownP && !ownQ) continue;
          const r = fmix(iterKey ^ fmix(p ^ Math.imul(q, 0x9e3779b1)));
          if (flag[base + j]) {
            if (ownP) addCand(newIdx, newPri, newCnt, p, q, r);
            if (ownQ) addCand(newIdx, newPri, newCnt, q, p, r);
          } else {
            if (ownP) addCand(oldIdx, oldPri, oldCnt, p, q, r);
            if (ownQ) addCand(oldIdx, oldPri, oldCnt, q, p, r);
          }
        }
      }
      if (sync()) return;
      // Entries sampled as new candidates are old from now on.
      for (let p = part; p < n; p += parts) {
        const base = p * h;
        const cb = p * maxCand;
        const c = newCnt[p];
        for (let j = 0; j < h; j++) {
          if (!flag[base + j]) continue;
          const q = hi[base + j];
          for (let t = 0; t < c; t++) {
            if (newIdx[cb + t] === q) {
              flag[base + j] = 0;
              break;
            }
          }
        }
      }
      const before = sumStats();
      if (sync()) return;
      const ok = rounds(n, s.cfg.chunkRows, rowWorst, rowGen, (done) => {
        if (part === 0) progress?.(0.3 + (0.7 * (iter + done / n)) / maxIter);
      });
      if (!ok) return;
      // Every thread reads the same totals after the round's last barrier.
      if (sumStats() - before <= stopUpdates) break;
      if (sync()) return;
    }
  } catch (e) {
    Atomics.store(ctrl, STATE, 2);
    Atomics.notify(ctrl, GEN);
    throw e;
  }

  function sumStats(): number {
    let total = 0;
    for (let t = 0; t < parts; t++) total += stats[t];
    return total;
  }
}

/** Allocate an array on shared memory when `shared`, else on a plain buffer. */
function alloc<T>(Ctor: new (b: ArrayBufferLike) => T, bytes: number, shared: boolean): T {
  return new Ctor(shared ? new SharedArrayBuffer(bytes) : new ArrayBuffer(bytes));
}

/**
 * Copy the rows into a SIMD memory in `order` (row order[r] at position r), padded to whole vectors;
 * for cosine, as unit rows (the search then compares ‖a − b‖² / 2 = 1 − cos θ). Also reserves
 * `scratchBytes` per thread after them.
 */
function loadRows(
  data: Float32Array,
  n: number,
  d: number,
  metric: KnnMetric,
  order: Int32Array,
  parts: number,
  scratchBytes: number,
  shared: boolean,
) {
  const dp = paddedWidth(d);
  const memory = simdMemory(n * dp * 4 + parts * scratchBytes, shared);
  const x = new Float32Array(memory.buffer, 0, n * dp);
  for (let r = 0; r < n; r++) {
    const i = order[r];
    let scale = 1;
    if (metric === "cosine") {
      let s = 0;
      for (let t = 0; t < d; t++) s += data[i * d + t] * data[i * d + t];
      scale = s > 0 ? 1 / Math.sqrt(s) : 0;
    }
    for (let t = 0; t < d; t++) {
      const v = data[i * d + t];
      // Checked here, in the one pass that reads every value (see `assertFinite`).
      if (!Number.isFinite(v)) throw nonFinite(v, i, t);
      x[r * dp + t] = v * scale;
    }
  }
  return { memory, dp };
}

/** How a metric's searched value maps to the reported distance. */
function finisher(metric: KnnMetric): (v: number) => number {
  if (metric === "cosine") return (v) => v / 2;
  if (metric === "manhattan") return (v) => v;
  if (metric === "euclidean") return (v) => Math.sqrt(v);
  throw new Error(`knn: unknown metric "${metric as string}"`);
}

/** Set up the shared state of a search, and the order its rows are in (see `loadRows`). */
function prepareDescent(
  data: Float32Array,
  n: number,
  d: number,
  k: number,
  opts: KnnDescentOptions,
  parts: number,
): { s: DescentShared; order: Int32Array } {
  const metric = opts.metric ?? "euclidean";
  finisher(metric); // rejects an unknown metric before any allocation
  const shared = parts > 1;
  const dp = paddedWidth(d);
  const h = k - 1;
  const nTrees = Math.max(1, opts.nTrees ?? Math.min(32, 5 + Math.round(Math.sqrt(n) / 20)));
  const leafSize = Math.max(opts.leafSize ?? Math.max(24, 2 * k), 2);
  const maxCand = opts.maxCandidates ?? Math.min(60, Math.max(30, k));
  const worstRow = (maxCand * (maxCand - 1)) / 2 + maxCand * maxCand;
  const cap = Math.max(1 << 18, worstRow, (leafSize * (leafSize - 1)) / 2);
  const listCap = Math.max(2 * maxCand, leafSize);
  // Normal + list + distances, rounded up to 16 bytes so the next thread's normal stays aligned.
  const scratchBytes = Math.ceil((dp * 4 + listCap * 8) / 16) * 16;
  // The search runs on rows reordered along a space-filling curve (neighbours near in memory: ~30%
  // faster at 100k); `order` maps its rows back.
  const order = mortonOrder(data, n, d);
  const { memory } = loadRows(data, n, d, metric, order, parts, scratchBytes, shared);
  const cfg: DescentConfig = {
    n,
    dp,
    h,
    metric: metric === "manhattan" ? 1 : 0,
    seed: opts.rng.int(0x100000000) >>> 0,
    nTrees,
    leafSize,
    maxIter: opts.maxIterations ?? Math.max(5, Math.round(Math.log2(n))),
    maxCand,
    stopUpdates: (opts.delta ?? 0.001) * n * k,
    cap,
    chunkRows: 8192,
    scratch: n * dp * 4,
    scratchBytes,
    listCap,
  };
  const I = Int32Array;
  const hi = alloc(I, n * h * 4, shared);
  hi.fill(-1);
  const hd = alloc(Float32Array, n * h * 4, shared);
  hd.fill(Infinity);
  const state: DescentShared = {
    cfg,
    wasm: simdModuleBytes(isSharedMemory(memory)),
    memory,
    ctrl: alloc(I, (3 + 3 * parts) * 4, shared),
    stats: alloc(Float64Array, parts * 8, shared),
    hi,
    hd,
    flag: alloc(Uint8Array, n * h, shared),
    perm: alloc(I, nTrees * n * 4, shared),
    leafStart: alloc(Uint8Array, nTrees * n, shared),
    newIdx: alloc(I, n * maxCand * 4, shared),
    newPri: alloc(Uint32Array, n * maxCand * 4, shared),
    newCnt: alloc(I, n * 4, shared),
    oldIdx: alloc(I, n * maxCand * 4, shared),
    oldPri: alloc(Uint32Array, n * maxCand * 4, shared),
    oldCnt: alloc(I, n * 4, shared),
    bufPairs: alloc(I, parts * cap * 8, shared),
    bufDist: alloc(Float32Array, parts * cap * 4, shared),
  };
  return { s: state, order };
}

function checkArgs(n: number, k: number): void {
  if (!Number.isInteger(k) || k < 1 || k > n) throw new Error(`knnDescent: k must be in [1, ${n}], got ${k}`);
}

/** Threads a search of n rows may use (at most `threads`, each with enough rows to pay its start). */
function partsFor(n: number, threads: number | undefined): number {
  if (typeof SharedArrayBuffer === "undefined") return 1;
  return Math.max(1, Math.min(threads ?? 1, Math.floor(n / MIN_ROWS_PER_THREAD)));
}

/**
 * Approximate kNN graph (self first) on this thread: random-projection forest, then NN-descent.
 * Recall against the exact graph is typically ≥ 0.95 on PCA spaces at the defaults.
 */
export function knnDescent(
  data: Float32Array,
  n: number,
  d: number,
  k: number,
  opts: KnnDescentOptions,
): KnnGraph {
  checkArgs(n, k);
  const finish = finisher(opts.metric ?? "euclidean");
  if (k === 1) return heapsToGraph(new Int32Array(0), new Float32Array(0), n, 0, finish);
  const { s, order } = prepareDescent(data, n, d, k, opts, 1);
  nnDescentPart(0, 1, s, () => opts.signal?.aborted ?? false, opts.progress ?? null);
  opts.signal?.throwIfAborted();
  return heapsToGraph(s.hi, s.hd, n, k - 1, finish, order);
}

/**
 * `knnDescent` shared among `opts.threads` threads (worker threads on shared memory). The graph is the
 * same as one thread's for the same seed.
 */
export async function knnDescentAsync(
  data: Float32Array,
  n: number,
  d: number,
  k: number,
  opts: KnnDescentOptions,
): Promise<KnnGraph> {
  const parts = partsFor(n, opts.threads);
  if (parts === 1 || k === 1) return knnDescent(data, n, d, k, opts);
  checkArgs(n, k);
  const finish = finisher(opts.metric ?? "euclidean");
  const { s, order } = prepareDescent(data, n, d, k, opts, parts);
  await runKernelThreads(
    nnDescentPart,
    parts,
    (part) =>
      part === 0
        ? [0, parts, s, () => opts.signal?.aborted ?? false, opts.progress ?? null]
        : [part, parts, s, null, null],
    opts.signal,
    { words: s.ctrl, state: 2, wake: 0 },
  );
  opts.signal?.throwIfAborted();
  return heapsToGraph(s.hi, s.hd, n, k - 1, finish, order);
}
