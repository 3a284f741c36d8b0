/**
 * Codecs that zarrita 0.7 can decode but not encode (`vlen-utf8`, `gzip`, `zlib`), registered into
 * `zarr.registry` so that Tessera can write AnnData strings and read/write every codec the fixtures use.
 *
 * zarrita looks codecs up by name at first use of an array, so `registerCodecs()` must run before any
 * array is opened or created; every reader and writer in `io/` calls it (it is idempotent).
 */
import * as zarr from "zarrita";
import { DataError } from "../data-error.js";

/** The chunk zarrita hands to an array-to-bytes codec. */
interface StringChunk {
  data: ArrayLike<unknown>;
  shape: number[];
  stride: number[];
}

/** C-order strides of a shape. */
function cStrides(shape: readonly number[]): number[] {
  const stride = new Array<number>(shape.length);
  let step = 1;
  for (let i = shape.length - 1; i >= 0; i--) {
    stride[i] = step;
    step *= shape[i] ?? 1;
  }
  return stride;
}

/**
 * Encode strings in numcodecs' VLenUTF8 framing: u32 LE item count, then per item a u32 LE byte length
 * and the UTF-8 bytes. `null`/`undefined` items are written as empty strings, exactly as numcodecs does
 * for `None` (anndata's nullable-string-array keeps the missing flags in its `mask` array).
 */
export function encodeVlenUtf8(values: ArrayLike<unknown>): Uint8Array {
  const enc = new TextEncoder();
  const parts: Uint8Array[] = new Array(values.length);
  let total = 4 + 4 * values.length;
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    const b = v === null || v === undefined ? new Uint8Array(0) : enc.encode(String(v));
    parts[i] = b;
    total += b.length;
  }
  const out = new Uint8Array(total);
  const view = new DataView(out.buffer);
  view.setUint32(0, values.length, true);
  let pos = 4;
  for (const b of parts) {
    view.setUint32(pos, b.length, true);
    pos += 4;
    out.set(b, pos);
    pos += b.length;
  }
  return out;
}

/** Decode numcodecs VLenUTF8 bytes (honours the view's byte offset, unlike zarrita 0.7's decoder). */
export function decodeVlenUtf8(bytes: Uint8Array): string[] {
  if (bytes.byteLength < 4)
    throw new Error(`vlen-utf8: chunk of ${bytes.byteLength} bytes has no item count`);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const n = view.getUint32(0, true);
  const dec = new TextDecoder();
  const out = new Array<string>(n);
  let pos = 4;
  for (let i = 0; i < n; i++) {
    if (pos + 4 > bytes.byteLength) throw new Error(`vlen-utf8: chunk truncated at item ${i} of ${n}`);
    const len = view.getUint32(pos, true);
    pos += 4;
    if (pos + len > bytes.byteLength) throw new Error(`vlen-utf8: chunk truncated inside item ${i} of ${n}`);
    out[i] = dec.decode(bytes.subarray(pos, pos + len));
    pos += len;
  }
  return out;
}

/** `vlen-utf8` array-to-bytes codec with both directions. */
class VLenUtf8Codec {
  readonly kind = "array_to_bytes" as const;
  readonly #shape: number[];
  constructor(shape: number[]) {
    this.#shape = shape;
  }
  static fromConfig(_config: unknown, meta: { shape: number[] }): VLenUtf8Codec {
    return new VLenUtf8Codec(meta.shape);
  }
  encode(chunk: StringChunk): Uint8Array {
    return encodeVlenUtf8(chunk.data);
  }
  decode(bytes: Uint8Array): StringChunk {
    const data = decodeVlenUtf8(bytes);
    return { data, shape: this.#shape, stride: cStrides(this.#shape) };
  }
}

/** The subset of node:zlib this module uses. */
interface NodeZlib {
  gzip(buf: Uint8Array, opts: { level?: number }, cb: (err: Error | null, out: Uint8Array) => void): void;
  gunzip(
    buf: Uint8Array,
    opts: { maxOutputLength?: number },
    cb: (err: Error | null, out: Uint8Array) => void,
  ): void;
  deflate(buf: Uint8Array, opts: { level?: number }, cb: (err: Error | null, out: Uint8Array) => void): void;
  inflate(
    buf: Uint8Array,
    opts: { maxOutputLength?: number },
    cb: (err: Error | null, out: Uint8Array) => void,
  ): void;
}

let zlibPromise: Promise<NodeZlib | null> | undefined;

/** node:zlib when running in Node (it compresses on the libuv thread pool), else null. */
function nodeZlib(): Promise<NodeZlib | null> {
  if (!zlibPromise) {
    const isNode = typeof process !== "undefined" && typeof process.versions?.node === "string";
    // A variable specifier keeps browser bundlers from trying to resolve a Node built-in.
    const spec = "node:zlib";
    zlibPromise = isNode
      ? (import(/* @vite-ignore */ spec) as Promise<NodeZlib>).catch(() => null)
      : Promise.resolve(null);
  }
  return zlibPromise;
}

/** Run bytes through a (De)CompressionStream: the browser path, where node:zlib does not exist. */
async function viaStream(
  bytes: Uint8Array,
  format: "gzip" | "deflate",
  compress: boolean,
): Promise<Uint8Array> {
  const stream = compress ? new CompressionStream(format) : new DecompressionStream(format);
  const writer = stream.writable.getWriter();
  void writer.write(bytes as Uint8Array<ArrayBuffer>).catch(() => {});
  void writer.close().catch(() => {});
  return new Uint8Array(await new Response(stream.readable).arrayBuffer());
}

/** Promise wrapper over a node:zlib callback function. */
function call(fn: (cb: (err: Error | null, out: Uint8Array) => void) => void): Promise<Uint8Array> {
  return new Promise((resolve, reject) =>
    fn((err, out) => (err ? reject(err) : resolve(new Uint8Array(out)))),
  );
}

/** Largest decoded chunk of a variable-size type (strings), or of any chunk (bytes). */
export const MAX_CHUNK_BYTES = 1024 * 2 ** 20;

/** Bytes per element of zarrita's fixed-size data types. */
const ITEM_BYTES: Readonly<Record<string, number>> = {
  bool: 1,
  int8: 1,
  uint8: 1,
  int16: 2,
  uint16: 2,
  float16: 2,
  int32: 4,
  uint32: 4,
  float32: 4,
  int64: 8,
  uint64: 8,
  float64: 8,
  complex64: 8,
  complex128: 16,
};

/** What a codec is told about the chunks it decodes (zarrita's chunk metadata). */
interface ChunkMeta {
  dataType?: string;
  shape?: readonly number[];
}

/**
 * Most bytes a bytes-to-bytes codec may produce for one chunk: the chunk's size for fixed-size types
 * (a little slack for headers), `MAX_CHUNK_BYTES` otherwise. A compressed chunk that would inflate
 * past it (a bomb) is refused while decoding, not after.
 */
export function decodedChunkBound(meta: ChunkMeta | undefined): number {
  const item = meta?.dataType !== undefined ? ITEM_BYTES[meta.dataType] : undefined;
  const shape = meta?.shape;
  if (item === undefined || !shape) return MAX_CHUNK_BYTES;
  let n = item;
  for (const s of shape) n *= s;
  return Number.isFinite(n) && n >= 0 ? Math.min(MAX_CHUNK_BYTES, n + 4096) : MAX_CHUNK_BYTES;
}

/**
 * A deflate-family bytes-to-bytes codec with encoding: `gzip` (v3 / `numcodecs.gzip`) or `zlib`
 * (v2 numcodecs, deflate with the zlib header). node:zlib where present, else the web streams.
 * Decoding stops at the chunk's size (`decodedChunkBound`).
 */
function deflateCodec(format: "gzip" | "deflate") {
  return class DeflateCodec {
    readonly kind = "bytes_to_bytes" as const;
    constructor(
      readonly level = 1,
      readonly maxOutput = MAX_CHUNK_BYTES,
    ) {}
    static fromConfig(config: { level?: number } | undefined, meta?: ChunkMeta): DeflateCodec {
      return new DeflateCodec(config?.level ?? 1, decodedChunkBound(meta));
    }
    async encode(bytes: Uint8Array): Promise<Uint8Array> {
      const z = await nodeZlib();
      if (!z) return viaStream(bytes, format, true);
      return format === "gzip"
        ? call((cb) => z.gzip(bytes, { level: this.level }, cb))
        : call((cb) => z.deflate(bytes, { level: this.level }, cb));
    }
    async decode(bytes: Uint8Array): Promise<Uint8Array> {
      const z = await nodeZlib();
      if (!z) {
        const out = await viaStream(bytes, format, false);
        if (out.byteLength > this.maxOutput)
          throw new Error(
            `${format}: chunk inflates to ${out.byteLength} bytes, more than its ${this.maxOutput}`,
          );
        return out;
      }
      const opts = { maxOutputLength: Math.max(1, this.maxOutput) };
      try {
        return await (format === "gzip"
          ? call((cb) => z.gunzip(bytes, opts, cb))
          : call((cb) => z.inflate(bytes, opts, cb)));
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === "ERR_BUFFER_TOO_LARGE")
          throw new Error(
            `${format}: chunk inflates past ${this.maxOutput} bytes, the size of a chunk of this array`,
          );
        throw err;
      }
    }
  };
}

/** `gzip` codec with encoding. */
const GzipCodec = deflateCodec("gzip");
/** `zlib` codec with encoding. */
const ZlibCodec = deflateCodec("deflate");

/** A bytes-to-bytes codec as numcodecs exposes it. */
interface InnerCodec {
  encode(b: Uint8Array): Uint8Array | Promise<Uint8Array>;
  decode(b: Uint8Array): Uint8Array | Promise<Uint8Array>;
}

/**
 * numcodecs' wasm blosc decoder returns zeros or garbage for a corrupt or truncated chunk instead of
 * failing. The blosc header records the compressed and uncompressed sizes, so check both.
 */
function checkedBlosc(inner: { fromConfig(config: unknown): InnerCodec }) {
  return {
    kind: "bytes_to_bytes" as const,
    fromConfig(config: unknown, meta?: ChunkMeta) {
      const codec = inner.fromConfig(config);
      const max = decodedChunkBound(meta);
      return {
        kind: "bytes_to_bytes" as const,
        encode: (b: Uint8Array) => codec.encode(b),
        async decode(b: Uint8Array): Promise<Uint8Array> {
          if (b.byteLength < 16)
            throw new Error(`blosc: chunk of ${b.byteLength} bytes is shorter than its header`);
          const view = new DataView(b.buffer, b.byteOffset, b.byteLength);
          const nbytes = view.getUint32(4, true);
          const cbytes = view.getUint32(12, true);
          if (cbytes !== b.byteLength) {
            throw new Error(
              `blosc: header says ${cbytes} compressed bytes, the chunk has ${b.byteLength} (corrupt or truncated)`,
            );
          }
          if (nbytes > max)
            throw new Error(
              `blosc: header says ${nbytes} bytes decoded, more than a chunk of this array (${max})`,
            );
          const out = await codec.decode(b);
          if (out.byteLength !== nbytes) {
            throw new Error(`blosc: decoded ${out.byteLength} bytes, the header says ${nbytes}`);
          }
          return out;
        },
      };
    },
  };
}

/** zstd frames start with a magic number; numcodecs does not always reject input without it. */
function checkedZstd(inner: { fromConfig(config: unknown): InnerCodec }) {
  return {
    kind: "bytes_to_bytes" as const,
    fromConfig(config: unknown, meta?: ChunkMeta) {
      const codec = inner.fromConfig(config);
      const max = decodedChunkBound(meta);
      return {
        kind: "bytes_to_bytes" as const,
        encode: (b: Uint8Array) => codec.encode(b),
        decode(b: Uint8Array) {
          if (b.byteLength < 4 || b[0] !== 0x28 || b[1] !== 0xb5 || b[2] !== 0x2f || b[3] !== 0xfd) {
            throw new Error("zstd: chunk does not start with a zstd frame (corrupt)");
          }
          const declared = zstdContentSize(b);
          if (declared !== null && declared > max)
            throw new Error(
              `zstd: frame declares ${declared} bytes decoded, more than a chunk of this array (${max})`,
            );
          return codec.decode(b);
        },
      };
    },
  };
}

/** The Frame_Content_Size a zstd frame header declares, or null when it does not say. */
export function zstdContentSize(b: Uint8Array): number | null {
  if (b.byteLength < 5) return null;
  const fhd = b[4]!;
  const fcsFlag = fhd >> 6;
  const single = (fhd >> 5) & 1;
  const dictFlag = fhd & 3;
  const fcsBytes = [single ? 1 : 0, 2, 4, 8][fcsFlag]!;
  if (fcsBytes === 0) return null;
  const at = 5 + (single ? 0 : 1) + [0, 1, 2, 4][dictFlag]!;
  if (b.byteLength < at + fcsBytes) return null;
  const view = new DataView(b.buffer, b.byteOffset + at, fcsBytes);
  if (fcsBytes === 1) return view.getUint8(0);
  if (fcsBytes === 2) return view.getUint16(0, true) + 256;
  if (fcsBytes === 4) return view.getUint32(0, true);
  return Number(view.getBigUint64(0, true));
}

/** What the chunk check knows of a zarrita array. */
interface CheckedArray {
  readonly path: string;
  readonly chunks: readonly number[];
  readonly shape: readonly number[];
  readonly store: { location?: unknown };
}

/** `<store>: <array path>`, for messages. */
function arrayWhere(arr: CheckedArray): string {
  const loc = typeof arr.store?.location === "string" ? `${arr.store.location}: ` : "";
  return `${loc}array ${arr.path}`;
}

/** Refuse an array whose shape or chunk shape is not made of usable integers (before indexing). */
export function checkArrayGeometry(arr: CheckedArray): void {
  const bad = (what: string) => new DataError(`${arrayWhere(arr)}: ${what}`);
  if (!arr.shape.every((s) => Number.isSafeInteger(s) && s >= 0))
    throw bad(`shape [${arr.shape.join(", ")}] must be non-negative integers`);
  if (arr.chunks.length !== arr.shape.length || !arr.chunks.every((c) => Number.isSafeInteger(c) && c > 0))
    throw bad(`chunk shape [${arr.chunks.join(", ")}] must be ${arr.shape.length} positive integers`);
}

const CHECKED_CHUNKS = Symbol.for("tessera.zarr.checked-chunks");

/**
 * Check every chunk zarrita decodes, whatever reads it: the array's geometry first, then that the
 * decoded chunk holds exactly as many values as its shape (a truncated or padded chunk would read as
 * fill values or garbage), and any decoding failure as a `DataError` naming the array and the chunk.
 * Installed once on `zarr.Array.prototype`.
 */
function installChunkChecks(): void {
  const proto = zarr.Array.prototype as unknown as Record<PropertyKey, unknown> & {
    getChunk: (
      this: CheckedArray,
      coords: number[],
      ...rest: unknown[]
    ) => Promise<{ data: ArrayLike<unknown>; shape: number[] }>;
  };
  if (proto[CHECKED_CHUNKS]) return;
  proto[CHECKED_CHUNKS] = true;
  const getChunk = proto.getChunk;
  proto.getChunk = async function checkedGetChunk(this: CheckedArray, coords: number[], ...rest: unknown[]) {
    checkArrayGeometry(this);
    let chunk: { data: ArrayLike<unknown>; shape: number[] };
    try {
      chunk = await getChunk.call(this, coords, ...rest);
    } catch (err) {
      if (err instanceof DataError || (err as Error)?.name === "AbortError") throw err;
      const cause = (err as { cause?: unknown })?.cause;
      const msg = cause instanceof Error ? cause.message : err instanceof Error ? err.message : String(err);
      throw new DataError(`${arrayWhere(this)}: chunk [${coords.join(", ")}] cannot be decoded: ${msg}`, {
        cause: err,
      });
    }
    let want = 1;
    for (const s of chunk.shape) want *= s;
    if (chunk.data.length !== want)
      throw new DataError(
        `${arrayWhere(this)}: chunk [${coords.join(", ")}] decodes to ${chunk.data.length} values, its shape [${chunk.shape.join(", ")}] holds ${want} (truncated or corrupt)`,
      );
    return chunk;
  };
}

installChunkChecks();

let registered = false;

/**
 * Register Tessera's codecs with zarrita (`vlen-utf8`, `gzip`, `zlib`, under both their v3 and
 * `numcodecs.*` names). Idempotent; call before opening or creating arrays.
 */
export function registerCodecs(): void {
  if (registered) return;
  registered = true;
  // zarrita's registry entries resolve to a codec class; ours match its (untyped) shape.
  const reg = zarr.registry as unknown as Map<string, () => Promise<unknown>>;
  const entries: [string, unknown][] = [
    ["vlen-utf8", VLenUtf8Codec],
    ["numcodecs.vlen-utf8", VLenUtf8Codec],
    ["gzip", GzipCodec],
    ["numcodecs.gzip", GzipCodec],
    ["zlib", ZlibCodec],
    ["numcodecs.zlib", ZlibCodec],
  ];
  for (const [name, codec] of entries) reg.set(name, async () => codec);
  const blosc = reg.get("blosc");
  const zstd = reg.get("zstd");
  if (blosc) {
    const wrapped = async () => checkedBlosc((await blosc()) as { fromConfig(config: unknown): InnerCodec });
    reg.set("blosc", wrapped);
    reg.set("numcodecs.blosc", wrapped);
  }
  if (zstd) {
    const wrapped = async () => checkedZstd((await zstd()) as { fromConfig(config: unknown): InnerCodec });
    reg.set("zstd", wrapped);
    reg.set("numcodecs.zstd", wrapped);
  }
}

/** Compress bytes with gzip (node:zlib in Node, CompressionStream elsewhere); used by tests and writers. */
export async function gzipBytes(bytes: Uint8Array, level = 6): Promise<Uint8Array> {
  return new GzipCodec(level).encode(bytes);
}
