/**
 * Decoding the Arrow field payloads (`GET /data/{fieldPath}`, or built in the browser, or by the
 * server's figure renderer) into `FieldData`. Pure (apache-arrow only): shared by browser and server.
 */
import { type Table, tableFromIPC } from "apache-arrow";

/** One field decoded from its Arrow payload (the same schemas for every source). */
export interface FieldData {
  /** The field path as asked (`obs:cell_type`, `X:CD3E`, `obsm:X_umap`). */
  readonly path: string;
  readonly kind: "numeric" | "categorical" | "string" | "boolean" | "components";
  /** Number of rows (cells). */
  readonly n: number;
  /** Numeric values (`kind: numeric`). */
  readonly values?: Float32Array | Float64Array;
  /** Codes into `categories`, -1 missing (`categorical`, `string`, `boolean`). */
  readonly codes?: Int32Array;
  readonly categories?: readonly unknown[];
  /** One column per component (`components`). */
  readonly components?: readonly Float32Array[];
}

function column(t: Table, name: string): ArrayLike<number> & { buffer?: ArrayBufferLike } {
  const c = t.getChild(name);
  if (!c) throw new Error(`field payload has no column "${name}"`);
  return c.toArray() as ArrayLike<number>;
}

/**
 * A column as its own Float32Array, on a SharedArrayBuffer where the platform has one: the server's
 * figure thread then reads the positions without another copy (browsers without cross-origin
 * isolation have no SharedArrayBuffer and get a plain one).
 */
function ownFloat32(v: ArrayLike<number>): Float32Array {
  const out =
    typeof SharedArrayBuffer === "undefined"
      ? new Float32Array(v.length)
      : new Float32Array(new SharedArrayBuffer(v.length * 4));
  out.set(v);
  return out;
}

/** A `FieldData` from a decoded Arrow table. */
export function fieldFromTable(t: Table, path: string): FieldData {
  const meta = t.schema.metadata;
  const kind = (meta.get("kind") ?? "numeric") as FieldData["kind"];
  const n = t.numRows;
  if (kind === "components") {
    const comps: Float32Array[] = [];
    for (const f of t.schema.fields) {
      if (/^d\d+$/.test(f.name)) comps.push(ownFloat32(column(t, f.name)));
    }
    return { path, kind, n, components: comps };
  }
  if (kind === "numeric") {
    const v = column(t, "value");
    const values = v instanceof Float32Array || v instanceof Float64Array ? v : Float64Array.from(v);
    return { path, kind, n, values };
  }
  const codes = column(t, "code");
  const categories = JSON.parse(meta.get("categories") ?? "[]") as unknown[];
  return { path, kind, n, codes: codes instanceof Int32Array ? codes : Int32Array.from(codes), categories };
}

/** A `FieldData` from Arrow IPC bytes. */
export function fieldFromIpc(bytes: Uint8Array, path: string): FieldData {
  return fieldFromTable(tableFromIPC(bytes), path);
}
