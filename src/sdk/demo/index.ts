/** The built-in demo dataset and the pieces it is generated from. */
export { buildCells, type CellGeometry } from "./cells.js";
export {
  buildExpressionModel,
  type ExpressionModel,
  type ExpressionModelOptions,
  NB_INVERSION_MAX_MEAN,
  nbInverse,
  nbZero,
  sampleCounts,
} from "./expression.js";
export { type SmoothField, smoothField } from "./field.js";
export { DEMO_DEFAULTS, DEMO_ELEMENTS, type DemoOptions, generateDemo } from "./generate.js";
export {
  CELL_TYPES,
  type CellTypeSpec,
  geneIds,
  HOUSEKEEPING_GENES,
  HYPOXIA_GENES,
  MIN_GENES,
  MT_GENES,
  panelGenes,
} from "./genes.js";
export {
  MORPHOLOGY_CHANNELS,
  MORPHOLOGY_COLORS,
  type MorphologyInput,
  renderMorphology,
} from "./morphology.js";
export { rasterizePolygons } from "./rasterize.js";
export {
  assignCellTypes,
  type CellSeeds,
  insideOutline,
  makeOutline,
  outlineRadius,
  placeCells,
  type TissueOutline,
  type TypeLayout,
} from "./tissue.js";
export { sampleTranscripts, type TranscriptInput, type Transcripts } from "./transcripts.js";
