/**
 * Reading a PDF's document information dictionary (`/Info`: Title, Subject, Keywords, …) back, to
 * check the provenance a snapshot carries. It reads what a classic cross-reference PDF keeps in plain
 * objects (pdfkit's output, most writers'): the trailer's `/Info n g R`, then that object's
 * dictionary of literal `( … )` or hex `< … >` strings, each given inline or as a reference to an
 * object holding the string (pdfkit 0.20 does the latter). A PDF whose Info sits in a compressed
 * object stream is not read (an empty result).
 *
 * Exports: `readPdfInfo(pdf)`.
 */

const latin1 = new TextDecoder("latin1");

/** The document information entries of a PDF as key → text (UTF-16BE strings decoded). */
export function readPdfInfo(pdf: Uint8Array): Record<string, string> {
  const s = latin1.decode(pdf);
  if (!s.startsWith("%PDF-")) throw new Error("not a PDF file (no %PDF- header)");
  const refs = [...s.matchAll(/\/Info\s+(\d+)\s+(\d+)\s+R/g)];
  const ref = refs.at(-1);
  if (!ref) return {};
  const at = objectStart(s, Number(ref[1]), Number(ref[2]));
  if (at < 0 || !s.startsWith("<<", at)) return {};
  return parseDict(s, at + 2);
}

/** Index of the first non-space character of object `n g`'s body (the last definition wins), or -1. */
function objectStart(s: string, n: number, g: number): number {
  const re = new RegExp(`(?:^|[\\r\\n\\s])${n}\\s+${g}\\s+obj\\s*`, "g");
  let at = -1;
  for (let m = re.exec(s); m; m = re.exec(s)) at = m.index + m[0].length;
  return at;
}

/** A string value at `i` (literal or hex): its text and the index after it, or undefined if none is there. */
function stringAt(s: string, i: number): [string, number] | undefined {
  if (s[i] === "(") {
    const [bytes, end] = literalString(s, i);
    return [decodeText(bytes), end];
  }
  if (s[i] === "<" && s[i + 1] !== "<") {
    const end = s.indexOf(">", i);
    if (end < 0) throw new Error("PDF Info dictionary: unterminated hex string");
    const hex = s.slice(i + 1, end).replace(/\s/g, "");
    let bytes = "";
    for (let k = 0; k < hex.length; k += 2) {
      bytes += String.fromCharCode(Number.parseInt(hex.slice(k, k + 2).padEnd(2, "0"), 16));
    }
    return [decodeText(bytes), end + 1];
  }
  return undefined;
}

/** Parses `/Key value` pairs from `at` (just inside `<<`) up to the closing `>>`; only string values are kept. */
function parseDict(s: string, at: number): Record<string, string> {
  const out: Record<string, string> = {};
  let i = at;
  const skipWs = () => {
    while (i < s.length && /\s/.test(s[i] as string)) i++;
  };
  for (;;) {
    skipWs();
    if (i >= s.length || s.startsWith(">>", i)) break;
    if (s[i] !== "/") throw new Error(`PDF Info dictionary: expected a name at byte ${i}`);
    const nameEnd = /[\s/<>([\]]/.exec(s.slice(i + 1, i + 200));
    const key = s.slice(i + 1, i + 1 + (nameEnd ? nameEnd.index : 0));
    i += 1 + key.length;
    skipWs();
    const inline = stringAt(s, i);
    const ref = inline ? null : /^(\d+)\s+(\d+)\s+R/.exec(s.slice(i, i + 40));
    if (inline) {
      out[key] = inline[0];
      i = inline[1];
    } else if (ref) {
      const at = objectStart(s, Number(ref[1]), Number(ref[2]));
      const value = at >= 0 ? stringAt(s, at) : undefined;
      if (value) out[key] = value[0];
      i += ref[0].length;
    } else {
      // a name, number, reference or nested object: skip to the next key
      const next = s.slice(i).search(/\/|>>/);
      if (next < 0) break;
      i += next === 0 ? 1 : next;
    }
  }
  return out;
}

/** A literal string starting at `(`: its bytes (as a Latin-1 string) and the index after its `)`. */
function literalString(s: string, start: number): [string, number] {
  let depth = 0;
  let out = "";
  for (let i = start; i < s.length; i++) {
    const c = s[i] as string;
    if (c === "\\") {
      const n = s[i + 1] as string;
      const simple: Record<string, string> = {
        n: "\n",
        r: "\r",
        t: "\t",
        b: "\b",
        f: "\f",
        "(": "(",
        ")": ")",
        "\\": "\\",
      };
      if (n in simple) {
        out += simple[n];
        i++;
      } else if (/[0-7]/.test(n)) {
        const oct = /^[0-7]{1,3}/.exec(s.slice(i + 1, i + 4))?.[0] as string;
        out += String.fromCharCode(Number.parseInt(oct, 8) & 0xff);
        i += oct.length;
      } else if (n === "\r" || n === "\n") {
        i += n === "\r" && s[i + 2] === "\n" ? 2 : 1; // a line continuation
      } else {
        i++;
        out += n;
      }
    } else if (c === "(") {
      if (depth > 0) out += c;
      depth++;
    } else if (c === ")") {
      depth--;
      if (depth === 0) return [out, i + 1];
      out += c;
    } else {
      out += c;
    }
  }
  throw new Error("PDF Info dictionary: unterminated string");
}

/** PDF text string bytes to text: UTF-16BE after a byte-order mark, PDFDocEncoding (≈ Latin-1) otherwise. */
function decodeText(bytes: string): string {
  if (bytes.charCodeAt(0) === 0xfe && bytes.charCodeAt(1) === 0xff) {
    const buf = new Uint8Array(bytes.length - 2);
    for (let k = 2; k < bytes.length; k++) buf[k - 2] = bytes.charCodeAt(k);
    return new TextDecoder("utf-16be").decode(buf);
  }
  return bytes;
}
