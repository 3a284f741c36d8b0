/** Small helpers shared by the OME-Zarr tests. */
import type { TypedArray } from "../../../../src/sdk/data/arrays.js";

/** First, last, sum, max and first non-zero (flat index, value) of a typed array. */
export function stats(a: TypedArray): {
  first: number;
  last: number;
  sum: number;
  max: number;
  firstNonZero: [number, number] | null;
} {
  let sum = 0;
  let max = Number.NEGATIVE_INFINITY;
  let firstNonZero: [number, number] | null = null;
  for (let i = 0; i < a.length; i++) {
    const v = Number(a[i]);
    sum += v;
    if (v > max) max = v;
    if (firstNonZero === null && v !== 0) firstNonZero = [i, v];
  }
  return { first: Number(a[0]), last: Number(a[a.length - 1]), sum, max, firstNonZero };
}

/** The values of a typed array as plain numbers. */
export function values(a: TypedArray): number[] {
  const out: number[] = [];
  for (let i = 0; i < a.length; i++) out.push(Number(a[i]));
  return out;
}
