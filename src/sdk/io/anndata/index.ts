/** AnnData I/O: read zarr (v2/v3, plain, sharded, zipped) and h5ad; write zarr v3 in anndata 0.12's layout. */
export type { DecodeResult } from "./decode.js";
export { type AnnNode, isNodeRef, type NodeData, type NodeDtype, type NodeRef } from "./node.js";
export { type ReadH5adOptions, readH5ad } from "./read-h5ad.js";
export { type ReadAnnDataZarrOptions, readAnnDataZarr } from "./read-zarr.js";
export { type WriteAnnDataOptions, writeAnnDataZarr } from "./write.js";
export { openZarrTree, type ZarrTreeOptions } from "./zarr-node.js";
