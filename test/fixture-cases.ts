/**
 * Every fixture in `../shared/data` that Tessera converts to a checkpoint, with the format it is detected as.
 * Shared by the round-trip test (`test/sdk/io/roundtrip.test.ts`) and `npm run interop`
 * (`scripts/interop/interop.ts`), which opens each converted fixture in the real spatialdata and anndata.
 */

/** Path under `../shared/data` and the format `openData` detects. */
export type ConvertibleFixture = readonly [relativePath: string, format: string];

/** The convertible fixtures. */
export const CONVERTIBLE_FIXTURES: readonly ConvertibleFixture[] = [
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
    ].map((f) => [`vitessce-anndata-zarr/anndata-${v}/${f}`, "anndata-zarr"] as const),
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
