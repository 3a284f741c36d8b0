/** `tessera inspect`: print an input's element inventory (text or JSON) or one field as CSV. */
import { fieldToCsv, inventory, readField } from "../../sdk/data/index.js";
import { openData } from "../../sdk/io/open.js";
import { formatInventory } from "./format-inventory.js";

/** Options of `inspect`. */
export interface InspectOptions {
  json?: boolean;
  field?: string;
  table?: string;
}

/** Open `path` and print what it holds. */
export async function inspectCommand(path: string, opts: InspectOptions): Promise<void> {
  const { sdata, warnings } = await openData(path);
  for (const w of warnings) process.stderr.write(`warning: ${w}\n`);
  if (opts.field) {
    process.stdout.write(fieldToCsv(await readField(sdata, opts.field, opts.table)));
    return;
  }
  const inv = inventory(sdata);
  process.stdout.write(opts.json ? `${JSON.stringify(inv, null, 2)}\n` : formatInventory(path, inv));
}
