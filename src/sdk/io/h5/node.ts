/**
 * `AnnNode` over an HDF5 file through h5wasm.
 *
 * The file is held open while a reader walks the tree and reopened for each later lazy read (so an open
 * table does not pin a file handle); a reopen checks that size and mtime are unchanged. Big datasets are
 * read in row blocks into a preallocated SharedArrayBuffer array, because h5wasm's heap is capped at 2 GiB.
 */
import { closeSync, constants, fstatSync, openSync, readSync, realpathSync, statSync } from "node:fs";
import { dirname, isAbsolute, join } from "node:path";
import type { Dataset, Entity, Group, File as H5File, Metadata } from "h5wasm";
import {
  allocArray,
  BYTES_PER_ELEMENT,
  type DType,
  sizeOfShape,
  type TypedArray,
} from "../../data/arrays.js";
import { type AnnNode, joinPath, type NodeData, type NodeDtype } from "../anndata/node.js";
import { confineRootFor, isInside } from "../confine.js";
import { DataError } from "../data-error.js";
import { checkReadSize } from "../memory-budget.js";
import { type FilterSupport, filterError, unreadableFilter } from "./filters.js";
import { guarded } from "./guard.js";
import { filterSupport, type H5Wasm, loadH5wasm, markAborted } from "./h5wasm.js";

/** Elements per slice when reading a big dataset (32 MiB of float32). */
const BLOCK_ELEMENTS = 8 * 1024 * 1024;

/** HDF5 type classes as h5wasm reports them in `metadata.type`. */
const H5T = { INTEGER: 0, FLOAT: 1, STRING: 3, COMPOUND: 6, REFERENCE: 7, ENUM: 8 } as const;

const SIGNATURE = [0x89, 0x48, 0x44, 0x46, 0x0d, 0x0a, 0x1a, 0x0a];

/**
 * Check the HDF5 superblock before handing the file to libhdf5, which reports a bad file only on stderr
 * and then fails later with unrelated messages. Catches non-HDF5 input and truncated files (the
 * superblock records the end-of-file address the writer left).
 */
export function checkHdf5File(filePath: string): void {
  // Non-blocking, and a regular file only: a FIFO or device must never reach libhdf5's blocking reads.
  const fd = openSync(filePath, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    const st = fstatSync(fd);
    if (st.isDirectory()) throw new Error(`${filePath}: is a folder, not an HDF5 file`);
    if (!st.isFile())
      throw new Error(`${filePath}: not a regular file (a FIFO, socket or device is not read)`);
    const size = st.size;
    // The superblock sits at 0 or, after a user block, at 512, 1024, 2048, … bytes.
    for (let at = 0; at === 0 || at + 8 <= size; at = at === 0 ? 512 : at * 2) {
      const head = Buffer.alloc(96);
      const got = readSync(fd, head, 0, head.length, at);
      if (got < 8) break;
      if (!SIGNATURE.every((b, i) => head[i] === b)) continue;
      const version = head[8] ?? 0;
      let eofAt: number;
      let offsetSize: number;
      if (version === 0 || version === 1) {
        offsetSize = head[13] ?? 8;
        eofAt = 24 + (version === 1 ? 4 : 0) + 2 * offsetSize;
      } else {
        offsetSize = head[9] ?? 8;
        eofAt = 12 + 2 * offsetSize;
      }
      if (offsetSize !== 8 && offsetSize !== 4) return;
      const base =
        offsetSize === 8
          ? Number(head.readBigUInt64LE(eofAt - 2 * offsetSize))
          : head.readUInt32LE(eofAt - 2 * offsetSize);
      const eof = offsetSize === 8 ? Number(head.readBigUInt64LE(eofAt)) : head.readUInt32LE(eofAt);
      if (version >= 2) {
        // v2/v3: base address sits right after the 12-byte prefix.
        const b2 = offsetSize === 8 ? Number(head.readBigUInt64LE(12)) : head.readUInt32LE(12);
        if (b2 + eof > size)
          throw new Error(
            `${filePath}: truncated HDF5 file (${size} bytes, the superblock says ${b2 + eof})`,
          );
        return;
      }
      if (base + eof > size)
        throw new Error(
          `${filePath}: truncated HDF5 file (${size} bytes, the superblock says ${base + eof})`,
        );
      return;
    }
    throw new Error(`${filePath}: not an HDF5 file (no HDF5 signature)`);
  } finally {
    closeSync(fd);
  }
}

/** How libhdf5 finds the file an external link or a virtual dataset names: as given, else beside `file`. */
function linkedFile(file: string, name: string): string {
  return isAbsolute(name) ? name : join(dirname(file), name);
}

/** One open (or reopenable) HDF5 file. */
class H5Tree {
  file: H5File | null = null;
  private readonly stamp: string;
  /** The filters h5wasm can decode, checked before each read (a read through a missing one returns junk). */
  readonly filters: FilterSupport = filterSupport();
  /** Where external links and virtual sources may lead (`io/confine.ts`). */
  readonly root: string;
  /** HDF5 paths whose links were checked (`/X`, `/obsm/X_umap` …). */
  private readonly checkedLinks = new Set<string>();
  /** Link names per group path, listed once. */
  private readonly children = new Map<string, Set<string> | null>();
  constructor(
    readonly h5: H5Wasm,
    readonly filePath: string,
    root?: string,
  ) {
    this.stamp = H5Tree.stampOf(filePath);
    this.root = root ?? confineRootFor(filePath);
  }

  /**
   * Run synchronous h5wasm calls with libhdf5's opens confined (guard.ts). A file libhdf5 was refused
   * meanwhile (a link or virtual source leading out, missing, or not a regular file) fails the call: it
   * would otherwise read as missing data or fill values. An abort of the WebAssembly module is an
   * Error naming the file.
   */
  guard<T>(fn: () => T): T {
    let out: { value: T; refused: string[] };
    try {
      out = guarded(this.root, this.filePath, fn);
    } catch (err) {
      if (err instanceof WebAssembly.RuntimeError) {
        markAborted(this.h5);
        throw new DataError(
          `${this.filePath}: the HDF5 library failed while reading (${err.message}); the file may be corrupt`,
          {
            cause: err,
          },
        );
      }
      throw err;
    }
    if (out.refused.length)
      throw new DataError(
        `${this.filePath}: reading it needs ${out.refused[0]}, which is missing, not a regular file, or outside ${this.root} (files an HDF5 file links to are read only inside the data dir)`,
      );
    return out.value;
  }

  /**
   * Check every link on the way to `h5path` (each ancestor and the node itself): an external link must
   * name an existing file inside the confinement root. Throws an Error naming the dataset, the link and
   * the rule; called before libhdf5 follows anything.
   */
  checkLinks(f: H5File, h5path: string): void {
    let parent = "/";
    for (const part of h5path.split("/").filter(Boolean)) {
      const at = parent === "/" ? `/${part}` : `${parent}/${part}`;
      if (!this.checkedLinks.has(at)) {
        // Only links that exist are asked about (libhdf5 reports a missing one on stderr).
        if (!this.childNames(f, parent)?.has(part)) return;
        const ext = (
          f as unknown as { get_external_link(p: string): { filename?: string; obj_path?: string } }
        ).get_external_link(at);
        if (ext && typeof ext.filename === "string") {
          const target = linkedFile(this.filePath, ext.filename);
          const shown = `${this.filePath}: ${at} is an HDF5 external link to ${ext.filename}:${ext.obj_path ?? "/"}`;
          let real: string;
          try {
            real = realpathSync(target);
          } catch {
            throw new DataError(`${shown}, which does not exist`);
          }
          if (!isInside(this.root, real))
            throw new DataError(
              `${shown}, which resolves to ${real}, outside ${this.root}; external links are followed only inside the data dir`,
            );
        }
        this.checkedLinks.add(at);
      }
      parent = at;
    }
  }

  /** The link names in group `group` (listed without following them), or null when it is no group. */
  private childNames(f: H5File, group: string): Set<string> | null {
    let names = this.children.get(group);
    if (names === undefined) {
      const g = group === "/" ? f : f.get(group);
      names = g instanceof this.h5.Group ? new Set(g.keys()) : null;
      this.children.set(group, names);
    }
    return names;
  }

  /** Check a dataset's virtual sources (files it maps data from) like external links. */
  checkVirtualSources(h5path: string, meta: Metadata): void {
    const sources = (meta as { virtual_sources?: { file_name: string; dset_name: string }[] })
      .virtual_sources;
    for (const src of sources ?? []) {
      if (src.file_name === ".") continue;
      const shown = `${this.filePath}: ${h5path} is a virtual dataset reading ${src.file_name}:${src.dset_name}`;
      if (src.file_name.includes("%"))
        throw new DataError(`${shown}; printf-style source names are not supported`);
      let real: string;
      try {
        real = realpathSync(linkedFile(this.filePath, src.file_name));
      } catch {
        throw new DataError(`${shown}, which does not exist (it would read as fill values)`);
      }
      if (!isInside(this.root, real))
        throw new DataError(
          `${shown}, which resolves to ${real}, outside ${this.root}; virtual sources are read only inside the data dir`,
        );
    }
  }

  static stampOf(filePath: string): string {
    const st = statSync(filePath);
    return `${st.size}:${st.mtimeMs}`;
  }

  open(): H5File {
    checkHdf5File(this.filePath);
    let f: H5File;
    try {
      f = this.guard(() => new this.h5.File(this.filePath, "r"));
    } catch (err) {
      throw new Error(`${this.filePath}: not a readable HDF5 file (${(err as Error).message ?? err})`);
    }
    // h5wasm does not throw when libhdf5 fails to open; it hands back an invalid (negative) id.
    const id = (f as unknown as { file_id?: bigint | number }).file_id;
    if (id === undefined || Number(id) < 0)
      throw new Error(`${this.filePath}: libhdf5 could not open the file`);
    return f;
  }

  /** Run `fn` on the open file, opening (and closing) it when no reader holds it. */
  use<T>(fn: (f: H5File) => T): T {
    const file = this.file;
    if (file) return this.guard(() => fn(file));
    if (H5Tree.stampOf(this.filePath) !== this.stamp) {
      throw new Error(`${this.filePath}: the file changed on disk since it was opened`);
    }
    const f = this.open();
    try {
      return this.guard(() => fn(f));
    } finally {
      f.close();
    }
  }
}

/** Map h5wasm type metadata to a node dtype. */
function dtypeOfMeta(m: Metadata): NodeDtype {
  switch (m.type) {
    case H5T.INTEGER: {
      const t = `${m.signed ? "int" : "uint"}${m.size * 8}`;
      return ["int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64"].includes(t)
        ? (t as DType)
        : { unsupported: `HDF5 integer of ${m.size} bytes` };
    }
    case H5T.FLOAT:
      if (m.size === 4) return "float32";
      if (m.size === 8) return "float64";
      return { unsupported: `HDF5 float of ${m.size} bytes` };
    case H5T.STRING:
      return "string";
    case H5T.COMPOUND:
      return "record";
    case H5T.ENUM: {
      // numpy/h5py store bool as an int8 enum {FALSE: 0, TRUE: 1}.
      const members = m.enum_type?.members ?? {};
      const names = Object.keys(members).sort();
      if (names.length === 2 && names[0] === "FALSE" && names[1] === "TRUE") return "bool";
      return { unsupported: `HDF5 enum (${names.join(", ")})` };
    }
    case H5T.REFERENCE:
      return { unsupported: "HDF5 reference dataset" };
    default:
      return { unsupported: `HDF5 type class ${m.type}` };
  }
}

/** Convert an h5wasm slice/value to a model typed array of `dtype` (bool enums come as Int8Array). */
function toTyped(v: unknown, dtype: DType, into: TypedArray, at: number): number {
  if (ArrayBuffer.isView(v)) {
    const src = v as unknown as ArrayLike<number | bigint>;
    if (dtype === "bool") {
      for (let i = 0; i < src.length; i++) (into as Uint8Array)[at + i] = src[i] ? 1 : 0;
    } else if (src.constructor === into.constructor) {
      (into as unknown as { set(a: ArrayLike<unknown>, o: number): void }).set(src, at);
    } else {
      for (let i = 0; i < src.length; i++) (into as unknown as unknown[])[at + i] = src[i];
    }
    return src.length;
  }
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++)
      (into as unknown as unknown[])[at + i] = dtype === "bool" ? (v[i] ? 1 : 0) : v[i];
    return v.length;
  }
  // A scalar (0-d dataset).
  (into as unknown as unknown[])[at] = dtype === "bool" ? (v ? 1 : 0) : v;
  return 1;
}

/** Attribute values as JSON-like values; object references become `{$ref: path}`. */
function readAttrs(h5: H5Wasm, entity: Dataset | Group, file: H5File): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, attr] of Object.entries(entity.attrs)) {
    let v: unknown;
    try {
      v = attr.value;
    } catch {
      continue;
    }
    // h5wasm returns even a scalar reference attribute as a one-element array of References.
    const deref = (r: unknown) => {
      const target = file.dereference(r as InstanceType<H5Wasm["Reference"]>) as { path?: string } | null;
      return target?.path ? { $ref: target.path } : null;
    };
    if (v instanceof h5.Reference) v = deref(v);
    else if (Array.isArray(v) && v.length > 0 && v.every((x) => x instanceof h5.Reference)) {
      v = v.length === 1 ? deref(v[0]) : v.map(deref);
    }
    out[name] = v;
  }
  return out;
}

/** One node of an HDF5 AnnData tree. */
class H5Node implements AnnNode {
  constructor(
    private readonly tree: H5Tree,
    /** Absolute HDF5 path of this node. */
    private readonly h5path: string,
    /** Path relative to the AnnData element. */
    readonly path: string,
    readonly isGroup: boolean,
    readonly attrs: Readonly<Record<string, unknown>>,
    readonly shape: readonly number[],
    readonly dtype: NodeDtype,
    private readonly meta: Metadata | null,
    private readonly base: string,
  ) {}

  get where(): string {
    return `${this.tree.filePath}: ${this.h5path}`;
  }

  children(): Promise<string[] | null> {
    return Promise.resolve(
      this.tree.use((f) => {
        const g = f.get(this.h5path) as Group | null;
        return g && typeof (g as Group).keys === "function" ? (g as Group).keys() : [];
      }),
    );
  }

  async get(name: string): Promise<AnnNode | null> {
    const abs = name.startsWith("/");
    const h5path = `/${abs ? joinPath(name) : joinPath(this.h5path, name)}`;
    const rel = abs
      ? joinPath(h5path).replace(new RegExp(`^${escapeRe(this.base)}/?`), "")
      : joinPath(this.path, name);
    return makeNode(this.tree, h5path, rel, this.base);
  }

  read(): Promise<NodeData> {
    const n = this.shape.length === 0 ? 1 : (this.shape[0] ?? 0);
    return this.readRows(0, n, true);
  }

  async readRows(start: number, stop: number, whole = false): Promise<NodeData> {
    if (this.isGroup) throw new Error(`${this.where}: is a group, not an array`);
    try {
      return this.tree.use((f) => {
        const ds = f.get(this.h5path) as Dataset;
        const unreadable = unreadableFilter(ds.filters, this.tree.filters);
        if (unreadable) throw filterError(this.where, unreadable, this.tree.filters);
        return this.readFrom(ds, start, stop, whole);
      });
    } catch (err) {
      const msg = (err as Error).message ?? String(err);
      if (msg.startsWith(this.tree.filePath)) throw err;
      throw new Error(`${this.where}: cannot read dataset: ${msg}`, { cause: err });
    }
  }

  private readFrom(ds: Dataset, start: number, stop: number, whole: boolean): NodeData {
    const dtype = this.dtype;
    if (typeof dtype === "object") throw new Error(`unsupported data type (${dtype.unsupported})`);
    const rank = this.shape.length;
    if (rank === 0) {
      const v = ds.value;
      if (dtype === "string") return { kind: "string", shape: [], values: [String(v ?? "")] };
      if (dtype === "record") throw new Error("0-d record datasets are not supported");
      const data = allocArray(dtype, 1);
      toTyped(v, dtype, data, 0);
      return { kind: "numeric", dtype, shape: [], data };
    }
    const n0 = this.shape[0] ?? 0;
    const a = Math.max(0, Math.min(start, n0));
    const b = Math.max(a, Math.min(stop, n0));
    const rowSize = sizeOfShape(this.shape.slice(1));
    const shape = [b - a, ...this.shape.slice(1)];
    const rest = new Array(rank - 1).fill([]) as [][];
    const slice = (r0: number, r1: number) =>
      whole && r0 === 0 && r1 === n0 ? ds.value : ds.slice([[r0, r1], ...rest]);
    if (dtype === "string") {
      const v = b > a ? slice(a, b) : [];
      const values = (Array.isArray(v) ? v : [v]).map((x) =>
        x === null || x === undefined ? "" : String(x),
      );
      return { kind: "string", shape, values };
    }
    if (dtype === "record") return this.readRecords(b > a ? slice(a, b) : [], shape);
    // What the file declares, against memory, before anything is allocated.
    checkReadSize((b - a) * rowSize * BYTES_PER_ELEMENT[dtype], this.where);
    const data = allocArray(dtype, (b - a) * rowSize);
    const rowsPerBlock = Math.max(1, Math.floor(BLOCK_ELEMENTS / Math.max(1, rowSize)));
    let at = 0;
    for (let r = a; r < b; r += rowsPerBlock) {
      const r1 = Math.min(b, r + rowsPerBlock);
      at += toTyped(ds.slice([[r, r1], ...rest]), dtype, data, at);
    }
    return { kind: "numeric", dtype, shape, data };
  }

  private readRecords(v: unknown, shape: number[]): NodeData {
    const members = this.meta?.compound_type?.members ?? [];
    const rows = (Array.isArray(v) ? v : []) as unknown[][];
    const n = rows.length;
    const fields = members.map((m, j) => {
      const dt = dtypeOfMeta(m);
      if (dt === "string") {
        return {
          name: m.name,
          data: { kind: "string" as const, shape: [n], values: rows.map((r) => String(r[j] ?? "")) },
        };
      }
      if (typeof dt === "object" || dt === "record") {
        throw new Error(`record field "${m.name}" has an unsupported type`);
      }
      const data = allocArray(dt, n);
      for (let i = 0; i < n; i++) toTyped((rows[i] as unknown[])[j], dt, data, i);
      return { name: m.name, data: { kind: "numeric" as const, dtype: dt, shape: [n], data } };
    });
    return { kind: "record", shape, fields };
  }

  diskBytes(): number | null {
    return null;
  }
}

function escapeRe(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

function makeNode(tree: H5Tree, h5path: string, rel: string, base: string): H5Node | null {
  try {
    return makeNodeIn(tree, h5path, rel, base);
  } catch (err) {
    const msg = (err as Error).message ?? String(err);
    if (msg.startsWith(tree.filePath)) throw err;
    throw new Error(
      `${tree.filePath}: ${h5path}: cannot read HDF5 object (${msg}); the file may be corrupt`,
      {
        cause: err,
      },
    );
  }
}

function makeNodeIn(tree: H5Tree, h5path: string, rel: string, base: string): H5Node | null {
  return tree.use((f) => {
    // Links are judged before libhdf5 follows them.
    tree.checkLinks(f, h5path);
    let e: Entity | null;
    try {
      e = f.get(h5path);
    } catch {
      return null;
    }
    if (!e) return null;
    const h5 = tree.h5;
    if (e instanceof h5.ExternalLink)
      throw new DataError(
        `${tree.filePath}: ${h5path} is an HDF5 external link to ${e.filename}:${e.obj_path} that does not resolve`,
      );
    if (e instanceof h5.BrokenSoftLink)
      throw new DataError(`${tree.filePath}: ${h5path} is a soft link to ${e.target}, which does not exist`);
    if (e instanceof h5.Group) {
      return new H5Node(tree, h5path, rel, true, readAttrs(h5, e, f), [], "int8", null, base);
    }
    if (e instanceof h5.Dataset) {
      const meta = e.metadata;
      tree.checkVirtualSources(h5path, meta);
      const shape = (e.shape ?? []).map(Number);
      return new H5Node(tree, h5path, rel, false, readAttrs(h5, e, f), shape, dtypeOfMeta(meta), meta, base);
    }
    return null;
  });
}

/**
 * Open an HDF5 file and return its node at `path` (default the root), holding the file open until
 * `release()` is called; later reads reopen the file.
 */
export async function openH5Tree(
  filePath: string,
  path = "/",
  opts: { confine?: string } = {},
): Promise<{ root: AnnNode; release(): void }> {
  const h5 = await loadH5wasm();
  let tree: H5Tree;
  try {
    tree = new H5Tree(h5, filePath, opts.confine);
  } catch (err) {
    throw new Error(`${filePath}: cannot open (${(err as Error).message})`);
  }
  tree.file = tree.open();
  const base = joinPath(path);
  const root = makeNode(tree, `/${base}`, "", base);
  if (!root) {
    tree.file.close();
    tree.file = null;
    throw new Error(`${filePath}: no group at ${path}`);
  }
  return {
    root,
    release() {
      tree.file?.close();
      tree.file = null;
    },
  };
}
