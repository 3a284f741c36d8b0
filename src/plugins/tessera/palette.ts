/**
 * scanpy's default categorical palette (`scanpy.plotting.palettes.default_20`, Vega's category20
 * reordered), used when a categorical gains colours and has none yet, so a Python user sees the same
 * colours for the same categories.
 */
export const DEFAULT_20 = [
  "#1f77b4",
  "#ff7f0e",
  "#279e68",
  "#d62728",
  "#aa40fc",
  "#8c564b",
  "#e377c2",
  "#b5bd61",
  "#17becf",
  "#aec7e8",
  "#ffbb78",
  "#98df8a",
  "#ff9896",
  "#c5b0d5",
  "#c49c94",
  "#f7b6d2",
  "#dbdb8d",
  "#9edae5",
  "#ad494a",
  "#8c6d31",
] as const;

/** Colour `i` of the default palette (cycling past 20). */
export function defaultColor(i: number): string {
  return DEFAULT_20[i % DEFAULT_20.length]!;
}
