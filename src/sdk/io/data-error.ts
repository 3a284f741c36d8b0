/**
 * A dataset that cannot be read as it claims to be: a link leading out of the data dir, a sparse
 * matrix whose index arrays break their rules, a chunk of the wrong size, a declared size no memory
 * holds. Not a bug of the reader and not a malformed request: the HTTP adapter answers 422 with the
 * message, which names the file, the element and the rule broken. Browser-safe.
 */
export class DataError extends Error {
  /** HTTP status an adapter answers with (422 Unprocessable Content). */
  readonly status = 422;
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "DataError";
  }
}
