/**
 * Reader for zarr v2 arrays of numpy structured dtypes (`[["index", "|S18"], ["gene_ids", "<U12"]]`),
 * which zarrita cannot open. Ancient scanpy stores keep obs/var this way and anndata ≤ 0.11 stores
 * `rank_genes_groups` results as such record arrays. Only 1-d arrays of scalar fields are supported.
 */
import type { Readable } from "@zarrita/storage";
import * as zarr from "zarrita";
import { allocArray, type DType } from "../../data/arrays.js";
import { numpyTypeName, parseTypestr } from "../numpy-dtype.js";
import type { NodeData } from "./node.js";

interface FieldSpec {
  readonly name: string;
  readonly kind: "bytes" | "unicode" | "numeric";
  readonly dtype: DType;
  readonly little: boolean;
  readonly size: number;
  readonly offset: number;
  readonly chars: number;
}

/** Parse a numpy structured dtype description into field layouts. */
export function parseRecordDtype(dt: unknown): { fields: FieldSpec[]; itemSize: number } {
  if (!Array.isArray(dt)) throw new Error(`not a structured dtype: ${JSON.stringify(dt)}`);
  const fields: FieldSpec[] = [];
  let offset = 0;
  for (const f of dt) {
    if (!Array.isArray(f) || typeof f[0] !== "string" || typeof f[1] !== "string") {
      throw new Error(`unsupported structured dtype field ${JSON.stringify(f)}`);
    }
    if (f.length > 2)
      throw new Error(`structured dtype field "${f[0]}" has a sub-array shape, which is not supported`);
    const t = parseTypestr(f[1]);
    if (!t) throw new Error(`unsupported field type ${f[1]} of "${f[0]}"`);
    const k = t.kind;
    const little = t.order !== ">";
    const count = t.size;
    if (k === "S") {
      fields.push({ name: f[0], kind: "bytes", dtype: "uint8", little, size: count, offset, chars: count });
      offset += count;
    } else if (k === "U") {
      fields.push({
        name: f[0],
        kind: "unicode",
        dtype: "uint8",
        little,
        size: count * 4,
        offset,
        chars: count,
      });
      offset += count * 4;
    } else {
      // float16 has no model dtype: a record field of it is refused.
      const name = numpyTypeName(t);
      const dtype = name && name !== "float16" ? (name as DType) : undefined;
      if (!dtype) throw new Error(`unsupported field type ${f[1]} of "${f[0]}"`);
      fields.push({ name: f[0], kind: "numeric", dtype, little, size: count, offset, chars: 0 });
      offset += count;
    }
  }
  return { fields, itemSize: offset };
}

interface BytesCodec {
  decode(bytes: Uint8Array): Promise<Uint8Array> | Uint8Array;
}

/** Build the v2 decode chain (compressor, then filters in reverse) from zarrita's codec registry. */
async function v2Decoder(
  zarray: Record<string, unknown>,
  chunkBytes: number,
): Promise<(b: Uint8Array) => Promise<Uint8Array>> {
  const specs: Record<string, unknown>[] = [];
  for (const f of (zarray.filters as Record<string, unknown>[] | null) ?? []) specs.push(f);
  if (zarray.compressor) specs.push(zarray.compressor as Record<string, unknown>);
  const codecs: BytesCodec[] = [];
  for (const spec of specs) {
    const { id, ...config } = spec as { id: string };
    const entry = (await zarr.registry.get(`numcodecs.${id}`)?.()) as
      | { fromConfig(c: unknown, m: unknown): BytesCodec }
      | undefined;
    if (!entry) throw new Error(`unknown codec ${id}`);
    // A chunk decodes to `chunkBytes` bytes: what the codecs' size checks bound a chunk to.
    codecs.push(
      entry.fromConfig(config, { dataType: "uint8", shape: [chunkBytes], codecs: [], fillValue: 0 }),
    );
  }
  return async (bytes) => {
    let b = bytes;
    for (let i = codecs.length - 1; i >= 0; i--) b = await (codecs[i] as BytesCodec).decode(b);
    return b;
  };
}

/** Read rows `[start, stop)` (default all) of a 1-d v2 structured array into per-field columns. */
export async function readV2Records(
  store: Readable,
  path: string,
  zarray: Record<string, unknown>,
  rows?: { start: number; stop: number },
): Promise<NodeData> {
  const shape = zarray.shape as number[];
  const chunks = zarray.chunks as number[];
  if (shape.length !== 1) throw new Error(`structured arrays of rank ${shape.length} are not supported`);
  if (zarray.order === "F" && shape.length > 1) throw new Error("Fortran order is not supported");
  const { fields, itemSize } = parseRecordDtype(zarray.dtype);
  const n = shape[0] ?? 0;
  const start = Math.max(0, rows?.start ?? 0);
  const stop = Math.min(n, rows?.stop ?? n);
  const count = Math.max(0, stop - start);
  const raw = new Uint8Array(count * itemSize);
  const chunkLen = chunks[0] ?? n;
  const decode = await v2Decoder(zarray, chunkLen * itemSize);
  const fill = typeof zarray.fill_value === "string" ? base64(zarray.fill_value) : null;
  for (let c = Math.floor(start / chunkLen); c * chunkLen < stop; c++) {
    const key = `/${path}/${c}` as const;
    const bytes = await store.get(key);
    const c0 = c * chunkLen;
    const from = Math.max(start, c0);
    const to = Math.min(stop, c0 + chunkLen);
    if (!bytes) {
      if (fill && fill.length === itemSize)
        for (let i = from; i < to; i++) raw.set(fill, (i - start) * itemSize);
      continue;
    }
    const dec = await decode(bytes);
    if (dec.length < (to - c0) * itemSize)
      throw new Error(`chunk ${c} holds ${dec.length} bytes, expected ${chunkLen * itemSize}`);
    raw.set(dec.subarray((from - c0) * itemSize, (to - c0) * itemSize), (from - start) * itemSize);
  }
  const view = new DataView(raw.buffer);
  const out = fields.map((f) => ({ name: f.name, data: fieldColumn(f, raw, view, itemSize, count) }));
  return { kind: "record", shape: [count], fields: out };
}

function fieldColumn(
  f: FieldSpec,
  raw: Uint8Array,
  view: DataView,
  itemSize: number,
  count: number,
): NodeData {
  if (f.kind === "bytes" || f.kind === "unicode") {
    const values = new Array<string>(count);
    const utf8 = new TextDecoder();
    for (let i = 0; i < count; i++) {
      const at = i * itemSize + f.offset;
      if (f.kind === "bytes") {
        let end = at + f.size;
        while (end > at && raw[end - 1] === 0) end--;
        values[i] = utf8.decode(raw.subarray(at, end));
      } else {
        let s = "";
        for (let k = 0; k < f.chars; k++) {
          const cp = view.getUint32(at + 4 * k, f.little);
          if (cp === 0) break;
          s += String.fromCodePoint(cp);
        }
        values[i] = s;
      }
    }
    return { kind: "string", shape: [count], values };
  }
  const data = allocArray(f.dtype, count);
  for (let i = 0; i < count; i++) {
    const at = i * itemSize + f.offset;
    (data as unknown as unknown[])[i] = readScalar(view, at, f.dtype, f.little);
  }
  return { kind: "numeric", dtype: f.dtype, shape: [count], data };
}

function readScalar(view: DataView, at: number, dtype: DType, little: boolean): number | bigint {
  switch (dtype) {
    case "bool":
    case "uint8":
      return view.getUint8(at);
    case "int8":
      return view.getInt8(at);
    case "int16":
      return view.getInt16(at, little);
    case "uint16":
      return view.getUint16(at, little);
    case "int32":
      return view.getInt32(at, little);
    case "uint32":
      return view.getUint32(at, little);
    case "int64":
      return view.getBigInt64(at, little);
    case "uint64":
      return view.getBigUint64(at, little);
    case "float32":
      return view.getFloat32(at, little);
    case "float64":
      return view.getFloat64(at, little);
  }
}

function base64(s: string): Uint8Array {
  const bin = atob(s);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}
