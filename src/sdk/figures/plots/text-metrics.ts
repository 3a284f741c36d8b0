/**
 * Text sizes for laying out plots before they are drawn. No font is measured on the server (the SVG is
 * rasterised later by librsvg), so widths are estimated from DejaVu Sans' average advance, about 0.6 em
 * per character: generous for most labels, which only means a little extra margin.
 */

/** Average advance of a DejaVu Sans character, in em. */
const AVERAGE_ADVANCE_EM = 0.6;

/** Estimated width in px of `s` at font size `size`. */
export function textWidth(s: string, size: number): number {
  return s.length * size * AVERAGE_ADVANCE_EM;
}

/** Width of the widest of `labels` at `size` (0 for none). */
export function maxTextWidth(labels: readonly string[], size: number): number {
  let w = 0;
  for (const s of labels) w = Math.max(w, textWidth(s, size));
  return w;
}

/** `s` cut to at most `max` characters with an ellipsis, so one long name cannot blow a layout up. */
export function clip(s: string, max = 40): string {
  return s.length > max ? `${s.slice(0, max - 1)}…` : s;
}
