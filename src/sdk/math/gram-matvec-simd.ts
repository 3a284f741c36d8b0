/**
 * out = g · x for PCA's dense symmetric Gram matrix, in WebAssembly SIMD: the Lanczos iteration's
 * matrix-vector product, ~160 of them at 50k cells × 1,000 genes. Rows two at a time, each row's
 * products summed in two float64 lanes (even and odd columns), exactly the two partial sums of the
 * JavaScript `gramMatvec`, so the results are the same bit for bit; ~3× faster.
 *
 * The Gram matrix is made on a WebAssembly memory (`gramOnWasm`) with room for x and out after it, so
 * the product reads it where it is (no copy of an m × m matrix); `x` and `out` are copied in and out.
 *
 * ```wat
 * for each pair of rows a, a + 1 (a + 1 < m):
 *   acc0 = acc1 = 0
 *   for b = 0, 2, … < m − m mod 2:  xv = x[b:b+2];  acc0 += g[a, b:b+2]·xv;  acc1 += g[a+1, b:b+2]·xv
 *   s0, t0 = lanes of acc0 (and s1, t1);  if m is odd: s0 += g[a, m−1]·x[m−1] (s1 likewise)
 *   out[a] = s0 + t0;  out[a+1] = s1 + t1
 * the last row when m is odd: one running sum over b
 * ```
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
  TYPE,
  vector,
} from "./wasm-bytes.js";

/** The body of `symv(g, x, out, m)` (byte offsets; g row-major m × m float64). */
function symvBody(): number[] {
  // Params 0 g, 1 x, 2 out, 3 m; i32 locals 4 a, 5 b, 6 r0, 7 r1, 8 evenBytes, 9 rowBytes;
  // v128 locals 10 acc0, 11 acc1, 12 xv; f64 locals 13 s0, 14 s1.
  const [g, x, out, m] = [0, 1, 2, 3];
  const [a, b, r0, r1, evenBytes, rowBytes] = [4, 5, 6, 7, 8, 9];
  const [acc0, acc1, xv] = [10, 11, 12];
  const [s0, s1] = [13, 14];
  const get = (l: number) => [OP.localGet, l];
  const set = (l: number) => [OP.localSet, l];
  const i32 = (n: number) => [OP.i32Const, ...leb(n)];
  const v = [3, 0]; // memarg: 8-byte alignment hint
  const f = [3, 0];
  const vload = (addr: number[]) => [...addr, ...simd(SIMD.v128Load), ...v];
  const fload = (addr: number[]) => [...addr, OP.f64Load, ...f];
  const lane = (l: number, i: number) => [...get(l), ...simd(SIMD.f64x2ExtractLane), i];
  const zero = [OP.f64Const, 0, 0, 0, 0, 0, 0, 0, 0];
  const accumulate = (acc: number, row: number) => [
    ...get(acc),
    ...vload([...get(row), ...get(b), OP.i32Add]),
    ...get(xv),
    ...simd(SIMD.f64x2Mul),
    ...simd(SIMD.f64x2Add),
    ...set(acc),
  ];
  /** s = s + g[row + evenBytes]·x[evenBytes] (the odd column). */
  const tail = (s: number, row: number) => [
    ...get(s),
    ...fload([...get(row), ...get(evenBytes), OP.i32Add]),
    ...fload([...get(x), ...get(evenBytes), OP.i32Add]),
    OP.f64Mul,
    OP.f64Add,
    ...set(s),
  ];
  const code = [
    ...[...get(m), ...i32(3), OP.i32Shl, ...set(rowBytes)],
    // evenBytes = (m with its lowest bit cleared) · 8; i32.const −2 is 0x7e in signed LEB128.
    ...[...get(m), OP.i32Const, 0x7e, OP.i32And, ...i32(3), OP.i32Shl, ...set(evenBytes)],
    ...[...i32(0), ...set(a)],
    // Pairs of rows.
    OP.block,
    OP.blockVoid,
    OP.loop,
    OP.blockVoid,
    ...[...get(a), ...i32(1), OP.i32Add, ...get(m), OP.i32LtU, OP.i32Eqz, OP.brIf, 1],
    ...[...get(g), ...get(a), ...get(rowBytes), OP.i32Mul, OP.i32Add, ...set(r0)],
    ...[...get(r0), ...get(rowBytes), OP.i32Add, ...set(r1)],
    ...[...zero, ...simd(SIMD.f64x2Splat), OP.localTee, acc0, ...set(acc1)],
    ...[...i32(0), ...set(b)],
    OP.block,
    OP.blockVoid,
    ...[...get(evenBytes), OP.i32Eqz, OP.brIf, 0],
    OP.loop,
    OP.blockVoid,
    ...vload([...get(x), ...get(b), OP.i32Add]),
    ...set(xv),
    ...accumulate(acc0, r0),
    ...accumulate(acc1, r1),
    ...[...get(b), ...i32(16), OP.i32Add, OP.localTee, b, ...get(evenBytes), OP.i32LtU, OP.brIf, 0],
    OP.end,
    OP.end,
    ...[...lane(acc0, 0), ...set(s0), ...lane(acc1, 0), ...set(s1)],
    // m odd: the last column joins the even lane, as in the JavaScript loop.
    OP.block,
    OP.blockVoid,
    ...[...get(evenBytes), ...get(rowBytes), OP.i32Eq, OP.brIf, 0],
    ...tail(s0, r0),
    ...tail(s1, r1),
    OP.end,
    ...[...get(out), ...get(a), ...i32(3), OP.i32Shl, OP.i32Add],
    ...[...get(s0), ...lane(acc0, 1), OP.f64Add, OP.f64Store, ...f],
    ...[...get(out), ...get(a), ...i32(3), OP.i32Shl, OP.i32Add],
    ...[...get(s1), ...lane(acc1, 1), OP.f64Add, OP.f64Store, 3, 8],
    ...[...get(a), ...i32(2), OP.i32Add, ...set(a), OP.br, 0],
    OP.end,
    OP.end,
    // The last row when m is odd: one running sum.
    OP.block,
    OP.blockVoid,
    ...[...get(a), ...get(m), OP.i32LtU, OP.i32Eqz, OP.brIf, 0],
    ...[...get(g), ...get(a), ...get(rowBytes), OP.i32Mul, OP.i32Add, ...set(r0)],
    ...[OP.f64Const, 0, 0, 0, 0, 0, 0, 0, 0, ...set(s0)],
    ...[...i32(0), ...set(b)],
    OP.loop,
    OP.blockVoid,
    ...get(s0),
    ...fload([...get(r0), ...get(b), OP.i32Add]),
    ...fload([...get(x), ...get(b), OP.i32Add]),
    OP.f64Mul,
    OP.f64Add,
    ...set(s0),
    ...[...get(b), ...i32(8), OP.i32Add, OP.localTee, b, ...get(rowBytes), OP.i32LtU, OP.brIf, 0],
    OP.end,
    ...[...get(out), ...get(a), ...i32(3), OP.i32Shl, OP.i32Add, ...get(s0), OP.f64Store, ...f],
    OP.end,
    OP.end,
  ];
  const locals = [...leb(3), 6, TYPE.i32, 3, TYPE.v128, 2, TYPE.f64];
  return funcBody(locals, code);
}

/** The module's bytes: `symv(g, x, out, m)` over an imported, unshared memory. */
export function symvModuleBytes(): Uint8Array<ArrayBuffer> {
  const { i32 } = TYPE;
  return new Uint8Array([
    ...MODULE_HEADER,
    ...section(1, vector([[TYPE.func, 4, i32, i32, i32, i32, 0]])),
    ...section(2, vector([memoryImport(1, 65536, false)])),
    ...section(3, vector([[0]])),
    ...section(7, vector([[...name("symv"), 0x00, 0]])),
    ...section(10, vector([symvBody()])),
  ]);
}

/** The compiled module, once per thread (an instance per Gram matrix, on its memory). */
let symvModule: WebAssembly.Module | undefined;

/** The product of a Gram matrix made by `gramOnWasm`, by matrix (weak: it goes with the matrix). */
const products = new WeakMap<Float64Array, (x: Float64Array, out: Float64Array) => void>();

/** Largest m whose Gram matrix (and x, out) fits a 4 GiB WebAssembly memory. */
const MAX_WASM_GRAM = 23_000;

/**
 * A zeroed m × m float64 matrix for a Gram matrix, on a WebAssembly memory with room for x and out
 * after it, so `gramMatvecSimd` reads it in place. A plain array when m is too large for one.
 */
export function gramOnWasm(m: number): Float64Array {
  if (m < 2 || m > MAX_WASM_GRAM) return new Float64Array(m * m);
  const gBytes = m * m * 8;
  const xAt = gBytes;
  const outAt = xAt + m * 8;
  const pages = Math.ceil((outAt + m * 8) / 65536);
  const memory = new WebAssembly.Memory({ initial: pages, maximum: pages });
  const g = new Float64Array(memory.buffer, 0, m * m);
  let symv: ((g: number, x: number, out: number, m: number) => void) | null = null;
  const xs = new Float64Array(memory.buffer, xAt, m);
  const outs = new Float64Array(memory.buffer, outAt, m);
  products.set(g, (x, out) => {
    symvModule ??= new WebAssembly.Module(symvModuleBytes());
    symv ??= (
      new WebAssembly.Instance(symvModule, { env: { memory } }).exports as unknown as {
        symv: (g: number, x: number, out: number, m: number) => void;
      }
    ).symv;
    xs.set(x);
    symv(0, xAt, outAt, m);
    out.set(outs);
  });
  return g;
}

/**
 * out = g · x through the SIMD module when g was made by `gramOnWasm` (true), else nothing (false):
 * the caller then uses `gramMatvec` (the same values).
 */
export function gramMatvecSimd(g: Float64Array, x: Float64Array, out: Float64Array): boolean {
  const product = products.get(g);
  if (!product) return false;
  product(x, out);
  return true;
}
