/**
 * The malformed-file corpus (issue 22, part 5): files written here, each breaking one rule — sparse
 * index arrays out of order or out of range, shapes that disagree, truncated and padded chunks, bad
 * chunk geometry, unknown codecs, compressed bombs, sizes no memory holds, lying and forged zip
 * directories, truncated and foreign files, dangling links — loaded over HTTP. None may be silent
 * (a 200 serving its data) and none may hang: each is refused at creation (400), fails its load with
 * a message, or answers its field read with a 4xx naming the file and the rule.
 */
import { randomBytes } from "node:crypto";
import { cp, readFile, rm, truncate, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { deflateRawSync, gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SparseMatrix } from "../../../src/sdk/data/arrays.js";
import { dataFrame } from "../../../src/sdk/data/dataframe.js";
import { makeTable } from "../../../src/sdk/data/table.js";
import { writeAnnDataZarr } from "../../../src/sdk/io/anndata/write.js";
import { FsStore } from "../../../src/sdk/io/store/fs-store.js";
import { writeH5ad } from "../../helpers/h5ad.js";
import { folderEntries, type RawZipEntry, writeZip } from "../../helpers/zip.js";
import { startTestServer, type TestServer } from "./harness.js";

const ANNDATA_ZARR = fileURLToPath(
  new URL("../../data/anndata-sparse-obsm/sparse-obsm.zarr", import.meta.url),
);

let t: TestServer;
let gene: string;
beforeAll(async () => {
  t = await startTestServer();
  const { openData } = await import("../../../src/sdk/io/open.js");
  gene = (await openData(ANNDATA_ZARR)).sdata.tables.table!.var.index.values[0]!;
});
afterAll(async () => {
  await t?.close();
});

/** One malformed file: how to write it (into the data dir), the field read after a load, and what the refusal must say. */
interface Case {
  name: string;
  write(dir: string): Promise<string>;
  field: string;
  says: RegExp;
}

const csr = (indptr: number[], indices: number[], data: number[], shape: [number, number], csc = false) => ({
  csr: {
    indptr: new Int32Array(indptr),
    indices: new Int32Array(indices),
    data: new Float32Array(data),
    shape,
    csc,
  },
});

/** An h5ad case of 2 cells × 3 genes (gene0 … gene2). */
function h5(
  name: string,
  X: Parameters<typeof writeH5ad>[1]["X"],
  says: RegExp,
  n: [number, number] = [2, 3],
): Case {
  return {
    name,
    async write(dir) {
      const f = join(dir, `${name}.h5ad`);
      await writeH5ad(f, { nObs: n[0], nVars: n[1], X });
      return f;
    },
    field: "X:gene0",
    says,
  };
}

/** An AnnData zarr folder written by Tessera's writer with a matrix that breaks the sparse rules. */
function zarrSparse(name: string, m: Omit<SparseMatrix, "dtype">, says: RegExp): Case {
  return {
    name,
    async write(dir) {
      const folder = join(dir, `${name}.zarr`);
      const table = makeTable({
        X: { ...m, dtype: "float32" } as SparseMatrix,
        obs: dataFrame(["c0", "c1"]),
        var: dataFrame(["g0", "g1", "g2"]),
      });
      await writeAnnDataZarr(table, new FsStore(folder));
      return folder;
    },
    field: "X:g0",
    says,
  };
}

/** A copy of the AnnData fixture whose dense X (5 × 4 float32, one chunk) is edited. */
function zarrX(
  name: string,
  editMeta: (meta: Record<string, unknown>) => void,
  chunk: ((old: Buffer) => Buffer | null) | null,
  says: RegExp,
): Case {
  return {
    name,
    async write(dir) {
      const folder = join(dir, `${name}.zarr`);
      await cp(ANNDATA_ZARR, folder, { recursive: true });
      const mp = join(folder, "X", "zarr.json");
      const meta = JSON.parse(await readFile(mp, "utf8")) as Record<string, unknown>;
      editMeta(meta);
      await writeFile(mp, JSON.stringify(meta));
      const rp = join(folder, "zarr.json");
      const root = JSON.parse(await readFile(rp, "utf8")) as {
        consolidated_metadata?: { metadata: Record<string, unknown> };
      };
      if (root.consolidated_metadata) {
        root.consolidated_metadata.metadata.X = meta;
        await writeFile(rp, JSON.stringify(root));
      }
      if (chunk) {
        const cpath = join(folder, "X", "c", "0", "0");
        const next = chunk(await readFile(cpath));
        if (next === null) await rm(cpath);
        else await writeFile(cpath, next);
      }
      return folder;
    },
    field: `X:${"gene"}`,
    says,
  };
}

const raw = (meta: Record<string, unknown>) => {
  meta.codecs = [{ name: "bytes", configuration: { endian: "little" } }];
};

/** A zip of the AnnData fixture whose X chunk entry is replaced. */
function zipX(name: string, entry: (base: RawZipEntry) => RawZipEntry, says: RegExp): Case {
  return {
    name,
    async write(dir) {
      const file = join(dir, `${name}.zarr.zip`);
      const entries = await folderEntries(ANNDATA_ZARR);
      await writeZip(
        file,
        entries.map((e) => (e.name === "X/c/0/0" ? entry(e) : e)),
      );
      return file;
    },
    field: "X:gene",
    says,
  };
}

/** A file of arbitrary bytes. */
function bytesFile(name: string, file: string, bytes: () => Uint8Array, says: RegExp): Case {
  return {
    name,
    async write(dir) {
      const f = join(dir, file);
      await writeFile(f, bytes());
      return f;
    },
    field: "X:gene0",
    says,
  };
}

const CASES: Case[] = [
  // Sparse matrices in h5ad: every rule of scipy's CSR/CSC.
  h5(
    "csr-indptr-not-monotone",
    csr([0, 2, 1], [0, 1], [1, 2], [2, 3]),
    /indptr decreases at row 1: 2 then 1/,
  ),
  h5(
    "csr-index-too-large",
    csr([0, 1, 2], [0, 5], [1, 2], [2, 3]),
    /indices\[1\] = 5 \(row 1\) is outside 0\.\.2/,
  ),
  h5("csr-index-negative", csr([0, 1, 2], [-1, 0], [1, 2], [2, 3]), /indices\[0\] = -1 .* outside 0\.\.2/),
  h5(
    "csr-indptr-past-nnz",
    csr([0, 1, 5], [0, 1], [1, 2], [2, 3]),
    /indptr ends at 5, but there are 2 stored values/,
  ),
  h5("csr-indptr-short-of-nnz", csr([0, 1, 1], [0, 1], [1, 2], [2, 3]), /indptr ends at 1, but there are 2/),
  h5("csr-indptr-not-from-zero", csr([1, 1, 2], [0, 1], [1, 2], [2, 3]), /indptr starts at 1, not 0/),
  h5(
    "csr-indptr-wrong-length",
    csr([0, 1, 2, 2], [0, 1], [1, 2], [2, 3]),
    /indptr.* has 4 entries, expected 3/,
  ),
  h5(
    "csr-indices-vs-data",
    csr([0, 1, 2], [0, 1, 2], [1, 2], [2, 3]),
    /indices.* has 3 entries but data has 2/,
  ),
  h5(
    "csc-index-too-large",
    csr([0, 1, 1, 2], [0, 7], [1, 2], [2, 3], true),
    /indices\[1\] = 7 \(column 2\) is outside 0\.\.1/,
  ),
  h5(
    "csr-shape-vs-obs",
    csr([0, 1, 2, 2], [0, 1], [1, 2], [3, 3]),
    /X has shape \[3, 3\], expected \[2, 3\]/,
  ),
  // Dense and linked X in h5ad.
  h5(
    "dense-shape-vs-var",
    { dense: new Float32Array(8), shape: [2, 4] },
    /X has shape \[2, 4\], expected \[2, 3\]/,
  ),
  h5(
    "dense-declared-80GB",
    { huge: { shape: [200_000, 100_000] } },
    /reading it needs 80\.0 GB/,
    [200_000, 100_000],
  ),
  h5(
    "external-link-missing",
    { external: { file: "nope.h5", path: "/X" } },
    /external link to nope\.h5:\/X, which does not exist/,
  ),
  h5("soft-link-dangling", { soft: "/nowhere" }, /soft link to \/nowhere, which does not exist/),
  // Sparse matrices in zarr (Tessera's own writer does not check what it is given).
  zarrSparse(
    "zarr-csr-not-monotone",
    {
      kind: "csr",
      shape: [2, 3],
      indptr: new Int32Array([0, 2, 1]),
      indices: new Int32Array([0, 1]),
      data: new Float32Array([1, 2]),
    },
    /indptr decreases/,
  ),
  zarrSparse(
    "zarr-csr-index-range",
    {
      kind: "csr",
      shape: [2, 3],
      indptr: new Int32Array([0, 1, 2]),
      indices: new Int32Array([0, 3]),
      data: new Float32Array([1, 2]),
    },
    /indices\[1\] = 3 .* outside 0\.\.2/,
  ),
  zarrSparse(
    "zarr-csr-past-nnz",
    {
      kind: "csr",
      shape: [2, 3],
      indptr: new Int32Array([0, 1, 9]),
      indices: new Int32Array([0, 1]),
      data: new Float32Array([1, 2]),
    },
    /indptr ends at 9/,
  ),
  // Zarr chunks and array metadata.
  zarrX(
    "chunk-truncated",
    raw,
    () => Buffer.alloc(40),
    /chunk \[0, 0\] decodes to 10 values, its shape \[5, 4\] holds 20/,
  ),
  zarrX("chunk-padded", raw, () => Buffer.alloc(200), /decodes to 50 values, its shape \[5, 4\] holds 20/),
  zarrX("chunk-odd-bytes", raw, () => Buffer.alloc(7), /chunk \[0, 0\]/),
  zarrX(
    "chunk-shape-zero",
    (m) => {
      (m.chunk_grid as { configuration: { chunk_shape: number[] } }).configuration.chunk_shape = [0, 0];
    },
    null,
    /chunk shape \[0, 0\] must be 2 positive integers/,
  ),
  zarrX(
    "chunk-shape-fraction",
    (m) => {
      (m.chunk_grid as { configuration: { chunk_shape: number[] } }).configuration.chunk_shape = [2.5, 4];
    },
    null,
    /chunk shape \[2\.5, 4\]/,
  ),
  zarrX(
    "codec-unknown",
    (m) => {
      m.codecs = [{ name: "bytes", configuration: { endian: "little" } }, { name: "no-such-codec" }];
    },
    null,
    /Unknown codec: no-such-codec/,
  ),
  zarrX(
    "zstd-garbage",
    () => {},
    () => randomBytes(64),
    /not start with a zstd frame|cannot be decoded/,
  ),
  zarrX(
    "gzip-bomb-chunk",
    (m) => {
      m.codecs = [
        { name: "bytes", configuration: { endian: "little" } },
        { name: "gzip", configuration: { level: 1 } },
      ];
    },
    () => gzipSync(Buffer.alloc(64 * 2 ** 20)),
    /inflates past 4176 bytes/,
  ),
  zarrX(
    "shape-vs-obs",
    (m) => {
      m.shape = [2_000_000_000, 4];
    },
    null,
    /X has shape \[2000000000, 4\], expected \[5, 4\]/,
  ),
  zarrX("metadata-not-json", () => {}, null, /./),
  // Zip stores: bombs, lying and forged directories.
  zipX(
    "zip-bomb-declared",
    (e) => ({
      ...e,
      deflate: true,
      compressed: deflateRawSync(randomBytes(1_600_000), { level: 0 }),
      declaredSize: 1_600_000_000,
    }),
    /declares 1600000000 bytes uncompressed/,
  ),
  zipX(
    "zip-ratio-forged",
    (e) => ({ ...e, deflate: true, compressed: deflateRawSync(Buffer.alloc(64)), declaredSize: 50_000_000 }),
    /more than DEFLATE can produce/,
  ),
  zipX(
    "zip-inflates-past-declared",
    (e) => ({
      ...e,
      deflate: true,
      compressed: deflateRawSync(Buffer.alloc(4 * 2 ** 20)),
      declaredSize: 5000,
    }),
    /cannot inflate entry "X\/c\/0\/0": inflates past 5000 bytes, the size the zip directory declares/,
  ),
  zipX(
    "zip-stored-size-mismatch",
    (e) => ({ ...e, declaredSize: e.data.byteLength + 100 }),
    /STORED entry "X\/c\/0\/0" has compressed size/,
  ),
  // Whole files that are not what their name says.
  bytesFile(
    "not-hdf5",
    "not-hdf5.h5ad",
    () => new TextEncoder().encode("just text, no HDF5 signature"),
    /not an HDF5 file/,
  ),
  bytesFile("empty-h5ad", "empty.h5ad", () => new Uint8Array(0), /not an HDF5 file/),
  bytesFile("not-a-zip", "not-a-zip.zarr.zip", () => randomBytes(100), /zip|not a recognised|corrupt/i),
  bytesFile("empty-zip", "empty.zarr.zip", () => new Uint8Array(0), /zip|empty|not a recognised/i),
  {
    name: "folder-named-h5ad",
    async write(dir) {
      const f = join(dir, "folder.h5ad");
      await (await import("node:fs/promises")).mkdir(f);
      return f;
    },
    field: "X:gene0",
    says: /is a folder, not an HDF5 file/,
  },
];

// Fill the fixture's gene name into zarr cases, and break the metadata of the "not JSON" case.
for (const c of CASES) if (c.field === "X:gene") c.field = "X:GENE";

describe("malformed files are never read as if they were fine", () => {
  it(`refuses all ${CASES.length + 2} of them, saying why, without a 200, a 500 or a hang`, async () => {
    const dir = join(t.dataDir, "malformed");
    await (await import("node:fs/promises")).mkdir(dir);
    // Two more that need the others' files: a truncated h5ad and a zip cut short.
    const extra: Case[] = [
      {
        name: "h5ad-truncated",
        async write(d) {
          const f = join(d, "truncated.h5ad");
          await writeH5ad(f, { nObs: 2, nVars: 3, X: { dense: new Float32Array(6) } });
          const { size } = await (await import("node:fs/promises")).stat(f);
          await truncate(f, Math.floor(size / 2));
          return f;
        },
        field: "X:gene0",
        says: /truncated HDF5 file/,
      },
      {
        name: "zip-cut-short",
        async write(d) {
          const f = join(d, "cut.zarr.zip");
          await writeZip(f, await folderEntries(ANNDATA_ZARR));
          const { size } = await (await import("node:fs/promises")).stat(f);
          await truncate(f, size - 30);
          return f;
        },
        field: "X:GENE",
        says: /zip|central directory|end of central/i,
      },
    ];
    const silent: string[] = [];
    for (const c of [...CASES, ...extra]) {
      const path = await c.write(dir);
      if (c.name === "metadata-not-json") await writeFile(join(path, "X", "zarr.json"), "{ not json");
      if (c.name === "metadata-not-json") await rm(join(path, "zarr.json"));
      const t0 = Date.now();
      const created = await t.api("/api/sessions", {
        method: "POST",
        json: { source: { kind: "load", path } },
      });
      expect(created.status, c.name).not.toBe(500);
      let said = "";
      if (created.status === 400) said = ((await created.json()) as { detail: string }).detail;
      else {
        expect(created.status, c.name).toBe(201);
        const { id } = (await created.json()) as { id: string };
        const s = t.server.service.session(id);
        await s.ready;
        if (s.status === "errored") said = s.summary().error ?? "";
        else {
          const field = c.field.replace("GENE", gene);
          const r = await t.api(`/api/sessions/${id}/data/${encodeURIComponent(field)}`);
          expect(r.status, `${c.name}: ${field}`).not.toBe(500);
          if (r.status === 200) silent.push(c.name);
          else {
            expect(r.status, c.name).toBeGreaterThanOrEqual(400);
            expect(r.status, c.name).toBeLessThan(500);
            said = ((await r.json()) as { detail: string }).detail;
          }
        }
        await t.server.service.deleteSession(id);
      }
      expect(Date.now() - t0, `${c.name} took too long`).toBeLessThan(10_000);
      expect(said, c.name).toMatch(c.says);
    }
    expect(silent).toEqual([]);
    expect((await t.api("/api/healthz")).status).toBe(200);
  });
});
