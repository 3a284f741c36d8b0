/** Errors of the registry. */

/** Params that fail their function's JSON Schema. `field` is the first offending field (`params.n_neighbors`). */
export class ParamsError extends Error {
  override readonly name = "ParamsError";
  /** Dotted path of the first offending field, e.g. `params.n_neighbors` or `params.cell_indices[3]`. */
  readonly field: string;
  /** Every problem found (allErrors), one message each. */
  readonly problems: string[];

  constructor(field: string, problems: string[], key?: string) {
    super(`${key ? `${key}: ` : ""}${problems.join("; ")}`);
    this.field = field;
    this.problems = problems;
  }
}
