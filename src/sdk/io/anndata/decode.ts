/**
 * The AnnData decoder: turns a tree of `AnnNode`s (zarr or HDF5) into a `Table`.
 *
 * It follows anndata's IO registry (attrs `encoding-type` / `encoding-version`) and the layouts older
 * writers used: anndata 0.7 categoricals (int codes with a `categories` attr naming, or referencing,
 * `__categories/<col>`), missing encoding attrs (inferred from structure), `raw` as a 0-d "null" array,
 * h5ad `raw.X` / `raw.var`, and ancient obs/var record arrays. X, layers, obsp, varp and raw/X come
 * back lazy; the rest is read now. Anything it cannot represent is skipped with a warning.
 */
import {
  BYTES_PER_ELEMENT,
  type Categorical,
  type DenseArray,
  type DType,
  type IndexArray,
  type NullableArray,
  type SparseMatrix,
  type StringArray,
  sizeOfShape,
} from "../../data/arrays.js";
import { type Column, type DataFrame, dataFrame } from "../../data/dataframe.js";
import { type LazyMatrix, lazyMatrix, type MatrixSlot } from "../../data/lazy.js";
import { compactStrings } from "../../data/lazy-strings.js";
import {
  type AxisArray,
  makeTable,
  type RawTable,
  type RegionAnnotation,
  type Table,
} from "../../data/table.js";
import type { UnsDict, UnsValue } from "../../data/uns.js";
import { DataError } from "../data-error.js";
import { checkReadSize } from "../memory-budget.js";
import { scalarOf, toIndexArray } from "../zarr/arrays.js";
import { type AnnNode, isNodeRef, type NodeData } from "./node.js";

/** What a reader returns besides the table. */
export interface DecodeResult {
  readonly table: Table;
  /** Nodes skipped or read approximately, one sentence each, naming the node. */
  readonly warnings: string[];
  /** Bytes on disk per slot (`X`, `obs`, `layers/counts`, …) where the source could tell. */
  readonly diskBytes: Record<string, number>;
}

/** Decoding state: warnings and sizes collected on the way. */
interface Ctx {
  readonly warnings: string[];
  readonly diskBytes: Record<string, number>;
}

function encodingOf(node: AnnNode): string | null {
  const e = node.attrs["encoding-type"];
  return typeof e === "string" ? e : null;
}

function fail(node: AnnNode, what: string): never {
  throw new Error(`${node.where}: ${what}`);
}

async function need(parent: AnnNode, name: string, why: string): Promise<AnnNode> {
  const n = await parent.get(name);
  if (!n) fail(parent, `missing "${name}" (${why})`);
  return n;
}

function record(ctx: Ctx, slot: string, node: AnnNode): void {
  const b = node.diskBytes();
  if (b !== null) ctx.diskBytes[slot] = b;
}

/** A truthy attribute: numpy bools arrive as booleans, 0/1 or "True". */
function truthy(v: unknown): boolean {
  if (typeof v === "boolean") return v;
  if (typeof v === "number" || typeof v === "bigint") return Number(v) !== 0;
  if (typeof v === "string") return v.toLowerCase() === "true";
  if (Array.isArray(v)) return v.length > 0 && truthy(v[0]);
  if (ArrayBuffer.isView(v)) return truthy((v as unknown as ArrayLike<unknown>)[0]);
  return false;
}

/** Attribute that should be a list of strings (h5py writes empty lists as empty float arrays). */
function stringList(v: unknown): string[] | null {
  if (typeof v === "string") return [v];
  if (Array.isArray(v)) return v.map((x) => String(x));
  if (ArrayBuffer.isView(v)) return Array.from(v as unknown as ArrayLike<unknown>, (x) => String(x));
  return null;
}

function numberList(v: unknown): number[] | null {
  if (Array.isArray(v) || ArrayBuffer.isView(v))
    return Array.from(v as ArrayLike<number | bigint>, (x) => Number(x));
  return null;
}

async function readNumeric(node: AnnNode): Promise<Extract<NodeData, { kind: "numeric" }>> {
  const d = await node.read();
  if (d.kind !== "numeric")
    fail(node, `expected a numeric array, found ${d.kind === "string" ? "strings" : "records"}`);
  return d;
}

async function readStrings(node: AnnNode): Promise<string[]> {
  const d = await node.read();
  if (d.kind === "string") return d.values;
  if (d.kind === "numeric") return Array.from(d.data as ArrayLike<number | bigint>, (x) => String(x));
  return fail(node, "expected strings, found a record array");
}

function toInt32Codes(data: ArrayLike<number | bigint>): Int32Array {
  const out = new Int32Array(
    new (typeof SharedArrayBuffer !== "undefined" ? SharedArrayBuffer : ArrayBuffer)(data.length * 4),
  );
  for (let i = 0; i < data.length; i++) out[i] = Number(data[i]);
  return out;
}

// ---------------------------------------------------------------------------------------------------------------
// 1-d arrays and columns

/** Read a string-valued node: string-array, nullable-string-array, or a numeric array shown as strings. */
async function decodeStringArray(node: AnnNode): Promise<StringArray> {
  if (node.isGroup) {
    if (encodingOf(node) !== "nullable-string-array")
      fail(node, `expected strings, found a ${encodingOf(node) ?? "group"}`);
    const values = await readStrings(await need(node, "values", "nullable-string-array"));
    const mask = await readNumeric(await need(node, "mask", "nullable-string-array"));
    return {
      kind: "string",
      shape: [values.length],
      values: values.map((v, i) => (mask.data[i] ? null : v)),
    };
  }
  const values = await readStrings(node);
  return { kind: "string", shape: node.shape.length ? [...node.shape] : [values.length], values };
}

async function decodeDense(node: AnnNode): Promise<DenseArray | StringArray> {
  const d = await node.read();
  if (d.kind === "string") return { kind: "string", shape: d.shape, values: d.values };
  if (d.kind === "record") fail(node, "record arrays cannot be used here");
  return { kind: "dense", dtype: d.dtype, shape: d.shape, data: d.data };
}

async function decodeCategorical(node: AnnNode): Promise<Categorical> {
  const codesNode = await need(node, "codes", "categorical");
  const catsNode = await need(node, "categories", "categorical");
  const codes = await readNumeric(codesNode);
  const categories =
    catsNode.isGroup || catsNode.dtype === "string"
      ? await decodeStringArray(catsNode)
      : await decodeDense(catsNode);
  return {
    kind: "categorical",
    codes: toInt32Codes(codes.data as ArrayLike<number>),
    categories,
    ordered: truthy(node.attrs.ordered),
  };
}

async function decodeNullable(node: AnnNode, enc: string): Promise<NullableArray> {
  const values = await readNumeric(await need(node, "values", enc));
  const mask = await readNumeric(await need(node, "mask", enc));
  const m =
    mask.data instanceof Uint8Array
      ? mask.data
      : Uint8Array.from(mask.data as ArrayLike<number>, (x) => (x ? 1 : 0));
  return {
    kind: "nullable",
    dtype: enc === "nullable-boolean" ? "bool" : values.dtype,
    data: values.data,
    mask: m,
  };
}

/** Resolve an anndata 0.7 `categories` attribute (a path relative to the frame, or an HDF5 reference). */
async function legacyCategories(
  frame: AnnNode,
  ref: unknown,
  col: AnnNode,
): Promise<DenseArray | StringArray> {
  const target = isNodeRef(ref)
    ? await frame.get(ref.$ref.startsWith("/") ? ref.$ref : `/${ref.$ref}`)
    : await frame.get(String(ref));
  if (!target) fail(col, `legacy categories ${JSON.stringify(isNodeRef(ref) ? ref.$ref : ref)} not found`);
  return target.dtype === "string" ? decodeStringArray(target) : decodeDense(target);
}

/** One obs/var column. */
async function decodeColumn(frame: AnnNode, col: AnnNode): Promise<Column> {
  const enc = encodingOf(col);
  if (col.isGroup) {
    if (enc === "categorical" || (!enc && (await col.get("codes")) && (await col.get("categories"))))
      return decodeCategorical(col);
    if (enc === "nullable-integer" || enc === "nullable-boolean") return decodeNullable(col, enc);
    if (enc === "nullable-string-array") return decodeStringArray(col);
    return fail(col, `cannot use a ${enc ?? "group"} as a data frame column`);
  }
  if (col.attrs.categories !== undefined && enc !== "string-array") {
    const codes = await readNumeric(col);
    const categories = await legacyCategories(frame, col.attrs.categories, col);
    const catNode = typeof col.attrs.categories === "string" ? await frame.get(col.attrs.categories) : null;
    const ordered = truthy(col.attrs.ordered ?? catNode?.attrs.ordered);
    return { kind: "categorical", codes: toInt32Codes(codes.data as ArrayLike<number>), categories, ordered };
  }
  if (col.shape.length !== 1)
    fail(col, `a data frame column must be 1-d, found shape [${col.shape.join(", ")}]`);
  const d = await decodeDense(col);
  return d;
}

/** obs / var (and any `dataframe` element). */
export async function decodeDataFrame(node: AnnNode, ctx: Ctx): Promise<DataFrame> {
  if (!node.isGroup) {
    if (node.dtype === "record") return recordFrame(node, await node.read(), true);
    fail(node, "expected a data frame group");
  }
  const enc = encodingOf(node);
  if (enc && enc !== "dataframe") fail(node, `expected encoding-type "dataframe", found "${enc}"`);
  const indexName = typeof node.attrs._index === "string" ? node.attrs._index : "_index";
  const indexNode = await node.get(indexName);
  if (!indexNode) fail(node, `missing the index array "${indexName}" (named by the _index attribute)`);
  // Obs names of a million cells kept as one byte buffer, not a million strings on the heap.
  const index = compactStrings(await decodeStringArray(indexNode));
  let order = stringList(node.attrs["column-order"]);
  if (!order) {
    const kids = (await node.children()) ?? [];
    order = kids.filter((k) => k !== indexName && k !== "__categories");
  }
  const columns: Record<string, Column> = {};
  const kept: string[] = [];
  for (const name of order) {
    const colNode = await node.get(name);
    if (!colNode) fail(node, `column "${name}" is listed in column-order but missing`);
    try {
      columns[name] = await decodeColumn(node, colNode);
      kept.push(name);
    } catch (err) {
      ctx.warnings.push(
        `${colNode.where}: column skipped: ${(err as Error).message.replace(`${colNode.where}: `, "")}`,
      );
    }
  }
  try {
    return dataFrame(index, columns, indexName, kept);
  } catch (err) {
    return fail(node, (err as Error).message);
  }
}

/** A record array as a frame: an `index` field (ancient obs/var) or positional labels (rec-arrays in uns). */
function recordFrame(node: AnnNode, d: NodeData, useIndexField: boolean): DataFrame {
  if (d.kind !== "record") fail(node, "expected a record array");
  const n = d.shape[0] ?? 0;
  const indexField = useIndexField
    ? d.fields.find((f) => f.name === "index" || f.name === "_index")
    : undefined;
  const index =
    indexField && indexField.data.kind === "string"
      ? indexField.data.values
      : Array.from({ length: n }, (_, i) => String(i));
  const columns: Record<string, Column> = {};
  for (const f of d.fields) {
    if (f === indexField) continue;
    if (f.data.kind === "string") columns[f.name] = { kind: "string", shape: [n], values: f.data.values };
    else if (f.data.kind === "numeric")
      columns[f.name] = { kind: "dense", dtype: f.data.dtype, shape: [n], data: f.data.data };
  }
  return dataFrame(index, columns, indexField ? indexField.name : "_index");
}

// ---------------------------------------------------------------------------------------------------------------
// Matrices

function isSparse(node: AnnNode): "csr" | "csc" | null {
  const enc = encodingOf(node);
  if (enc === "csr_matrix") return "csr";
  if (enc === "csc_matrix") return "csc";
  const legacy = node.attrs.h5sparse_format;
  if (legacy === "csr" || legacy === "csc") return legacy;
  return null;
}

async function sparseInfo(node: AnnNode, format: "csr" | "csc") {
  const shape = numberList(node.attrs.shape ?? node.attrs.h5sparse_shape);
  if (!shape || shape.length !== 2) fail(node, `${format} matrix lacks a 2-d "shape" attribute`);
  const data = await need(node, "data", `${format} matrix`);
  const indices = await need(node, "indices", `${format} matrix`);
  const indptr = await need(node, "indptr", `${format} matrix`);
  if (typeof data.dtype !== "string" || data.dtype === "string" || data.dtype === "record") {
    fail(data, `unsupported sparse data type ${JSON.stringify(data.dtype)}`);
  }
  const major = format === "csr" ? shape[0] : shape[1];
  if (indptr.shape[0] !== (major ?? 0) + 1) {
    fail(
      indptr,
      `has ${indptr.shape[0]} entries, expected ${(major ?? 0) + 1} for a ${format} matrix of shape [${shape.join(", ")}]`,
    );
  }
  if (indices.shape[0] !== data.shape[0])
    fail(indices, `has ${indices.shape[0]} entries but data has ${data.shape[0]}`);
  return {
    shape: [shape[0], shape[1]] as [number, number],
    data,
    indices,
    indptr,
    dtype: data.dtype as DType,
  };
}

/**
 * Check a CSR/CSC matrix's index arrays as scipy requires them: `indptr` starts at 0, never
 * decreases and ends at the number of stored values; every index lies in `0..minor-1`. One pass
 * over each array. A break is a `DataError` naming the node, the rule and the first position that
 * breaks it (such a matrix would otherwise serve wrong values, or NaN).
 */
export function checkSparseIndices(
  where: string,
  format: "csr" | "csc",
  shape: readonly [number, number],
  indptr: IndexArray,
  indices: IndexArray,
  nnz: number,
): void {
  const fail = (what: string): never => {
    throw new DataError(`${where}: invalid ${format} matrix of shape [${shape.join(", ")}]: ${what}`);
  };
  const major = format === "csr" ? shape[0] : shape[1];
  const minor = format === "csr" ? shape[1] : shape[0];
  const axis = format === "csr" ? "row" : "column";
  if (indptr.length !== major + 1) fail(`indptr has ${indptr.length} entries, expected ${major + 1}`);
  if (indices.length !== nnz) fail(`indices has ${indices.length} entries, data has ${nnz}`);
  if (indptr[0] !== 0) fail(`indptr starts at ${indptr[0]}, not 0`);
  let prev = 0;
  for (let a = 1; a <= major; a++) {
    const p = indptr[a]!;
    if (!(p >= prev))
      fail(`indptr decreases at ${axis} ${a - 1}: ${prev} then ${p} (it must never decrease)`);
    prev = p;
  }
  if (prev !== nnz) fail(`indptr ends at ${prev}, but there are ${nnz} stored values`);
  const integral = indices instanceof Int32Array;
  for (let k = 0; k < nnz; k++) {
    const j = indices[k]!;
    if (!(j >= 0 && j < minor) || (!integral && !Number.isInteger(j))) {
      // The major position, for the message only (a binary search over indptr).
      let lo = 0;
      let hi = major;
      while (lo < hi) {
        const mid = (lo + hi + 1) >> 1;
        if (indptr[mid]! <= k) lo = mid;
        else hi = mid - 1;
      }
      fail(`indices[${k}] = ${j} (${axis} ${lo}) is outside 0..${minor - 1}`);
    }
  }
}

async function loadSparse(node: AnnNode, format: "csr" | "csc"): Promise<SparseMatrix> {
  const info = await sparseInfo(node, format);
  const nnz = info.data.shape[0] ?? 0;
  const major = (format === "csr" ? info.shape[0] : info.shape[1]) ?? 0;
  // What the file declares, against memory, before anything is read.
  checkReadSize(nnz * (BYTES_PER_ELEMENT[info.dtype] + 4) + (major + 1) * 4, node.where);
  const data = await readNumeric(info.data);
  const indices = await readNumeric(info.indices);
  const indptr = await readNumeric(info.indptr);
  const m: SparseMatrix = {
    kind: format,
    dtype: data.dtype,
    shape: info.shape,
    data: data.data,
    indices: toIndexArray(indices.data),
    indptr: toIndexArray(indptr.data),
  };
  checkSparseIndices(node.where, format, info.shape, m.indptr, m.indices, m.data.length);
  return m;
}

/** A matrix node as a lazy slot: shape, dtype, format and nnz known now, data read on `load()`. */
async function lazySlot(node: AnnNode): Promise<LazyMatrix> {
  const format = node.isGroup ? isSparse(node) : null;
  if (node.isGroup && !format) {
    // anndata < 0.8 h5ad sparse groups sometimes lack attrs; infer from children.
    if (
      (await node.get("indptr")) &&
      (await node.get("indices")) &&
      (await node.get("data")) &&
      node.attrs.shape
    ) {
      return lazySparse(node, "csr");
    }
    fail(node, `cannot read a ${encodingOf(node) ?? "group"} as a matrix`);
  }
  if (format) return lazySparse(node, format);
  if (typeof node.dtype !== "string" || node.dtype === "string" || node.dtype === "record") {
    fail(node, `matrix has unsupported data type ${JSON.stringify(node.dtype)}`);
  }
  const dtype = node.dtype;
  const shape = [...node.shape];
  return lazyMatrix({ format: "dense", dtype, shape }, async () => {
    // What the file declares, against memory, before anything is allocated.
    checkReadSize(sizeOfShape(shape) * BYTES_PER_ELEMENT[dtype], node.where);
    const d = await readNumeric(node);
    if (d.data.length !== sizeOfShape(shape))
      throw new DataError(
        `${node.where}: read ${d.data.length} values, its shape [${shape.join(", ")}] holds ${sizeOfShape(shape)}`,
      );
    return { kind: "dense", dtype: d.dtype, shape: d.shape, data: d.data };
  });
}

async function lazySparse(node: AnnNode, format: "csr" | "csc"): Promise<LazyMatrix> {
  const info = await sparseInfo(node, format);
  return lazyMatrix({ format, dtype: info.dtype, shape: info.shape, nnz: info.data.shape[0] ?? 0 }, () =>
    loadSparse(node, format),
  );
}

/** An obsm/varm entry, read now. */
async function decodeAxisArray(node: AnnNode, ctx: Ctx): Promise<AxisArray> {
  if (node.isGroup && (encodingOf(node) === "dataframe" || node.attrs._index !== undefined))
    return decodeDataFrame(node, ctx);
  if (!node.isGroup && node.dtype === "string") fail(node, "string arrays cannot be obsm/varm entries");
  return (await lazySlot(node)).load();
}

/** Keyed children of a `dict` group, each decoded by `fn`; failures become warnings. */
async function decodeMapping<T>(
  node: AnnNode | null,
  slot: string,
  ctx: Ctx,
  fn: (child: AnnNode) => Promise<T>,
): Promise<Record<string, T>> {
  const out: Record<string, T> = {};
  if (!node) return out;
  if (!node.isGroup) {
    ctx.warnings.push(`${node.where}: ${slot} is not a group; ignored`);
    return out;
  }
  record(ctx, slot, node);
  const names = await node.children();
  if (names === null) {
    // Only a store that cannot enumerate keys (an HTTP folder) and has no consolidated metadata gets here.
    ctx.warnings.push(
      `${node.where}: ${slot} was not read: the store has no consolidated metadata and cannot list its keys ` +
        `(an HTTP folder); consolidate it (zarr.consolidate_metadata) or serve it as a .zarr.zip`,
    );
    return out;
  }
  for (const name of names) {
    const child = await node.get(name);
    if (!child) continue;
    try {
      out[name] = await fn(child);
      record(ctx, `${slot}/${name}`, child);
    } catch (err) {
      ctx.warnings.push(`${child.where}: skipped: ${(err as Error).message.replace(`${child.where}: `, "")}`);
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------------------
// uns

async function decodeUnsValue(node: AnnNode, ctx: Ctx): Promise<UnsValue> {
  const enc = encodingOf(node);
  if (node.isGroup) {
    switch (enc) {
      case null:
      case "dict":
        return decodeUnsDict(node, ctx);
      case "dataframe":
        return decodeDataFrame(node, ctx);
      case "csr_matrix":
      case "csc_matrix":
        return loadSparse(node, enc === "csr_matrix" ? "csr" : "csc");
      case "categorical":
        return decodeCategorical(node);
      case "nullable-integer":
      case "nullable-boolean":
        return decodeNullable(node, enc);
      case "nullable-string-array":
        return decodeStringArray(node);
      default:
        return fail(node, `encoding "${enc}" is not supported`);
    }
  }
  if (enc === "null") return null;
  if (node.dtype === "record" || enc === "rec-array") {
    if (node.dtype !== "record")
      fail(node, `record array of unsupported data type ${JSON.stringify(node.dtype)}`);
    return recordFrame(node, await node.read(), false);
  }
  if (typeof node.dtype === "object") fail(node, `unsupported data type (${node.dtype.unsupported})`);
  if (node.shape.length === 0 || enc === "string" || enc === "numeric-scalar") {
    const d = await node.read();
    if (d.kind === "string") return d.values[0] ?? "";
    if (d.kind === "numeric") {
      if (sizeOfShape(d.shape) !== 1)
        fail(node, `a scalar must hold one value, found shape [${d.shape.join(", ")}]`);
      return scalarOf(d.data, d.dtype);
    }
    return fail(node, "unexpected record scalar");
  }
  return decodeDense(node);
}

async function decodeUnsDict(node: AnnNode, ctx: Ctx): Promise<UnsDict> {
  const entries = await decodeMapping(
    node,
    node.path || "uns",
    { warnings: ctx.warnings, diskBytes: {} },
    (c) => decodeUnsValue(c, ctx),
  );
  return { kind: "dict", entries };
}

// ---------------------------------------------------------------------------------------------------------------
// raw and the table

async function decodeRaw(root: AnnNode, ctx: Ctx): Promise<RawTable | null> {
  const raw = await root.get("raw");
  if (raw && !raw.isGroup) return null; // anndata writes `raw = None` as a 0-d "null" array
  let X: AnnNode | null;
  let varNode: AnnNode | null;
  let varmNode: AnnNode | null;
  if (raw) {
    X = await raw.get("X");
    varNode = await raw.get("var");
    varmNode = await raw.get("varm");
  } else {
    // h5ad written by anndata < 0.7 keeps raw as root datasets named `raw.X`, `raw.var`, `raw.varm`.
    X = await root.get("raw.X");
    if (!X) return null;
    varNode = await root.get("raw.var");
    varmNode = await root.get("raw.varm");
  }
  if (!X) {
    ctx.warnings.push(`${(raw ?? root).where}: raw has no X; raw ignored`);
    return null;
  }
  if (!varNode) fail(raw ?? root, "raw has X but no var");
  if (raw) record(ctx, "raw", raw);
  return {
    X: await lazySlot(X),
    var: await decodeDataFrame(varNode, ctx),
    varm: await decodeMapping(varmNode, "raw/varm", { warnings: ctx.warnings, diskBytes: {} }, (c) =>
      decodeAxisArray(c, ctx),
    ),
  };
}

function annotationOf(attrs: Readonly<Record<string, unknown>>): RegionAnnotation | null {
  if (attrs["spatialdata-encoding-type"] !== "ngff:regions_table") return null;
  const region = attrs.region;
  const regionKey = attrs.region_key;
  const instanceKey = attrs.instance_key;
  if (
    region === null ||
    region === undefined ||
    typeof regionKey !== "string" ||
    typeof instanceKey !== "string"
  )
    return null;
  const r = Array.isArray(region) ? region.map(String) : String(region);
  return { region: r, regionKey, instanceKey };
}

/** Decode the AnnData element rooted at `root`. */
export async function decodeAnnData(root: AnnNode): Promise<DecodeResult> {
  const ctx: Ctx = { warnings: [], diskBytes: {} };
  if (!root.isGroup) fail(root, "an AnnData element must be a group, found an array");
  const enc = encodingOf(root);
  if (enc && enc !== "anndata") fail(root, `not an AnnData element (encoding-type "${enc}")`);
  const obsNode = await root.get("obs");
  const varNode = await root.get("var");
  if (!obsNode || !varNode) fail(root, `not an AnnData element: missing ${!obsNode ? "obs" : "var"}`);
  const obs = await decodeDataFrame(obsNode, ctx);
  record(ctx, "obs", obsNode);
  const vr = await decodeDataFrame(varNode, ctx);
  record(ctx, "var", varNode);

  let X: MatrixSlot | null = null;
  const xNode = await root.get("X");
  if (xNode && !(encodingOf(xNode) === "null" || (!xNode.isGroup && xNode.shape.length === 0))) {
    X = await lazySlot(xNode);
    record(ctx, "X", xNode);
  }
  const lazyEntry = (c: AnnNode) => lazySlot(c);
  const layers = await decodeMapping(await root.get("layers"), "layers", ctx, lazyEntry);
  const obsp = await decodeMapping(await root.get("obsp"), "obsp", ctx, lazyEntry);
  const varp = await decodeMapping(await root.get("varp"), "varp", ctx, lazyEntry);
  const obsm = await decodeMapping(await root.get("obsm"), "obsm", ctx, (c) => decodeAxisArray(c, ctx));
  const varm = await decodeMapping(await root.get("varm"), "varm", ctx, (c) => decodeAxisArray(c, ctx));
  const unsNode = await root.get("uns");
  let uns: UnsDict = { kind: "dict", entries: {} };
  if (unsNode) {
    uns = await decodeUnsDict(unsNode, ctx);
    record(ctx, "uns", unsNode);
  }
  const raw = await decodeRaw(root, ctx);
  try {
    const table = makeTable({
      X,
      obs,
      var: vr,
      obsm,
      varm,
      obsp,
      varp,
      layers,
      uns,
      raw,
      annotation: annotationOf(root.attrs),
    });
    return { table, warnings: ctx.warnings, diskBytes: ctx.diskBytes };
  } catch (err) {
    return fail(root, (err as Error).message);
  }
}
