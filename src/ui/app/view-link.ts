/**
 * Share links (client.md 17.4): only the difference from the checkpoint's saved encodings goes into
 * one base64url JSON `view` parameter: `{v: 1, sp?: {enc, vp}, em?: {enc, vp}, ui?: {view}}`, with
 * `vp = {t, z, rx, ro}`. Nested maps are replaced wholesale. Unknown keys are ignored; an unreadable
 * link gives null (the caller falls back to the saved view with a notice).
 */

/** A decoded `view` parameter. */
export interface ViewLink {
  v: 1;
  sp?: { enc?: Record<string, unknown>; vp?: { t?: number[]; z?: number; rx?: number; ro?: number } };
  em?: { enc?: Record<string, unknown>; vp?: { t?: number[]; z?: number; rx?: number; ro?: number } };
  ui?: { view?: string; menu?: boolean };
}

/** Links longer than this get a warning. */
export const LINK_WARN_CHARS = 1800;

function b64urlEncode(s: string): string {
  const bytes = new TextEncoder().encode(s);
  let bin = "";
  for (const b of bytes) bin += String.fromCharCode(b);
  return btoa(bin).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

function b64urlDecode(s: string): string {
  const b = s.replace(/-/g, "+").replace(/_/g, "/");
  const bin = atob(b + "===".slice((b.length + 3) % 4));
  return new TextDecoder().decode(Uint8Array.from(bin, (c) => c.charCodeAt(0)));
}

/** The keys of `cur` whose value differs from `saved` (JSON equality; nested maps whole). */
export function encodingDiff(
  saved: Record<string, unknown>,
  cur: Record<string, unknown>,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(cur)) {
    if (JSON.stringify(v) !== JSON.stringify(saved[k])) out[k] = v ?? null;
  }
  return out;
}

/** Encode a link payload. */
export function encodeViewLink(link: ViewLink): string {
  return b64urlEncode(JSON.stringify(link));
}

/** Decode a `view` parameter; null when unreadable. */
export function decodeViewLink(param: string | null): ViewLink | null {
  if (!param) return null;
  try {
    const o = JSON.parse(b64urlDecode(param)) as ViewLink;
    if (!o || typeof o !== "object" || o.v !== 1) return null;
    return o;
  } catch {
    return null;
  }
}
