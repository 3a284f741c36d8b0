/**
 * The cell store of the Barnes-Hut trees (t-SNE's Morton quadtree, ForceAtlas2's regions): every cell
 * is a contiguous range `[start, end)` of a point permutation with its first child and child count,
 * in flat typed arrays that grow by doubling. The trees differ in how they split and what they
 * summarise per cell (each keeps its own float fields and grows them in `growFields`); the storage,
 * its growth and the allocation of a cell are this one class.
 */

/** A copy of `x` in a new array of length `cap` (the tail zero). */
export function grown<T extends Int32Array | Float64Array>(x: T, cap: number): T {
  const y = new (x.constructor as new (n: number) => T)(cap);
  y.set(x);
  return y;
}

/** Flat, growable storage of tree cells (see the module comment). */
export abstract class TreeCells {
  /** Cells in use. */
  size = 0;
  /** Cells allocated. */
  cap = 0;
  /** First point (in the permutation) of each cell. */
  start = new Int32Array(0);
  /** One past the last point of each cell. */
  end = new Int32Array(0);
  /** Index of each cell's first child (children are adjacent), -1 for a leaf. */
  firstChild = new Int32Array(0);
  /** Number of children of each cell. */
  nChild = new Int32Array(0);

  /** Grow the subclass's per-cell fields to `cap` cells (with `grown`). */
  protected abstract growFields(cap: number): void;

  /** A new leaf cell over points `[a, b)`; its index. */
  protected allocCell(a: number, b: number): number {
    if (this.size >= this.cap) {
      const cap = Math.max(64, this.cap * 2);
      this.start = grown(this.start, cap);
      this.end = grown(this.end, cap);
      this.firstChild = grown(this.firstChild, cap);
      this.nChild = grown(this.nChild, cap);
      this.growFields(cap);
      this.cap = cap;
    }
    const c = this.size++;
    this.start[c] = a;
    this.end[c] = b;
    this.firstChild[c] = -1;
    this.nChild[c] = 0;
    return c;
  }
}
