/**
 * For every readable fixture: open it, convert it to a checkpoint, open the checkpoint, and check
 * that the inventory is the same and every value is equal.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { inventory } from "../../../src/sdk/data/inventory.js";
import { writeCheckpoint } from "../../../src/sdk/io/checkpoint/write.js";
import { openData } from "../../../src/sdk/io/open.js";
import { fixture, reference } from "../../fixtures.js";
import { materialise } from "./values.js";

const CASES: [string, string][] = [
  ["vitessce-sdata-blobs-0.3/blobs.sdata.zarr", "spatialdata-zarr"],
  ["vitessce-sdata-blobs-0.7/blobs.sdata.zarr", "spatialdata-zarr"],
  ["vitessce-sdata-blobs-0.3-full/blobs.sdata.zarr", "spatialdata-zarr"],
  ["sdata-storage-format-v0.0.12/transformation_affine.zarr", "spatialdata-zarr"],
  ["sdata-storage-format-v0.0.12/transformation_identity.zarr", "spatialdata-zarr"],
  ["sdata-storage-format-v0.0.12/transformation_scale.zarr", "spatialdata-zarr"],
  ["sdata-storage-format-v0.0.12/transformation_sequence.zarr", "spatialdata-zarr"],
  ["sdata-storage-format-v0.0.12/transformation_translation.zarr", "spatialdata-zarr"],
  ["vitessce-python-xenium-points/xenium_rep1_io.points_only.spatialdata.zarr", "spatialdata-zarr"],
  ...["0.7", "0.8", "0.9", "0.10", "0.11", "0.12"].flatMap((v) =>
    [
      "anndata-dense.zarr",
      v === "0.7" ? "anndata-csr.zarr" : "anndata-csr.adata.zarr",
      "anndata-csc.zarr",
    ].map((f) => [`vitessce-anndata-zarr/anndata-${v}/${f}`, "anndata-zarr"] as [string, string]),
  ),
  ["vitessce-mudata-zarr/mudata-0.2/mudata-csr.zarr", "mudata-zarr"],
  ["vitessce-exemplar-001-crop/exemplar-001.crop.cells.adata.zarr", "anndata-zarr"],
  ["vitessce-exemplar-001-crop/exemplar-001.crop.circles.adata.zarr", "anndata-zarr"],
  ["vitessce-exemplar-001-crop/exemplar-001.crop.image.ome.zarr", "ome-zarr"],
  ["vitessce-exemplar-001-crop/exemplar-001.crop.segmentations.ome.zarr", "ome-zarr"],
  ["viv-fixtures/loaders-tests/ome-zarr/blobs_image_v04.ome.zarr", "ome-zarr"],
  ["viv-fixtures/loaders-tests/ome-zarr/blobs_image_v05.ome.zarr", "ome-zarr"],
  ["viv-fixtures/loaders-tests/bioformats-zarr/data.zarr", "ome-zarr"],
  ["viv-fixtures/loaders-tests/multi-channel.ome.tif", "ome-tiff"],
  ["viv-fixtures/avivator-data/multifile.companion.ome", "ome-tiff"],
  ["sfe-toy/xenium/morphology_focus.ome.tif", "ome-tiff"],
  ["scanpy-pbmc68k-reduced/10x_pbmc68k_reduced.h5ad", "anndata-h5ad"],
  ["scanpy-pbmc68k-reduced/10x_pbmc68k_reduced.zarr.zip", "anndata-zarr"],
  ["squidpy-tests/test_data.h5ad", "anndata-h5ad"],
  ["squidpy-tests/ligrec_pvalues_reference.h5ad", "anndata-h5ad"],
  ["scanpy-10x-10k-subset/10x-10k-subset.zarr", "anndata-zarr"],
];

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "tessera-roundtrip-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("convert then inspect gives the same inventory and values", () => {
  it.each(CASES)("%s", async (rel, format) => {
    const input = fixture(rel);
    const first = await openData(input);
    expect(first.format).toBe(format);
    const out = join(dir, `${rel.replace(/[^a-z0-9]+/gi, "_")}.sdata.zarr.zip`);
    await writeCheckpoint(first.sdata, out);
    const second = await openData(out);
    expect(second.format).toBe("checkpoint");
    expect(inventory(second.sdata)).toEqual(inventory(first.sdata));
    expect(await materialise(second.sdata)).toEqual(await materialise(first.sdata));
  });

  it("the synth_10k reference table (10 000 × 2 000 sparse)", async () => {
    const first = await openData(reference("synth_10k/input.h5ad"));
    const out = join(dir, "synth.sdata.zarr.zip");
    await writeCheckpoint(first.sdata, out);
    const second = await openData(out);
    expect(inventory(second.sdata)).toEqual(inventory(first.sdata));
    const a = first.sdata.tables.table!;
    const b = second.sdata.tables.table!;
    const [xa, xb] = [
      await (a.X as { load?: () => Promise<unknown> }).load!(),
      await (b.X as { load?: () => Promise<unknown> }).load!(),
    ];
    expect(xb).toEqual(xa);
  });
});
