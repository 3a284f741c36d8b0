/** OME-TIFF reading (single file, multi-file companions, SubIFD pyramids). */

export { type OmeImage, type OmePixels, type OmeXml, parseOmeXml } from "./omexml.js";
export { type ReadOmeTiffOptions, readOmeTiff } from "./read.js";
