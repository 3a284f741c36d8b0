/**
 * Checking a save request before it is queued (spec "Save"): `folder` and `path` must lie under the
 * data dir, `prefix` must be a plain file name stem, `name` must not be blank, `path` excludes
 * `folder`/`prefix`, and `figures` may only name drawn plots. A bad request is a 400 at the call,
 * never a failed job.
 */
import { BadRequestError } from "./errors.js";
import { containPath } from "./paths.js";
import type { SaveOptions } from "./types.js";

/** Where a validated save writes. */
export type SaveTarget =
  | { kind: "named"; folder: string; prefix: string; name: string | null; figures: string[] | null }
  | { kind: "path"; path: string; name: string | null; figures: string[] | null };

/** Whether a prefix is usable: non-blank, not dot-prefixed, no path separator. */
export function validPrefix(prefix: string): boolean {
  return prefix.trim() !== "" && !prefix.startsWith(".") && !/[\\/]/.test(prefix);
}

/** A file-name stem from a session name (separators and leading dots replaced). */
export function prefixFromName(name: string): string {
  const p = name
    .replace(/[\\/]+/g, "_")
    .replace(/^\.+/, "")
    .trim();
  return p || "session";
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
    return { kind: "path", path, name, figures };
  }
  const prefix = opts.prefix ?? prefixFromName(name ?? sessionName);
  if (typeof prefix !== "string" || !validPrefix(prefix)) {
    throw new BadRequestError(
      `save: invalid prefix ${JSON.stringify(prefix)} (it must be non-blank, not start with a dot, and have no path separator)`,
    );
  }
  const folder = await containPath(dataDir, opts.folder ?? ".", "folder");
  return { kind: "named", folder, prefix, name, figures };
}
