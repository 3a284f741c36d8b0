/**
 * `AnnNode` over a zarr store (v2 or v3) through zarrita.
 *
 * Metadata comes from consolidated metadata when the store has it (v3 inline `consolidated_metadata`
 * in any group's `zarr.json`, v2 `.zmetadata` or spatialdata's `zmetadata`), else from per-node
 * documents. Group listing (needed for `dict` groups such as `uns` and `obsm`) comes from consolidated
 * metadata, an `opts.listChildren` callback, or the store itself: any store that can enumerate its keys
 * (a folder, a zip's central directory; see `zarr-children.ts`).
 */
import type { Readable } from "@zarrita/storage";
import * as zarr from "zarrita";
import { DataError } from "../data-error.js";
import { numpyTypeName, parseTypestr } from "../numpy-dtype.js";
import { classifyZarrDtype, readZarrArray, type ZarrArray } from "../zarr/arrays.js";
import { registerCodecs } from "../zarr/codecs.js";
import { type AnnNode, joinPath, type NodeData, type NodeDtype } from "./node.js";
import { readV2Records } from "./records.js";
import { type ChildLister, storeChildLister } from "./zarr-children.js";

/** Metadata of one node, normalised across zarr versions. */
export interface ZarrNodeMeta {
  readonly zarrFormat: 2 | 3;
  readonly kind: "array" | "group";
  readonly attrs: Record<string, unknown>;
  readonly shape: number[];
  /** v3 `data_type` or v2 `dtype`, verbatim. */
  readonly dataType: unknown;
  /** The raw v2 `.zarray` document (for the structured-dtype reader). */
  readonly v2?: Record<string, unknown>;
}

/** Options for opening a zarr AnnData node tree. */
export interface ZarrTreeOptions {
  /** Name used in error messages (a path or URL); defaults to "zarr store". */
  source?: string;
  /**
   * List the child names of the group at a store path (no leading slash); null when unknown. Used when the
   * store has no consolidated metadata; the default enumerates the store itself.
   */
  listChildren?: (path: string) => Promise<string[] | null> | string[] | null;
  /** Bytes stored under a store path prefix, when known. */
  sizeOf?: (prefix: string) => number | null;
}

/** Shared state of one open store. */
class ZarrTree {
  readonly meta = new Map<string, ZarrNodeMeta | null>();
  /** Paths known from consolidated metadata (null: the store has none). */
  consolidated: Map<string, ZarrNodeMeta> | null = null;
  readonly arrays = new Map<string, Promise<ZarrArray>>();
  /** Children from enumerating the store, used when there is no consolidated metadata (null: cannot list). */
  readonly storeLister: ChildLister | null;
  constructor(
    readonly store: Readable,
    readonly source: string,
    readonly opts: ZarrTreeOptions,
    base: string,
  ) {
    this.storeLister = storeChildLister(store, base);
  }

  where(path: string): string {
    return `${this.source}: ${path === "" ? "/" : path}`;
  }

  async json(key: string): Promise<Record<string, unknown> | null> {
    const bytes = await this.store.get(`/${key}`);
    if (!bytes) return null;
    let doc: unknown;
    try {
      doc = JSON.parse(new TextDecoder().decode(bytes));
    } catch (err) {
      throw new Error(`${this.source}: ${key} is not valid JSON (${(err as Error).message})`);
    }
    if (typeof doc !== "object" || doc === null || Array.isArray(doc)) {
      throw new Error(`${this.source}: ${key} is not a JSON object`);
    }
    return doc as Record<string, unknown>;
  }

  /** Merge consolidated metadata found at `prefix` (v3 inline or v2 documents). */
  addConsolidated(prefix: string, entries: Record<string, unknown>, format: 2 | 3): void {
    this.consolidated ??= new Map();
    if (format === 3) {
      for (const [rel, doc] of Object.entries(entries)) {
        const meta = v3Meta(doc as Record<string, unknown>);
        if (meta) this.consolidated.set(joinPath(prefix, rel), meta);
        const inner = (doc as { consolidated_metadata?: { metadata?: Record<string, unknown> } })
          .consolidated_metadata;
        if (inner?.metadata) this.addConsolidated(joinPath(prefix, rel), inner.metadata, 3);
      }
      return;
    }
    const byNode = new Map<
      string,
      { zarray?: Record<string, unknown>; zgroup?: boolean; zattrs?: Record<string, unknown> }
    >();
    for (const [key, doc] of Object.entries(entries)) {
      const m = /^(?:(.*)\/)?(\.zarray|\.zgroup|\.zattrs)$/.exec(key);
      if (!m) continue;
      const node = joinPath(prefix, m[1] ?? "");
      const slot = byNode.get(node) ?? {};
      if (m[2] === ".zarray") slot.zarray = doc as Record<string, unknown>;
      else if (m[2] === ".zgroup") slot.zgroup = true;
      else slot.zattrs = doc as Record<string, unknown>;
      byNode.set(node, slot);
    }
    for (const [node, slot] of byNode) {
      const attrs = slot.zattrs ?? {};
      if (slot.zarray) this.consolidated.set(node, v2ArrayMeta(slot.zarray, attrs));
      // A node with only `.zattrs` is a group whose `.zgroup` was left out (seen in vitessce's partial stores).
      else this.consolidated.set(node, { zarrFormat: 2, kind: "group", attrs, shape: [], dataType: null });
    }
  }

  /** Look for consolidated metadata at the element path and each ancestor. */
  async discoverConsolidated(base: string): Promise<void> {
    const parts = base.split("/").filter(Boolean);
    for (let i = 0; i <= parts.length; i++) {
      const prefix = parts.slice(0, i).join("/");
      const v3 = await this.json(joinPath(prefix, "zarr.json"));
      const cm = v3?.consolidated_metadata as { metadata?: unknown } | undefined | null;
      if (cm && typeof cm.metadata === "object" && cm.metadata !== null) {
        this.addConsolidated(prefix, cm.metadata as Record<string, unknown>, 3);
        const self = v3Meta(v3 as Record<string, unknown>);
        if (self) this.consolidated?.set(prefix, self);
      }
      for (const name of [".zmetadata", "zmetadata"]) {
        const key = joinPath(prefix, name);
        const doc = await this.json(key);
        if (!doc) continue;
        const md = doc.metadata;
        if (typeof md !== "object" || md === null || Array.isArray(md)) {
          throw new Error(
            `${this.source}: ${key} is not zarr consolidated metadata (it has no "metadata" object)`,
          );
        }
        this.addConsolidated(prefix, md as Record<string, unknown>, 2);
      }
    }
  }

  async nodeMeta(path: string): Promise<ZarrNodeMeta | null> {
    const cached = this.meta.get(path);
    if (cached !== undefined) return cached;
    const meta = this.consolidated?.get(path) ?? (await this.fetchMeta(path));
    this.meta.set(path, meta);
    return meta;
  }

  async fetchMeta(path: string): Promise<ZarrNodeMeta | null> {
    const v3 = await this.json(joinPath(path, "zarr.json"));
    if (v3) {
      const meta = v3Meta(v3);
      if (!meta)
        throw new Error(`${this.where(path)}: zarr.json is not zarr v3 metadata (node_type missing)`);
      const cm = v3.consolidated_metadata as { metadata?: Record<string, unknown> } | undefined;
      if (cm?.metadata) this.addConsolidated(path, cm.metadata, 3);
      return meta;
    }
    const zarray = await this.json(joinPath(path, ".zarray"));
    const zattrs = (await this.json(joinPath(path, ".zattrs"))) ?? {};
    if (zarray) {
      if (!Array.isArray(zarray.shape) || zarray.dtype === undefined) {
        throw new Error(`${this.where(path)}: .zarray lacks "shape" or "dtype"`);
      }
      return v2ArrayMeta(zarray, zattrs);
    }
    if (await this.json(joinPath(path, ".zgroup"))) {
      return { zarrFormat: 2, kind: "group", attrs: zattrs, shape: [], dataType: null };
    }
    return null;
  }

  async list(path: string): Promise<string[] | null> {
    if (this.consolidated) {
      const names = new Set<string>();
      const prefix = path === "" ? "" : `${path}/`;
      for (const key of this.consolidated.keys()) {
        if (key.startsWith(prefix) && key.length > prefix.length)
          names.add(key.slice(prefix.length).split("/")[0] as string);
      }
      return [...names].sort();
    }
    if (this.opts.listChildren) return (await this.opts.listChildren(path)) ?? null;
    return this.storeLister ? this.storeLister(path) : null;
  }

  array(path: string, format: 2 | 3): Promise<ZarrArray> {
    let p = this.arrays.get(path);
    if (!p) {
      // zarrita derives keys through URL parsing; a percent-encoded path keeps `#`, `?`, `%` literal.
      const loc = new zarr.Location(this.store, `/${path.split("/").map(encodeURIComponent).join("/")}`);
      p = (
        format === 2 ? zarr.open.v2(loc, { kind: "array" }) : zarr.open.v3(loc, { kind: "array" })
      ) as Promise<ZarrArray>;
      this.arrays.set(path, p);
    }
    return p;
  }
}

function v3Meta(doc: Record<string, unknown>): ZarrNodeMeta | null {
  const kind = doc.node_type;
  if (kind !== "array" && kind !== "group") return null;
  return {
    zarrFormat: 3,
    kind,
    attrs: (doc.attributes as Record<string, unknown>) ?? {},
    shape: kind === "array" ? ((doc.shape as number[]) ?? []) : [],
    dataType: doc.data_type ?? null,
  };
}

function v2ArrayMeta(zarray: Record<string, unknown>, attrs: Record<string, unknown>): ZarrNodeMeta {
  return {
    zarrFormat: 2,
    kind: "array",
    attrs,
    shape: (zarray.shape as number[]) ?? [],
    dataType: zarray.dtype,
    v2: zarray,
  };
}

/** The node dtype of a zarr data type (v2 dtype strings are mapped the way zarrita maps them). */
function nodeDtype(meta: ZarrNodeMeta): NodeDtype {
  const dt = meta.dataType;
  if (meta.zarrFormat === 2) {
    if (Array.isArray(dt)) return "record";
    if (typeof dt !== "string") return { unsupported: JSON.stringify(dt) };
    if (dt === "|O") return "string";
    const t = parseTypestr(dt);
    if (!t) return { unsupported: dt };
    if (t.kind === "U" || t.kind === "S") return "string";
    const name = numpyTypeName(t);
    const c = name ? classifyZarrDtype(name) : null;
    return c ?? { unsupported: dt };
  }
  if (typeof dt === "object" && dt !== null) {
    const name = (dt as { name?: unknown }).name;
    return { unsupported: `zarr v3 data type ${typeof name === "string" ? name : JSON.stringify(dt)}` };
  }
  return classifyZarrDtype(dt) ?? { unsupported: String(dt) };
}

/** One node of a zarr AnnData tree. */
class ZarrNode implements AnnNode {
  readonly isGroup: boolean;
  readonly attrs: Readonly<Record<string, unknown>>;
  readonly shape: readonly number[];
  readonly dtype: NodeDtype;
  constructor(
    private readonly tree: ZarrTree,
    /** Path inside the store. */
    private readonly storePath: string,
    /** Path relative to the AnnData element. */
    readonly path: string,
    private readonly meta: ZarrNodeMeta,
  ) {
    this.isGroup = meta.kind === "group";
    this.attrs = meta.attrs;
    this.shape = meta.shape;
    this.dtype = this.isGroup ? "int8" : nodeDtype(meta);
  }

  get where(): string {
    return this.tree.where(this.storePath);
  }

  children(): Promise<string[] | null> {
    return this.tree.list(this.storePath);
  }

  async get(name: string): Promise<AnnNode | null> {
    const abs = name.startsWith("/");
    const storePath = abs ? joinPath(name) : joinPath(this.storePath, name);
    const meta = await this.tree.nodeMeta(storePath);
    if (!meta) return null;
    return new ZarrNode(this.tree, storePath, abs ? joinPath(name) : joinPath(this.path, name), meta);
  }

  async read(): Promise<NodeData> {
    return this.readSel();
  }

  async readRows(start: number, stop: number): Promise<NodeData> {
    return this.readSel({ start, stop });
  }

  private async readSel(rows?: { start: number; stop: number }): Promise<NodeData> {
    if (this.isGroup) throw new Error(`${this.where}: is a group, not an array`);
    try {
      if (this.dtype === "record" && this.meta.v2) {
        return await readV2Records(this.tree.store, this.storePath, this.meta.v2, rows);
      }
      if (typeof this.dtype === "object")
        throw new Error(`unsupported data type (${this.dtype.unsupported})`);
      const arr = await this.tree.array(this.storePath, this.meta.zarrFormat);
      return await readZarrArray(arr, rows);
    } catch (err) {
      const msg = (err as Error).message ?? String(err);
      if (msg.startsWith(this.tree.source)) throw err;
      if ((err as Error)?.name === "AbortError") throw err;
      // Whatever stops an array read here is the file's doing (a bad chunk, codec or geometry).
      throw new DataError(`${this.where}: cannot read array: ${describeZarrError(err)}`, { cause: err });
    }
  }

  diskBytes(): number | null {
    return this.tree.opts.sizeOf?.(this.storePath) ?? null;
  }
}

/** A readable message for zarrita errors, whose causes carry the interesting part. */
function describeZarrError(err: unknown): string {
  const parts: string[] = [];
  let e: unknown = err;
  for (let i = 0; i < 4 && e; i++) {
    const m = e instanceof Error ? e.message : String(e);
    if (m && !parts.includes(m)) parts.push(m);
    e = e instanceof Error ? e.cause : undefined;
  }
  return parts.join(": ");
}

/** The `location` (path or URL) of a Tessera store, so errors name the file rather than "zarr store". */
function storeLocation(store: Readable): string | undefined {
  const loc = (store as { location?: unknown }).location;
  return typeof loc === "string" && loc !== "" ? loc : undefined;
}

/**
 * Open the node tree of an AnnData element at `path` in a zarr store. Throws when nothing is there.
 */
export async function openZarrTree(
  store: Readable,
  path = "/",
  opts: ZarrTreeOptions = {},
): Promise<AnnNode> {
  registerCodecs();
  const base = joinPath(path);
  const tree = new ZarrTree(store, opts.source ?? storeLocation(store) ?? "zarr store", opts, base);
  await tree.discoverConsolidated(base);
  const meta = await tree.nodeMeta(base);
  if (!meta) {
    throw new Error(`${tree.where(base)}: no zarr group here (no zarr.json, .zgroup or consolidated entry)`);
  }
  return new ZarrNode(tree, base, "", meta);
}
