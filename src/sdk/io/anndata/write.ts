/**
 * `writeAnnDataZarr`: write a `Table` as zarr v3 exactly as anndata 0.12 lays it out (same groups,
 * encodings and attributes; codecs `bytes` + `zstd`, strings `vlen-utf8` + `zstd`, unsharded chunks).
 * Lazy slots are loaded one at a time while writing.
 */
import type { Mutable } from "@zarrita/storage";
import * as zarr from "zarrita";
import type {
  Categorical,
  DenseArray,
  DType,
  NullableArray,
  SparseMatrix,
  StringArray,
  TypedArray,
} from "../../data/arrays.js";
import type { DataFrame } from "../../data/dataframe.js";
import { loadMatrix, type MatrixSlot } from "../../data/lazy.js";
import type { AxisArray, RawTable, Table } from "../../data/table.js";
import type { UnsDict, UnsValue } from "../../data/uns.js";
import { writeZarrArray } from "../zarr/arrays.js";
import { registerCodecs } from "../zarr/codecs.js";

type Loc = zarr.Location<Mutable>;

/** Options of `writeAnnDataZarr`. */
export interface WriteAnnDataOptions {
  /** Chunks encoded at once per array (default 2). */
  concurrency?: number;
  /**
   * The table is an element of a SpatialData store: its root attributes carry the spatialdata table encoding
   * (`spatialdata-encoding-type`, `version`, and `region`/`region_key`/`instance_key`, null when the table
   * annotates nothing), which spatialdata's reader requires of every table. Default false (plain AnnData).
   */
  spatialdataElement?: boolean;
}

/**
 * A child location. zarrita resolves keys through URL parsing (`new URL(key, "file://" + path)`, then
 * `decodeURIComponent`), so a `#`, `?` or `%` in a column name would be read as URL syntax; holding the
 * path percent-encoded makes every key zarrita derives from it come out as the literal name.
 */
function at(loc: Loc, name: string): Loc {
  const seg = encodeURIComponent(name);
  return new zarr.Location(loc.store, loc.path === "/" ? `/${seg}` : `${loc.path}/${seg}`);
}

const enc = (type: string, version: string) => ({ "encoding-type": type, "encoding-version": version });

class Writer {
  constructor(readonly opts: WriteAnnDataOptions) {}

  group(loc: Loc, attributes: Record<string, unknown>): Promise<unknown> {
    return zarr.create(loc, { attributes });
  }

  async numeric(
    loc: Loc,
    dtype: DType,
    shape: readonly number[],
    data: TypedArray,
    attributes: Record<string, unknown>,
  ) {
    await writeZarrArray(loc, { dtype, shape, data }, { attributes, concurrency: this.opts.concurrency });
  }

  async strings(
    loc: Loc,
    values: readonly (string | null)[],
    shape: readonly number[],
    attributes: Record<string, unknown>,
  ) {
    await writeZarrArray(
      loc,
      { dtype: "string", shape, values },
      { attributes, concurrency: this.opts.concurrency },
    );
  }

  async dense(loc: Loc, a: DenseArray): Promise<void> {
    await this.numeric(loc, a.dtype, a.shape, a.data, enc("array", "0.2.0"));
  }

  /** A string array; with missing values it becomes a nullable-string-array (values + mask). */
  async stringArray(loc: Loc, a: StringArray, allowNull = true): Promise<void> {
    const hasNull = a.values.some((v) => v === null);
    if (!hasNull || !allowNull) {
      await this.strings(loc, a.values, a.shape, enc("string-array", "0.2.0"));
      return;
    }
    await this.group(loc, enc("nullable-string-array", "0.1.0"));
    await this.strings(at(loc, "values"), a.values, a.shape, enc("string-array", "0.2.0"));
    const mask = Uint8Array.from(a.values, (v) => (v === null ? 1 : 0));
    await this.numeric(at(loc, "mask"), "bool", a.shape, mask, enc("array", "0.2.0"));
  }

  async sparse(loc: Loc, m: SparseMatrix): Promise<void> {
    await this.group(loc, {
      shape: [...m.shape],
      ...enc(m.kind === "csr" ? "csr_matrix" : "csc_matrix", "0.1.0"),
    });
    await this.numeric(at(loc, "data"), m.dtype, [m.data.length], m.data, {});
    for (const name of ["indices", "indptr"] as const) {
      const a = m[name];
      // Float64 index arrays only exist when values pass int32; anndata then uses int64.
      const data = a instanceof Int32Array ? a : BigInt64Array.from(a, (x) => BigInt(x));
      await this.numeric(at(loc, name), a instanceof Int32Array ? "int32" : "int64", [a.length], data, {});
    }
  }

  async matrix(loc: Loc, slot: MatrixSlot): Promise<void> {
    const m = await loadMatrix(slot);
    if (m.kind === "dense") await this.dense(loc, m);
    else await this.sparse(loc, m);
  }

  async categorical(loc: Loc, c: Categorical): Promise<void> {
    await this.group(loc, { ordered: c.ordered, ...enc("categorical", "0.2.0") });
    const n = c.categories.kind === "string" ? c.categories.values.length : c.categories.data.length;
    // anndata (pandas) stores codes in the smallest signed type that holds every category and -1.
    const dtype: DType = n < 128 ? "int8" : n < 32768 ? "int16" : "int32";
    const codes =
      dtype === "int8" ? Int8Array.from(c.codes) : dtype === "int16" ? Int16Array.from(c.codes) : c.codes;
    await this.numeric(at(loc, "codes"), dtype, [c.codes.length], codes, enc("array", "0.2.0"));
    if (c.categories.kind === "string") await this.stringArray(at(loc, "categories"), c.categories, false);
    else await this.dense(at(loc, "categories"), c.categories);
  }

  async nullable(loc: Loc, a: NullableArray): Promise<void> {
    const type = a.dtype === "bool" ? "nullable-boolean" : "nullable-integer";
    await this.group(loc, enc(type, "0.1.0"));
    await this.numeric(at(loc, "values"), a.dtype, [a.data.length], a.data, enc("array", "0.2.0"));
    await this.numeric(at(loc, "mask"), "bool", [a.mask.length], a.mask, enc("array", "0.2.0"));
  }

  async dataFrame(loc: Loc, df: DataFrame): Promise<void> {
    await this.group(loc, {
      _index: df.indexName,
      "column-order": [...df.columnOrder],
      ...enc("dataframe", "0.2.0"),
    });
    await this.stringArray(at(loc, df.indexName), df.index, false);
    for (const name of df.columnOrder) {
      const col = df.columns[name];
      if (!col) throw new Error(`${loc.path}: column "${name}" is listed but missing`);
      const dst = at(loc, name);
      switch (col.kind) {
        case "dense":
          await this.dense(dst, col);
          break;
        case "string":
          await this.stringArray(dst, col);
          break;
        case "categorical":
          await this.categorical(dst, col);
          break;
        case "nullable":
          await this.nullable(dst, col);
          break;
      }
    }
  }

  async axisArrays(loc: Loc, entries: Readonly<Record<string, AxisArray>>): Promise<void> {
    await this.group(loc, enc("dict", "0.1.0"));
    for (const [k, v] of Object.entries(entries)) {
      if (v.kind === "dataframe") await this.dataFrame(at(loc, k), v);
      else await this.matrix(at(loc, k), v);
    }
  }

  async matrices(loc: Loc, entries: Readonly<Record<string, MatrixSlot>>): Promise<void> {
    await this.group(loc, enc("dict", "0.1.0"));
    for (const [k, v] of Object.entries(entries)) await this.matrix(at(loc, k), v);
  }

  /** anndata's encoding of `None`: a 0-d bool array with encoding-type "null". */
  async none(loc: Loc): Promise<void> {
    await zarr.create(loc, {
      shape: [],
      chunkShape: [],
      dtype: "bool",
      codecs: [
        { name: "bytes" } as unknown as zarr.CodecMetadata,
        { name: "zstd", configuration: { level: 0, checksum: false } },
      ],
      fillValue: false,
      attributes: enc("null", "0.1.0"),
    });
  }

  async unsValue(loc: Loc, v: UnsValue): Promise<void> {
    if (v === null) return this.none(loc);
    switch (typeof v) {
      case "string":
        return this.strings(loc, [v], [], enc("string", "0.2.0"));
      case "boolean":
        return this.numeric(loc, "bool", [], Uint8Array.of(v ? 1 : 0), enc("numeric-scalar", "0.2.0"));
      case "bigint":
        return this.numeric(loc, "int64", [], BigInt64Array.of(v), enc("numeric-scalar", "0.2.0"));
      case "number":
        // Python ints come back as integral numbers; keep them integers so scanpy reads ints.
        return Number.isInteger(v) && Number.isSafeInteger(v)
          ? this.numeric(loc, "int64", [], BigInt64Array.of(BigInt(v)), enc("numeric-scalar", "0.2.0"))
          : this.numeric(loc, "float64", [], Float64Array.of(v), enc("numeric-scalar", "0.2.0"));
    }
    switch (v.kind) {
      case "dict":
        return this.unsDict(loc, v);
      case "dense":
        return this.dense(loc, v);
      case "string":
        return this.stringArray(loc, v);
      case "csr":
      case "csc":
        return this.sparse(loc, v);
      case "categorical":
        return this.categorical(loc, v);
      case "nullable":
        return this.nullable(loc, v);
      case "dataframe":
        return this.dataFrame(loc, v);
    }
  }

  async unsDict(loc: Loc, d: UnsDict): Promise<void> {
    await this.group(loc, enc("dict", "0.1.0"));
    for (const [k, v] of Object.entries(d.entries)) await this.unsValue(at(loc, k), v);
  }

  async raw(loc: Loc, raw: RawTable | null): Promise<void> {
    if (!raw) return this.none(loc);
    await this.group(loc, enc("raw", "0.1.0"));
    await this.matrix(at(loc, "X"), raw.X);
    await this.dataFrame(at(loc, "var"), raw.var);
    await this.axisArrays(at(loc, "varm"), raw.varm);
  }
}

/**
 * Root attributes: anndata's, plus spatialdata's table encoding when the table is a SpatialData element or
 * annotates a region (spatialdata writes `null` for the keys of a table that annotates nothing).
 */
function rootAttributes(table: Table, spatialdataElement: boolean): Record<string, unknown> {
  const attrs: Record<string, unknown> = enc("anndata", "0.1.0");
  const a = table.annotation;
  if (!a && spatialdataElement) {
    attrs["spatialdata-encoding-type"] = "ngff:regions_table";
    attrs.region = null;
    attrs.region_key = null;
    attrs.instance_key = null;
    attrs.version = "0.2";
  }
  if (a) {
    attrs["spatialdata-encoding-type"] = "ngff:regions_table";
    attrs.region = typeof a.region === "string" ? a.region : [...a.region];
    attrs.region_key = a.regionKey;
    attrs.instance_key = a.instanceKey;
    attrs.version = "0.2";
  }
  return attrs;
}

/**
 * Write `table` as an AnnData zarr v3 group at `path` of a writable zarrita store (anndata 0.12 layout).
 * Lazy matrices are loaded one after another; big arrays are written chunk by chunk.
 */
export async function writeAnnDataZarr(
  table: Table,
  store: Mutable,
  path = "/",
  opts: WriteAnnDataOptions = {},
): Promise<void> {
  registerCodecs();
  const w = new Writer(opts);
  const clean = path.split("/").filter(Boolean).map(encodeURIComponent).join("/");
  const root = new zarr.Location(store, `/${clean}`);
  await w.group(root, rootAttributes(table, opts.spatialdataElement ?? false));
  if (table.X) await w.matrix(at(root, "X"), table.X);
  await w.matrices(at(root, "layers"), table.layers);
  await w.dataFrame(at(root, "obs"), table.obs);
  await w.axisArrays(at(root, "obsm"), table.obsm);
  await w.matrices(at(root, "obsp"), table.obsp);
  await w.raw(at(root, "raw"), table.raw);
  await w.unsDict(at(root, "uns"), table.uns);
  await w.dataFrame(at(root, "var"), table.var);
  await w.axisArrays(at(root, "varm"), table.varm);
  await w.matrices(at(root, "varp"), table.varp);
}
