/**
 * Checking a save request before it is queued (spec "Save"): `folder` and `path` must lie under the
 * data dir, `prefix` must be a plain file name stem, `name` must not be blank, `path` excludes
 * `folder`/`prefix`, and `figures` may only name drawn plots. A bad request is a 400 at the call,
 * never a failed job.
 */
import { stat } from "node:fs/promises";
import { basename, join } from "node:path";
import { BadRequestError } from "../errors.js";
import { containPath } from "./paths.js";
import type { JobTicket, SaveOptions } from "./types.js";

/** Where a validated save writes. */
export type SaveTarget =
  | { kind: "named"; folder: string; prefix: string; name: string | null; figures: string[] | null }
  | { kind: "path"; path: string; name: string | null; figures: string[] | null };

/**
 * A queued save: its job, and where it writes. A content-addressed name is known only once the file
 * is written: `path` is then null and `pattern` shows the name with `<hash>` in place of the digest;
 * the final path arrives on `job.completed` (`path`) and in the job's log (`wrote <path>`).
 */
export interface SaveTicket extends JobTicket {
  /** Absolute path the save writes (`path` saves), or null (content-addressed names). */
  path: string | null;
  /** `<folder>/<prefix>-<hash>.sdata.zarr.zip` for content-addressed names, else null. */
  pattern: string | null;
  /** Whether the save is an export (a filtered write that the session does not adopt). */
  export: boolean;
}

/** The `path` and `pattern` a save answers with before it has written anything. */
export function targetPaths(target: SaveTarget): { path: string | null; pattern: string | null } {
  return target.kind === "path"
    ? { path: target.path, pattern: null }
    : { path: null, pattern: join(target.folder, `${target.prefix}-<hash>.sdata.zarr.zip`) };
}

/** What is at `path`: a folder, something else, or nothing. */
async function kindOf(path: string): Promise<"dir" | "file" | null> {
  try {
    return (await stat(path)).isDirectory() ? "dir" : "file";
  } catch {
    return null;
  }
}

/**
 * Longest prefix (bytes): the file written is `<prefix>-<hash>.sdata.zarr.zip` and its temporary
 * sibling `.<prefix>.pending-<pid>-<ms>.zip`, both within the 255-byte name limit.
 */
export const MAX_PREFIX_BYTES = 160;
/** Longest file name of a `path` save (bytes): its temporary sibling adds about 40. */
export const MAX_SAVE_NAME_BYTES = 200;
/** Longest name a save may give the session (characters, as the app state allows). */
export const MAX_SAVE_NAME = 500;

/** Whether a prefix is usable: non-blank, not dot-prefixed, no path separator, not too long. */
export function validPrefix(prefix: string): boolean {
  return (
    prefix.trim() !== "" &&
    !prefix.startsWith(".") &&
    !/[\\/]/.test(prefix) &&
    !prefix.includes("\0") &&
    Buffer.byteLength(prefix) <= MAX_PREFIX_BYTES
  );
}

/** A file-name stem from a session name (separators and leading dots replaced, cut to MAX_PREFIX_BYTES). */
export function prefixFromName(name: string): string {
  let p = name
    .replace(/[\\/\0]+/g, "_")
    .replace(/^\.+/, "")
    .trim();
  while (Buffer.byteLength(p) > MAX_PREFIX_BYTES) p = p.slice(0, -1);
  return p.trim() || "session";
}

/**
 * Validate `opts` for a session named `sessionName` whose drawn plots are `drawn`; returns the
 * resolved target (absolute, real paths).
 */
export async function resolveSaveTarget(
  opts: SaveOptions,
  dataDir: string,
  sessionName: string,
  drawn: readonly string[],
): Promise<SaveTarget> {
  if (opts.name !== undefined && (typeof opts.name !== "string" || opts.name.trim() === "")) {
    throw new BadRequestError("save: name must not be blank");
  }
  if (typeof opts.name === "string" && opts.name.length > MAX_SAVE_NAME)
    throw new BadRequestError(`save: name is ${opts.name.length} characters long (at most ${MAX_SAVE_NAME})`);
  const name = opts.name?.trim() ?? null;
  let figures: string[] | null = null;
  if (opts.figures !== undefined) {
    if (!Array.isArray(opts.figures)) throw new BadRequestError("save: figures must be a list of plot ids");
    const bad = opts.figures.filter((id) => !drawn.includes(id));
    if (bad.length)
      throw new BadRequestError(`save: figures names plots that are not drawn: ${bad.join(", ")}`);
    figures = [...opts.figures];
  }
  if (opts.path !== undefined) {
    if (opts.folder !== undefined || opts.prefix !== undefined)
      throw new BadRequestError("save: path cannot be combined with folder or prefix");
    const path = await containPath(dataDir, opts.path, "path");
    if ((await kindOf(path)) === "dir") throw new BadRequestError(`save: path ${path} is a folder`);
    if (Buffer.byteLength(basename(path)) > MAX_SAVE_NAME_BYTES)
      throw new BadRequestError(
        `save: the file name of path is ${Buffer.byteLength(basename(path))} bytes long (at most ${MAX_SAVE_NAME_BYTES})`,
      );
    return { kind: "path", path, name, figures };
  }
  const prefix = opts.prefix ?? prefixFromName(name ?? sessionName);
  if (typeof prefix !== "string" || !validPrefix(prefix)) {
    throw new BadRequestError(
      `save: invalid prefix ${JSON.stringify(String(prefix).slice(0, 200))} (it must be non-blank, not start with a dot, have no path separator, and be at most ${MAX_PREFIX_BYTES} bytes)`,
    );
  }
  const folder = await containPath(dataDir, opts.folder ?? ".", "folder");
  if ((await kindOf(folder)) === "file") throw new BadRequestError(`save: folder ${folder} is a file`);
  return { kind: "named", folder, prefix, name, figures };
}
