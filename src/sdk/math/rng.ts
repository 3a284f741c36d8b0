/**
 * A small, fast, seedable pseudo-random number generator: xoshiro128** (Blackman & Vigna) seeded
 * through splitmix32. Every step is 32-bit integer math (`Math.imul`, shifts), so a seed gives the same
 * sequence on every run and platform; nothing here touches `Math.random`.
 *
 * The generator's whole state is a plain object (`RngState`) so that an operation can receive it
 * through its context, post it to a worker thread, and resume the exact stream there. Distributions
 * built on top (normal, gamma, Poisson, negative binomial) use only `Math.log/exp/sqrt/floor`, which
 * V8 computes with the same fdlibm ports everywhere.
 */

/** The serialisable state of an `Rng`: four 32-bit words plus the cached second normal deviate. */
export interface RngState {
  readonly kind: "rng";
  readonly algorithm: "xoshiro128**";
  /** The four state words, as unsigned 32-bit integers. */
  readonly s: readonly [number, number, number, number];
  /** The polar method makes normals in pairs; the unused one, or null. */
  readonly spare: number | null;
}

/** Anything indexable by position with a length: arrays and typed arrays (not bigint ones). */
export interface Indexable<T> {
  length: number;
  [i: number]: T;
}

const TWO_POW_32 = 4294967296;
const INV_TWO_POW_32 = 1 / TWO_POW_32;
const INV_TWO_POW_53 = 1 / 9007199254740992;

/** One splitmix32 output for the running counter `x` (the counter step is done by the caller). */
function mix32(x: number): number {
  let z = x | 0;
  z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
  z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
  return (z ^ (z >>> 16)) >>> 0;
}

/** Hash a string to two 32-bit words (FNV-1a over UTF-16 code units, then two splitmix rounds). */
function hashString(label: string): [number, number] {
  let h = 0x811c9dc5;
  for (let i = 0; i < label.length; i++) {
    h ^= label.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  const a = mix32(h ^ label.length);
  return [a, mix32(a + 0x9e3779b9)];
}

/** The words a seed contributes: integers up to 2^53 exactly; other numbers by their float64 bits; strings hashed. */
function seedWords(seed: number | string): number[] {
  if (typeof seed === "string") return [0x5eed5eed, ...hashString(seed)];
  if (!Number.isFinite(seed)) throw new Error(`rng: seed must be a finite number or a string, got ${seed}`);
  if (Number.isSafeInteger(seed)) {
    const neg = seed < 0 ? 1 : 0;
    const m = Math.abs(seed);
    return [m >>> 0, Math.floor(m / TWO_POW_32) >>> 0, neg];
  }
  const f = new Float64Array([seed]);
  const u = new Uint32Array(f.buffer);
  return [u[0]!, u[1]!, 2];
}

/** Expand any number of words into a full, non-zero xoshiro state with splitmix32. */
function expand(words: readonly number[]): [number, number, number, number] {
  // Fold the words into a running hash, so every word affects every state word.
  let h = 0x6a09e667;
  for (const w of words) h = mix32((h ^ w) + 0x9e3779b9);
  const out: [number, number, number, number] = [0, 0, 0, 0];
  let x = h;
  for (let i = 0; i < 4; i++) {
    x = (x + 0x9e3779b9) | 0;
    out[i] = mix32(x);
  }
  if ((out[0] | out[1] | out[2] | out[3]) === 0) out[0] = 1; // the all-zero state is a fixed point
  return out;
}

/** log Γ(x) for x > 0 (Lanczos, g = 7, 9 terms; relative error ~1e-15), used by the Poisson sampler. */
function logGamma(x: number): number {
  if (x < 0.5) return Math.log(Math.PI / Math.abs(Math.sin(Math.PI * x))) - logGamma(1 - x);
  const c = [
    0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313, -176.61502916214059,
    12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7,
  ];
  const z = x - 1;
  let a = c[0]!;
  const t = z + 7.5;
  for (let i = 1; i < 9; i++) a += c[i]! / (z + i);
  return 0.5 * Math.log(2 * Math.PI) + (z + 0.5) * Math.log(t) - t + Math.log(a);
}

/**
 * A seeded xoshiro128** generator with the distributions simulations need.
 *
 * `new Rng(42)` and `new Rng("leiden")` are both fine; `Rng.fromState(rng.state())` resumes a stream
 * exactly (also in another thread); `fork(label)` derives an independent stream without advancing this one.
 */
export class Rng {
  private s0 = 0;
  private s1 = 0;
  private s2 = 0;
  private s3 = 0;
  private spare: number | null = null;

  /** Seed from an integer (exact up to 2^53), any other finite number, or a string. */
  constructor(seed: number | string = 0) {
    this.setWords(expand(seedWords(seed)));
  }

  /** Resume a generator from a state that `state()` returned. */
  static fromState(state: RngState): Rng {
    if (
      !state ||
      state.kind !== "rng" ||
      state.algorithm !== "xoshiro128**" ||
      !Array.isArray(state.s) ||
      state.s.length !== 4
    ) {
      throw new Error("rng: not an xoshiro128** state object");
    }
    const r = new Rng(0);
    r.setWords(state.s.map((w) => w >>> 0) as [number, number, number, number]);
    if ((r.s0 | r.s1 | r.s2 | r.s3) === 0) throw new Error("rng: the all-zero state is invalid");
    r.spare = typeof state.spare === "number" ? state.spare : null;
    return r;
  }

  private setWords(w: readonly [number, number, number, number]): void {
    this.s0 = w[0] | 0;
    this.s1 = w[1] | 0;
    this.s2 = w[2] | 0;
    this.s3 = w[3] | 0;
    this.spare = null;
  }

  /** The full state as a plain, structured-clone-safe object. */
  state(): RngState {
    return {
      kind: "rng",
      algorithm: "xoshiro128**",
      s: [this.s0 >>> 0, this.s1 >>> 0, this.s2 >>> 0, this.s3 >>> 0],
      spare: this.spare,
    };
  }

  /** An independent copy continuing the same sequence. */
  clone(): Rng {
    return Rng.fromState(this.state());
  }

  /**
   * A new generator for a named sub-task. It depends on this generator's current state and the label
   * only; this generator does not advance, so `fork("a")` twice in a row gives two identical children.
   */
  fork(label: string | number): Rng {
    const child = new Rng(0);
    const lw = typeof label === "string" ? hashString(label) : seedWords(label);
    child.setWords(expand([this.s0 >>> 0, this.s1 >>> 0, this.s2 >>> 0, this.s3 >>> 0, 0xf0f0f0f0, ...lw]));
    return child;
  }

  /** The next 32-bit unsigned integer. */
  uint32(): number {
    const s0 = this.s0;
    const s1 = this.s1;
    const r = Math.imul(s1, 5);
    const result = Math.imul((r << 7) | (r >>> 25), 9) >>> 0;
    const t = s1 << 9;
    let s2 = this.s2 ^ s0;
    let s3 = this.s3 ^ s1;
    this.s1 = s1 ^ s2;
    this.s0 = s0 ^ s3;
    s2 ^= t;
    s3 = (s3 << 11) | (s3 >>> 21);
    this.s2 = s2;
    this.s3 = s3;
    return result;
  }

  /** Uniform in [0, 1) with 32 random bits. */
  next(): number {
    return this.uint32() * INV_TWO_POW_32;
  }

  /** Uniform in [0, 1) with 53 random bits (two draws), for when 2^-32 resolution is too coarse. */
  nextDouble(): number {
    const hi = this.uint32() >>> 5;
    const lo = this.uint32() >>> 6;
    return (hi * 67108864 + lo) * INV_TWO_POW_53;
  }

  /** Uniform in [lo, hi). */
  uniform(lo: number, hi: number): number {
    return lo + (hi - lo) * this.next();
  }

  /** A uniform integer in [0, n), without modulo bias; n a positive integer up to 2^53. */
  int(n: number): number {
    if (!(n >= 1) || !Number.isSafeInteger(n))
      throw new Error(`rng.int: n must be a positive integer, got ${n}`);
    if (n <= TWO_POW_32) {
      // Reject the top partial block of 2^32 so that every residue is equally likely.
      const limit = TWO_POW_32 - (TWO_POW_32 % n);
      let u = this.uint32();
      while (u >= limit) u = this.uint32();
      return u % n;
    }
    return Math.floor(this.nextDouble() * n);
  }

  /** A normal deviate (Marsaglia's polar method; pairs are cached, and the cache is part of the state). */
  normal(mean = 0, sd = 1): number {
    if (this.spare !== null) {
      const z = this.spare;
      this.spare = null;
      return mean + sd * z;
    }
    let u: number;
    let v: number;
    let s: number;
    do {
      u = 2 * this.next() - 1;
      v = 2 * this.next() - 1;
      s = u * u + v * v;
    } while (s >= 1 || s === 0);
    const m = Math.sqrt((-2 * Math.log(s)) / s);
    this.spare = v * m;
    return mean + sd * u * m;
  }

  /** An exponential deviate with rate 1 (mean 1). */
  exponential(): number {
    return -Math.log(1 - this.next());
  }

  /** A gamma deviate with the given shape (> 0) and scale (Marsaglia & Tsang 2000). */
  gamma(shape: number, scale = 1): number {
    if (!(shape > 0)) throw new Error(`rng.gamma: shape must be > 0, got ${shape}`);
    if (shape < 1) {
      // Boost: Gamma(a) = Gamma(a + 1) · U^(1/a).
      const u = 1 - this.next();
      return this.gamma(shape + 1, scale) * u ** (1 / shape);
    }
    const d = shape - 1 / 3;
    const c = 1 / Math.sqrt(9 * d);
    for (;;) {
      let x: number;
      let v: number;
      do {
        x = this.normal();
        v = 1 + c * x;
      } while (v <= 0);
      v = v * v * v;
      const u = this.next();
      const x2 = x * x;
      if (u < 1 - 0.0331 * x2 * x2) return d * v * scale;
      if (Math.log(u) < 0.5 * x2 + d * (1 - v + Math.log(v))) return d * v * scale;
    }
  }

  /**
   * A Poisson deviate with mean `lambda` (≥ 0): multiplication of uniforms below 12, Hörmann's PTRS
   * transformed rejection above (constant expected cost for any mean).
   */
  poisson(lambda: number): number {
    if (!(lambda >= 0) || !Number.isFinite(lambda))
      throw new Error(`rng.poisson: lambda must be finite and ≥ 0, got ${lambda}`);
    if (lambda === 0) return 0;
    if (lambda < 12) {
      const limit = Math.exp(-lambda);
      let k = 0;
      let p = this.next();
      while (p > limit) {
        k++;
        p *= this.next();
      }
      return k;
    }
    const slam = Math.sqrt(lambda);
    const loglam = Math.log(lambda);
    const b = 0.931 + 2.53 * slam;
    const a = -0.059 + 0.02483 * b;
    const invAlpha = 1.1239 + 1.1328 / (b - 3.4);
    const vr = 0.9277 - 3.6224 / (b - 2);
    for (;;) {
      const u = this.next() - 0.5;
      const v = this.next();
      const us = 0.5 - Math.abs(u);
      const k = Math.floor(((2 * a) / us + b) * u + lambda + 0.43);
      if (us >= 0.07 && v <= vr) return k;
      if (k < 0 || (us < 0.013 && v > us)) continue;
      if (
        Math.log(v) + Math.log(invAlpha) - Math.log(a / (us * us) + b) <=
        -lambda + k * loglam - logGamma(k + 1)
      ) {
        return k;
      }
    }
  }

  /**
   * A negative binomial deviate with the given mean and dispersion φ (variance = mean + φ·mean², the
   * DESeq2/edgeR convention; φ = 1/θ of scvi's "inverse dispersion"), as a gamma–Poisson mixture.
   * φ = 0 is Poisson.
   */
  negativeBinomial(mean: number, dispersion: number): number {
    if (!(mean >= 0)) throw new Error(`rng.negativeBinomial: mean must be ≥ 0, got ${mean}`);
    if (!(dispersion >= 0))
      throw new Error(`rng.negativeBinomial: dispersion must be ≥ 0, got ${dispersion}`);
    if (mean === 0) return 0;
    if (dispersion === 0) return this.poisson(mean);
    const r = 1 / dispersion;
    return this.poisson(this.gamma(r, mean / r));
  }

  /** Shuffle `items` in place (Fisher–Yates) and return it. */
  shuffle<T, A extends Indexable<T>>(items: A & Indexable<T>): A {
    for (let i = items.length - 1; i > 0; i--) {
      const j = this.int(i + 1);
      const t = items[i]!;
      items[i] = items[j]!;
      items[j] = t;
    }
    return items;
  }

  /** A random permutation of 0 … n-1. */
  permutation(n: number): Int32Array {
    const p = new Int32Array(n);
    for (let i = 0; i < n; i++) p[i] = i;
    return this.shuffle(p);
  }

  /**
   * One element of `items`, uniformly or with probability proportional to `weights` (non-negative,
   * same length, not all zero).
   */
  choice<T>(items: ArrayLike<T>, weights?: ArrayLike<number>): T {
    const n = items.length;
    if (n === 0) throw new Error("rng.choice: no items to choose from");
    if (!weights) return items[this.int(n)]!;
    if (weights.length !== n) throw new Error(`rng.choice: ${weights.length} weights for ${n} items`);
    let total = 0;
    for (let i = 0; i < n; i++) {
      const w = weights[i]!;
      if (!(w >= 0)) throw new Error(`rng.choice: weight ${i} is ${w}; weights must be ≥ 0`);
      total += w;
    }
    if (!(total > 0)) throw new Error("rng.choice: all weights are zero");
    let x = this.next() * total;
    for (let i = 0; i < n; i++) {
      x -= weights[i]!;
      if (x < 0) return items[i]!;
    }
    // Rounding left x at or just above zero: return the last item with positive weight.
    for (let i = n - 1; i >= 0; i--) if (weights[i]! > 0) return items[i]!;
    return items[n - 1]!;
  }
}

/** Make a generator from a seed (integer, number or string). */
export function createRng(seed: number | string = 0): Rng {
  return new Rng(seed);
}
