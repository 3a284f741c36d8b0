/**
 * Deferred element-wise values: a matrix that is another matrix's stored values put through a chain
 * of element-wise steps (normalize_total's division of each row by its size factor, then log1p) that
 * have not been written out yet. A chain is written out once, by the first thing that reads its
 * values; until then the steps cost a pass over nothing, and the intermediate matrices (normalised
 * counts before log1p) are never made. The values are the very ones the steps would have written one
 * after the other, bit for bit (`math/deferred-values.ts`).
 *
 * A deferred matrix is a `LazyMatrix` (its `load()` writes the values out), so every reader of a
 * `MatrixSlot` works unchanged. Across threads it travels as a `DeferredMarker` (plain data on shared
 * memory); values written out on a worker are handed back to the main thread's matrix by `id`
 * (`provideDeferred`), so the next job does not compute them again.
 */
import type { Matrix, SparseMatrix } from "./arrays.js";
import type { LazyMatrix, MatrixSlot } from "./lazy.js";

/** The steps of a chain, applied in this order to each stored value (in float32, as scanpy). */
export interface DeferredSteps {
  /** Each stored value of row i divided by `rowDivisors[i]` (normalize_total's size factors), or none. */
  readonly rowDivisors: Float64Array | null;
  /** Then log1p, divided by `lb` (ln of log1p's base) when `lb` is not 0; or none. */
  readonly log1p: { readonly lb: number } | null;
  /**
   * Whether every value of the chain is known to be ≥ 0 (or NaN without a sign bit): the base was
   * checked by the step that made the chain and every divisor is positive. log1p may then extend the
   * chain without a pass of its own to refuse negative values.
   */
  readonly nonNegative: boolean;
}

/** A chain as it crosses a thread boundary: plain data, its arrays shared. */
export interface DeferredMarker extends DeferredSteps {
  readonly kind: "deferred-matrix";
  /** The main thread's id of the matrix, to hand written-out values back (`provideDeferred`). */
  readonly id: number;
  /** The float32 CSR matrix whose stored values the steps apply to. */
  readonly base: SparseMatrix;
}

/** A lazy matrix whose values are a chain of element-wise steps on a base matrix. */
export interface DeferredMatrix extends LazyMatrix {
  /** This thread's id of the matrix (see `DeferredMarker.id`). */
  readonly id: number;
  /** The chain while the values are not written out; null once they are (the base is let go then). */
  readonly chain: DeferredMarker | null;
  /** Take values written out elsewhere (another thread, for the same chain) instead of computing them. */
  provide(m: Matrix): void;
}

/** Whether a value is a `DeferredMarker`. */
export function isDeferredMarker(v: unknown): v is DeferredMarker {
  return typeof v === "object" && v !== null && (v as { kind?: unknown }).kind === "deferred-matrix";
}

/** Whether a slot is a deferred matrix (written out or not). */
export function isDeferredMatrix(slot: unknown): slot is DeferredMatrix {
  return (
    typeof slot === "object" &&
    slot !== null &&
    (slot as { kind?: unknown }).kind === "lazy" &&
    "chain" in slot &&
    typeof (slot as { provide?: unknown }).provide === "function"
  );
}

/** The chain of a slot whose values are not written out yet, else null. */
export function deferredChain(slot: MatrixSlot | null | undefined): DeferredMarker | null {
  return isDeferredMatrix(slot) ? slot.chain : null;
}

let lastId = 0;
/** Deferred matrices of this thread by id, for `provideDeferred` (weak: a dropped matrix goes). */
const live = new Map<number, WeakRef<DeferredMatrix>>();
const forget = new FinalizationRegistry<number>((id) => {
  const ref = live.get(id);
  if (ref && ref.deref() === undefined) live.delete(id);
});

/**
 * A deferred matrix over `base` with `steps`, written out by `writeOut` on its first `load()` (at most
 * once; a failed write-out may be retried). `id` is the matrix's id on this thread (a new one when
 * absent: pass the marker's id when rebuilding a main-thread matrix on a worker).
 */
export function deferredMatrix(
  base: SparseMatrix,
  steps: DeferredSteps,
  writeOut: (chain: DeferredMarker) => Promise<Matrix>,
  id?: number,
): DeferredMatrix {
  const ownId = id ?? ++lastId;
  // Only a matrix made on this thread is registered (one rebuilt from a marker has another thread's id).
  const registered = id === undefined;
  let chain: DeferredMarker | null = {
    kind: "deferred-matrix",
    id: ownId,
    base,
    rowDivisors: steps.rowDivisors,
    log1p: steps.log1p,
    nonNegative: steps.nonNegative,
  };
  let value: Matrix | undefined;
  let pending: Promise<Matrix> | undefined;
  const settle = (m: Matrix): Matrix => {
    value ??= m;
    chain = null;
    if (registered) live.delete(ownId);
    return value;
  };
  const matrix: DeferredMatrix = {
    kind: "lazy",
    format: "csr",
    dtype: "float32",
    shape: base.shape,
    nnz: base.data.length,
    id: ownId,
    get chain() {
      return chain;
    },
    loaded: () => value,
    load() {
      if (value) return Promise.resolve(value);
      if (!pending) {
        const c = chain!;
        pending = writeOut(c).then(settle);
        pending.catch(() => {
          pending = undefined;
        });
      }
      return pending;
    },
    provide(m: Matrix) {
      if (!value) settle(m);
    },
  };
  if (registered) {
    live.set(ownId, new WeakRef(matrix));
    forget.register(matrix, ownId);
  }
  return matrix;
}

/**
 * Hand values written out on another thread to this thread's deferred matrix `id` (no-op when it is
 * gone or already has values).
 */
export function provideDeferred(id: number, m: Matrix): void {
  live.get(id)?.deref()?.provide(m);
}
