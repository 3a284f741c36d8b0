/**
 * Pearson's chi-square test of independence on a contingency table (scipy's
 * `stats.chi2_contingency(observed, correction=True)`): expected counts from the margins, dof
 * (r − 1)(c − 1), Yates' continuity correction when dof is 1, p-value from the chi-square tail.
 */
import { chi2Sf } from "./gamma-inc.js";

/** Outcome of {@link chiSquareContingency}. */
export interface ChiSquareResult {
  /** The chi-square statistic. */
  readonly statistic: number;
  /** P(χ²_dof > statistic); 1 when dof is 0. */
  readonly pvalue: number;
  /** Degrees of freedom, (rows − 1)(cols − 1). */
  readonly dof: number;
  /** Expected counts under independence, row-major rows × cols. */
  readonly expected: Float64Array;
}

/**
 * Test a rows × cols table of counts (row-major) for independence. Every row and column must have a
 * positive total (an empty one makes an expected count zero: scipy refuses it too), so callers drop
 * empty categories first.
 */
export function chiSquareContingency(
  observed: ArrayLike<number>,
  rows: number,
  cols: number,
  correction = true,
): ChiSquareResult {
  if (observed.length !== rows * cols)
    throw new Error(`chiSquareContingency: ${observed.length} counts for a ${rows} × ${cols} table`);
  const rowSum = new Float64Array(rows);
  const colSum = new Float64Array(cols);
  let total = 0;
  for (let i = 0; i < rows; i++) {
    for (let j = 0; j < cols; j++) {
      const o = observed[i * cols + j]!;
      if (!(o >= 0)) throw new Error(`chiSquareContingency: count ${o} at (${i}, ${j}) is not a count`);
      rowSum[i]! += o;
      colSum[j]! += o;
      total += o;
    }
  }
  for (let i = 0; i < rows; i++)
    if (!(rowSum[i]! > 0)) throw new Error(`chiSquareContingency: row ${i} has no counts`);
  for (let j = 0; j < cols; j++)
    if (!(colSum[j]! > 0)) throw new Error(`chiSquareContingency: column ${j} has no counts`);
  const expected = new Float64Array(rows * cols);
  for (let i = 0; i < rows; i++)
    for (let j = 0; j < cols; j++) expected[i * cols + j] = (rowSum[i]! * colSum[j]!) / total;
  const dof = (rows - 1) * (cols - 1);
  if (dof === 0) return { statistic: 0, pvalue: 1, dof, expected };
  const yates = correction && dof === 1;
  let statistic = 0;
  for (let k = 0; k < rows * cols; k++) {
    const e = expected[k]!;
    let d = observed[k]! - e;
    // Yates: move each observed count half a unit towards its expectation (never past it).
    if (yates) d = Math.sign(d) * Math.max(0, Math.abs(d) - 0.5);
    statistic += (d * d) / e;
  }
  return { statistic, pvalue: chi2Sf(statistic, dof), dof, expected };
}
