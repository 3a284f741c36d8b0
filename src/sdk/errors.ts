/**
 * The SDK's errors, each carrying the HTTP status the specification's Errors table gives its
 * condition, so an adapter (HTTP, MCP, the CLI) maps them without knowing the cause. They sit at the
 * SDK's root so every layer (data, io, math, session) throws the same classes without importing the
 * layer above it.
 */

/** An error with the HTTP status an adapter should answer with. */
export class TesseraError extends Error {
  /** HTTP status code of the condition (400, 404, 409 …). */
  readonly status: number;
  constructor(message: string, status: number) {
    super(message);
    this.name = new.target.name;
    this.status = status;
  }
}

/** A path outside the data dir, or a malformed path parameter (400). */
export class PathError extends TesseraError {
  /** The parameter that held the path (`path`, `params.input`, `params.files[2]` …). */
  readonly param: string;
  constructor(param: string, message: string) {
    super(message, 400);
    this.param = param;
  }
}

/** A request that is invalid in itself: blank prefix, wrong namespace, unresolved recipe params (400). */
export class BadRequestError extends TesseraError {
  constructor(message: string) {
    super(message, 400);
  }
}

/** An unknown session, job, history entry, plot or figure (404). */
export class NotFoundError extends TesseraError {
  constructor(message: string) {
    super(message, 404);
  }
}

/** An action the current state forbids: deleting a running entry, redrawing a queued plot (409). */
export class StateError extends TesseraError {
  constructor(message: string) {
    super(message, 409);
  }
}

/** A limit reached: too many sessions (503, retryable once a session closes). */
export class LimitError extends TesseraError {
  constructor(message: string) {
    super(message, 503);
  }
}

/** A mutating call on a session whose edit lock another viewer holds (423). */
export class LockedError extends TesseraError {
  constructor(holderName: string) {
    super(`session is locked by ${holderName}`, 423);
  }
}

/** Taking an edit lock another viewer holds (409). */
export class LockConflictError extends TesseraError {
  constructor(message: string) {
    super(message, 409);
  }
}

/** Releasing an edit lock the caller does not hold (403). */
export class ForbiddenError extends TesseraError {
  constructor(message: string) {
    super(message, 403);
  }
}
