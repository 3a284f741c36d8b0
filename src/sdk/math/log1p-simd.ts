/**
 * log1p of float32 values in WebAssembly SIMD, four values at a time: ~2 ns a value on this machine
 * class against ~5–9 ns for the cached `Math.log1p` loop it replaced (V8 does not vectorise typed-array
 * loops, and each normalised count is a value of its own).
 *
 * The logarithm is Cephes' `logf` (range reduction to a mantissa m in [√½, √2), log m from a degree-9
 * polynomial, exponent × ln 2 split in two parts), computed on u = 1 + x, then corrected for the
 * rounding of 1 + x by (x − (u − 1)) / u, so small x keep their relative accuracy. Result: within one
 * float32 ulp of the correctly rounded log1p (numpy's float32 `log1p` is libm's `log1pf`, also ≤ 1 ulp);
 * +∞ gives +∞, NaN gives NaN, ±0 gives itself. Per four-lane vector at byte offset p:
 *
 * ```wat
 * x    = v128.load p
 * neg  = v128.or neg (i32x4.gt_u x 0x80000000)      ;; a sign bit set, −0 excepted
 * u    = f32x4.add x 1
 * e    = i32x4.sub (i32x4.shr_u u 23) 127            ;; u ≥ 1: a positive exponent
 * m    = v128.or (v128.and u 0x007fffff) 0x3f800000  ;; mantissa in [1, 2)
 * big  = f32x4.gt m √2 ;  m = bitselect (m · ½) m big ;  e = e − big   ;; m in [√½, √2)
 * f    = m − 1 ;  z = f · f
 * y    = ((P(f) · f) · z) + e · −2.12194440e-4 − z · ½ + f + e · 0.693359375
 * y    = y + (x − (u − 1)) / u
 * y    = bitselect +∞ y (f32x4.eq x +∞) ;  y = bitselect x y (f32x4.eq x 0)
 * v128.store p (y, or y / divisor in `log1pDiv`)
 * ```
 *
 * The module works in place on its own (small, private) memory: a kernel copies a block of values in,
 * transforms it and copies it out, since WebAssembly cannot address a SharedArrayBuffer that is not
 * its memory. The block copies run in cache and cost ~0.5 ns a value together.
 */
import {
  funcBody,
  leb,
  MODULE_HEADER,
  memoryImport,
  name,
  OP,
  SIMD,
  section,
  simd,
  sleb,
  TYPE,
  vector,
} from "./wasm-bytes.js";

/** Pages (64 KiB) of the kernel's private memory: one block of values. */
const LOG1P_SIMD_PAGES = 1;

/** Cephes `logf`'s polynomial for log(1 + f) − f + f²/2 = f³ · P(f), highest degree first. */
const POLY = [
  7.0376836292e-2, -1.151461031e-1, 1.167699874e-1, -1.2420140846e-1, 1.4249322787e-1, -1.6668057665e-1,
  2.0000714765e-1, -2.4999993993e-1, 3.3333331174e-1,
];

/**
 * The body of `(p, n[, divisor]) → i32`: log1p of the n float32 values (n a multiple of 4) from byte
 * offset p, in place, each divided by `divisor` when `divide`; returns 1 when a value had its sign bit
 * set (negative, or a NaN with the bit; −0 excepted), else 0.
 */
function log1pBody(divide: boolean): number[] {
  // Parameters: 0 p, 1 n, (2 divisor). Locals after them: end (i32), then v128s.
  const nParams = divide ? 3 : 2;
  let next = nParams;
  const end = next++;
  // `zero` is never set: locals start at zero.
  const v128Names = ["x", "u", "m", "e", "big", "f", "z", "y", "ef", "neg", "div", "zero"] as const;
  const consts: [string, "f32" | "i32", number][] = [
    ["one", "f32", 1],
    ["half", "f32", 0.5],
    ["sqrt2", "f32", Math.SQRT2],
    ["lnLo", "f32", -2.1219444e-4],
    ["lnHi", "f32", 0.693359375],
    ["inf", "f32", Number.POSITIVE_INFINITY],
    ...POLY.map((c, i): [string, "f32", number] => [`p${i}`, "f32", c]),
    ["sign", "i32", 0x80000000 | 0],
    ["bias", "i32", 127],
    ["mant", "i32", 0x007fffff],
    ["oneBits", "i32", 0x3f800000],
  ];
  const L: Record<string, number> = {};
  for (const n of v128Names) L[n] = next++;
  for (const [n] of consts) L[n] = next++;
  const nV128 = v128Names.length + consts.length;

  const get = (n: string) => [OP.localGet, L[n]!];
  const set = (n: string, ...value: number[][]) => [...value.flat(), OP.localSet, L[n]!];
  const s = (op: number) => simd(op);
  const f32 = (v: number) => {
    const b = new Uint8Array(new Float32Array([v]).buffer);
    return [OP.f32Const, ...b];
  };
  const init = consts.flatMap(([n, kind, v]) =>
    kind === "f32"
      ? set(n, f32(v), s(SIMD.f32x4Splat))
      : set(n, [OP.i32Const, ...sleb(v)], s(SIMD.i32x4Splat)),
  );
  // y = y · f + c for each coefficient after the first.
  const horner = POLY.slice(1).flatMap((_, i) =>
    set("y", get("y"), get("f"), s(SIMD.f32x4Mul), get(`p${i + 1}`), s(SIMD.f32x4Add)),
  );
  const memarg = [4, 0]; // 16-byte alignment, offset 0
  const loopBody = [
    ...set("x", [OP.localGet, 0], s(SIMD.v128Load), memarg),
    ...set("neg", get("neg"), get("x"), get("sign"), s(SIMD.i32x4GtU), s(SIMD.v128Or)),
    ...set("u", get("x"), get("one"), s(SIMD.f32x4Add)),
    ...set("e", get("u"), [OP.i32Const, 23], s(SIMD.i32x4ShrU), get("bias"), s(SIMD.i32x4Sub)),
    ...set("m", get("u"), get("mant"), s(SIMD.v128And), get("oneBits"), s(SIMD.v128Or)),
    ...set("big", get("m"), get("sqrt2"), s(SIMD.f32x4Gt)),
    ...set("m", get("m"), get("half"), s(SIMD.f32x4Mul), get("m"), get("big"), s(SIMD.v128Bitselect)),
    // A true comparison lane is −1: subtracting it adds one to the exponent.
    ...set("e", get("e"), get("big"), s(SIMD.i32x4Sub)),
    ...set("ef", get("e"), s(SIMD.f32x4ConvertI32x4S)),
    ...set("f", get("m"), get("one"), s(SIMD.f32x4Sub)),
    ...set("z", get("f"), get("f"), s(SIMD.f32x4Mul)),
    ...set("y", get("p0")),
    ...horner,
    ...set("y", get("y"), get("f"), s(SIMD.f32x4Mul), get("z"), s(SIMD.f32x4Mul)),
    ...set("y", get("y"), get("ef"), get("lnLo"), s(SIMD.f32x4Mul), s(SIMD.f32x4Add)),
    ...set("y", get("y"), get("z"), get("half"), s(SIMD.f32x4Mul), s(SIMD.f32x4Sub)),
    ...set("y", get("f"), get("y"), s(SIMD.f32x4Add)),
    ...set("y", get("y"), get("ef"), get("lnHi"), s(SIMD.f32x4Mul), s(SIMD.f32x4Add)),
    // The rounding of 1 + x, given back: (x − (u − 1)) / u.
    ...set(
      "y",
      get("y"),
      get("x"),
      get("u"),
      get("one"),
      s(SIMD.f32x4Sub),
      s(SIMD.f32x4Sub),
      get("u"),
      s(SIMD.f32x4Div),
      s(SIMD.f32x4Add),
    ),
    ...set("y", get("inf"), get("y"), get("x"), get("inf"), s(SIMD.f32x4Eq), s(SIMD.v128Bitselect)),
    // ±0 stays itself (log1p(−0) is −0).
    ...set("y", get("x"), get("y"), get("x"), get("zero"), s(SIMD.f32x4Eq), s(SIMD.v128Bitselect)),
    ...(divide ? set("y", get("y"), get("div"), s(SIMD.f32x4Div)) : []),
    ...[OP.localGet, 0, ...get("y"), ...s(SIMD.v128Store), ...memarg],
    ...[OP.localGet, 0, OP.i32Const, 16, OP.i32Add, OP.localTee, 0, OP.localGet, end, OP.i32LtU, OP.brIf, 0],
  ];
  const code = [
    ...[OP.localGet, 0, OP.localGet, 1, OP.i32Const, 2, OP.i32Shl, OP.i32Add, OP.localSet, end],
    ...init,
    ...(divide ? set("div", [OP.localGet, 2], s(SIMD.f32x4Splat)) : []),
    OP.block,
    OP.blockVoid,
    ...[OP.localGet, 0, OP.localGet, end, OP.i32GeU, OP.brIf, 0],
    OP.loop,
    OP.blockVoid,
    ...loopBody,
    OP.end,
    OP.end,
    ...get("neg"),
    ...s(SIMD.v128AnyTrue),
    OP.end,
  ];
  // Locals: one group of i32 (end), one group of v128.
  const locals = [...leb(2), 1, TYPE.i32, ...leb(nV128), TYPE.v128];
  return funcBody(locals, code);
}

/**
 * The body of `divide(p, n, d)`: the n float32 values from byte offset p (4-byte aligned, any n)
 * divided by d in place, four at a time then one at a time (IEEE float32 division: the values
 * `Math.fround(v / d)` gives for float32 v and d).
 */
function divideBody(): number[] {
  const [p, n, d, end, end4, dv] = [0, 1, 2, 3, 4, 5];
  const get = (l: number) => [OP.localGet, l];
  const memarg = [2, 0]; // 4-byte alignment
  const code = [
    ...[...get(p), ...get(n), OP.i32Const, 2, OP.i32Shl, OP.i32Add, OP.localSet, end],
    ...[
      ...get(p),
      ...get(n),
      OP.i32Const,
      0x7c,
      OP.i32And,
      OP.i32Const,
      2,
      OP.i32Shl,
      OP.i32Add,
      OP.localSet,
      end4,
    ],
    ...[...get(d), ...simd(SIMD.f32x4Splat), OP.localSet, dv],
    OP.block,
    OP.blockVoid,
    OP.loop,
    OP.blockVoid,
    ...[...get(p), ...get(end4), OP.i32LtU, OP.i32Eqz, OP.brIf, 1],
    ...[...get(p), ...get(p), ...simd(SIMD.v128Load), ...memarg, ...get(dv), ...simd(SIMD.f32x4Div)],
    ...[...simd(SIMD.v128Store), ...memarg],
    ...[...get(p), OP.i32Const, 16, OP.i32Add, OP.localSet, p, OP.br, 0],
    OP.end,
    OP.end,
    OP.block,
    OP.blockVoid,
    OP.loop,
    OP.blockVoid,
    ...[...get(p), ...get(end), OP.i32LtU, OP.i32Eqz, OP.brIf, 1],
    ...[...get(p), ...get(p), OP.f32Load, ...memarg, ...get(d), OP.f32Div, OP.f32Store, ...memarg],
    ...[...get(p), OP.i32Const, 4, OP.i32Add, OP.localSet, p, OP.br, 0],
    OP.end,
    OP.end,
    OP.end,
  ];
  return funcBody([...leb(2), 2, TYPE.i32, 1, TYPE.v128], code);
}

/**
 * The module's bytes: `log1p(p, n) → i32`, `log1pDiv(p, n, divisor) → i32` and `divide(p, n, d)` over
 * an imported, unshared memory of `LOG1P_SIMD_PAGES` pages.
 */
export function log1pModuleBytes(): Uint8Array<ArrayBuffer> {
  log1pBytes ??= assembleLog1pModule();
  return log1pBytes;
}

/** The bytes, assembled once per thread. */
let log1pBytes: Uint8Array<ArrayBuffer> | undefined;

function assembleLog1pModule(): Uint8Array<ArrayBuffer> {
  const { i32, f32 } = TYPE;
  return new Uint8Array([
    ...MODULE_HEADER,
    ...section(
      1,
      vector([
        [TYPE.func, 2, i32, i32, 1, i32],
        [TYPE.func, 3, i32, i32, f32, 1, i32],
        [TYPE.func, 3, i32, i32, f32, 0],
      ]),
    ),
    ...section(2, vector([memoryImport(LOG1P_SIMD_PAGES, LOG1P_SIMD_PAGES, false)])),
    ...section(3, vector([[0], [1], [2]])),
    ...section(
      7,
      vector([
        [...name("log1p"), 0x00, 0],
        [...name("log1pDiv"), 0x00, 1],
        [...name("divide"), 0x00, 2],
      ]),
    ),
    ...section(10, vector([log1pBody(false), log1pBody(true), divideBody()])),
  ]);
}

/**
 * out[k] = log1p(src[k]) for k in k0…k1−1 (divided by `lb` when it is not 0, in float32 as scanpy: the
 * float32 log1p, then a float32 division), block by block through the SIMD module built from `bytes`
 * (`log1pModuleBytes()`; the instance is kept per thread). `out` may be `src` (in place). Sets
 * `negative[slot]` to 1 when a value had its sign bit set (−0 excepted).
 *
 * With `rows` (a CSR `indptr`, per-row `divisors`, and the row `r0` that holds value k0), each value
 * is first divided by its row's divisor in float32 (normalize_total's step), so a deferred chain is
 * written out in one pass with the values the two steps would have made one after the other.
 * Self-contained, so its source runs in a kernel thread as is.
 */
export function log1pSimdRange(
  src: Float32Array,
  out: Float32Array,
  k0: number,
  k1: number,
  bytes: Uint8Array<ArrayBuffer>,
  lb: number,
  negative: Int32Array | null = null,
  slot = 0,
  rows: { indptr: ArrayLike<number | bigint>; divisors: ArrayLike<number>; r0: number } | null = null,
): void {
  type Kit = {
    log1p: (p: number, n: number) => number;
    log1pDiv: (p: number, n: number, d: number) => number;
    divide: (p: number, n: number, d: number) => void;
    block: Float32Array;
  };
  const g = globalThis as unknown as { __tesseraLog1pSimd?: Kit };
  let kit = g.__tesseraLog1pSimd;
  if (!kit) {
    const memory = new WebAssembly.Memory({ initial: 1, maximum: 1 });
    const inst = new WebAssembly.Instance(new WebAssembly.Module(bytes), { env: { memory } });
    const ex = inst.exports as unknown as Omit<Kit, "block">;
    kit = {
      log1p: ex.log1p,
      log1pDiv: ex.log1pDiv,
      divide: ex.divide,
      block: new Float32Array(memory.buffer),
    };
    g.__tesseraLog1pSimd = kit;
  }
  const block = kit.block;
  const size = block.length;
  // The row of the next value, its end and its divisor (when dividing).
  let row = rows ? rows.r0 : 0;
  let rowEnd = rows ? Number(rows.indptr[row + 1]) : 0;
  let divisor = rows ? (rows.divisors[row] as number) : 1;
  let seen = 0;
  for (let k = k0; k < k1; k += size) {
    const m = Math.min(size, k1 - k);
    block.set(src.subarray(k, k + m));
    if (rows) {
      // Each row's stretch of the block divided by its divisor (SIMD, a call per row).
      for (let j = 0; j < m; ) {
        while (k + j >= rowEnd) {
          row++;
          rowEnd = Number(rows.indptr[row + 1]);
          divisor = rows.divisors[row] as number;
        }
        const stop = Math.min(m, rowEnd - k);
        kit.divide(j * 4, stop - j, divisor);
        j = stop;
      }
    }
    // A last block not a multiple of four: the padding's values are computed and dropped.
    const n4 = (m + 3) & ~3;
    for (let i = m; i < n4; i++) block[i] = 0;
    seen |= lb === 0 ? kit.log1p(0, n4) : kit.log1pDiv(0, n4, lb);
    out.set(m === size ? block : block.subarray(0, m), k);
  }
  if (negative && seen) negative[slot] = 1;
}
