/**
 * Fast PDF path for many markers. svg-to-pdfkit handles every SVG element in JS with its full
 * style machinery (~0.5 ms per `<circle>` here: 9 s for 20,000), so one group of markers per
 * document — the cells of a snapshot, the dots of a scatter plot — is written in a fixed, simple form
 * and drawn by pdfkit directly (one path and one fill per run of markers of one colour).
 *
 * Exports: `markerGroup(marks, attrs?)` writes the group; `splitMarkers(svg)` cuts a document around
 * it; `drawMarkers(doc, marks, sx, sy)` draws them. Anything not in the exact form stays with
 * svg-to-pdfkit, so the fast path can never change what is drawn, only how fast.
 */
import type PDFDocument from "pdfkit";
import type { PointMarker } from "./raster-points.js";
import { num } from "./svg.js";

/** One marker in drawing (user) units. */
export interface Marker {
  shape: PointMarker;
  x: number;
  y: number;
  /** Radius, half the side of a square, or a hexagon's circumradius. */
  r: number;
  rgb: [number, number, number];
  /** 0–1. */
  opacity: number;
}

const OPEN = '<g class="markers"';

/** A flat-topped hexagon of circumradius 1 (vertices at (±1, 0) and (±½, ±√3/2), as squidpy's Visium spots). */
const UNIT_HEXAGON = "M1 0L0.5 0.866025L-0.5 0.866025L-1 0L-0.5 -0.866025L0.5 -0.866025Z";

/** The group of markers (in this order, above what comes before it in the document). */
export function markerGroup(marks: readonly Marker[], cls = "cells"): string {
  let out = `${OPEN} data-layer="${cls}">`;
  for (const m of marks) {
    const fill = `rgb(${m.rgb[0]},${m.rgb[1]},${m.rgb[2]})`;
    const op = m.opacity < 1 ? ` fill-opacity="${num(m.opacity)}"` : "";
    out +=
      m.shape === "square"
        ? `<rect x="${num(m.x - m.r)}" y="${num(m.y - m.r)}" width="${num(2 * m.r)}" height="${num(2 * m.r)}" fill="${fill}"${op}/>`
        : m.shape === "hexagon"
          ? `<path transform="translate(${num(m.x)} ${num(m.y)}) scale(${num(m.r)})" d="${UNIT_HEXAGON}" fill="${fill}"${op}/>`
          : `<circle cx="${num(m.x)}" cy="${num(m.y)}" r="${num(m.r)}" fill="${fill}"${op}/>`;
  }
  return `${out}</g>`;
}

const CIRCLE =
  /^<circle cx="([-\d.e]+)" cy="([-\d.e]+)" r="([-\d.e]+)" fill="rgb\((\d+),(\d+),(\d+)\)"(?: fill-opacity="([\d.e-]+)")?\/>/;
const SQUARE =
  /^<rect x="([-\d.e]+)" y="([-\d.e]+)" width="([-\d.e]+)" height="[-\d.e]+" fill="rgb\((\d+),(\d+),(\d+)\)"(?: fill-opacity="([\d.e-]+)")?\/>/;

const HEXAGON = new RegExp(
  `^<path transform="translate\\(([-\\d.e]+) ([-\\d.e]+)\\) scale\\(([-\\d.e]+)\\)" d="${UNIT_HEXAGON}" fill="rgb\\((\\d+),(\\d+),(\\d+)\\)"(?: fill-opacity="([\\d.e-]+)")?\\/>`,
);

/** A document cut around its marker group, with the scale from user units to page points. */
export interface SplitDocument {
  before: string;
  after: string;
  markers: Marker[];
  scaleX: (pageWidthPt: number) => number;
  scaleY: (pageHeightPt: number) => number;
}

/** Cuts `svg` around its first marker group, or null when it has none in the exact form. */
export function splitMarkers(svg: string): SplitDocument | null {
  const at = svg.indexOf(OPEN);
  if (at < 0) return null;
  const bodyStart = svg.indexOf(">", at) + 1;
  const end = svg.indexOf("</g>", bodyStart);
  if (bodyStart <= 0 || end < 0) return null;
  const markers: Marker[] = [];
  let i = bodyStart;
  while (i < end) {
    const rest = svg.slice(i, Math.min(end, i + 300));
    const c = CIRCLE.exec(rest);
    const q = c ? null : SQUARE.exec(rest);
    const x = c || q ? null : HEXAGON.exec(rest);
    const m = c ?? q ?? x;
    if (!m) return null;
    const opacity = m[7] === undefined ? 1 : Number(m[7]);
    const rgb: [number, number, number] = [Number(m[4]), Number(m[5]), Number(m[6])];
    if (c) markers.push({ shape: "circle", x: Number(c[1]), y: Number(c[2]), r: Number(c[3]), rgb, opacity });
    else if (x)
      markers.push({ shape: "hexagon", x: Number(x[1]), y: Number(x[2]), r: Number(x[3]), rgb, opacity });
    else {
      const h = Number(q![3]) / 2;
      markers.push({ shape: "square", x: Number(q![1]) + h, y: Number(q![2]) + h, r: h, rgb, opacity });
    }
    i += m[0].length;
  }
  const rootOpen = /<svg\b[^>]*>/.exec(svg);
  if (!rootOpen) return null;
  const head = svg.slice(0, rootOpen.index + rootOpen[0].length);
  const vb = /viewBox="[-\d.e]+ [-\d.e]+ ([\d.e]+) ([\d.e]+)"/.exec(rootOpen[0]);
  const vw = vb ? Number(vb[1]) : Number.NaN;
  const vh = vb ? Number(vb[2]) : Number.NaN;
  return {
    before: `${svg.slice(0, at)}</svg>`,
    after: `${head}${svg.slice(end + 4)}`,
    markers,
    scaleX: (w) => (Number.isFinite(vw) && vw > 0 ? w / vw : 1),
    scaleY: (h) => (Number.isFinite(vh) && vh > 0 ? h / vh : 1),
  };
}

/** Bézier control distance of a quarter circle, per unit radius (0.5522847498, to 4 decimals). */
const KAPPA = "0.5523";

/** A coordinate for the content stream: 2 decimals (1/100 of a user unit). */
function f(v: number): string {
  return String(Math.round(v * 100) / 100);
}

/** Unit circle (four Béziers), square and hexagon paths, filled: the bodies of the marker forms. */
function unitShape(shape: PointMarker): string {
  if (shape === "square") return "-1 -1 2 2 re\nf\n";
  if (shape === "hexagon")
    return "1 0 m\n0.5 0.866 l\n-0.5 0.866 l\n-1 0 l\n-0.5 -0.866 l\n0.5 -0.866 l\nh\nf\n";
  const k = KAPPA;
  return `1 0 m\n1 ${k} ${k} 1 0 1 c\n-${k} 1 -1 ${k} -1 0 c\n-1 -${k} -${k} -1 0 -1 c\n${k} -1 1 -${k} 1 0 c\nh\nf\n`;
}

interface PdfDocInternals {
  addContent(s: string): unknown;
  ref(data: Record<string, unknown>): { end(data?: string): void };
  page: { xobjects: Record<string, unknown> };
}

/**
 * Draws the markers with pdfkit in their order. Each marker shape is one form XObject (a filled
 * unit circle or square, no colour of its own), placed per marker by `r 0 0 r x y cm /Name Do`
 * (~40 bytes of content instead of ~300 for a circle's Béziers: the content stream is what pdfkit
 * deflates, and deflating it was the cost). The fill colour and opacity are set through pdfkit, once
 * per run of markers of one colour, so overlapping markers stack exactly as in the SVG.
 */
export function drawMarkers(doc: typeof PDFDocument, marks: readonly Marker[], sx: number, sy: number): void {
  const d = doc as unknown as PdfDocInternals;
  const forms: Record<string, string> = {};
  for (const shape of ["circle", "square", "hexagon"] as const) {
    if (!marks.some((m) => m.shape === shape)) continue;
    const name = `TxMarker${shape === "circle" ? "C" : shape === "square" ? "S" : "H"}`;
    const form = d.ref({ Type: "XObject", Subtype: "Form", BBox: [-1, -1, 1, 1], Resources: {} });
    form.end(unitShape(shape));
    d.page.xobjects[name] = form;
    forms[shape] = name;
  }
  doc.save();
  doc.transform(sx, 0, 0, sy, 0, 0);
  let i = 0;
  while (i < marks.length) {
    const first = marks[i]!;
    let body = "";
    let j = i;
    for (; j < marks.length; j++) {
      const m = marks[j]!;
      if (
        m.opacity !== first.opacity ||
        m.rgb[0] !== first.rgb[0] ||
        m.rgb[1] !== first.rgb[1] ||
        m.rgb[2] !== first.rgb[2]
      )
        break;
      body += `q ${f(m.r)} 0 0 ${f(m.r)} ${f(m.x)} ${f(m.y)} cm /${forms[m.shape]} Do Q\n`;
    }
    doc.fillColor(first.rgb, first.opacity);
    d.addContent(body);
    i = j;
  }
  doc.restore();
}
