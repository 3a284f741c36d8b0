/**
 * Writing small `.h5ad` files in tests with h5wasm (the same library Tessera reads them with): obs and
 * var frames, and an X that is dense, CSR (any arrays, valid or not), an HDF5 external link to another
 * file, or a soft link. Enough of anndata's layout for the reader; used to build malformed and
 * link-carrying files on the fly instead of committing binaries.
 */
import type * as H5 from "h5wasm";

type H5Module = typeof H5;

let loading: Promise<H5Module> | undefined;

/** h5wasm's Node build, ready. */
export function h5(): Promise<H5Module> {
  loading ??= import("h5wasm/node").then(async (m) => {
    await (m as unknown as H5Module).ready;
    return m as unknown as H5Module;
  });
  return loading;
}

/** What X is. */
export type XSpec =
  | { dense: Float32Array | Float64Array | Int32Array; shape?: [number, number] }
  | {
      csr: {
        data: Float32Array | Float64Array;
        indices: Int32Array | BigInt64Array;
        indptr: Int32Array | BigInt64Array;
        shape: [number, number];
        /** `csc_matrix` instead of `csr_matrix`. */
        csc?: boolean;
      };
    }
  | { huge: { shape: [number, number] } }
  | { external: { file: string; path: string } }
  | { soft: string }
  | null;

/** Options of `writeH5ad`. */
export interface H5adSpec {
  nObs: number;
  nVars: number;
  X: XSpec;
  /** More datasets to add at absolute paths (`/obsm/X_umap` …), or external links there. */
  extra?: {
    path: string;
    dense?: Float32Array;
    shape?: number[];
    external?: { file: string; path: string };
  }[];
}

function frame(f: H5.File | H5.Group, name: string, labels: string[]): void {
  const g = f.create_group(name) as H5.Group;
  g.create_attribute("encoding-type", "dataframe");
  g.create_attribute("encoding-version", "0.2.0");
  g.create_attribute("_index", "_index");
  const idx = g.create_dataset({ name: "_index", data: labels }) as H5.Dataset;
  idx.create_attribute("encoding-type", "string-array");
  idx.create_attribute("encoding-version", "0.2.0");
}

/** Write an AnnData `.h5ad` at `file` (overwritten). */
export async function writeH5ad(file: string, spec: H5adSpec): Promise<void> {
  const m = await h5();
  const f = new m.File(file, "w");
  try {
    f.create_attribute("encoding-type", "anndata");
    f.create_attribute("encoding-version", "0.1.0");
    frame(
      f,
      "obs",
      Array.from({ length: spec.nObs }, (_, i) => `cell${i}`),
    );
    frame(
      f,
      "var",
      Array.from({ length: spec.nVars }, (_, i) => `gene${i}`),
    );
    const X = spec.X;
    if (X && "dense" in X) {
      const ds = f.create_dataset({
        name: "X",
        data: X.dense,
        shape: X.shape ?? [spec.nObs, spec.nVars],
      }) as H5.Dataset;
      ds.create_attribute("encoding-type", "array");
      ds.create_attribute("encoding-version", "0.2.0");
    } else if (X && "csr" in X) {
      const g = f.create_group("X") as H5.Group;
      g.create_attribute("encoding-type", X.csr.csc ? "csc_matrix" : "csr_matrix");
      g.create_attribute("encoding-version", "0.1.0");
      g.create_attribute("shape", new BigInt64Array(X.csr.shape.map((v) => BigInt(v))));
      g.create_dataset({ name: "data", data: X.csr.data });
      g.create_dataset({ name: "indices", data: X.csr.indices });
      g.create_dataset({ name: "indptr", data: X.csr.indptr });
    } else if (X && "huge" in X) {
      // A chunked dataset grown to `shape` without writing a chunk: a tiny file declaring a huge X.
      const ds = f.create_dataset({
        name: "X",
        data: new Float32Array(4),
        shape: [2, 2],
        maxshape: [null, null],
        chunks: [2, 2],
      }) as H5.Dataset;
      ds.resize(X.huge.shape);
      ds.create_attribute("encoding-type", "array");
      ds.create_attribute("encoding-version", "0.2.0");
    } else if (X && "external" in X) {
      f.create_external_link(X.external.file, X.external.path, "X");
    } else if (X && "soft" in X) {
      f.create_soft_link(X.soft, "X");
    }
    for (const e of spec.extra ?? []) {
      const parts = e.path.split("/").filter(Boolean);
      let g: H5.File | H5.Group = f;
      for (const p of parts.slice(0, -1)) {
        const next = (g.get(p) as H5.Group | null) ?? (g.create_group(p) as H5.Group);
        g = next;
      }
      const leaf = parts[parts.length - 1]!;
      if (e.external) g.create_external_link(e.external.file, e.external.path, leaf);
      else g.create_dataset({ name: leaf, data: e.dense!, shape: e.shape! });
    }
  } finally {
    f.close();
  }
}

/** Write a plain HDF5 file holding one float32 dataset at `path` (a link target). */
export async function writeH5Dataset(
  file: string,
  path: string,
  data: Float32Array,
  shape: number[],
): Promise<void> {
  const m = await h5();
  const f = new m.File(file, "w");
  try {
    const parts = path.split("/").filter(Boolean);
    let g: H5.File | H5.Group = f;
    for (const p of parts.slice(0, -1)) g = g.create_group(p) as H5.Group;
    g.create_dataset({ name: parts[parts.length - 1]!, data, shape });
  } finally {
    f.close();
  }
}
