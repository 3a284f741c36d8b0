/**
 * A 10x count matrix as a table: barcodes × features, CSR (10x stores CSC by barcode, which is CSR
 * of the transposed, cells × genes, matrix; no copy), var indexed by gene symbol (made unique as
 * anndata's `var_names_make_unique` does) with `gene_ids`, `feature_types`, `genome` columns.
 */
import { dense, type IndexArray, type SparseMatrix, strings, type TypedArray } from "../../../data/arrays.js";
import { type Column, dataFrame } from "../../../data/dataframe.js";
import { makeTable, type Table } from "../../../data/table.js";
import { DataError } from "../../data-error.js";

/** The parts of a 10x matrix as read from disk. */
export interface TenxCounts {
  readonly barcodes: readonly string[];
  /** Feature ids (Ensembl ids, probe ids). */
  readonly ids: readonly string[];
  /** Feature names (gene symbols). */
  readonly names: readonly string[];
  /** Extra per-feature columns (`feature_types`, `genome`, probe columns …). */
  readonly featureColumns: Readonly<Record<string, Column>>;
  /** CSR values, column indices and row pointers (rows = barcodes). */
  readonly data: TypedArray;
  readonly indices: TypedArray;
  readonly indptr: TypedArray;
}

/** Names made unique the anndata way: the second `X` becomes `X-1`, the third `X-2`. */
export function makeUnique(names: readonly string[]): { names: string[]; renamed: number } {
  const seen = new Map<string, number>();
  for (const n of names) seen.set(n, (seen.get(n) ?? 0) + 1);
  const used = new Set(names);
  const counter = new Map<string, number>();
  const firstSeen = new Set<string>();
  let renamed = 0;
  const out = names.map((n) => {
    if ((seen.get(n) ?? 1) === 1) return n;
    if (!firstSeen.has(n)) {
      firstSeen.add(n);
      return n;
    }
    let k = counter.get(n) ?? 1;
    let candidate = `${n}-${k}`;
    while (used.has(candidate)) candidate = `${n}-${++k}`;
    counter.set(n, k + 1);
    used.add(candidate);
    renamed++;
    return candidate;
  });
  return { names: out, renamed };
}

/** An index array as Int32 when every value fits (else Float64), from any integer typed array. */
export function indexArray(a: TypedArray, where: string): IndexArray {
  if (a instanceof Int32Array) return a;
  const n = a.length;
  let fits = true;
  for (let i = 0; i < n; i++) {
    const v = Number(a[i]!);
    if (!Number.isInteger(v) || v < 0)
      throw new DataError(`${where}: index ${i} is ${String(a[i])}, not a count`);
    if (v > 0x7fffffff) fits = false;
  }
  const out = fits ? new Int32Array(n) : new Float64Array(n);
  for (let i = 0; i < n; i++) out[i] = Number(a[i]!);
  return out;
}

/** Values as float32 (scanpy's 10x readers give float32 counts). */
function countsFloat32(a: TypedArray): Float32Array {
  if (a instanceof Float32Array) return a;
  const out = new Float32Array(a.length);
  for (let i = 0; i < a.length; i++) out[i] = Number(a[i]!);
  return out;
}

/**
 * Check a CSR's structure against its shape (so a corrupt file is a clear error, not a wrong matrix)
 * and build the table.
 */
export function countsTable(c: TenxCounts, where: string): { table: Table; warnings: string[] } {
  const nObs = c.barcodes.length;
  const nVar = c.ids.length;
  const indptr = indexArray(c.indptr, `${where}: indptr`);
  const indices = indexArray(c.indices, `${where}: indices`);
  if (indptr.length !== nObs + 1)
    throw new DataError(
      `${where}: indptr has ${indptr.length} entries, expected ${nObs + 1} (one per barcode + 1)`,
    );
  const nnz = indptr[nObs]!;
  if (indptr[0] !== 0 || nnz !== c.data.length || nnz !== indices.length)
    throw new DataError(
      `${where}: indptr ends at ${nnz} but data has ${c.data.length} and indices ${indices.length} values`,
    );
  for (let r = 0; r < nObs; r++)
    if (indptr[r + 1]! < indptr[r]!) throw new DataError(`${where}: indptr decreases at barcode ${r}`);
  for (let i = 0; i < indices.length; i++)
    if (indices[i]! >= nVar)
      throw new DataError(`${where}: feature index ${indices[i]} at ${i} is past the ${nVar} features`);
  sortRows(indices, c.data, indptr);
  const X: SparseMatrix = {
    kind: "csr",
    dtype: "float32",
    shape: [nObs, nVar],
    data: countsFloat32(c.data),
    indices,
    indptr,
  };
  const warnings: string[] = [];
  const unique = makeUnique(c.names);
  if (unique.renamed)
    warnings.push(`${where}: ${unique.renamed} duplicate gene names made unique (var_names_make_unique)`);
  const varFrame = dataFrame(unique.names, { gene_ids: strings(c.ids), ...c.featureColumns }, "_index");
  const obs = dataFrame(c.barcodes, {}, "_index");
  return { table: makeTable({ X, obs, var: varFrame }), warnings };
}

/** A bool column from a typed array. */
export function boolColumn(a: TypedArray): Column {
  return dense(
    Uint8Array.from(a as ArrayLike<number>, (v) => (Number(v) ? 1 : 0)),
    undefined,
    "bool",
  );
}

/** Sort each row's column indices (10x h5 files leave them in any order), values alongside. */
function sortRows(
  indices: Int32Array | Float64Array,
  data: TypedArray,
  indptr: Int32Array | Float64Array,
): void {
  const n = indptr.length - 1;
  for (let r = 0; r < n; r++) {
    const lo = indptr[r]!;
    const hi = indptr[r + 1]!;
    let sorted = true;
    for (let p = lo + 1; p < hi; p++) if (indices[p]! < indices[p - 1]!) sorted = false;
    if (sorted) continue;
    const order = Array.from({ length: hi - lo }, (_, k) => lo + k).sort((a, b) => indices[a]! - indices[b]!);
    const idx = order.map((p) => indices[p]!);
    const val = order.map((p) => data[p]!);
    for (let k = 0; k < idx.length; k++) {
      indices[lo + k] = idx[k]!;
      (data as unknown as Record<number, unknown>)[lo + k] = val[k]!;
    }
  }
}
