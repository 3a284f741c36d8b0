/**
 * `sc.pp.subsample` (scanpy's `preprocessing/_deprecated/sampling.py`): keep a random fraction or number
 * of cells, drawn with numpy's legacy Mersenne Twister so that a seed picks the same cells as scanpy, and
 * the row subsetting of a whole table that it needs.
 */
import { allocArray, type Matrix, type SparseMatrix } from "../../../sdk/data/arrays.js";
import type { Change } from "../../../sdk/data/change.js";
import { nRows } from "../../../sdk/data/dataframe.js";
import { loadMatrix, type MatrixSlot } from "../../../sdk/data/lazy.js";
import type { SpatialData } from "../../../sdk/data/spatialdata.js";
import { frameRows, matrixRows } from "../../../sdk/data/subset.js";
import { type AxisArray, makeTable, type RawTable, type Table } from "../../../sdk/data/table.js";
import type { OpContext } from "../../../sdk/jobs/operation.js";
import { switchCompression } from "../../../sdk/math/sparse.js";
import { activeTable } from "../helpers.js";

/**
 * MT19937 as numpy's legacy `RandomState` seeds and draws it (`np.random.seed(s)`), with its
 * `random_interval` (masked rejection). Used so that `subsample(random_state=s)` selects exactly the
 * cells scanpy selects.
 */
class LegacyMt19937 {
  private readonly mt = new Uint32Array(624);
  private pos = 624;

  constructor(seed: number) {
    if (!Number.isInteger(seed) || seed < 0 || seed > 0xffffffff)
      throw new Error(`random_state must be an integer in [0, 2^32 - 1], got ${seed}`);
    const mt = this.mt;
    mt[0] = seed >>> 0;
    for (let i = 1; i < 624; i++) {
      const prev = mt[i - 1]!;
      mt[i] = (Math.imul(1812433253, prev ^ (prev >>> 30)) + i) >>> 0;
    }
  }

  private twist(): void {
    const mt = this.mt;
    for (let k = 0; k < 624; k++) {
      const y = (mt[k]! & 0x80000000) | (mt[(k + 1) % 624]! & 0x7fffffff);
      mt[k] = mt[(k + 397) % 624]! ^ (y >>> 1) ^ (y & 1 ? 0x9908b0df : 0);
    }
    this.pos = 0;
  }

  /** The next 32-bit output. */
  uint32(): number {
    if (this.pos >= 624) this.twist();
    let y = this.mt[this.pos++]!;
    y ^= y >>> 11;
    y ^= (y << 7) & 0x9d2c5680;
    y ^= (y << 15) & 0xefc60000;
    y ^= y >>> 18;
    return y >>> 0;
  }

  /** Uniform integer in [0, max] (numpy's `random_interval`; max < 2^32). */
  interval(max: number): number {
    if (max === 0) return 0;
    let mask = max;
    mask |= mask >>> 1;
    mask |= mask >>> 2;
    mask |= mask >>> 4;
    mask |= mask >>> 8;
    mask |= mask >>> 16;
    mask >>>= 0;
    let v: number;
    do v = (this.uint32() & mask) >>> 0;
    while (v > max);
    return v;
  }
}

/**
 * The row indices `np.random.seed(seed); np.random.choice(n, size, replace)` draws: without
 * replacement the first `size` entries of the legacy `permutation(n)`, with replacement
 * `randint(0, n, size)`. Order is the draw order, as scanpy keeps it.
 */
export function legacyChoice(n: number, size: number, replace: boolean, seed: number): Int32Array {
  if (n > 0xffffffff) throw new Error(`subsample: ${n} rows is more than this sampler supports`);
  const rng = new LegacyMt19937(seed);
  if (replace) {
    const out = new Int32Array(size);
    if (n === 0 && size > 0) throw new Error("subsample: cannot sample from zero observations");
    for (let i = 0; i < size; i++) out[i] = rng.interval(n - 1);
    return out;
  }
  if (size > n) throw new Error(`subsample: cannot take ${size} of ${n} observations without replacement`);
  const perm = new Int32Array(n);
  for (let i = 0; i < n; i++) perm[i] = i;
  for (let i = n - 1; i > 0; i--) {
    const j = rng.interval(i);
    const tmp = perm[i]!;
    perm[i] = perm[j]!;
    perm[j] = tmp;
  }
  return perm.slice(0, size);
}

/**
 * Rows `idx` of a matrix, in that order (repeats allowed). Dense and CSR go through the SDK's
 * `matrixRows`; CSC through CSR and back (the SDK takes a CSC's rows as ascending columns of its
 * transpose, which cannot repeat).
 */
function takeMatrixRows(m: Matrix, idx: Int32Array): Matrix {
  if (m.kind !== "csc") return matrixRows(m, idx);
  return switchCompression(matrixRows(switchCompression(m), idx) as SparseMatrix);
}

/** Rows and columns `idx` of a square matrix (an obsp graph). Row entries come out column-sorted. */
function takeSquare(m: Matrix, idx: Int32Array): Matrix {
  if (m.kind === "dense") {
    const n = m.shape[1]!;
    const k = idx.length;
    const out = allocArray(m.dtype, k * k);
    const src = m.data as unknown as { [i: number]: number | bigint };
    const dst = out as unknown as { [i: number]: number | bigint };
    for (let r = 0; r < k; r++) for (let c = 0; c < k; c++) dst[r * k + c] = src[idx[r]! * n + idx[c]!]!;
    return { kind: "dense", dtype: m.dtype, shape: [k, k], data: out };
  }
  const wasCsc = m.kind === "csc";
  const rowsCsr = matrixRows(wasCsc ? switchCompression(m) : m, idx) as SparseMatrix;
  // Old column → its new positions (several when drawn with replacement), as a CSR-like list.
  const n = m.shape[1];
  const k = idx.length;
  const start = new Int32Array(n + 1);
  for (const c of idx) start[c + 1]!++;
  for (let c = 0; c < n; c++) start[c + 1]! += start[c];
  const fill = start.slice(0, n);
  const pos = new Int32Array(k);
  for (let r = 0; r < k; r++) pos[fill[idx[r]!]!++] = r;
  let nnz = 0;
  for (let t = 0; t < rowsCsr.indices.length; t++) {
    const c = rowsCsr.indices[t]!;
    nnz += start[c + 1]! - start[c]!;
  }
  const indptr = allocArray(nnz > 0x7fffffff ? "float64" : "int32", k + 1) as Int32Array | Float64Array;
  const indices = allocArray("int32", nnz) as Int32Array;
  const data = allocArray(m.dtype, nnz);
  const src = rowsCsr.data as unknown as { [i: number]: number | bigint };
  const dst = data as unknown as { [i: number]: number | bigint };
  let at = 0;
  const order: number[] = [];
  for (let r = 0; r < k; r++) {
    const s = Number(rowsCsr.indptr[r]);
    const e = Number(rowsCsr.indptr[r + 1]);
    order.length = 0;
    for (let t = s; t < e; t++) {
      const c = rowsCsr.indices[t]!;
      for (let q = start[c]!; q < start[c + 1]!; q++) order.push(pos[q]! * 0x100000000 + t);
    }
    // Sort by new column (high part), carrying the source entry (low part).
    order.sort((a, b) => a - b);
    for (const key of order) {
      indices[at] = Math.floor(key / 0x100000000);
      dst[at] = src[key % 0x100000000]!;
      at++;
    }
    indptr[r + 1] = at;
  }
  const out: SparseMatrix = { kind: "csr", dtype: m.dtype, shape: [k, k], data, indices, indptr };
  return wasCsc ? switchCompression(out) : out;
}

async function takeSlotRows(slot: MatrixSlot, idx: Int32Array): Promise<Matrix> {
  return takeMatrixRows(await loadMatrix(slot), idx);
}

async function takeAxisRows(a: AxisArray, idx: Int32Array): Promise<AxisArray> {
  return a.kind === "dataframe" ? frameRows(a, idx).df : takeSlotRows(a, idx);
}

/**
 * A table restricted to rows `idx` (in that order, repeats allowed): every obs-aligned slot, obsp on
 * both axes, raw. Categories no kept row uses are dropped with their `uns[<col>_colors]` entries (the
 * SDK's `frameRows`), as anndata does.
 */
export async function tableRowsAt(t: Table, idx: Int32Array, signal?: AbortSignal): Promise<Table> {
  const { df: obs, uns } = frameRows(t.obs, idx, t.uns);
  const mapAsync = async <V, R>(rec: Readonly<Record<string, V>>, f: (v: V) => Promise<R> | R) => {
    const out: Record<string, R> = {};
    for (const [k, v] of Object.entries(rec)) {
      signal?.throwIfAborted();
      out[k] = await f(v);
    }
    return out;
  };
  let raw: RawTable | null = null;
  if (t.raw) raw = { X: await takeSlotRows(t.raw.X, idx), var: t.raw.var, varm: t.raw.varm };
  return makeTable({
    X: t.X ? await takeSlotRows(t.X, idx) : null,
    obs,
    var: t.var,
    obsm: await mapAsync(t.obsm, (a) => takeAxisRows(a, idx)),
    varm: { ...t.varm },
    obsp: await mapAsync(t.obsp, async (s) => takeSquare(await loadMatrix(s), idx)),
    varp: { ...t.varp },
    layers: await mapAsync(t.layers, (s) => takeSlotRows(s, idx)),
    uns: uns ?? t.uns,
    raw,
    annotation: t.annotation,
  });
}

/** Parameters of `subsample`. */
export interface SubsampleParams {
  /**
   * Subsample to this fraction of the number of observations (the count is truncated:
   * `int(fraction * n_obs)`). Give this or `n_obs`.
   * @minimum 0
   */
  fraction?: number | null;
  /**
   * Subsample to this number of observations. Give this or `fraction`.
   * @asType integer
   * @minimum 0
   */
  n_obs?: number | null;
  /**
   * Random seed (numpy's legacy `RandomState` stream, so a seed selects the same cells as scanpy).
   * @default 0
   * @asType integer
   * @minimum 0
   */
  random_state?: number;
  /**
   * Draw with replacement (then `fraction` may exceed 1 and rows may repeat).
   * @default false
   */
  replace?: boolean;
}

/**
 * Subsample to a fraction or a number of the observations.
 *
 * The whole table is replaced by the chosen rows, in the order drawn, exactly as scanpy's
 * `pp.subsample` (`np.random.seed(random_state)` then `np.random.choice`) leaves them: X, layers,
 * obsm, obs, raw and obsp (rows and columns) are subset; categories no longer used are dropped along
 * with their `uns[<key>_colors]` entries, as anndata does.
 */
export async function subsample(sd: SpatialData, params: SubsampleParams, ctx: OpContext): Promise<Change> {
  const op = "subsample";
  const t = activeTable(sd, ctx, op);
  const n = nRows(t.obs);
  const replace = params.replace ?? false;
  const hasF = params.fraction !== undefined && params.fraction !== null;
  const hasN = params.n_obs !== undefined && params.n_obs !== null;
  if (hasF === hasN) throw new Error(`${op}: give exactly one of fraction and n_obs`);
  let size: number;
  if (hasF) {
    const f = params.fraction!;
    if (!(f >= 0)) throw new Error(`${op}: fraction=${f} needs to be nonnegative`);
    if (!replace && f > 1)
      throw new Error(`${op}: with replace=false, fraction=${f} needs to be within [0, 1]`);
    size = Math.trunc(f * n);
  } else {
    size = params.n_obs!;
    if (!Number.isInteger(size) || size < 0) throw new Error(`${op}: n_obs must be a non-negative integer`);
    if (!replace && size > n)
      throw new Error(`${op}: n_obs=${size} is larger than the ${n} observations (use replace=true)`);
  }
  const idx = legacyChoice(n, size, replace, params.random_state ?? 0);
  ctx.progress(0.2, "subsetting");
  const table = await tableRowsAt(t, idx, ctx.signal);
  ctx.log(`${op}: kept ${size} of ${n} observations`);
  ctx.progress(1);
  return { replaceTables: { [ctx.table]: table } };
}
