/** OME-Zarr (NGFF) images and labels: metadata parsing, lazy reading, zarr v3 writing. */
export * from "./multiscales.js";
export {
  type OmeZarrContents,
  type OpenOmeZarrOptions,
  openOmeZarr,
  type ReadOmeZarrOptions,
  readOmeZarrImage,
  readOmeZarrLabels,
} from "./read.js";
export { type WriteRasterOptions, writeRasterElement } from "./write.js";
