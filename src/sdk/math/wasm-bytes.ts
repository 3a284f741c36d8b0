/**
 * The few pieces of the WebAssembly binary format that Tessera's hand-assembled SIMD modules
 * (`simd.ts`, `log1p-simd.ts`) are written with: LEB128 numbers, sections, vectors, names and the
 * opcodes they use. Modules are built from these at run time (a few hundred bytes, synchronously),
 * so nothing is compiled at install or build time and no toolchain is needed.
 */

/** Opcodes of the core instruction set used by Tessera's modules. */
export const OP = {
  block: 0x02,
  loop: 0x03,
  if: 0x04,
  end: 0x0b,
  br: 0x0c,
  brIf: 0x0d,
  call: 0x10,
  localGet: 0x20,
  localSet: 0x21,
  localTee: 0x22,
  i32Load: 0x28,
  f32Load: 0x2a,
  f64Load: 0x2b,
  f32Store: 0x38,
  f64Store: 0x39,
  i32Const: 0x41,
  f32Const: 0x43,
  f64Const: 0x44,
  i32Eqz: 0x45,
  i32Eq: 0x46,
  i32LtU: 0x49,
  i32LeU: 0x4d,
  i32GeU: 0x4f,
  i32Add: 0x6a,
  i32Sub: 0x6b,
  i32Mul: 0x6c,
  i32And: 0x71,
  i32Shl: 0x74,
  f32Add: 0x92,
  f32Div: 0x95,
  f64Add: 0xa0,
  f64Mul: 0xa2,
  /** Block type of a block or loop that leaves nothing on the stack. */
  blockVoid: 0x40,
} as const;

/** Fixed-width SIMD opcodes (after the 0xfd prefix). */
export const SIMD = {
  v128Load: 0x00,
  v128Store: 0x0b,
  v128Const: 0x0c,
  i32x4Splat: 0x11,
  f32x4Splat: 0x13,
  f64x2Splat: 0x14,
  f64x2ExtractLane: 0x21,
  f32x4ExtractLane: 0x1f,
  i32x4GtU: 0x3c,
  f32x4Eq: 0x41,
  f32x4Gt: 0x44,
  v128And: 0x4e,
  v128Or: 0x50,
  v128Bitselect: 0x52,
  v128AnyTrue: 0x53,
  i32x4ShrU: 0xad,
  i32x4Sub: 0xb1,
  f32x4Abs: 0xe0,
  f32x4Add: 0xe4,
  f32x4Sub: 0xe5,
  f32x4Mul: 0xe6,
  f32x4Div: 0xe7,
  f64x2Add: 0xf0,
  f64x2Mul: 0xf2,
  f32x4ConvertI32x4S: 0xfa,
} as const;

/** Value and function type codes. */
export const TYPE = { i32: 0x7f, f32: 0x7d, f64: 0x7c, v128: 0x7b, func: 0x60 } as const;

/** Unsigned LEB128. */
export function leb(n: number): number[] {
  const out: number[] = [];
  let v = n >>> 0;
  do {
    let b = v & 0x7f;
    v >>>= 7;
    if (v !== 0) b |= 0x80;
    out.push(b);
  } while (v !== 0);
  return out;
}

/** Signed LEB128 (an `i32.const` immediate). */
export function sleb(n: number): number[] {
  const out: number[] = [];
  let v = n | 0;
  for (;;) {
    const b = v & 0x7f;
    v >>= 7;
    const done = (v === 0 && (b & 0x40) === 0) || (v === -1 && (b & 0x40) !== 0);
    out.push(done ? b : b | 0x80);
    if (done) return out;
  }
}

/** A SIMD instruction's opcode bytes. */
export const simd = (op: number): number[] => [0xfd, ...leb(op)];
/** A name (length, then its bytes). */
export const name = (s: string): number[] => [...leb(s.length), ...Array.from(s, (c) => c.charCodeAt(0))];
/** A section: id, byte length, body. */
export const section = (id: number, body: number[]): number[] => [id, ...leb(body.length), ...body];
/** A vector: count, then the items. */
export const vector = (items: number[][]): number[] => [...leb(items.length), ...items.flat()];
/** A function body: its byte length, local declarations, code (which must end with `end`). */
export const funcBody = (locals: number[], code: number[]): number[] => {
  const body = [...locals, ...code];
  return [...leb(body.length), ...body];
};

/** The 8-byte header of a version-1 module. */
export const MODULE_HEADER = [0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00];

/**
 * The import of `env.memory` with `pages` as both minimum (`min`) and maximum, shared or not (a shared
 * memory's maximum is required).
 */
export function memoryImport(minPages: number, maxPages: number, shared: boolean): number[] {
  const limits = [shared ? 0x03 : 0x01, ...leb(minPages), ...leb(maxPages)];
  return [...name("env"), ...name("memory"), 0x02, ...limits];
}
