/**
 * Recognising an instrument's output folder by what it holds, as spatialdata-io users expect: each
 * vendor reader registers what it looks for (a sentence, for the error when nothing matches) and a
 * test on the folder's files; the first reader whose test passes reads the folder with its defaults.
 * Readers are tried most specific first (Visium HD before Visium).
 */
import { existsSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { DataError } from "../data-error.js";
import type { ReaderReport, VendorResult } from "./common.js";

/** A reader that can recognise its instrument's folder. */
export interface VendorReader {
  /** The operation that reads it (`io.visium`). */
  readonly key: string;
  /** What the reader looks for, said to the user when no reader matches. */
  readonly looksFor: string;
  /** Whether `dir` (an existing folder) holds this reader's input. */
  matches(dir: string): boolean;
  /** Read `dir` with the reader's defaults, or with `opts` (the reader's params other than `path`). */
  read(dir: string, report?: ReaderReport, opts?: Record<string, unknown>): Promise<VendorResult>;
}

const readers: VendorReader[] = [];

/** Register a reader; later registrations with the same key replace earlier ones, keeping their place. */
export function registerVendorReader(r: VendorReader): void {
  const at = readers.findIndex((x) => x.key === r.key);
  if (at >= 0) readers[at] = r;
  else readers.push(r);
}

/** The registered readers, in the order they are tried. */
export function vendorReaders(): readonly VendorReader[] {
  return readers;
}

/** Names of the files and folders directly in `dir` (empty when it cannot be listed). */
export function listNames(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

/** Whether `dir/rel` exists. */
export function has(dir: string, rel: string): boolean {
  return existsSync(join(dir, rel));
}

/** Whether `dir` is a folder. */
export function isFolder(p: string): boolean {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
}

/** The registered reader of operation `key` (`io.xenium`), or null. */
export function vendorReader(key: string): VendorReader | null {
  return readers.find((r) => r.key === key) ?? null;
}

/** The reader whose test `dir` passes, or null. */
export function recognizeVendor(dir: string): VendorReader | null {
  if (!isFolder(dir)) return null;
  return readers.find((r) => r.matches(dir)) ?? null;
}

/** The sentence listing what each reader looked for (the error when nothing matched). */
export function lookedFor(): string {
  return readers.map((r) => `${r.key}: ${r.looksFor}`).join("; ");
}

/** Read `dir` with the reader it is recognised as, or throw a DataError listing what each looked for. */
export async function readVendorFolder(dir: string, report: ReaderReport = {}): Promise<VendorResult> {
  const r = recognizeVendor(dir);
  if (!r) throw new DataError(`${dir}: not a recognised instrument folder (looked for — ${lookedFor()})`);
  report.log?.(`recognised ${dir} as ${r.key} input`);
  return r.read(dir, report);
}
