/**
 * 10x HDF5 count matrices, every layout the fixtures hold: Cell Ranger ≥ 3 / Space Ranger / Xenium
 * (`/matrix` with `features/{id,name,feature_type,genome}`, probe-based files adding `gene_id`,
 * `probe_region`, `filtered_probes`), and Cell Ranger 1–2 (one PyTables group per genome with `genes`
 * and `gene_names`). Dtypes vary (data int32, int64 or float64; indices int32 or int64): never assumed.
 */
import type { TypedArray } from "../../../data/arrays.js";
import { strings } from "../../../data/arrays.js";
import { type Column, withColumn } from "../../../data/dataframe.js";
import type { Table } from "../../../data/table.js";
import type { AnnNode, NodeData } from "../../anndata/node.js";
import { DataError } from "../../data-error.js";
import { openH5Tree } from "../../h5/node.js";
import { boolColumn, countsTable } from "./counts.js";
import { keepFeatures } from "./subset.js";

/** Options of {@link readTenxH5}. */
export interface ReadTenxH5Options {
  /** Genome group to read from a Cell Ranger 1–2 file (default: the only one; an error lists them when several). */
  readonly genome?: string | null;
  /** Keep only `Gene Expression` features (scanpy's `gex_only`, default true). */
  readonly gexOnly?: boolean;
  /** Where links in the file may lead (default: the data dir holding it). */
  readonly confine?: string;
}

/** The table read, which layout it had and what was noticed on the way. */
export interface TenxH5Result {
  readonly table: Table;
  readonly layout: "v3" | "legacy";
  readonly warnings: string[];
}

async function need(group: AnnNode, name: string, where: string): Promise<AnnNode> {
  const n = await group.get(name);
  if (!n) {
    const have = (await group.children()) ?? [];
    throw new DataError(
      `${where}: no "${group.path ? `${group.path}/` : ""}${name}" (has ${have.join(", ") || "nothing"}) — not a 10x matrix`,
    );
  }
  return n;
}

async function numbers(group: AnnNode, name: string, where: string): Promise<TypedArray> {
  const d = await (await need(group, name, where)).read();
  if (d.kind !== "numeric") throw new DataError(`${where}: ${group.path}/${name} is not numeric`);
  return d.data;
}

function asStrings(d: NodeData, where: string): string[] {
  if (d.kind === "string") return d.values.map((v) => v ?? "");
  throw new DataError(`${where}: expected strings, got ${d.kind}`);
}

async function stringsOf(group: AnnNode, name: string, where: string): Promise<string[]> {
  return asStrings(await (await need(group, name, where)).read(), `${where}: ${group.path}/${name}`);
}

/** Read a 10x h5 matrix as a table (barcodes × features, CSR float32). */
export async function readTenxH5(path: string, opts: ReadTenxH5Options = {}): Promise<TenxH5Result> {
  let opened: Awaited<ReturnType<typeof openH5Tree>>;
  try {
    opened = await openH5Tree(path, "/", opts.confine ? { confine: opts.confine } : {});
  } catch (err) {
    throw new DataError(`${path}: not a readable HDF5 file (${(err as Error).message})`, { cause: err });
  }
  try {
    const root = opened.root;
    const matrix = await root.get("matrix");
    if (matrix?.isGroup) return { ...(await readV3(matrix, path, opts.gexOnly ?? true)), layout: "v3" };
    const groups: string[] = [];
    for (const name of (await root.children()) ?? []) {
      const g = await root.get(name);
      if (g?.isGroup && (await g.get("gene_names"))) groups.push(name);
    }
    if (groups.length === 0)
      throw new DataError(
        `${path}: neither a "matrix" group (Cell Ranger ≥ 3) nor a per-genome group with gene_names (Cell Ranger 1–2) — not a 10x h5 matrix`,
      );
    let genome = opts.genome ?? null;
    if (genome === null) {
      if (groups.length > 1)
        throw new DataError(`${path}: holds several genomes (${groups.join(", ")}); choose one with genome`);
      genome = groups[0]!;
    } else if (!groups.includes(genome)) {
      throw new DataError(`${path}: no genome "${genome}" (has ${groups.join(", ")})`);
    }
    const g = (await root.get(genome))!;
    const where = `${path}: ${genome}`;
    const names = await stringsOf(g, "gene_names", where);
    const r = countsTable(
      {
        barcodes: await stringsOf(g, "barcodes", where),
        ids: await stringsOf(g, "genes", where),
        names,
        featureColumns: {},
        data: await numbers(g, "data", where),
        indices: await numbers(g, "indices", where),
        indptr: await numbers(g, "indptr", where),
      },
      where,
    );
    await checkShape(g, r.table, where);
    return { ...r, layout: "legacy" };
  } finally {
    opened.release();
  }
}

async function checkShape(g: AnnNode, table: Table, where: string): Promise<void> {
  const shapeNode = await g.get("shape");
  if (!shapeNode) return;
  const d = await shapeNode.read();
  if (d.kind !== "numeric") return;
  const [genes, cells] = [Number(d.data[0]), Number(d.data[1])];
  const X = table.X as { shape: readonly number[] };
  if (genes !== X.shape[1] || cells !== X.shape[0])
    throw new DataError(
      `${where}: shape says ${genes} features × ${cells} barcodes, the arrays hold ${X.shape[1]} × ${X.shape[0]}`,
    );
}

async function readV3(
  matrix: AnnNode,
  path: string,
  gexOnly: boolean,
): Promise<Omit<TenxH5Result, "layout">> {
  const where = path;
  const features = await need(matrix, "features", where);
  const ids = await stringsOf(features, "id", where);
  const names = await stringsOf(features, "name", where);
  const cols: Record<string, Column> = {};
  const types = (await features.get("feature_type"))
    ? await stringsOf(features, "feature_type", where)
    : null;
  if (types) cols.feature_types = strings(types);
  if (await features.get("genome")) cols.genome = strings(await stringsOf(features, "genome", where));
  // Probe-based (Visium FFPE, Space Ranger ≥ 2.1) files: per-probe gene, region and filter flag.
  for (const extra of ["gene_id", "gene_name", "probe_region"]) {
    if (await features.get(extra)) cols[extra] = strings(await stringsOf(features, extra, where));
  }
  const fp = await features.get("filtered_probes");
  if (fp) {
    const d = await fp.read();
    if (d.kind === "numeric") cols.filtered_probes = boolColumn(d.data);
  }
  const r = countsTable(
    {
      barcodes: await stringsOf(matrix, "barcodes", where),
      ids,
      names,
      featureColumns: cols,
      data: await numbers(matrix, "data", where),
      indices: await numbers(matrix, "indices", where),
      indptr: await numbers(matrix, "indptr", where),
    },
    where,
  );
  await checkShape(matrix, r.table, where);
  const fb = await matrix.get("filtered_barcodes");
  let table = r.table;
  if (fb) {
    const d = await fb.read();
    if (d.kind === "numeric") {
      table = { ...table, obs: withColumn(table.obs, "filtered_barcodes", boolColumn(d.data)) };
    }
  }
  if (gexOnly && types && types.some((t) => t !== "Gene Expression")) {
    const keep = types.flatMap((t, i) => (t === "Gene Expression" ? [i] : []));
    table = keepFeatures(table, keep);
    r.warnings.push(
      `${where}: kept the ${keep.length} Gene Expression features of ${types.length} (gex_only)`,
    );
  }
  return { table, warnings: r.warnings };
}
