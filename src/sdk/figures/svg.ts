/**
 * A small SVG string builder for figures (snapshots and `pl` plots). Everything the server draws is
 * SVG first: sharp (librsvg) turns it into PNG and svg-to-pdfkit into a vector PDF, so the three
 * formats come from one document.
 *
 * Exports (stable, other modules build on them):
 * - `FONT_FAMILY`: the font stack every text uses; DejaVu Sans exists on a fresh Debian machine
 *   (`fonts-dejavu-core`, installed by `.ci/run`) and is the font the PDF embeds.
 * - `escapeXml(s)`, `num(n)`: text and number formatting for attributes and content.
 * - `el(name, attrs, children?)`: one element; `attrs` values `undefined`/`null`/`false` are left out.
 * - `text(x, y, content, style?)`: a text element in the figure font.
 * - `group(children, attrs?)`, `rect`, `line`, `circle`, `path`, `image(x, y, w, h, pngBytes)`.
 * - `svgDocument({ width, height, children, background? })`: the root element.
 *
 * Units: one SVG user unit is one typographic point (1/72 in). The PDF page is the SVG's size in pt,
 * and the PNG at `dpi` is `size × dpi / 72` pixels (sharp's `density` is relative to 72).
 */

/** The figure font stack: DejaVu Sans first (fontconfig on Debian), generic sans-serif last. */
export const FONT_FAMILY = "DejaVu Sans, Bitstream Vera Sans, Verdana, sans-serif";

/** Attribute values; `undefined`, `null` and `false` leave the attribute out, `true` writes it bare-valued ("true"). */
export type AttrValue = string | number | boolean | null | undefined;

/** Text escaped for XML content and double-quoted attribute values. */
export function escapeXml(s: string): string {
  return s.replace(/[&<>"']/g, (c) =>
    c === "&" ? "&amp;" : c === "<" ? "&lt;" : c === ">" ? "&gt;" : c === '"' ? "&quot;" : "&#39;",
  );
}

/** A number as a short attribute value: at most 3 decimals, no `-0`, no exponent for figure-sized values. */
export function num(n: number): string {
  if (!Number.isFinite(n)) throw new Error(`not a finite number in SVG: ${n}`);
  const r = Math.round(n * 1000) / 1000;
  return Object.is(r, -0) ? "0" : String(r);
}

function attrString(attrs: Record<string, AttrValue>): string {
  let s = "";
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    s += ` ${k}="${typeof v === "number" ? num(v) : escapeXml(String(v))}"`;
  }
  return s;
}

/**
 * One element. `children` is markup already built (strings from these helpers), never raw user
 * text: use `escapeXml` or `text()` for that.
 */
export function el(
  name: string,
  attrs: Record<string, AttrValue> = {},
  children?: string | readonly string[],
): string {
  const inner = children === undefined ? "" : typeof children === "string" ? children : children.join("");
  return inner === "" ? `<${name}${attrString(attrs)}/>` : `<${name}${attrString(attrs)}>${inner}</${name}>`;
}

/** Style of a text element. */
export interface TextStyle {
  /** Font size in user units (pt). @default 12 */
  size?: number;
  /** `start`, `middle` or `end`. @default "start" */
  anchor?: "start" | "middle" | "end";
  /** Vertical alignment of the y coordinate: the text baseline, its middle or its top. @default "baseline" */
  baseline?: "baseline" | "middle" | "hanging";
  /** Fill colour. @default "#000" */
  fill?: string;
  /** Bold text. */
  bold?: boolean;
  /** Rotation in degrees around (x, y). */
  rotate?: number;
}

/**
 * A text element in the figure font. The vertical alignment is done with a `dy` offset in em rather
 * than `dominant-baseline`, which svg-to-pdfkit ignores, so PNG and PDF place the text alike.
 */
export function text(x: number, y: number, content: string, style: TextStyle = {}): string {
  const dy = style.baseline === "middle" ? "0.35em" : style.baseline === "hanging" ? "0.8em" : undefined;
  return el(
    "text",
    {
      x,
      y,
      dy,
      "font-family": FONT_FAMILY,
      "font-size": style.size ?? 12,
      "font-weight": style.bold ? "bold" : undefined,
      "text-anchor": style.anchor && style.anchor !== "start" ? style.anchor : undefined,
      fill: style.fill ?? "#000",
      transform: style.rotate ? `rotate(${num(style.rotate)} ${num(x)} ${num(y)})` : undefined,
    },
    escapeXml(content),
  );
}

/** A `<g>` around `children`. */
export function group(children: readonly string[] | string, attrs: Record<string, AttrValue> = {}): string {
  return el("g", attrs, children);
}

/** A rectangle. */
export function rect(
  x: number,
  y: number,
  w: number,
  h: number,
  attrs: Record<string, AttrValue> = {},
): string {
  return el("rect", { x, y, width: w, height: h, ...attrs });
}

/** A line segment. */
export function line(
  x1: number,
  y1: number,
  x2: number,
  y2: number,
  attrs: Record<string, AttrValue> = {},
): string {
  return el("line", { x1, y1, x2, y2, ...attrs });
}

/** A circle. */
export function circle(cx: number, cy: number, r: number, attrs: Record<string, AttrValue> = {}): string {
  return el("circle", { cx, cy, r, ...attrs });
}

/** A path from its `d` string. */
export function path(d: string, attrs: Record<string, AttrValue> = {}): string {
  return el("path", { d, ...attrs });
}

/**
 * A raster embedded as a PNG data URI (SVG 2 `href`, which librsvg and svg-to-pdfkit both read),
 * stretched to exactly (x, y, w, h) (`preserveAspectRatio="none"`).
 */
export function image(
  x: number,
  y: number,
  w: number,
  h: number,
  png: Uint8Array,
  attrs: Record<string, AttrValue> = {},
): string {
  const href = `data:image/png;base64,${Buffer.from(png.buffer, png.byteOffset, png.byteLength).toString("base64")}`;
  return el("image", { x, y, width: w, height: h, href, preserveAspectRatio: "none", ...attrs });
}

/** Size, content and background of a whole document. */
export interface SvgDocumentOptions {
  /** Width in user units (pt). */
  width: number;
  /** Height in user units (pt). */
  height: number;
  /** Markup inside the root. */
  children: readonly string[] | string;
  /** A rectangle of this colour behind everything; none when omitted (transparent). */
  background?: string;
  /** `<title>` of the document. */
  title?: string;
  /**
   * Size of the drawing's coordinate space when it differs from the page (a `viewBox`): content is
   * drawn in these units and scaled to `width × height`. The background covers it.
   */
  viewBox?: readonly [number, number];
}

/** A standalone SVG document (XML declaration, namespaces, `viewBox` equal to the size unless given). */
export function svgDocument(o: SvgDocumentOptions): string {
  if (!(o.width > 0 && o.height > 0))
    throw new Error(`SVG size must be positive, got ${o.width} × ${o.height}`);
  const body = typeof o.children === "string" ? o.children : o.children.join("");
  const title = o.title ? el("title", {}, escapeXml(o.title)) : "";
  const [vw, vh] = o.viewBox ?? [o.width, o.height];
  const bg = o.background ? rect(0, 0, vw, vh, { fill: o.background }) : "";
  return `<?xml version="1.0" encoding="UTF-8"?>\n${el(
    "svg",
    {
      xmlns: "http://www.w3.org/2000/svg",
      "xmlns:xlink": "http://www.w3.org/1999/xlink",
      width: o.width,
      height: o.height,
      viewBox: `0 0 ${num(vw)} ${num(vh)}`,
    },
    `${title}${bg}${body}`,
  )}`;
}
