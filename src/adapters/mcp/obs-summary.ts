/**
 * The summary `get_obs_summary` gives of one obs column: value counts (top 60) for a categorical,
 * string or boolean column; min, max, mean, median and `n_nan` for a numeric one. The median sorts
 * one float64 copy of the column's finite values (one column: bounded by the cell count).
 */
import type { Column } from "../../sdk/data/dataframe.js";

/** How many values a categorical summary lists. */
export const TOP_VALUES = 60;

/** A column's summary. */
export type ObsSummary =
  | {
      kind: "categorical";
      n: number;
      n_nan: number;
      n_values: number;
      counts: { value: string; count: number }[];
    }
  | {
      kind: "numeric";
      n: number;
      n_nan: number;
      min: number | null;
      max: number | null;
      mean: number | null;
      median: number | null;
    };

function counted(n: number, keyAt: (i: number) => string | null): ObsSummary {
  const counts = new Map<string, number>();
  let nan = 0;
  for (let i = 0; i < n; i++) {
    const k = keyAt(i);
    if (k === null) nan++;
    else counts.set(k, (counts.get(k) ?? 0) + 1);
  }
  const sorted = [...counts].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
  return {
    kind: "categorical",
    n,
    n_nan: nan,
    n_values: sorted.length,
    counts: sorted.slice(0, TOP_VALUES).map(([value, count]) => ({ value, count })),
  };
}

function numeric(n: number, valueAt: (i: number) => number): ObsSummary {
  const finite = new Float64Array(n);
  let m = 0;
  let sum = 0;
  for (let i = 0; i < n; i++) {
    const v = valueAt(i);
    if (Number.isNaN(v)) continue;
    finite[m++] = v;
    sum += v;
  }
  const vals = finite.subarray(0, m).sort();
  const median = m === 0 ? null : m % 2 ? vals[(m - 1) / 2]! : (vals[m / 2 - 1]! + vals[m / 2]!) / 2;
  return {
    kind: "numeric",
    n,
    n_nan: n - m,
    min: m ? vals[0]! : null,
    max: m ? vals[m - 1]! : null,
    mean: m ? sum / m : null,
    median,
  };
}

/** The summary of one column. */
export function summarizeColumn(col: Column): ObsSummary {
  switch (col.kind) {
    case "categorical": {
      const cats = col.categories;
      const label = (c: number) => (cats.kind === "string" ? (cats.values[c] ?? "") : String(cats.data[c]));
      return counted(col.codes.length, (i) => (col.codes[i]! < 0 ? null : label(col.codes[i]!)));
    }
    case "string":
      return counted(col.values.length, (i) => col.values[i] ?? null);
    case "dense":
      if (col.dtype === "bool") return counted(col.data.length, (i) => String(Boolean(col.data[i])));
      return numeric(col.data.length, (i) => Number(col.data[i]));
    case "nullable":
      if (col.dtype === "bool")
        return counted(col.data.length, (i) => (col.mask[i] ? null : String(Boolean(col.data[i]))));
      return numeric(col.data.length, (i) => (col.mask[i] ? Number.NaN : Number(col.data[i])));
  }
}
