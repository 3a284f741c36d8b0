/**
 * Decoding LZF through h5wasm-plugins' LZF plugin with a correct decoder.
 *
 * That plugin (HDF Group's H5Zlzf, h5wasm-plugins 0.2.1) decodes into a buffer of a guessed size and
 * fails when the data is bigger, with no retry. h5py stores no size for variable-length strings, so the
 * guess is the compressed size and every LZF string array fails; h5wasm then returns garbage and aborts
 * the wasm module while freeing it. The failure path also calls `__errno_location`, which h5wasm does not
 * export, another abort.
 *
 * The plugin is loaded by libhdf5's `dlopen`, deep inside a read, so there is no API to reach it. The one
 * point where JavaScript sees it is Emscripten instantiating the side module, synchronously, with
 * `new WebAssembly.Instance`. A hook there (installed once per process, inert for every other module)
 * replaces the plugin's filter callback in the shared function table with one that decodes with `lzfDecode`
 * (measuring the output first) and keeps the plugin's own code for compressing.
 */
import { lzfDecode } from "./lzf.js";

/** HDF5's `H5Z_FLAG_REVERSE`: the filter callback is asked to decode. */
const H5Z_FLAG_REVERSE = 0x100;

/** An HDF5 filter callback: `(flags, cd_nelmts, cd_values*, nbytes, buf_size*, buf**) → size or 0`. */
type FilterCallback = (
  flags: number,
  nelmts: number,
  cdValues: number,
  nbytes: number,
  bufSizeAt: number,
  bufAt: number,
) => number;

/** What Emscripten hands a side module under `env` (its dynamic linker's symbols). */
interface SideModuleEnv {
  memory: WebAssembly.Memory;
  __indirect_function_table: WebAssembly.Table;
  __table_base: number;
  malloc(size: number): number;
  free(at: number): void;
}

/**
 * A wasm module re-exporting an imported host function as `(i32 × 6) → i32`, the filter callback's
 * signature: a function table holds only wasm functions, so a JavaScript callback enters it through this.
 */
// biome-ignore format: one wasm section per line
const TRAMPOLINE = new Uint8Array([
  0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, // header
  0x01, 0x0b, 0x01, 0x60, 0x06, 0x7f, 0x7f, 0x7f, 0x7f, 0x7f, 0x7f, 0x01, 0x7f, // type 0: (i32×6) → i32
  0x02, 0x07, 0x01, 0x01, 0x65, 0x01, 0x66, 0x00, 0x00, // import "e" "f": function of type 0
  0x07, 0x05, 0x01, 0x01, 0x66, 0x00, 0x00, // export "f": function 0
]);

const HOOKED = Symbol.for("tessera.h5.lzf-decoder");

/** Read an unsigned LEB128 at `at`; returns the value and the next offset. */
function leb(bytes: Uint8Array, at: number): [number, number] {
  let value = 0;
  let shift = 0;
  for (;;) {
    const b = bytes[at++] ?? 0;
    value += (b & 0x7f) * 2 ** shift;
    shift += 7;
    if (b < 0x80 || at >= bytes.length) return [value, at];
  }
}

/** Function-table slots a side module reserves, from its `dylink.0` memory-info subsection. */
function tableSize(module: WebAssembly.Module): number | null {
  const section = WebAssembly.Module.customSections(module, "dylink.0")[0];
  if (!section) return null;
  const bytes = new Uint8Array(section);
  let at = 0;
  while (at < bytes.length) {
    const kind = bytes[at++];
    const [size, body] = leb(bytes, at);
    if (kind === 1) {
      // WASM_DYLINK_MEM_INFO: memory size, memory alignment, table size, table alignment.
      let p = leb(bytes, body)[1];
      p = leb(bytes, p)[1];
      return leb(bytes, p)[0];
    }
    at = body + size;
  }
  return null;
}

/**
 * Whether `module` is the LZF plugin built the way this hook knows: an HDF5 plugin exporting the LZF
 * filter class and codec, with exactly one function-table slot (its filter callback).
 */
export function isLzfPlugin(module: WebAssembly.Module): boolean {
  const names = new Set(WebAssembly.Module.exports(module).map((e) => e.name));
  return (
    names.has("H5PLget_plugin_info") &&
    names.has("H5Z_LZF") &&
    names.has("lzf_decompress") &&
    tableSize(module) === 1
  );
}

/** The filter callback that decodes with `lzfDecode` and leaves compressing to `original`. */
function decodingCallback(env: SideModuleEnv, original: FilterCallback): FilterCallback {
  return (flags, nelmts, cdValues, nbytes, bufSizeAt, bufAt) => {
    if (!(flags & H5Z_FLAG_REVERSE)) return original(flags, nelmts, cdValues, nbytes, bufSizeAt, bufAt);
    // An exception must not unwind through libhdf5: every failure returns 0 ("filter failed").
    try {
      const inAt = new DataView(env.memory.buffer).getUint32(bufAt, true);
      const input = () => new Uint8Array(env.memory.buffer, inAt, nbytes >>> 0);
      const size = lzfDecode(input(), null);
      if (size <= 0) return 0;
      const outAt = env.malloc(size) >>> 0;
      if (outAt === 0) return 0;
      // malloc may have grown the memory, which detaches earlier views: take new ones.
      if (lzfDecode(input(), new Uint8Array(env.memory.buffer, outAt, size)) !== size) {
        env.free(outAt);
        return 0;
      }
      env.free(inAt);
      const view = new DataView(env.memory.buffer);
      view.setUint32(bufAt, outAt, true);
      view.setUint32(bufSizeAt, size, true);
      return size;
    } catch {
      return 0;
    }
  };
}

/** Swap the LZF plugin's filter callback, in its one table slot, for `decodingCallback`. */
function replaceCallback(env: SideModuleEnv, Native: typeof WebAssembly.Instance): void {
  const table = env.__indirect_function_table;
  const slot = Number(env.__table_base);
  const original = table.get(slot) as FilterCallback | null;
  if (typeof original !== "function" || original.length !== 6) return;
  const bridge = new Native(new WebAssembly.Module(TRAMPOLINE), {
    e: { f: decodingCallback(env, original) },
  });
  table.set(slot, bridge.exports.f as FilterCallback);
}

/**
 * Install, once per process, the hook that gives every LZF plugin instance the correct decoder. Must run
 * before libhdf5 first loads the plugin (before the plugin folder joins its search path).
 */
export function installLzfDecoder(): void {
  const current = WebAssembly.Instance as unknown as Record<symbol, unknown>;
  if (current[HOOKED]) return;
  const Native = WebAssembly.Instance;
  const hooked = new Proxy(Native, {
    construct(target, args, newTarget) {
      const instance = Reflect.construct(target, args, newTarget) as WebAssembly.Instance;
      const [module, imports] = args as [WebAssembly.Module, { env?: SideModuleEnv } | undefined];
      // The table slot is filled when the instance is created, before Emscripten runs any of its code.
      if (imports?.env && isLzfPlugin(module)) replaceCallback(imports.env, Native);
      return instance;
    },
    get(target, prop, receiver) {
      return prop === HOOKED ? true : Reflect.get(target, prop, receiver);
    },
  });
  WebAssembly.Instance = hooked;
}
