/**
 * The public data model: the names of the SpatialData model that both the SDK entry and the plugin
 * entry export (a script reads them, an operation receives and returns them). An explicit list:
 * each module's other exports stay internal.
 * @packageDocumentation
 */
export type { AffineMatrix } from "./data/affine.js";
export {
  type Categorical,
  type DenseArray,
  type DType,
  dense,
  type IndexArray,
  type Matrix,
  type NullableArray,
  type SparseMatrix,
  type StringArray,
  strings,
  type TypedArray,
} from "./data/arrays.js";
export {
  type AppliedChange,
  applyChange,
  type Change,
  type StructuralDiff,
  setObs,
  setObsm,
  type TableChange,
  type Updates,
} from "./data/change.js";
export {
  type Column,
  type ColumnKind,
  columnValue,
  type DataFrame,
  dataFrame,
  nRows,
  withColumn,
  withoutColumn,
} from "./data/dataframe.js";
export type {
  AxisSelection,
  ElementBase,
  ElementTransformations,
  Geometry,
  GeometryType,
  ImageElement,
  LabelsElement,
  PointsElement,
  RasterLevel,
  RasterSource,
  ShapesElement,
  SpatialElement,
} from "./data/elements.js";
export { type FieldTable, type FieldValue, fieldToCsv, readField } from "./data/field.js";
export { type FieldPath, formatFieldPath, parseFieldPath, type TableSlot } from "./data/fieldpath.js";
export { type Inventory, inventory } from "./data/inventory.js";
export {
  type LazyMatrix,
  type LazyMatrixInfo,
  loadMatrix,
  type MatrixSlot,
  matrixInfo,
} from "./data/lazy.js";
export {
  type PackedBacking,
  packStrings,
  type RangeBacking,
  rangeStrings,
  type StringBacking,
  stringAt,
  stringCount,
  stringLookup,
  takeStrings,
} from "./data/lazy-strings.js";
export {
  coordinateSystems,
  type ElementKind,
  type ElementOfKind,
  getElement,
  makeSpatialData,
  type SourceInfo,
  type SpatialData,
  spatialElements,
  withElement,
  withoutElement,
} from "./data/spatialdata.js";
export {
  type AxisArray,
  type KeyedSlot,
  makeTable,
  nObs,
  nVars,
  obsNames,
  type RawTable,
  type RegionAnnotation,
  type Table,
  type TableInit,
  varIndexOf,
  varNames,
} from "./data/table.js";
export type {
  AffineTransform,
  Axis,
  CoordinateSystem,
  IdentityTransform,
  MapAxisTransform,
  ScaleTransform,
  SequenceTransform,
  Transformation,
  TranslationTransform,
} from "./data/transforms.js";
export { type UnsDict, type UnsScalar, type UnsValue, unsGet } from "./data/uns.js";
