/**
 * Lazily read values: a big matrix or an image level is described (shape, dtype, bytes on disk) at
 * open time and read only when something asks for it. The read result is memoised, so a lazy value
 * is still an immutable value: reading it twice gives the same object.
 */
import type { DType, Matrix } from "./arrays.js";

/** Description of a lazily read matrix, known without reading its data. */
export interface LazyMatrixInfo {
  /** `dense`, `csr` or `csc`: the layout the data will have once read. */
  readonly format: "dense" | "csr" | "csc";
  readonly dtype: DType;
  readonly shape: readonly number[];
  /** Stored non-zeros of a sparse matrix, when the reader knows it without reading. */
  readonly nnz?: number;
}

/** A matrix whose data is read on first use. */
export interface LazyMatrix extends LazyMatrixInfo {
  readonly kind: "lazy";
  /** Read (once) and return the matrix. */
  load(): Promise<Matrix>;
  /** The matrix when a `load` has finished, else undefined (never starts a read). */
  loaded(): Matrix | undefined;
}

/** Make a lazy matrix from a description and a loader; the loader runs at most once. */
export function lazyMatrix(info: LazyMatrixInfo, loader: () => Promise<Matrix>): LazyMatrix {
  let pending: Promise<Matrix> | undefined;
  let value: Matrix | undefined;
  return {
    kind: "lazy",
    ...info,
    loaded: () => value,
    load() {
      if (!pending) {
        pending = loader().then((m) => {
          value = m;
          return m;
        });
        // A failed read may be retried (for example after a network blip).
        pending.catch(() => {
          pending = undefined;
        });
      }
      return pending;
    },
  };
}

/** A matrix slot: read already, or readable on demand. */
export type MatrixSlot = Matrix | LazyMatrix;

/** The slot's matrix if it is in memory (not lazy, or lazy and read already), else undefined. */
export function residentMatrix(slot: MatrixSlot): Matrix | undefined {
  return slot.kind === "lazy" ? slot.loaded() : slot;
}

/** Resolve a slot to its matrix, reading it if it is lazy. */
export async function loadMatrix(slot: MatrixSlot): Promise<Matrix> {
  return slot.kind === "lazy" ? slot.load() : slot;
}

/** Shape, dtype and format of a slot, without reading it. */
export function matrixInfo(slot: MatrixSlot): LazyMatrixInfo {
  if (slot.kind === "lazy") return slot;
  if (slot.kind === "dense") return { format: "dense", dtype: slot.dtype, shape: slot.shape };
  return { format: slot.kind, dtype: slot.dtype, shape: slot.shape, nnz: slot.data.length };
}
