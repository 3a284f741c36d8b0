/**
 * The vendor readers Tessera knows, registered for recognition in the order they are tried (the most
 * specific first). Importing this module registers them.
 */

import { COSMX_FILES, findOne, readCosmx } from "./cosmx/read.js";
import { readMerscope } from "./merscope/read.js";
import { has, isFolder, registerVendorReader } from "./recognize.js";
import { readTenxMatrixFolder } from "./tenx/folder.js";
import { isMexFolder } from "./tenx/mex.js";
import { findPositionsFile } from "./visium/positions.js";
import { readVisium } from "./visium/read.js";
import { binFolders, readVisiumHd } from "./visium-hd/read.js";
import { partFile } from "./xenium/files.js";
import { readXenium } from "./xenium/read.js";

registerVendorReader({
  key: "io.visium_hd",
  looksFor: "binned_outputs/square_NNNum/ folders (Visium HD)",
  matches: (dir) => binFolders(dir).length > 0,
  read: (dir, report, opts = {}) => readVisiumHd(dir, opts, report),
});

registerVendorReader({
  key: "io.xenium",
  looksFor: "experiment.xenium, or cell_feature_matrix(.h5) with cells(.parquet|.csv.gz)",
  matches: (dir) =>
    has(dir, "experiment.xenium") || (partFile(dir, "matrix") !== null && partFile(dir, "cells") !== null),
  read: (dir, report, opts = {}) => readXenium(dir, opts, report),
});

registerVendorReader({
  key: "io.visium",
  looksFor:
    "spatial/scalefactors_json.json with spatial/tissue_positions(.csv|_list.csv|.parquet) and a count matrix (filtered_feature_bc_matrix.h5 or folder)",
  matches: (dir) =>
    has(dir, "spatial/scalefactors_json.json") &&
    findPositionsFile(`${dir}/spatial`) !== null &&
    [
      "filtered_feature_bc_matrix.h5",
      "filtered_feature_bc_matrix",
      "raw_feature_bc_matrix.h5",
      "raw_feature_bc_matrix",
    ].some((f) => has(dir, f)),
  read: (dir, report, opts = {}) => readVisium(dir, opts, report),
});

registerVendorReader({
  key: "io.read_10x_mtx",
  looksFor: "matrix.mtx, barcodes.tsv and features.tsv (or genes.tsv), gzipped or not",
  matches: (dir) => isFolder(dir) && isMexFolder(dir),
  read: (dir, report) => readTenxMatrixFolder(dir, report),
});

registerVendorReader({
  key: "io.merscope",
  looksFor:
    "cell_by_gene.csv with cell_metadata.csv (and optionally detected_transcripts.csv, cell_boundaries, images/manifest.json)",
  matches: (dir) => has(dir, "cell_by_gene.csv") && has(dir, "cell_metadata.csv"),
  read: (dir, report, opts = {}) => readMerscope(dir, opts, report),
});

registerVendorReader({
  key: "io.cosmx",
  looksFor: "*_exprMat_file.csv with *_metadata_file.csv (and optionally *_tx_file.csv, *-polygons.csv)",
  matches: (dir) =>
    findOne(dir, COSMX_FILES.counts, "exprMat") !== null &&
    findOne(dir, COSMX_FILES.meta, "metadata") !== null,
  read: (dir, report, opts = {}) => readCosmx(dir, opts, report),
});
