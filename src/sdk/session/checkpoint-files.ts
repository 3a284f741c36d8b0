/**
 * Serving checkpoint files (`GET, HEAD /api/checkpoints/{name}`): which names may be asked for and the
 * file each one is. A name is a plain `*.zarr.zip` file name of the data dir itself: no folder part, no
 * separator (decoded or not), no `..`, not hidden; a symlink is followed only when it stays inside the
 * data dir. Checkpoints in sub-folders are not addressable by this route.
 */
import { lstat, stat } from "node:fs/promises";
import { join } from "node:path";
import { BadRequestError, NotFoundError } from "../errors.js";
import { containPath } from "./paths.js";

/** A checkpoint file found for a name. */
export interface CheckpointFile {
  /** Absolute real path. */
  readonly path: string;
  /** Size in bytes. */
  readonly size: number;
  /** Last modification time, ms since the epoch. */
  readonly mtimeMs: number;
}

/** Why `name` is not a servable checkpoint name, or null when it is. */
export function checkpointNameProblem(name: unknown): string | null {
  if (typeof name !== "string" || name === "") return "an empty name";
  if (!/\.zarr\.zip$/i.test(name)) return "the name must end with .zarr.zip";
  if (/[\\/]/.test(name)) return "the name must be a plain file name (no folder part)";
  if (name.includes("..")) return 'the name must not contain ".."';
  if (name.startsWith(".")) return "hidden files are not served";
  if ([...name].some((c) => c.charCodeAt(0) < 0x20)) return "the name contains control characters";
  return null;
}

/**
 * The checkpoint file `name` of `dataDir`. A bad name (or a symlink leading outside the data dir) is a
 * 400; a name that is not a file there is a 404.
 */
export async function checkpointFile(dataDir: string, name: string): Promise<CheckpointFile> {
  const problem = checkpointNameProblem(name);
  if (problem) throw new BadRequestError(`checkpoint name ${JSON.stringify(name)}: ${problem}`);
  const absent = () => new NotFoundError(`no checkpoint "${name}" in the data dir`);
  try {
    await lstat(join(dataDir, name));
  } catch {
    throw absent();
  }
  const real = await containPath(dataDir, join(dataDir, name), "name");
  try {
    const st = await stat(real);
    if (!st.isFile()) throw absent();
    return { path: real, size: st.size, mtimeMs: st.mtimeMs };
  } catch (err) {
    if (err instanceof NotFoundError) throw err;
    throw absent();
  }
}
