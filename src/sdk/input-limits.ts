/**
 * Bounds on what a client may send, shared by the HTTP adapter and the SDK entry points: how deep a
 * JSON value may nest, how many recipe steps one request may add, how many vertices a polygon may
 * have. Each check is iterative (no recursion a hostile input could exhaust) and says what was wrong.
 */

/** Deepest nesting of arrays and objects accepted in a request body or a params object. */
export const MAX_JSON_DEPTH = 64;

/** Most steps one recipe request may run or stage (a request beyond is a 400). */
export const MAX_RECIPE_STEPS = 1000;

/** Most vertices of one polygon (a selection ring, a drawn annotation). */
export const MAX_POLYGON_VERTICES = 100_000;

/** Longest name (a column, a category, an element, a session) a client may give, in characters. */
export const MAX_NAME_LENGTH = 256;

/** Longest free text (an annotation's text, a description) a client may give, in characters. */
export const MAX_TEXT_LENGTH = 10_000;

/** Most polygons of one selection. */
export const MAX_POLYGONS = 1000;

/**
 * The nesting depth of the JSON text `text` when it exceeds `max`, else null. A scan of the
 * characters outside strings, run before `JSON.parse`, so nothing recursive ever sees a deeper value.
 * Malformed text is left to the parser.
 */
export function jsonTextDepthOver(text: string, max: number = MAX_JSON_DEPTH): number | null {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      // A backslash escapes the next character.
      if (c === 92) i++;
      else if (c === 34) inString = false;
      continue;
    }
    if (c === 34) inString = true;
    else if (c === 91 || c === 123) {
      if (++depth > max) return depth;
    } else if (c === 93 || c === 125) depth--;
  }
  return null;
}

/**
 * Whether a parsed value nests arrays and objects deeper than `max` (the root object is depth 1).
 * Iterative; typed arrays count as leaves.
 */
export function valueDepthOver(value: unknown, max: number = MAX_JSON_DEPTH): boolean {
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length) {
    const [v, d] = stack.pop()!;
    if (v === null || typeof v !== "object" || ArrayBuffer.isView(v)) continue;
    if (d > max) return true;
    const children = Array.isArray(v) ? v : Object.values(v);
    for (const x of children) if (x !== null && typeof x === "object") stack.push([x, d + 1]);
  }
  return false;
}

/** The sentence a too-deep value is refused with. */
export function tooDeepMessage(where: string, max: number = MAX_JSON_DEPTH): string {
  return `${where} nests arrays or objects deeper than ${max} levels`;
}
