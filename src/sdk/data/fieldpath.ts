/**
 * FieldPath: the one grammar that names a field everywhere (API routes, plots' references,
 * data_versions, the CLI's `--field`).
 *
 * ```
 * fieldpath := [ "tables:" <table> ":" ] <slot> [ ":" <key> ]
 *            | ("images" | "labels" | "points" | "shapes") ":" <element>
 *            | "tables:" <table>
 * slot      := obs | var | obsm | varm | obsp | varp | layers | uns | X | raw
 * ```
 * `<key>` is everything after the slot's colon, so gene and column names may themselves contain `:`.
 * Examples: `obs:leiden`, `X:CD3E`, `obsm:X_umap`, `tables:table:obs`, `tables:table:obs:leiden`,
 * `images:blobs_image`.
 */

/** Table slots a field path can name. */
export const TABLE_SLOTS = [
  "obs",
  "var",
  "obsm",
  "varm",
  "obsp",
  "varp",
  "layers",
  "uns",
  "X",
  "raw",
] as const;
/** A table slot. */
export type TableSlot = (typeof TABLE_SLOTS)[number];

/** Element families a field path can name. */
export const ELEMENT_FAMILIES = ["images", "labels", "points", "shapes"] as const;

/** A parsed field path. */
export type FieldPath =
  | {
      readonly kind: "table";
      /** Table name; undefined means the active table. */
      readonly table?: string;
      readonly slot: TableSlot;
      /** Column, key or gene; undefined names the whole slot. */
      readonly key?: string;
    }
  | { readonly kind: "table-root"; readonly table: string }
  | { readonly kind: "element"; readonly family: (typeof ELEMENT_FAMILIES)[number]; readonly name: string };

/** Parse a field path string, or throw an error that quotes it and says what was expected. */
export function parseFieldPath(text: string): FieldPath {
  const bad = (why: string): never => {
    throw new Error(`invalid field path "${text}": ${why}`);
  };
  if (typeof text !== "string" || text.length === 0) bad("empty");
  const first = text.indexOf(":");
  const head = first < 0 ? text : text.slice(0, first);
  const rest = first < 0 ? undefined : text.slice(first + 1);

  if ((ELEMENT_FAMILIES as readonly string[]).includes(head)) {
    if (!rest) bad(`"${head}" needs an element name, as in ${head}:<name>`);
    return { kind: "element", family: head as (typeof ELEMENT_FAMILIES)[number], name: rest! };
  }
  if (head === "tables") {
    if (!rest) bad("tables needs a table name, as in tables:<name>:obs");
    const second = rest!.indexOf(":");
    if (second < 0) return { kind: "table-root", table: rest! };
    const table = rest!.slice(0, second);
    if (!table) bad("empty table name");
    const inner = parseFieldPath(rest!.slice(second + 1));
    if (inner.kind !== "table" || inner.table !== undefined)
      bad("after tables:<name>: a table slot must follow");
    return { ...(inner as Extract<FieldPath, { kind: "table" }>), table };
  }
  if ((TABLE_SLOTS as readonly string[]).includes(head)) {
    if (rest === "") bad(`empty key after "${head}:"`);
    return rest === undefined
      ? { kind: "table", slot: head as TableSlot }
      : { kind: "table", slot: head as TableSlot, key: rest };
  }
  return bad(
    `unknown prefix "${head}" (expected one of ${[...TABLE_SLOTS, "tables", ...ELEMENT_FAMILIES].join(", ")})`,
  );
}

/** Format a parsed field path back to its string; `formatFieldPath(parseFieldPath(s)) === s`. */
export function formatFieldPath(fp: FieldPath): string {
  switch (fp.kind) {
    case "element":
      return `${fp.family}:${fp.name}`;
    case "table-root":
      return `tables:${fp.table}`;
    case "table": {
      const local = fp.key === undefined ? fp.slot : `${fp.slot}:${fp.key}`;
      return fp.table === undefined ? local : `tables:${fp.table}:${local}`;
    }
  }
}
