/**
 * LZF decompression (the format of liblzf, which h5py's `compression="lzf"` filter writes).
 *
 * The LZF plugin of h5wasm-plugins cannot be trusted to decode: it sizes its output buffer from the
 * dataset's filter parameters, or from the compressed size when h5py stored none (h5py does that for
 * variable-length strings, so every string array of an LZF h5ad), and gives up instead of growing the
 * buffer. This decoder measures the output first, so it needs no guess.
 *
 * A stream is a sequence of runs: a control byte below 32 starts a literal run of `ctrl + 1` bytes; any
 * other is a back reference of length `(ctrl >> 5) + 2` (7 means a further length byte follows) to
 * `((ctrl & 31) << 8) + next byte + 1` bytes back in the output.
 */

/** Returned by `lzfDecode` when the input is not a valid LZF stream. */
export const LZF_INVALID = -1;
/** Returned by `lzfDecode` when `out` is too small for the decoded data. */
export const LZF_TOO_SMALL = -2;

/**
 * Decode the LZF stream `src` into `out` and return the decoded length, or, when `out` is null, only
 * measure that length. Returns `LZF_INVALID` or `LZF_TOO_SMALL` on failure.
 */
export function lzfDecode(src: Uint8Array, out: Uint8Array | null): number {
  const n = src.length;
  let ip = 0;
  let op = 0;
  while (ip < n) {
    let ctrl = src[ip++] as number;
    if (ctrl < 32) {
      const len = ctrl + 1;
      if (ip + len > n) return LZF_INVALID;
      if (out) {
        if (op + len > out.length) return LZF_TOO_SMALL;
        out.set(src.subarray(ip, ip + len), op);
      }
      ip += len;
      op += len;
      continue;
    }
    let len = ctrl >> 5;
    if (len === 7) {
      if (ip >= n) return LZF_INVALID;
      len += src[ip++] as number;
    }
    if (ip >= n) return LZF_INVALID;
    ctrl = ((ctrl & 0x1f) << 8) | (src[ip++] as number);
    const ref = op - ctrl - 1;
    len += 2;
    if (ref < 0) return LZF_INVALID;
    if (out) {
      if (op + len > out.length) return LZF_TOO_SMALL;
      // Byte by byte: the source may overlap the bytes being written (a run).
      for (let i = 0; i < len; i++) out[op + i] = out[ref + i] as number;
    }
    op += len;
  }
  return op;
}
