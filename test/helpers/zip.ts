/**
 * Writing zip archives byte by byte in tests, including ones no zip library would write: entry names
 * that climb out (`../x`, `/abs`), DEFLATE entries whose declared size lies, bombs.
 */
import { writeFile } from "node:fs/promises";
import { crc32, deflateRawSync } from "node:zlib";

/** One entry: its name and bytes; `deflate` compresses it; `declaredSize` overrides the size written. */
export interface RawZipEntry {
  name: string;
  data: Uint8Array;
  deflate?: boolean;
  /** Uncompressed size written in the headers (default the real one). */
  declaredSize?: number;
  /** Compressed bytes to store instead of compressing `data` (with `deflate`). */
  compressed?: Uint8Array;
}

/** The bytes of a zip holding `entries` (no ZIP64: every size below 4 GiB). */
export function zipBytes(entries: readonly RawZipEntry[]): Uint8Array {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const e of entries) {
    const name = Buffer.from(e.name, "utf8");
    const body = e.deflate ? Buffer.from(e.compressed ?? deflateRawSync(e.data)) : Buffer.from(e.data);
    const size = e.declaredSize ?? e.data.byteLength;
    const crc = crc32(e.data) >>> 0;
    const method = e.deflate ? 8 : 0;
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(0x0800, 6);
    local.writeUInt16LE(method, 8);
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(body.byteLength, 18);
    local.writeUInt32LE(size >>> 0, 22);
    local.writeUInt16LE(name.byteLength, 26);
    locals.push(local, name, body);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(20, 4);
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(0x0800, 8);
    central.writeUInt16LE(method, 10);
    central.writeUInt32LE(crc, 16);
    central.writeUInt32LE(body.byteLength, 20);
    central.writeUInt32LE(size >>> 0, 24);
    central.writeUInt16LE(name.byteLength, 28);
    central.writeUInt32LE(offset, 42);
    centrals.push(central, name);
    offset += 30 + name.byteLength + body.byteLength;
  }
  const cd = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(cd.byteLength, 12);
  end.writeUInt32LE(offset, 16);
  return new Uint8Array(Buffer.concat([...locals, cd, end]));
}

/** Write `zipBytes(entries)` to `file`. */
export async function writeZip(file: string, entries: readonly RawZipEntry[]): Promise<void> {
  await writeFile(file, zipBytes(entries));
}

/** Every file of a folder as zip entries (names relative, `/`-separated), under `prefix`. */
export async function folderEntries(dir: string, prefix = ""): Promise<RawZipEntry[]> {
  const { readdir, readFile } = await import("node:fs/promises");
  const { join } = await import("node:path");
  const out: RawZipEntry[] = [];
  const walk = async (rel: string): Promise<void> => {
    for (const d of await readdir(join(dir, rel), { withFileTypes: true })) {
      const r = rel ? `${rel}/${d.name}` : d.name;
      if (d.isDirectory()) await walk(r);
      else out.push({ name: `${prefix}${r}`, data: new Uint8Array(await readFile(join(dir, r))) });
    }
  };
  await walk("");
  return out;
}
