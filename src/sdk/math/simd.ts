/**
 * Vector distance kernels in WebAssembly SIMD (128-bit, four float32 lanes), for searches that compare
 * millions of rows: a 50-dimensional squared distance takes ~11 ns here against ~57 ns in plain
 * JavaScript (V8 does not vectorise typed-array loops).
 *
 * The module is tiny and written out below byte by byte, so nothing is compiled at install or build
 * time. It imports its memory (`env.memory`), so several threads can share one copy of the rows:
 * pass a shared `WebAssembly.Memory` to each thread and instantiate the module there.
 *
 * Rows are float32, 16-byte aligned, and padded with zeros to a multiple of four values (`paddedWidth`);
 * zero padding leaves every result unchanged. Each function takes two byte offsets and the row length
 * in four-lane vectors, and returns float32:
 *
 * ```wat
 * (func $sqdist (param $a i32) (param $b i32) (param $nvec i32) (result f32)
 *   (local $acc v128) (local $t v128)
 *   (loop
 *     (local.set $acc (f32x4.add (local.get $acc)
 *       (f32x4.mul (local.tee $t (f32x4.sub (v128.load (local.get $a)) (v128.load (local.get $b))))
 *                  (local.get $t))))
 *     (local.set $a (i32.add (local.get $a) (i32.const 16)))
 *     (local.set $b (i32.add (local.get $b) (i32.const 16)))
 *     (br_if 0 (local.tee $nvec (i32.sub (local.get $nvec) (i32.const 1)))))
 *   (f32.add (f32.add (f32.add (f32x4.extract_lane 0 (local.get $acc)) (f32x4.extract_lane 1 …)) …)))
 * ```
 * `l1dist` sums `f32x4.abs` of the difference instead; `dot` sums the product. The list forms call
 * one of them for each row index of a list:
 *
 * ```wat
 * (func $sqdistList (param $a i32) (param $list i32) (param $count i32) (param $out i32)
 *                   (param $nvec i32) (param $rowBytes i32)
 *   (block (br_if 0 (i32.eqz (local.get $count)))
 *     (loop
 *       (f32.store (local.get $out) (call $sqdist (local.get $a)
 *         (i32.mul (i32.load (local.get $list)) (local.get $rowBytes)) (local.get $nvec)))
 *       (local.set $list (i32.add (local.get $list) (i32.const 4)))
 *       (local.set $out (i32.add (local.get $out) (i32.const 4)))
 *       (br_if 0 (local.tee $count (i32.sub (local.get $count) (i32.const 1)))))))
 * ```
 */
import {
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

/** The functions of the module, on byte offsets into its memory. */
export interface SimdKernels {
  /** Squared euclidean distance of the rows at byte offsets a and b (nvec four-lane vectors long). */
  sqdist(a: number, b: number, nvec: number): number;
  /** Manhattan (L1) distance of the rows at byte offsets a and b. */
  l1dist(a: number, b: number, nvec: number): number;
  /** Dot product of the rows at byte offsets a and b. */
  dot(a: number, b: number, nvec: number): number;
  /**
   * `sqdist` from the row at byte offset a to each of `count` rows whose indices (int32) start at
   * byte offset `list`; row r is at r · rowBytes. Writes the float32 results from byte offset `out`.
   * One call per row instead of one per pair.
   */
  sqdistList(a: number, list: number, count: number, out: number, nvec: number, rowBytes: number): void;
  /** `l1dist` to a list of rows, as `sqdistList`. */
  l1distList(a: number, list: number, count: number, out: number, nvec: number, rowBytes: number): void;
}

/** Row length in floats once padded to whole four-lane vectors. */
export function paddedWidth(d: number): number {
  return Math.ceil(d / 4) * 4;
}

/** v128.load with a 16-byte alignment hint and no offset. */
const load = (local: number): number[] => [OP.localGet, local, ...simd(SIMD.v128Load), 4, 0];

/**
 * A body `(a, b, nvec) → f32` that accumulates `combine(a_i, b_i)` over the vectors in local 3 and
 * sums the four lanes. `combine` leaves one v128 on the stack from the two loaded vectors.
 */
function reduceBody(combine: number[]): number[] {
  const acc = 3;
  const lanes = [0, 1, 2, 3].flatMap((lane) => [
    OP.localGet,
    acc,
    ...simd(SIMD.f32x4ExtractLane),
    lane,
    ...(lane > 0 ? [OP.f32Add] : []),
  ]);
  const code = [
    OP.loop,
    OP.blockVoid,
    OP.localGet,
    acc,
    ...load(0),
    ...load(1),
    ...combine,
    ...simd(SIMD.f32x4Add),
    OP.localSet,
    acc,
    ...[OP.localGet, 0, OP.i32Const, 16, OP.i32Add, OP.localSet, 0],
    ...[OP.localGet, 1, OP.i32Const, 16, OP.i32Add, OP.localSet, 1],
    ...[OP.localGet, 2, OP.i32Const, 1, OP.i32Sub, OP.localTee, 2, OP.brIf, 0],
    OP.end,
    ...lanes,
    OP.end,
  ];
  const locals = [1, 2, TYPE.v128]; // one group: two v128 locals (3 = accumulator, 4 = scratch)
  const body = [...locals, ...code];
  return [...leb(body.length), ...body];
}

/** A body `(a, list, count, out, nvec, rowBytes) → ()` calling function `fn` for each listed row. */
function listBody(fn: number): number[] {
  const [a, list, count, out, nvec, rowBytes] = [0, 1, 2, 3, 4, 5];
  const step = (local: number) => [OP.localGet, local, OP.i32Const, 4, OP.i32Add, OP.localSet, local];
  const code = [
    OP.block,
    OP.blockVoid,
    ...[OP.localGet, count, OP.i32Eqz, OP.brIf, 0],
    OP.loop,
    OP.blockVoid,
    ...[OP.localGet, out],
    ...[OP.localGet, a],
    ...[OP.localGet, list, OP.i32Load, 2, 0, OP.localGet, rowBytes, OP.i32Mul],
    ...[OP.localGet, nvec, OP.call, fn],
    ...[OP.f32Store, 2, 0],
    ...step(list),
    ...step(out),
    ...[OP.localGet, count, OP.i32Const, 1, OP.i32Sub, OP.localTee, count, OP.brIf, 0],
    OP.end,
    OP.end,
    OP.end,
  ];
  const body = [0, ...code]; // no locals beyond the parameters
  return [...leb(body.length), ...body];
}

const tmp = 4;
const SQDIST = [...simd(SIMD.f32x4Sub), OP.localTee, tmp, OP.localGet, tmp, ...simd(SIMD.f32x4Mul)];
const L1DIST = [...simd(SIMD.f32x4Sub), ...simd(SIMD.f32x4Abs)];
const DOT = [...simd(SIMD.f32x4Mul)];

/**
 * The module's bytes. `shared` says whether the imported memory is a shared one (to use from several
 * threads) or a plain one (where SharedArrayBuffer is not available).
 */
export function simdModuleBytes(shared: boolean): Uint8Array<ArrayBuffer> {
  const maxPages = 65536; // 4 GiB, the most a 32-bit memory can address
  // Function i: type, body. Types: 0 = (i32 i32 i32) → f32, 1 = (i32 × 6) → ().
  const functions: [string, number, number[]][] = [
    ["sqdist", 0, reduceBody(SQDIST)],
    ["l1dist", 0, reduceBody(L1DIST)],
    ["dot", 0, reduceBody(DOT)],
    ["sqdistList", 1, listBody(0)],
    ["l1distList", 1, listBody(1)],
  ];
  const i32 = TYPE.i32;
  return new Uint8Array([
    ...MODULE_HEADER,
    ...section(
      1,
      vector([
        [TYPE.func, 3, i32, i32, i32, 1, TYPE.f32],
        [TYPE.func, 6, i32, i32, i32, i32, i32, i32, 0],
      ]),
    ),
    ...section(2, vector([memoryImport(0, maxPages, shared)])),
    ...section(3, vector(functions.map(([, type]) => [type]))),
    ...section(7, vector(functions.map(([e], i) => [...name(e), 0x00, i]))),
    ...section(10, vector(functions.map(([, , body]) => body))),
  ]);
}

/** A memory of at least `bytes` bytes, shared when the platform allows it and `shared` is asked. */
export function simdMemory(bytes: number, shared: boolean): WebAssembly.Memory {
  const pages = Math.max(1, Math.ceil(bytes / 65536));
  if (pages > 65536) throw new Error(`simd: ${bytes} bytes is over the 4 GiB a WebAssembly memory holds`);
  return new WebAssembly.Memory({ initial: pages, maximum: pages, shared } as WebAssembly.MemoryDescriptor);
}

/** Whether a memory is a shared one. */
export function isSharedMemory(memory: WebAssembly.Memory): boolean {
  return typeof SharedArrayBuffer !== "undefined" && memory.buffer instanceof SharedArrayBuffer;
}

/** Instantiate the kernels over `memory` (synchronously: the module is a few hundred bytes). */
export function simdKernels(memory: WebAssembly.Memory): SimdKernels {
  const module = new WebAssembly.Module(simdModuleBytes(isSharedMemory(memory)));
  return new WebAssembly.Instance(module, { env: { memory } }).exports as unknown as SimdKernels;
}
