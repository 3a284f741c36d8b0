/**
 * Filesystem containment (spec "Session source rules"): every path a request names — a session's
 * source, a reader's path params, a save target — must resolve under the data dir after `..` is
 * normalised and symlinks are followed. A violation is a `PathError` (HTTP 400) naming the param.
 */
import { realpath, stat } from "node:fs/promises";
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { PathError } from "../errors.js";
import { MAX_JSON_DEPTH, tooDeepMessage, valueDepthOver } from "../input-limits.js";
import { trustRoot } from "../io/confine.js";

/** Param names that always hold a path, whatever the registry says. */
export const PATH_PARAM_NAMES: readonly string[] = ["path", "input", "image_path", "alignment_file"];

/** Names that hold a file relative to the primary path (`counts_file`, `meta_file`, `images_dir` …). */
const RELATIVE_NAME_RE = /_(file|path|dir|folder)$/;

/**
 * What containment needs to know of a function: its ui_schema's `path_kind` and `bound_to`, and its
 * effect class (a reader's path params must name something readable).
 */
export interface PathSchema {
  readonly effect_class?: string;
  readonly ui_schema?: Readonly<
    Record<
      string,
      | { readonly path_kind?: "folder" | "file" | "either" | null; readonly bound_to?: string | null }
      | undefined
    >
  >;
}

/** Whether `child` is `root` or inside it (both absolute and normalised). */
function isInside(root: string, child: string): boolean {
  if (child === root) return true;
  const rel = relative(root, child);
  return rel !== "" && !rel.startsWith(`..${sep}`) && rel !== ".." && !isAbsolute(rel);
}

/** The real path of `p`: realpath of the deepest existing ancestor, with the missing tail appended. */
async function realPathOf(p: string): Promise<string> {
  let head = p;
  const tail: string[] = [];
  for (;;) {
    try {
      const real = await realpath(head);
      return tail.length ? join(real, ...tail.reverse()) : real;
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== "ENOENT" && code !== "ENOTDIR") throw err;
      const up = dirname(head);
      if (up === head) return p;
      tail.push(basename(head));
      head = up;
    }
  }
}

/** A URL (`file://`, `http://` …): never a path under the data dir, whatever it would resolve to. */
const URL_RE = /^[a-z][a-z0-9+.-]*:\/\//i;

/** Longest path accepted (characters), and longest file or folder name in it (bytes, as on Linux). */
export const MAX_PATH_LENGTH = 4096;
const MAX_NAME_BYTES = 255;

/**
 * What a file-system error code means for a path a client named (a 400 sentence), for the codes a
 * client's path can cause; undefined for any other code.
 */
export const FS_ERROR_SENTENCES: Readonly<Record<string, string>> = {
  ENAMETOOLONG: "a file name in the path is longer than 255 bytes, or the path is too long",
  EISDIR: "it is a folder, not a file",
  ENOTDIR: "a part of the path is a file, not a folder",
  ELOOP: "too many levels of symbolic links",
  EACCES: "permission denied",
  EPERM: "operation not permitted",
  ENOENT: "no such file or directory",
};

/** The sentence for a file-system error a client's path caused, or null. */
export function fsErrorSentence(err: unknown): string | null {
  const code = (err as NodeJS.ErrnoException | null)?.code;
  return typeof code === "string" && Object.hasOwn(FS_ERROR_SENTENCES, code)
    ? FS_ERROR_SENTENCES[code]!
    : null;
}

/** A problem with the text of a path (too long, a name over 255 bytes), before the disk is asked. */
function pathTextProblem(value: string): string | null {
  if (value.length > MAX_PATH_LENGTH)
    return `is ${value.length} characters long (at most ${MAX_PATH_LENGTH})`;
  for (const part of value.split(/[\\/]/))
    if (Buffer.byteLength(part) > MAX_NAME_BYTES)
      return `has a file or folder name of ${Buffer.byteLength(part)} bytes (at most ${MAX_NAME_BYTES})`;
  return null;
}

/**
 * Resolve `value` (absolute, or relative to `base`, default the data dir) and check it lies under
 * `dataDir` once `..` and symlinks are resolved. Returns the real absolute path. The target need
 * not exist (save targets); its existing ancestors are followed. A path the disk refuses (a link
 * loop, no permission) is a `PathError` saying so.
 */
export async function containPath(
  dataDir: string,
  value: unknown,
  param: string,
  base?: string,
): Promise<string> {
  if (typeof value !== "string" || value.trim() === "") {
    throw new PathError(param, `${param}: expected a non-empty path string, got ${JSON.stringify(value)}`);
  }
  if (value.includes("\0")) throw new PathError(param, `${param}: path contains a NUL byte`);
  if (URL_RE.test(value))
    throw new PathError(
      param,
      `${param}: ${JSON.stringify(value.slice(0, 200))} is a URL; the server reads and writes only files under the data dir`,
    );
  const textProblem = pathTextProblem(value);
  if (textProblem)
    throw new PathError(param, `${param}: path ${JSON.stringify(value.slice(0, 200))} ${textProblem}`);
  const root = await realPathOf(resolve(dataDir));
  // Links inside datasets of this data dir may lead anywhere in it, and nowhere else (io/confine.ts).
  trustRoot(root);
  const abs = isAbsolute(value) ? resolve(value) : resolve(base ?? dataDir, value);
  let real: string;
  try {
    real = await realPathOf(abs);
  } catch (err) {
    const why = fsErrorSentence(err);
    if (!why) throw err;
    throw new PathError(param, `${param}: path ${JSON.stringify(value)}: ${why}`);
  }
  if (!isInside(root, real)) {
    const how = real !== abs ? ` (resolves to ${real})` : "";
    throw new PathError(
      param,
      `${param}: path ${JSON.stringify(value)}${how} is outside the data dir ${root}`,
    );
  }
  return real;
}

/** Whether a param is path-like: a fixed name, a `path_kind`, or a relative-file name. */
export function isPathParam(name: string, schema?: PathSchema): boolean {
  if (PATH_PARAM_NAMES.includes(name)) return true;
  const ui = schema?.ui_schema?.[name];
  if (ui?.path_kind) return true;
  return RELATIVE_NAME_RE.test(name);
}

/** The primary path param a relative-file param is rooted against, if any. */
function primaryOf(name: string, params: Record<string, unknown>, schema?: PathSchema): string | null {
  if (PATH_PARAM_NAMES.includes(name)) return null;
  const bound = schema?.ui_schema?.[name]?.bound_to;
  if (bound && bound !== name && typeof params[bound] === "string" && isPathParam(bound, schema))
    return bound;
  if (!RELATIVE_NAME_RE.test(name)) return null;
  for (const p of PATH_PARAM_NAMES) if (p !== name && typeof params[p] === "string") return p;
  return null;
}

/** Every string inside an object or array, with its location (`files[2]`, `files.counts`). */
function* stringsInside(value: unknown, at: string): Generator<[string, string]> {
  if (typeof value === "string") yield [at, value];
  else if (Array.isArray(value))
    for (let i = 0; i < value.length; i++) yield* stringsInside(value[i], `${at}[${i}]`);
  else if (value && typeof value === "object")
    for (const [k, v] of Object.entries(value)) yield* stringsInside(v, `${at}.${k}`);
}

/** Rebuild `value` with every string replaced through `map` (same shape). */
function mapStrings(value: unknown, at: string, map: Map<string, string>): unknown {
  if (typeof value === "string") return map.get(at) ?? value;
  if (Array.isArray(value)) return value.map((v, i) => mapStrings(v, `${at}[${i}]`, map));
  if (value && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, mapStrings(v, `${at}.${k}`, map)]));
  }
  return value;
}

/**
 * Check every path-like param of `params` (see `isPathParam`) against the data dir and return the
 * params with those paths made absolute and real. Primary paths resolve against the data dir; a
 * relative-file param (`counts_file`, or one whose ui_schema `bound_to` names the primary) is joined
 * onto its primary path (its folder, or the folder of a primary file); a path param given as an object
 * or array has every string inside checked as a complete path. Null and absent params are skipped.
 */
export async function containParams(
  dataDir: string,
  params: Readonly<Record<string, unknown>>,
  schema?: PathSchema,
): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = { ...params };
  const check = async (name: string, base?: string): Promise<unknown> => {
    const v = params[name];
    const at = `params.${name}`;
    if (typeof v === "string") return containPath(dataDir, v, at, base);
    if (typeof v !== "object")
      throw new PathError(at, `${at}: expected a path string, got ${JSON.stringify(v)}`);
    const resolved = new Map<string, string>();
    for (const [where, s] of stringsInside(v, at)) resolved.set(where, await containPath(dataDir, s, where));
    return mapStrings(v, at, resolved);
  };
  if (valueDepthOver(params, MAX_JSON_DEPTH)) throw new PathError("params", tooDeepMessage("params"));
  const names = Object.keys(params).filter((n) => params[n] != null && isPathParam(n, schema));
  // Primaries first, so relative files can be joined onto their resolved folder.
  const primaries = names.filter((n) => primaryOf(n, params, schema) === null);
  for (const name of primaries) out[name] = await check(name);
  for (const name of names.filter((n) => !primaries.includes(n))) {
    const primary = out[primaryOf(name, params, schema)!] as string;
    let base = primary;
    try {
      if (!(await stat(primary)).isDirectory()) base = dirname(primary);
    } catch {
      // A primary that does not exist yet is taken as a folder; the reader reports it missing.
    }
    out[name] = await check(name, base);
  }
  // A reader's inputs must be there now (a 400 when the call is made, not a failed job later) and be
  // files or folders (a FIFO or device would block whoever opens it).
  if (schema?.effect_class === "read") await requireReadableParams(params, out, schema);
  return out;
}

/**
 * Check that a contained path names something that can be read without blocking: a regular file or
 * a folder (`kind`: which of them), not a FIFO, socket or device, which would hold the event loop on
 * open. A missing path is a `PathError` "no such file or directory" (400, as the spec's Errors table
 * gives a bad path). `real` is what `containPath` returned; `shown` is the path as the client gave it.
 */
export async function requireReadable(
  real: string,
  param: string,
  shown: unknown = real,
  kind: "file" | "folder" | "either" = "either",
): Promise<"file" | "folder"> {
  let st: Awaited<ReturnType<typeof stat>>;
  try {
    st = await stat(real);
  } catch (err) {
    const why = fsErrorSentence(err) ?? (err as Error).message;
    throw new PathError(param, `${param}: ${JSON.stringify(shown)}: ${why}`);
  }
  const found = st.isFile() ? "file" : st.isDirectory() ? "folder" : null;
  if (!found)
    throw new PathError(
      param,
      `${param}: ${JSON.stringify(shown)} is not a regular file or folder (a FIFO, socket or device is never opened)`,
    );
  if (kind !== "either" && found !== kind)
    throw new PathError(param, `${param}: ${JSON.stringify(shown)} is a ${found}, not a ${kind}`);
  return found;
}

/**
 * Check that every path param of a reader (see `isPathParam`) names something readable now (see
 * `requireReadable`): a reader's input that is missing is a 400 when the call is made, not a failed
 * load later. `opParams` are the params `containParams` returned.
 */
export async function requireReadableParams(
  params: Readonly<Record<string, unknown>>,
  opParams: Readonly<Record<string, unknown>>,
  schema?: PathSchema,
): Promise<void> {
  for (const name of Object.keys(opParams)) {
    if (opParams[name] == null || !isPathParam(name, schema)) continue;
    const kind = schema?.ui_schema?.[name]?.path_kind ?? "either";
    const at = `params.${name}`;
    const real = opParams[name];
    const shown = params[name];
    if (typeof real === "string") await requireReadable(real, at, shown, kind);
    else
      for (const [where, s] of stringsInside(real, at)) {
        const given = [...stringsInside(shown, at)].find(([w]) => w === where)?.[1] ?? s;
        await requireReadable(s, where, given, kind);
      }
  }
}
