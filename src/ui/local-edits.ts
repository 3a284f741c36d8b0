/**
 * The serverless viewer's browser-local edits (client.md 17.5, 9.2): region labels written into
 * categorical obs columns that exist only in this page, and cells hidden from the canvases. Nothing
 * is saved: a reload starts from the checkpoint again. The labelling follows the server's
 * `custom.annotate_cells`: chosen cells get the category (a new one is appended), cells outside keep
 * their label or stay unassigned (missing), and where regions overlap the last one applied wins.
 */
import type { FieldData } from "./data-source.js";

/** One local categorical column. */
interface LocalColumn {
  codes: Int32Array;
  categories: string[];
}

/** The local columns and the hidden cells of one opened checkpoint. */
export class LocalEdits {
  private readonly columns = new Map<string, LocalColumn>();
  private hiddenRows: Uint8Array | null = null;
  /** Bumped by every change of the hidden cells (part of the canvases' colour key). */
  hiddenVersion = 0;

  /** The names of the local columns, in creation order. */
  get columnNames(): string[] {
    return [...this.columns.keys()];
  }

  /** The local column at `obs:<name>` as a categorical field, or null when it is not local. */
  field(path: string): FieldData | null {
    if (!path.startsWith("obs:")) return null;
    const c = this.columns.get(path.slice(4));
    if (!c) return null;
    return {
      path,
      kind: "categorical",
      n: c.codes.length,
      codes: c.codes.slice(),
      categories: [...c.categories],
    };
  }

  /**
   * Label the rows set in `mask` as `category` of the column `name`. A column not local yet starts
   * from `base` (the checkpoint's categorical column of that name) or all unassigned.
   */
  label(name: string, category: string, mask: Uint8Array, base: FieldData | null): void {
    let col = this.columns.get(name);
    if (!col) {
      col =
        base?.codes && base.kind === "categorical"
          ? { codes: Int32Array.from(base.codes), categories: (base.categories ?? []).map(String) }
          : { codes: new Int32Array(mask.length).fill(-1), categories: [] };
      this.columns.set(name, col);
    }
    if (col.codes.length !== mask.length)
      throw new Error(`the selection has ${mask.length} cells, the column "${name}" ${col.codes.length}`);
    let code = col.categories.indexOf(category);
    if (code < 0) {
      code = col.categories.length;
      col.categories.push(category);
    }
    for (let i = 0; i < mask.length; i++) if (mask[i]) col.codes[i] = code;
  }

  /** Each category of a local column with its number of cells (unassigned left out). */
  counts(name: string): { value: string; count: number }[] {
    const c = this.columns.get(name);
    if (!c) return [];
    const n = new Array<number>(c.categories.length).fill(0);
    for (const k of c.codes) if (k >= 0) n[k]!++;
    return c.categories.map((value, i) => ({ value, count: n[i]! }));
  }

  /** Rows hidden from the canvases (1 = hidden), or null when every cell shows. */
  get hidden(): Uint8Array | null {
    return this.hiddenRows;
  }

  /** Number of hidden cells. */
  get hiddenCount(): number {
    let k = 0;
    for (const v of this.hiddenRows ?? []) k += v;
    return k;
  }

  /** Hide the rows set in `mask` (added to those hidden already). */
  hide(mask: Uint8Array): void {
    const next = this.hiddenRows ? this.hiddenRows.slice() : new Uint8Array(mask.length);
    for (let i = 0; i < mask.length; i++) if (mask[i]) next[i] = 1;
    this.hiddenRows = next;
    this.hiddenVersion++;
  }

  /** Show every cell again. */
  showAll(): void {
    this.hiddenRows = null;
    this.hiddenVersion++;
  }
}
