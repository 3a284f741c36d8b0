/** Checkpoints: what they carry, HTTP Range opening, rejection of stale files, crash-safe saves. */
import { copyFile, mkdtemp, readdir, readFile, rm, stat, truncate, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, relative as relativePath } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as zarr from "zarrita";
import { lazyMatrix, loadMatrix } from "../../../../src/sdk/data/lazy.js";
import { elementBytes, tableSlotSizes } from "../../../../src/sdk/data/sizes.js";
import { withElement } from "../../../../src/sdk/data/spatialdata.js";
import { updateTable } from "../../../../src/sdk/data/table.js";
import { ensureDemoDataset } from "../../../../src/sdk/demo/ensure.js";
import { type AppState, emptyAppState } from "../../../../src/sdk/io/checkpoint/app-state.js";
import { openCheckpoint, readFigure, readGeneFromMirror } from "../../../../src/sdk/io/checkpoint/read.js";
import { SIDECAR_ATTR } from "../../../../src/sdk/io/checkpoint/sidecar.js";
import { writeCheckpoint, writeCheckpointNamed } from "../../../../src/sdk/io/checkpoint/write.js";
import { openData } from "../../../../src/sdk/io/open.js";
import { writeSpatialData } from "../../../../src/sdk/io/spatialdata/write.js";
import { FsStore } from "../../../../src/sdk/io/store/fs-store.js";
import { writeZipFromStore } from "../../../../src/sdk/io/store/zip-writer.js";
import { consolidateV3 } from "../../../../src/sdk/io/zarr/consolidated.js";
import { fixture } from "../../../fixtures.js";
import { startServer, type TestServer } from "../store/http-server.js";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "tessera-cp-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const appState: AppState = {
  schema_version: 1,
  name: "pbmc study",
  compute_history: [
    {
      id: "h1",
      namespace: "sc.pp",
      function: "pca",
      params: { n_comps: 50 },
      status: "completed",
      library_versions: { tessera: "0.1.0" },
      started_at: "2026-11-22T04:00:00Z",
      finished_at: "2026-11-22T04:00:01Z",
      structural_diff: { obsm: ["X_pca"], varm: ["PCs"] },
      log: "ok",
    },
  ],
  plots: [
    {
      id: "p1",
      namespace: "pl",
      function: "umap",
      params: {},
      status: "drawn",
      references: ["obsm:X_umap", "obs:louvain"],
      library_versions: {},
    },
  ],
  displays: [
    {
      id: "d1",
      type: "embedding_canvas",
      encoding: { obsm_key: "X_umap", color_by: "obs:louvain", x_component: 0, y_component: 1 },
      viewport: { target: [0, 0], zoom: 1 },
    },
  ],
};

describe("checkpoint contents", () => {
  it("carries app state, figures and sidecar, and reads one gene from the column-major mirror", async () => {
    const { sdata } = await openData(fixture("scanpy-pbmc68k-reduced/10x_pbmc68k_reduced.h5ad"));
    const out = join(dir, "pbmc.sdata.zarr.zip");
    const svg = new TextEncoder().encode("<svg xmlns='http://www.w3.org/2000/svg'/>");
    await writeCheckpoint(sdata, out, { appState, figures: [{ plotId: "p1", format: "svg", bytes: svg }] });
    const cp = await openCheckpoint(out);
    expect(cp.appState).toEqual(appState);
    expect(cp.sidecar).toMatchObject({
      version: 2,
      name: "pbmc study",
      active_table: "table",
      coordinate_system: "global",
    });
    expect(cp.sidecar.tables[0]).toMatchObject({
      name: "table",
      n_obs: 700,
      n_vars: 765,
      has_x: true,
      x_mirror: "viewer/X_csc/table",
    });
    expect(cp.sidecar.figures).toEqual([{ plot_id: "p1", formats: { svg: svg.length } }]);
    expect(await readFigure(cp, "p1", "svg")).toEqual(svg);
    expect(await readFigure(cp, "p1", "png")).toBeNull();

    const x = await loadMatrix(sdata.tables.table!.X!);
    expect(x.kind).toBe("dense");
    const genes = sdata.tables.table!.var.index.values;
    for (const j of [0, 17, 400, 764]) {
      const col = await readGeneFromMirror(cp, "table", genes[j]!);
      const want = Float32Array.from({ length: 700 }, (_, i) => Number(x.data[i * 765 + j]));
      expect(col).toEqual(want);
    }
    await expect(readGeneFromMirror(cp, "table", "NOT_A_GENE")).rejects.toThrow(/no gene "NOT_A_GENE"/);
  });

  it("records real bytes on disk per element, level and slot", async () => {
    const { sdata } = await openData(fixture("vitessce-sdata-blobs-0.3-full/blobs.sdata.zarr"));
    const out = join(dir, "blobs-full.sdata.zarr.zip");
    await writeCheckpoint(sdata, out);
    const cp = await openCheckpoint(out);
    const img = cp.sdata.images.blobs_multiscale_image!;
    expect(img.levels.every((l) => (l.diskBytes ?? 0) > 0)).toBe(true);
    expect(elementBytes(img)).toBe(img.levels.reduce((p, l) => p + l.diskBytes!, 0));
    const slots = tableSlotSizes(cp.sdata.tables.table!);
    expect(slots.map((s) => s.path).sort()).toEqual(["X", "obs", "uns", "var"]);
    expect(
      slots
        .filter((s) => s.required)
        .map((s) => s.path)
        .sort(),
    ).toEqual(["obs", "uns", "var"]);
    expect(slots.every((s) => s.bytes > 0)).toBe(true);
    // Shapes and points get their element→world transform in the sidecar (version 2).
    expect(cp.sidecar.shapes.map((s) => s.to_world)).toEqual([
      [1, 0, 0, 0, 1, 0],
      [1, 0, 0, 0, 1, 0],
      [1, 0, 0, 0, 1, 0],
    ]);
    expect(cp.boundariesAvailable).toBe(true);
  });
});

describe("opening over HTTP Range", () => {
  let server: TestServer;
  beforeAll(async () => {
    const { sdata } = await openData(fixture("scanpy-pbmc68k-reduced/10x_pbmc68k_reduced.h5ad"));
    await writeCheckpoint(sdata, join(dir, "served.sdata.zarr.zip"));
    server = await startServer(dir);
  });
  afterAll(async () => {
    await server.close();
  });

  it("reads only the bytes it needs: open, then one gene", async () => {
    const size = (await stat(join(dir, "served.sdata.zarr.zip"))).size;
    const url = `${server.base}/served.sdata.zarr.zip`;
    server.reset();
    const cp = await openCheckpoint(url);
    const openBytes = server.bytesServed();
    expect(cp.sdata.tables.table!.obs.index.values).toHaveLength(700);
    // Opening reads metadata and the small frames (obs, var, obsm, uns), not X.
    expect(openBytes).toBeLessThan(size * 0.6);
    server.reset();
    const gene = await readGeneFromMirror(cp, "table", "CD3E");
    expect(gene).toHaveLength(700);
    const geneBytes = server.bytesServed();
    console.log(
      `checkpoint ${size} B; open read ${openBytes} B; one gene read ${geneBytes} B in ${server.log.length} requests`,
    );
    expect(geneBytes).toBeLessThan(size * 0.1);
    expect(server.log.every((r) => r.status === 206 || r.method === "HEAD")).toBe(true);
    // The same gene read locally agrees.
    const local = await openCheckpoint(join(dir, "served.sdata.zarr.zip"));
    expect(await readGeneFromMirror(local, "table", "CD3E")).toEqual(gene);
  });
});

describe("stale or damaged checkpoints", () => {
  it("rejects a checkpoint without the viewer sidecar, telling to re-save; it still opens as data", async () => {
    const { sdata } = await openData(fixture("vitessce-sdata-blobs-0.7/blobs.sdata.zarr"));
    const stage = await mkdtemp(join(dir, "stage-"));
    const store = new FsStore(stage);
    await writeSpatialData(sdata, store);
    const out = join(dir, "nosidecar.sdata.zarr.zip");
    await writeZipFromStore(out, store);
    await expect(openCheckpoint(out)).rejects.toThrow(
      /nosidecar\.sdata\.zarr\.zip: this checkpoint has no viewer\/ sidecar; .*save it again/,
    );
    expect((await openData(out)).format).toBe("spatialdata-zarr");
  });

  it("rejects a sidecar older than supported, and opens version 1 without the boundary overlay", async () => {
    const { sdata } = await openData(fixture("vitessce-sdata-blobs-0.7/blobs.sdata.zarr"));
    for (const version of [0, 1]) {
      const stage = await mkdtemp(join(dir, "stage-"));
      const store = new FsStore(stage);
      await writeSpatialData(sdata, store, { consolidate: false });
      const { buildSidecar } = await import("../../../../src/sdk/io/checkpoint/build-sidecar.js");
      const sidecar = { ...buildSidecar(sdata, { name: "old" }), version };
      await zarr.create(zarr.root(store).resolve("viewer"), { attributes: { [SIDECAR_ATTR]: sidecar } });
      const bytes = new TextEncoder().encode(JSON.stringify(emptyAppState()));
      const arr = await zarr.create(zarr.root(store).resolve("viewer/app_state"), {
        shape: [bytes.length],
        chunkShape: [bytes.length],
        dtype: "uint8",
      });
      await zarr.set(arr, null, { data: bytes, shape: [bytes.length], stride: [1] });
      await consolidateV3(store);
      const out = join(dir, `v${version}.sdata.zarr.zip`);
      await writeZipFromStore(out, store);
      if (version === 0)
        await expect(openCheckpoint(out)).rejects.toThrow(
          /version 0 is older than supported .*save it again/,
        );
      else expect((await openCheckpoint(out)).boundariesAvailable).toBe(false);
    }
  });

  it("a truncated checkpoint gives an error naming the file", async () => {
    const good = join(dir, "good.sdata.zarr.zip");
    const { sdata } = await openData(fixture("vitessce-sdata-blobs-0.7/blobs.sdata.zarr"));
    await writeCheckpoint(sdata, good);
    const size = (await stat(good)).size;
    for (const cut of [100, Math.floor(size / 2), size - 30]) {
      const bad = join(dir, `cut-${cut}.sdata.zarr.zip`);
      await copyFile(good, bad);
      await truncate(bad, cut);
      await expect(openCheckpoint(bad)).rejects.toThrow(new RegExp(`cut-${cut}\\.sdata\\.zarr\\.zip`));
    }
  });
});

describe("saving", () => {
  it("a failed save leaves the previous file intact and no temporary file", async () => {
    const { sdata } = await openData(fixture("vitessce-sdata-blobs-0.7/blobs.sdata.zarr"));
    const folder = await mkdtemp(join(dir, "save-"));
    const out = join(folder, "keep.sdata.zarr.zip");
    await writeCheckpoint(sdata, out);
    const before = await readFile(out);
    // Invalid app state: refused before anything is written.
    const bad = { ...emptyAppState(), displays: [{ id: "x", type: "nope" }] } as unknown as AppState;
    await expect(writeCheckpoint(sdata, out, { appState: bad })).rejects.toThrow(/invalid app state/);
    // A matrix whose read fails half way through the save.
    const t = sdata.tables.table!;
    const broken = updateTable(t, {
      X: lazyMatrix(
        { format: "csr", dtype: "float32", shape: [t.obs.index.values.length, t.var.index.values.length] },
        async () => {
          throw new Error("disk went away");
        },
      ),
    });
    await expect(writeCheckpoint(withElement(sdata, "tables", "table", broken), out)).rejects.toThrow(
      /disk went away/,
    );
    expect(Buffer.compare(await readFile(out), before)).toBe(0);
    expect(await readdir(folder)).toEqual(["keep.sdata.zarr.zip"]);
  });

  it("content-addressed names are stable for the same data", async () => {
    const { sdata } = await openData(fixture("vitessce-sdata-blobs-0.7/blobs.sdata.zarr"));
    const folder = await mkdtemp(join(dir, "named-"));
    const a = await writeCheckpointNamed(sdata, folder, "blobs");
    const b = await writeCheckpointNamed(sdata, folder, "blobs");
    expect(a.path).toBe(b.path);
    expect(a.path).toMatch(/blobs-[0-9a-f]{12}\.sdata\.zarr\.zip$/);
    expect(await readdir(folder)).toEqual([a.path.split("/").pop()]);
    await expect(writeCheckpointNamed(sdata, folder, "../x")).rejects.toThrow(/invalid checkpoint prefix/);
    await expect(writeCheckpointNamed(sdata, folder, " ")).rejects.toThrow(/invalid checkpoint prefix/);
  });

  it("the demo dataset is generated once into an empty data dir", async () => {
    const dataDir = await mkdtemp(join(dir, "data-"));
    const first = await ensureDemoDataset(dataDir);
    expect(first.created).toBe(true);
    expect(first.path).toMatch(/demo-[0-9a-f]{12}\.sdata\.zarr\.zip$/);
    const second = await ensureDemoDataset(dataDir);
    expect(second).toEqual({ path: first.path, created: false });
    const cp = await openCheckpoint(first.path);
    expect(Object.keys(cp.sdata.images)).toEqual(["morphology"]);
    expect(cp.sdata.tables.table!.obs.index.values.length).toBe(4000);
    // The docs' first example saves its analysis as `demo-<hash>` beside it: only the demo counts as the demo,
    // and a relative data dir still gives an absolute path (open reads relative paths against the data dir).
    await writeFile(join(dataDir, "demo-000000000000.sdata.zarr.zip"), "a user's own save");
    expect(await ensureDemoDataset(dataDir)).toEqual({ path: first.path, created: false });
    const relative = await ensureDemoDataset(relativePath(process.cwd(), dataDir));
    expect(relative.path).toBe(first.path);
  });
});
