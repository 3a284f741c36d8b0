/** Text columns with few distinct values (gene names of transcripts, FOV names) as categoricals: one code per row, not one string. */
import { strings } from "../../data/arrays.js";
import type { Column } from "../../data/dataframe.js";

/** A categorical of `values` (categories in order of first appearance). */
export function categorical(values: readonly string[]): Column {
  const lookup = new Map<string, number>();
  const cats: string[] = [];
  const codes = new Int32Array(values.length);
  for (let i = 0; i < values.length; i++) {
    const v = values[i]!;
    let c = lookup.get(v);
    if (c === undefined) {
      c = cats.length;
      cats.push(v);
      lookup.set(v, c);
    }
    codes[i] = c;
  }
  return { kind: "categorical", codes, categories: strings(cats), ordered: false };
}

/** A string column as a categorical; other columns unchanged. */
export function asCategorical(col: Column): Column {
  return col.kind === "string" ? categorical(col.values.map((v) => v ?? "")) : col;
}
