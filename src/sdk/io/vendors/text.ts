/**
 * Text tables as instruments and other tools write them: CSV or TSV, gzip-compressed or not (told by
 * the bytes, not the name), headers quoted or bare (R's `write.csv` quotes every header and string),
 * CRLF or LF line ends. Parsed into columns of strings; {@link typedColumns} turns them into frame
 * columns (numbers where every value is a number, strings otherwise).
 */
import { readFile } from "node:fs/promises";
import { gunzipSync } from "node:zlib";
import type { SparseMatrix } from "../../data/arrays.js";
import { dense, strings } from "../../data/arrays.js";
import type { Column } from "../../data/dataframe.js";
import { DataError } from "../data-error.js";

/** Read a whole text file, gunzipping it when its first bytes are the gzip magic. */
export async function readTextFile(path: string): Promise<string> {
  const bytes = await readFile(path);
  if (bytes.length >= 2 && bytes[0] === 0x1f && bytes[1] === 0x8b) {
    try {
      return gunzipSync(bytes).toString("utf8");
    } catch (err) {
      throw new DataError(`${path}: the gzip stream is truncated or corrupt (${(err as Error).message})`);
    }
  }
  return bytes.toString("utf8");
}

/** A parsed text table: its header (or null) and one string array per column. */
export interface TextTable {
  readonly header: readonly string[] | null;
  readonly columns: readonly string[][];
  readonly nRows: number;
}

/** Options of {@link parseDelimited}. */
export interface ParseOptions {
  /** Field separator (default: tab when the first line has tabs and no commas, else comma). */
  readonly sep?: string;
  /** Whether the first line is a header (default true). */
  readonly header?: boolean;
  /** What errors name (the file). */
  readonly where: string;
}

/** Split one line into fields, honouring double quotes (`""` inside quotes is a quote). */
function splitLine(line: string, sep: string): string[] {
  if (!line.includes('"')) return line.split(sep);
  const out: string[] = [];
  let cur = "";
  let quoted = false;
  for (let i = 0; i < line.length; i++) {
    const ch = line[i]!;
    if (quoted) {
      if (ch === '"') {
        if (line[i + 1] === '"') {
          cur += '"';
          i++;
        } else quoted = false;
      } else cur += ch;
    } else if (ch === '"') quoted = true;
    else if (ch === sep) {
      out.push(cur);
      cur = "";
    } else cur += ch;
  }
  out.push(cur);
  return out;
}

/**
 * Parse delimited text into columns. Every row must have as many fields as the first (a row with one
 * more field than the header is R's row-names layout: its first field is dropped). Blank trailing lines
 * are ignored. A ragged row is a {@link DataError} naming the file and line.
 */
export function parseDelimited(text: string, opts: ParseOptions): TextTable {
  const lines = text.split(/\r?\n/);
  while (lines.length && lines[lines.length - 1]!.trim() === "") lines.pop();
  if (lines.length === 0) return { header: opts.header === false ? null : [], columns: [], nRows: 0 };
  const first = lines[0]!;
  const sep = opts.sep ?? (first.includes("\t") && !first.includes(",") ? "\t" : ",");
  const hasHeader = opts.header !== false;
  const header = hasHeader ? splitLine(first, sep).map((h) => h.trim()) : null;
  const start = hasHeader ? 1 : 0;
  const width = header ? header.length : splitLine(first, sep).length;
  const columns: string[][] = Array.from({ length: width }, () => new Array(lines.length - start));
  for (let r = start; r < lines.length; r++) {
    let fields = splitLine(lines[r]!, sep);
    if (fields.length === width + 1 && header) fields = fields.slice(1);
    if (fields.length !== width) {
      throw new DataError(
        `${opts.where}: line ${r + 1} has ${fields.length} fields, expected ${width}${r === lines.length - 1 ? " (the file may be truncated)" : ""}`,
      );
    }
    for (let c = 0; c < width; c++) columns[c]![r - start] = fields[c]!;
  }
  return { header, columns, nRows: lines.length - start };
}

/** Read and parse a delimited text file (gzip or not). */
export async function readDelimited(
  path: string,
  opts: Omit<ParseOptions, "where"> = {},
): Promise<TextTable> {
  return parseDelimited(await readTextFile(path), { ...opts, where: path });
}

/** The index of column `name` in a parsed table's header, or a DataError listing the columns. */
export function columnIndex(t: TextTable, name: string, where: string): number {
  const i = t.header?.indexOf(name) ?? -1;
  if (i < 0)
    throw new DataError(
      `${where}: no column "${name}" (columns: ${(t.header ?? []).slice(0, 30).join(", ")})`,
    );
  return i;
}

const NA = new Set(["", "NA", "NaN", "nan", "null", "NULL"]);

/** Values as numbers when every one is numeric (or missing → NaN); else null. */
export function asNumbers(values: readonly string[]): Float64Array | null {
  const out = new Float64Array(values.length);
  for (let i = 0; i < values.length; i++) {
    const v = values[i]!;
    if (NA.has(v)) {
      out[i] = Number.NaN;
      continue;
    }
    const n = Number(v);
    if (Number.isNaN(n)) return null;
    out[i] = n;
  }
  return out;
}

/** One frame column from strings: float64 when every value is numeric (integers stay exact), else strings. */
export function typedColumn(values: readonly string[]): Column {
  const nums = asNumbers(values);
  if (nums) return dense(nums);
  if (values.every((v) => v === "TRUE" || v === "FALSE" || v === "True" || v === "False"))
    return dense(
      Uint8Array.from(values, (v) => (v[0] === "T" ? 1 : 0)),
      undefined,
      "bool",
    );
  return strings(values);
}

/** Frame columns of a parsed table, skipping the named ones (the index). */
export function typedColumns(t: TextTable, skip: readonly string[] = []): Record<string, Column> {
  const out: Record<string, Column> = {};
  (t.header ?? []).forEach((name, i) => {
    if (skip.includes(name) || name in out) return;
    out[name] = typedColumn(t.columns[i]!);
  });
  return out;
}

/**
 * The cells × features CSR matrix of a wide count table (a vendor's cell-by-gene CSV): `rows` of the
 * table in order, `cols` as the matrix's columns in order, zeros left out. Two passes (count, then fill)
 * so the values go straight into typed arrays. A value that is not a number is a `DataError` naming the
 * file, line and column.
 */
export function csrFromTextColumns(
  t: TextTable,
  rows: readonly number[],
  cols: readonly number[],
  file: string,
): SparseMatrix {
  const n = rows.length;
  const indptr = new Int32Array(n + 1);
  for (let i = 0; i < n; i++) {
    const r = rows[i]!;
    let nnz = 0;
    for (const c of cols) {
      const v = Number(t.columns[c]![r]);
      if (Number.isNaN(v))
        throw new DataError(`${file}: line ${r + 2}, column "${t.header?.[c] ?? c}" is not a number`);
      if (v !== 0) nnz++;
    }
    indptr[i + 1] = indptr[i]! + nnz;
  }
  const data = new Float32Array(indptr[n]!);
  const indices = new Int32Array(indptr[n]!);
  for (let i = 0, k = 0; i < n; i++) {
    const r = rows[i]!;
    cols.forEach((c, j) => {
      const v = Number(t.columns[c]![r]);
      if (v !== 0) {
        indices[k] = j;
        data[k++] = v;
      }
    });
  }
  return { kind: "csr", dtype: "float32", shape: [n, cols.length], data, indices, indptr };
}
