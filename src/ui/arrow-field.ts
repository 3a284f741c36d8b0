/** Decoding the Arrow field payloads (`GET /data/{fieldPath}`, or built in the browser) into `FieldData`. */
import { type Table, tableFromIPC } from "apache-arrow";
import type { FieldData } from "./data-source.js";

function column(t: Table, name: string): ArrayLike<number> & { buffer?: ArrayBufferLike } {
  const c = t.getChild(name);
  if (!c) throw new Error(`field payload has no column "${name}"`);
  return c.toArray() as ArrayLike<number>;
}

/** A `FieldData` from a decoded Arrow table. */
export function fieldFromTable(t: Table, path: string): FieldData {
  const meta = t.schema.metadata;
  const kind = (meta.get("kind") ?? "numeric") as FieldData["kind"];
  const n = t.numRows;
  if (kind === "components") {
    const comps: Float32Array[] = [];
    for (const f of t.schema.fields) {
      if (/^d\d+$/.test(f.name)) comps.push(Float32Array.from(column(t, f.name)));
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
