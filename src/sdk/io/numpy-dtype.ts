/**
 * numpy's type strings (`<f4`, `|u1`, `>i8`, `|S18`, `<U12`, `|O`) as zarr v2 and structured (record)
 * dtypes spell them: the one table from numpy type code to zarr data type name, and the one parser.
 */

/** numpy type codes (kind + item size) → zarr v3 data type names. */
export const NUMPY_TYPES: Readonly<Record<string, string>> = {
  b1: "bool",
  i1: "int8",
  u1: "uint8",
  i2: "int16",
  u2: "uint16",
  i4: "int32",
  u4: "uint32",
  i8: "int64",
  u8: "uint64",
  f2: "float16",
  f4: "float32",
  f8: "float64",
};

/** A numpy type string split into byte order, kind letter and size (item bytes or characters). */
export interface NumpyTypestr {
  /** `<` little, `>` big, `|` not applicable (one byte, or strings). */
  readonly order: "<" | ">" | "|";
  /** numpy kind letter: `b i u f` numeric, `S` bytes, `U` unicode (and others this reader refuses). */
  readonly kind: string;
  /** Item size in bytes for numeric kinds, characters for `S` and `U`. */
  readonly size: number;
}

/** Parse `<f4`-style type strings; null when the text is not one (`|O` included). */
export function parseTypestr(text: string): NumpyTypestr | null {
  const m = /^([<>|])([a-zA-Z])(\d+)$/.exec(text);
  if (!m) return null;
  return { order: m[1] as NumpyTypestr["order"], kind: m[2]!, size: Number(m[3]) };
}

/** The zarr data type name of a numeric numpy type string (`<f4` → `float32`), or undefined. */
export function numpyTypeName(t: NumpyTypestr): string | undefined {
  return NUMPY_TYPES[`${t.kind}${t.size}`];
}
