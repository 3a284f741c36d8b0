/**
 * The small node abstraction the AnnData decoder runs on. One decoder reads every AnnData layout; it
 * only sees `AnnNode`s, implemented over zarr (v2 and v3, via zarrita) and over HDF5 (via h5wasm).
 */
import type { DType, TypedArray } from "../../data/arrays.js";

/** Element type of an array node as the decoder sees it. */
export type NodeDtype =
  | DType
  | "string"
  /** A record/struct type (numpy structured array, HDF5 compound, zarr v3 `struct`). */
  | "record"
  /** Anything else (the description says what). */
  | { readonly unsupported: string };

/** Decoded contents of an array node (or of a row range of it). */
export type NodeData =
  | { readonly kind: "numeric"; readonly dtype: DType; readonly shape: number[]; readonly data: TypedArray }
  | { readonly kind: "string"; readonly shape: number[]; readonly values: string[] }
  | {
      /** Rows of a record array: one column per field, each a numeric or string column. */
      readonly kind: "record";
      readonly shape: number[];
      readonly fields: readonly { readonly name: string; readonly data: NodeData }[];
    };

/** An attribute value that points at another node (HDF5 object references, legacy h5ad categoricals). */
export interface NodeRef {
  readonly $ref: string;
}

/** One group or array of an AnnData store. */
export interface AnnNode {
  /** Path inside the AnnData element, `""` for its root (`obs/leiden/codes`). */
  readonly path: string;
  /** What errors name: the file or store, then the node path. */
  readonly where: string;
  readonly isGroup: boolean;
  /** Attributes as JSON values; HDF5 object references appear as `NodeRef`. */
  readonly attrs: Readonly<Record<string, unknown>>;
  /** Shape of an array node (`[]` for 0-d; `[]` for groups). */
  readonly shape: readonly number[];
  /** Element type of an array node (`"record"`/unsupported included; irrelevant for groups). */
  readonly dtype: NodeDtype;
  /** Names of a group's children; null when the store cannot list. */
  children(): Promise<string[] | null>;
  /** A child (or descendant, `a/b`) node; null when absent. A leading `/` resolves from the file root. */
  get(name: string): Promise<AnnNode | null>;
  /** Read a whole array node. */
  read(): Promise<NodeData>;
  /** Read rows `[start, stop)` of the first axis. */
  readRows(start: number, stop: number): Promise<NodeData>;
  /** Bytes on disk under this node, when the source can tell. */
  diskBytes(): number | null;
}

/** Whether an attribute value is a node reference. */
export function isNodeRef(v: unknown): v is NodeRef {
  return typeof v === "object" && v !== null && typeof (v as NodeRef).$ref === "string";
}

/** Join path segments with `/`, dropping empty ones. */
export function joinPath(...parts: string[]): string {
  return parts
    .flatMap((p) => p.split("/"))
    .filter((p) => p.length > 0)
    .join("/");
}
