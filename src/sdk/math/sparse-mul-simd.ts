/**
 * PCA's projection of the cells (out = X_c · M, `sparse-mul.ts`) with its inner loop in WebAssembly
 * SIMD: each kept entry of a row adds v · M[c, :] to the row's accumulator two float64 lanes at a time,
 * four entries per pass over the accumulator. Every lane adds its terms in the row's order, as the
 * JavaScript loop does (no fused multiply-add), so the sums are the same bit for bit; ~4× faster.
 *
 * The module works on its own memory (WebAssembly cannot address a SharedArrayBuffer that is not its
 * memory): M (padded to an even width), −μM, the accumulator and one row's kept entries are copied in;
 * the accumulator is copied out per row. `mulRow(offs, vals, len, acc, negMu, nvec)`:
 *
 * ```wat
 * for p in 0 … nvec·16 step 16: acc[p] = negMu[p]
 * for each four entries e (byte offsets o0…o3 of their rows of M, values splat to v0…v3):
 *   for p: acc[p] = ((((acc[p] + v0·M[o0+p]) + v1·M[o1+p]) + v2·M[o2+p]) + v3·M[o3+p])
 * for each entry left: acc[p] = acc[p] + v·M[o+p]
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

/** The body of `mulRow(offs, vals, len, acc, negMu, nvec)`. */
function mulRowBody(): number[] {
  // Params 0 offs, 1 vals, 2 len, 3 acc, 4 negMu, 5 nvec; i32 locals 6 e, 7 p, 8 end, 9–12 o0…o3;
  // v128 locals 13–16 v0…v3, 17 a.
  const [offs, vals, len, acc, negMu, nvec] = [0, 1, 2, 3, 4, 5];
  const [e, p, end] = [6, 7, 8];
  const o = [9, 10, 11, 12];
  const v = [13, 14, 15, 16];
  const a = 17;
  const memarg = [3, 0]; // 8-byte alignment (rows of M are 16-byte aligned; hints only)
  const vload = (addr: number[]) => [...addr, ...simd(SIMD.v128Load), ...memarg];
  const get = (l: number) => [OP.localGet, l];
  const set = (l: number) => [OP.localSet, l];
  const i32 = (n: number) => [OP.i32Const, ...leb(n)];
  /** acc[p] = acc[p] + v_i · M[o_i + p] for the entries `which`, then store. */
  const passBody = (which: number[]) => [
    ...vload([...get(acc), ...get(p), OP.i32Add]),
    ...set(a),
    ...which.flatMap((i) => [
      ...get(a),
      ...get(v[i]!),
      ...vload([...get(o[i]!), ...get(p), OP.i32Add]),
      ...simd(SIMD.f64x2Mul),
      ...simd(SIMD.f64x2Add),
      ...set(a),
    ]),
    ...[...get(acc), ...get(p), OP.i32Add, ...get(a), ...simd(SIMD.v128Store), ...memarg],
    ...[...get(p), ...i32(16), OP.i32Add, OP.localTee, p, ...get(end), OP.i32LtU, OP.brIf, 0],
  ];
  /** A loop over p from 0 to end running `body` (end > 0: nvec ≥ 1). */
  const overP = (body: number[]) => [...i32(0), ...set(p), OP.loop, OP.blockVoid, ...body, OP.end];
  /** Load entry e + i's offset and value into o_i and v_i. */
  const loadEntry = (i: number) => [
    ...[...get(offs), ...get(e), ...i32(i), OP.i32Add, ...i32(2), OP.i32Shl, OP.i32Add, OP.i32Load, 2, 0],
    ...set(o[i]!),
    ...[...get(vals), ...get(e), ...i32(i), OP.i32Add, ...i32(3), OP.i32Shl, OP.i32Add, OP.f64Load, 3, 0],
    ...simd(SIMD.f64x2Splat),
    ...set(v[i]!),
  ];
  const code = [
    ...[...get(nvec), ...i32(4), OP.i32Shl, ...set(end)],
    // acc = −μM
    ...overP([
      ...[...get(acc), ...get(p), OP.i32Add],
      ...vload([...get(negMu), ...get(p), OP.i32Add]),
      ...[...simd(SIMD.v128Store), ...memarg],
      ...[...get(p), ...i32(16), OP.i32Add, OP.localTee, p, ...get(end), OP.i32LtU, OP.brIf, 0],
    ]),
    ...[...i32(0), ...set(e)],
    // Four entries at a time while e + 4 ≤ len.
    OP.block,
    OP.blockVoid,
    OP.loop,
    OP.blockVoid,
    ...[...get(e), ...i32(4), OP.i32Add, ...get(len), OP.i32LeU, OP.i32Eqz, OP.brIf, 1],
    ...[0, 1, 2, 3].flatMap(loadEntry),
    ...overP(passBody([0, 1, 2, 3])),
    ...[...get(e), ...i32(4), OP.i32Add, ...set(e), OP.br, 0],
    OP.end,
    OP.end,
    // The entries left, one at a time.
    OP.block,
    OP.blockVoid,
    OP.loop,
    OP.blockVoid,
    ...[...get(e), ...get(len), OP.i32LtU, OP.i32Eqz, OP.brIf, 1],
    ...loadEntry(0),
    ...overP(passBody([0])),
    ...[...get(e), ...i32(1), OP.i32Add, ...set(e), OP.br, 0],
    OP.end,
    OP.end,
    OP.end,
  ];
  const locals = [...leb(2), 7, TYPE.i32, 5, TYPE.v128];
  return funcBody(locals, code);
}

/** The module's bytes (assembled once per thread): `mulRow` over an imported, unshared memory. */
export function mulRowModuleBytes(): Uint8Array<ArrayBuffer> {
  mulRowBytes ??= assembleMulRowModule(65536);
  return mulRowBytes;
}

let mulRowBytes: Uint8Array<ArrayBuffer> | undefined;

function assembleMulRowModule(maxPages: number): Uint8Array<ArrayBuffer> {
  const { i32 } = TYPE;
  return new Uint8Array([
    ...MODULE_HEADER,
    ...section(1, vector([[TYPE.func, 6, i32, i32, i32, i32, i32, i32, 0]])),
    ...section(2, vector([memoryImport(1, maxPages, false)])),
    ...section(3, vector([[0]])),
    ...section(7, vector([[...name("mulRow"), 0x00, 0]])),
    ...section(10, vector([mulRowBody()])),
  ]);
}

/**
 * Rows r0…r1−1 of out (n × l, row-major) = X[:, kept] · M − 1·muM, as `sparseMulRows` and with the
 * same sums, through the SIMD module built from `bytes` (`mulRowModuleBytes()`). Self-contained, so its
 * source runs in a kernel thread as is.
 */
export function sparseMulRowsSimd(
  indptr: ArrayLike<number | bigint>,
  indices: ArrayLike<number>,
  vals: ArrayLike<number>,
  colMap: ArrayLike<number>,
  r0: number,
  r1: number,
  M: Float64Array,
  l: number,
  muM: Float64Array,
  out: Float32Array | Float64Array,
  bytes: Uint8Array<ArrayBuffer>,
): void {
  if (r1 <= r0) return;
  const lp = l + (l & 1);
  const m = M.length / l;
  let longest = 0;
  for (let i = r0; i < r1; i++) longest = Math.max(longest, Number(indptr[i + 1]) - Number(indptr[i]));
  // Layout (bytes): M (m × lp float64), −μM, the accumulator, the row's offsets (int32), its values.
  const mBytes = m * lp * 8;
  const negMuAt = mBytes;
  const accAt = negMuAt + lp * 8;
  const offsAt = accAt + lp * 8;
  const valsAt = offsAt + ((longest * 4 + 15) & ~15);
  const total = valsAt + longest * 8 + 16;
  const pages = Math.ceil(total / 65536);
  // One memory and instance per thread, grown when a call needs more (each new memory reserves address
  // space until it is collected, so one per call would pile them up).
  type Kit = {
    memory: WebAssembly.Memory;
    mulRow: (offs: number, vals: number, len: number, acc: number, negMu: number, nvec: number) => void;
  };
  const g = globalThis as unknown as { __tesseraMulRow?: Kit };
  let kit = g.__tesseraMulRow;
  if (!kit) {
    const mem = new WebAssembly.Memory({ initial: pages, maximum: 65536 });
    const inst = new WebAssembly.Instance(new WebAssembly.Module(bytes), { env: { memory: mem } });
    kit = { memory: mem, mulRow: (inst.exports as unknown as Pick<Kit, "mulRow">).mulRow };
    g.__tesseraMulRow = kit;
  }
  const have = kit.memory.buffer.byteLength / 65536;
  if (have < pages) kit.memory.grow(pages - have);
  const { memory, mulRow } = kit;
  const f64 = new Float64Array(memory.buffer);
  const i32 = new Int32Array(memory.buffer);
  for (let c = 0; c < m; c++) for (let t = 0; t < l; t++) f64[c * lp + t] = M[c * l + t] as number;
  for (let t = 0; t < l; t++) f64[negMuAt / 8 + t] = -(muM[t] as number);
  const acc = accAt / 8;
  const offs = offsAt / 4;
  const vs = valsAt / 8;
  for (let i = r0; i < r1; i++) {
    const end = Number(indptr[i + 1]);
    let len = 0;
    // Branch-free gather (an entry of a dropped column is overwritten by the next one).
    for (let k = Number(indptr[i]); k < end; k++) {
      const c = colMap[indices[k] as number] as number;
      i32[offs + len] = c * lp * 8;
      f64[vs + len] = vals[k] as number;
      len += (c >>> 31) ^ 1;
    }
    mulRow(offsAt, valsAt, len, accAt, negMuAt, lp >> 1);
    const ro = i * l;
    for (let t = 0; t < l; t++) out[ro + t] = f64[acc + t] as number;
  }
}
