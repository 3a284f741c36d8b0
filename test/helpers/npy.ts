/**
 * A small reader of NumPy's `.npy` (header + little-endian data) and `.npz` (a zip of `.npy`) files,
 * for comparing against reference values in tests.
 */
import { readFile } from "node:fs/promises";
import { BytesRangeReader } from "../../src/sdk/io/store/range-reader.js";
import { ZipStore } from "../../src/sdk/io/store/zip-store.js";

/** Typed arrays an `.npy` file can decode to. */
export type NpyData =
  | Float32Array
  | Float64Array
  | Int8Array
  | Uint8Array
  | Int16Array
  | Uint16Array
  | Int32Array
  | Uint32Array
  | BigInt64Array
  | BigUint64Array
  | string[];

/** A decoded `.npy` array: its dtype descriptor, shape (C order) and data. */
export interface NpyArray {
  readonly descr: string;
  readonly shape: number[];
  readonly data: NpyData;
}

const NUMERIC: Record<string, [new (b: ArrayBuffer) => Exclude<NpyData, string[]>, number]> = {
  f4: [Float32Array, 4],
  f8: [Float64Array, 8],
  i1: [Int8Array, 1],
  u1: [Uint8Array, 1],
  b1: [Uint8Array, 1],
  i2: [Int16Array, 2],
  u2: [Uint16Array, 2],
  i4: [Int32Array, 4],
  u4: [Uint32Array, 4],
  i8: [BigInt64Array, 8],
  u8: [BigUint64Array, 8],
};

/** Decode the bytes of one `.npy` file (`label` names it in errors). */
export function parseNpy(bytes: Uint8Array, label = "npy"): NpyArray {
  const magic = String.fromCharCode(...bytes.subarray(0, 6));
  if (magic !== "\x93NUMPY") throw new Error(`${label}: not an .npy file (bad magic)`);
  const major = bytes[6]!;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const headerLen = major === 1 ? view.getUint16(8, true) : view.getUint32(8, true);
  const start = major === 1 ? 10 : 12;
  const header = new TextDecoder().decode(bytes.subarray(start, start + headerLen));
  const descr = /'descr':\s*'([^']+)'/.exec(header)?.[1];
  const fortran = /'fortran_order':\s*True/.test(header);
  const shapeText = /'shape':\s*\(([^)]*)\)/.exec(header)?.[1];
  if (!descr || shapeText === undefined) throw new Error(`${label}: unreadable header ${header}`);
  if (fortran) throw new Error(`${label}: Fortran-ordered arrays are not supported`);
  const shape = shapeText
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean)
    .map(Number);
  const count = shape.reduce((a, b) => a * b, 1);
  const body = bytes.subarray(start + headerLen);
  const order = descr[0]!;
  const code = descr.slice(1);
  if (order === ">") throw new Error(`${label}: big-endian data (${descr}) is not supported`);
  if (code.startsWith("S") || code.startsWith("U")) {
    const width = Number(code.slice(1));
    const size = code.startsWith("U") ? 4 : 1;
    const out: string[] = [];
    for (let i = 0; i < count; i++) {
      let s = "";
      for (let c = 0; c < width; c++) {
        const at = (i * width + c) * size;
        const cp =
          size === 4 ? new DataView(body.buffer, body.byteOffset + at, 4).getUint32(0, true) : body[at]!;
        if (cp === 0) break;
        s += String.fromCodePoint(cp);
      }
      out.push(s);
    }
    return { descr, shape, data: out };
  }
  const spec = NUMERIC[code];
  if (!spec) throw new Error(`${label}: unsupported dtype ${descr}`);
  const [Ctor, size] = spec;
  if (body.byteLength < count * size) throw new Error(`${label}: truncated data (${body.byteLength} bytes)`);
  const copy = body.slice(0, count * size); // aligned copy
  return { descr, shape, data: new Ctor(copy.buffer) };
}

/** Read an `.npy` file. */
export async function readNpy(path: string): Promise<NpyArray> {
  return parseNpy(new Uint8Array(await readFile(path)), path);
}

/** Read every array of an `.npz` file, keyed by name without the `.npy` suffix. */
export async function readNpz(path: string): Promise<Record<string, NpyArray>> {
  const bytes = new Uint8Array(await readFile(path));
  const store = await ZipStore.open(new BytesRangeReader(bytes, path), { prefix: "" });
  const out: Record<string, NpyArray> = {};
  for (const key of store.entries.keys()) {
    const data = await store.get(`/${key}`);
    if (!data) throw new Error(`${path}: entry ${key} could not be read`);
    out[key.replace(/\.npy$/, "")] = parseNpy(data, `${path}:${key}`);
  }
  return out;
}
