/**
 * `uns`: AnnData's unstructured annotations, a tree of dicts whose leaves are scalars, arrays, frames
 * or matrices. Dicts are tagged (`kind: "dict"`) so that a user key named `kind` can never be mistaken
 * for a value's tag, and so the tree survives structured cloning.
 */
import type { Categorical, DenseArray, NullableArray, SparseMatrix, StringArray } from "./arrays.js";
import type { DataFrame } from "./dataframe.js";
import { own } from "./own.js";

/** A scalar leaf (anndata `numeric-scalar`, `string`, or a 0-d array read as a scalar). */
export type UnsScalar = number | bigint | string | boolean | null;

/** A dict node of the tree. */
export interface UnsDict {
  readonly kind: "dict";
  readonly entries: Readonly<Record<string, UnsValue>>;
}

/** Any node of the uns tree. */
export type UnsValue =
  | UnsScalar
  | UnsDict
  | DenseArray
  | SparseMatrix
  | StringArray
  | NullableArray
  | Categorical
  | DataFrame;

/** An empty uns dict. */
export function unsDict(entries: Record<string, UnsValue> = {}): UnsDict {
  return { kind: "dict", entries };
}

/** Whether a node is a dict. */
export function isUnsDict(v: UnsValue | undefined): v is UnsDict {
  return v !== null && typeof v === "object" && (v as { kind?: string }).kind === "dict";
}

/** Look a node up by a `/`-separated path (`neighbors/params/n_neighbors`); undefined when absent. */
export function unsGet(root: UnsDict, path: string): UnsValue | undefined {
  let node: UnsValue | undefined = root;
  for (const part of path.split("/").filter(Boolean)) {
    if (!isUnsDict(node)) return undefined;
    node = own(node.entries, part);
  }
  return node;
}

/** A new tree with the node at `path` set (creating dicts on the way); siblings are shared. */
export function unsSet(root: UnsDict, path: string, value: UnsValue): UnsDict {
  const [head, ...rest] = path.split("/").filter(Boolean);
  if (head === undefined) throw new Error("unsSet: empty path");
  if (rest.length === 0) return unsDict({ ...root.entries, [head]: value });
  const child = own(root.entries, head);
  const base = isUnsDict(child) ? child : unsDict();
  return unsDict({ ...root.entries, [head]: unsSet(base, rest.join("/"), value) });
}

/** A new tree without the node at `path`. */
export function unsDelete(root: UnsDict, path: string): UnsDict {
  const [head, ...rest] = path.split("/").filter(Boolean);
  if (head === undefined || !Object.hasOwn(root.entries, head)) return root;
  if (rest.length === 0) {
    const { [head]: _gone, ...others } = root.entries;
    return unsDict(others);
  }
  const child = own(root.entries, head);
  if (!isUnsDict(child)) return root;
  return unsDict({ ...root.entries, [head]: unsDelete(child, rest.join("/")) });
}

/**
 * Convert a plain JSON value into an uns tree (objects become dicts, arrays of numbers become float64
 * arrays, arrays of strings become string arrays). Used for parameters that operations record.
 */
export function unsFromJson(v: unknown): UnsValue {
  if (v === null || v === undefined) return null;
  if (typeof v === "number" || typeof v === "string" || typeof v === "boolean" || typeof v === "bigint")
    return v;
  if (Array.isArray(v)) {
    if (v.every((x) => typeof x === "string")) return { kind: "string", shape: [v.length], values: v };
    if (v.every((x) => typeof x === "number")) {
      return { kind: "dense", dtype: "float64", shape: [v.length], data: Float64Array.from(v) };
    }
    if (v.every((x) => typeof x === "boolean")) {
      return {
        kind: "dense",
        dtype: "bool",
        shape: [v.length],
        data: Uint8Array.from(v, (b) => (b ? 1 : 0)),
      };
    }
    // Mixed lists have no anndata encoding; keep them as a dict keyed by position.
    return unsDict(Object.fromEntries(v.map((x, i) => [String(i), unsFromJson(x)])));
  }
  if (typeof v === "object") {
    return unsDict(
      Object.fromEntries(Object.entries(v as Record<string, unknown>).map(([k, x]) => [k, unsFromJson(x)])),
    );
  }
  throw new Error(`unsFromJson: cannot store a ${typeof v}`);
}
