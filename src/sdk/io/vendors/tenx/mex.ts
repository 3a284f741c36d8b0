/**
 * 10x Market Exchange folders (`matrix.mtx[.gz]`, `barcodes.tsv[.gz]`, `features.tsv[.gz]` or the
 * Cell Ranger 2 `genes.tsv`): the sparse coordinate matrix is features × barcodes, 1-based; it becomes
 * barcodes × features CSR.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { strings } from "../../../data/arrays.js";
import type { Column } from "../../../data/dataframe.js";
import type { Table } from "../../../data/table.js";
import { DataError } from "../../data-error.js";
import { parseDelimited, readTextFile } from "../text.js";
import { countsTable, type TenxCounts } from "./counts.js";

/** The first of `names` (with or without `.gz`) present in `dir`, or null. */
export function firstPresent(dir: string, names: readonly string[]): string | null {
  for (const n of names) {
    for (const cand of [n, `${n}.gz`]) if (existsSync(join(dir, cand))) return join(dir, cand);
  }
  return null;
}

/** Whether `dir` holds a MEX matrix. */
export function isMexFolder(dir: string): boolean {
  return (
    firstPresent(dir, ["matrix.mtx"]) !== null &&
    firstPresent(dir, ["barcodes.tsv"]) !== null &&
    firstPresent(dir, ["features.tsv", "genes.tsv"]) !== null
  );
}

/** Index of the end of the line starting at `pos` (its `\n`, or the text's end); a `\r` before it is space. */
function lineEnd(text: string, pos: number): number {
  const e = text.indexOf("\n", pos);
  return e < 0 ? text.length : e;
}

/** Space, tab or carriage return. */
function isSpace(c: number): boolean {
  return c === 32 || c === 9 || c === 13;
}

/** Parse a MatrixMarket coordinate file (features × barcodes) into barcode-major CSR. */
export function parseMtx(
  text: string,
  where: string,
): { nFeatures: number; nBarcodes: number; data: Float32Array; indices: Int32Array; indptr: Int32Array } {
  const firstEnd = lineEnd(text, 0);
  const first = text.slice(0, firstEnd);
  if (!/^%%MatrixMarket\s+matrix\s+coordinate/i.test(first))
    throw new DataError(
      `${where}: not a MatrixMarket coordinate matrix (first line ${JSON.stringify(first.slice(0, 80))})`,
    );
  // Comment lines, then the size line.
  let pos = 0;
  let lineNo = 1;
  while (pos < text.length && text.charCodeAt(pos) === 37 /* % */) {
    pos = lineEnd(text, pos) + 1;
    lineNo++;
  }
  const sizeEnd = lineEnd(text, pos);
  const sizeLine = text.slice(pos, sizeEnd);
  const dims = sizeLine.trim().split(/\s+/).map(Number);
  if (dims.length !== 3 || dims.some((d) => !Number.isInteger(d) || d < 0))
    throw new DataError(`${where}: bad size line ${JSON.stringify(sizeLine)}`);
  const [nFeatures, nBarcodes, nnz] = dims as [number, number, number];
  pos = sizeEnd + 1;
  lineNo++;
  const rows = new Int32Array(nnz);
  const cols = new Int32Array(nnz);
  const vals = new Float32Array(nnz);
  let k = 0;
  // One pass over the characters: no array of lines, no string per field (at 500k cells the split
  // lines were millions of strings the collector had to walk).
  const n = text.length;
  const fields = [0, 0, 0];
  while (pos < n) {
    const end = lineEnd(text, pos);
    let nf = 0;
    let p = pos;
    let bad = false;
    while (p < end && nf < 3) {
      while (p < end && isSpace(text.charCodeAt(p))) p++;
      if (p >= end) break;
      const s = p;
      let int = 0;
      let plain = true;
      while (p < end && !isSpace(text.charCodeAt(p))) {
        const c = text.charCodeAt(p) - 48;
        if (c >= 0 && c <= 9) int = int * 10 + c;
        else plain = false;
        p++;
      }
      const v = plain ? int : Number(text.slice(s, p));
      if (Number.isNaN(v)) bad = true;
      fields[nf++] = v;
    }
    if (nf > 0) {
      if (k >= nnz) throw new DataError(`${where}: more entries than the ${nnz} declared`);
      const f = fields[0]! - 1;
      const b = nf > 1 ? fields[1]! - 1 : -1;
      const v = nf > 2 ? fields[2]! : 1;
      if (
        bad ||
        !(f >= 0 && f < nFeatures && b >= 0 && b < nBarcodes && Number.isInteger(f) && Number.isInteger(b))
      )
        throw new DataError(
          `${where}: line ${lineNo} (${JSON.stringify(text.slice(pos, end).trim())}) is outside ${nFeatures} × ${nBarcodes} or not numeric`,
        );
      rows[k] = b;
      cols[k] = f;
      vals[k++] = v;
    }
    pos = end + 1;
    lineNo++;
  }
  if (k !== nnz)
    throw new DataError(`${where}: ${k} entries, the header declares ${nnz} (the file may be truncated)`);
  // Counting sort by barcode, then by feature within a barcode (stable order of the input otherwise).
  const indptr = new Int32Array(nBarcodes + 1);
  for (let e = 0; e < nnz; e++) indptr[rows[e]! + 1]!++;
  for (let b = 0; b < nBarcodes; b++) indptr[b + 1]! += indptr[b];
  const next = indptr.slice(0, nBarcodes);
  const data = new Float32Array(nnz);
  const indices = new Int32Array(nnz);
  for (let e = 0; e < nnz; e++) {
    const at = next[rows[e]!]!++;
    indices[at] = cols[e]!;
    data[at] = vals[e]!;
  }
  for (let b = 0; b < nBarcodes; b++) sortRow(indices, data, indptr[b]!, indptr[b + 1]!);
  return { nFeatures, nBarcodes, data, indices, indptr };
}

function sortRow(idx: Int32Array, val: Float32Array, lo: number, hi: number): void {
  for (let i = lo + 1; i < hi; i++) {
    const ki = idx[i]!;
    const kv = val[i]!;
    let j = i - 1;
    while (j >= lo && idx[j]! > ki) {
      idx[j + 1] = idx[j]!;
      val[j + 1] = val[j]!;
      j--;
    }
    idx[j + 1] = ki;
    val[j + 1] = kv;
  }
}

/** Read a MEX folder as a table (barcodes × features). */
export async function readMex(dir: string): Promise<{ table: Table; warnings: string[] }> {
  const mtxPath = firstPresent(dir, ["matrix.mtx"]);
  const bcPath = firstPresent(dir, ["barcodes.tsv"]);
  const featPath = firstPresent(dir, ["features.tsv", "genes.tsv"]);
  if (!mtxPath || !bcPath || !featPath)
    throw new DataError(
      `${dir}: not a 10x matrix folder (needs matrix.mtx, barcodes.tsv and features.tsv or genes.tsv, gzipped or not)`,
    );
  const m = parseMtx(await readTextFile(mtxPath), mtxPath);
  const barcodes =
    parseDelimited(await readTextFile(bcPath), { header: false, sep: "\t", where: bcPath }).columns[0] ?? [];
  const feats = parseDelimited(await readTextFile(featPath), { header: false, sep: "\t", where: featPath });
  if (barcodes.length !== m.nBarcodes)
    throw new DataError(`${bcPath}: ${barcodes.length} barcodes, the matrix has ${m.nBarcodes}`);
  if (feats.nRows !== m.nFeatures)
    throw new DataError(`${featPath}: ${feats.nRows} features, the matrix has ${m.nFeatures}`);
  const ids = feats.columns[0]!;
  const names = feats.columns[1] ?? ids;
  const cols: Record<string, Column> = {};
  if (feats.columns[2]) cols.feature_types = strings(feats.columns[2]);
  const counts: TenxCounts = {
    barcodes,
    ids,
    names,
    featureColumns: cols,
    data: m.data,
    indices: m.indices,
    indptr: m.indptr,
  };
  return countsTable(counts, mtxPath);
}
