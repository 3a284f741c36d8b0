/**
 * Where links inside a dataset may lead (Node only). A dataset can hold links: a zarr chunk or an
 * element folder that is a symlink, an HDF5 external link, a virtual dataset's source file. Each is
 * followed only when its target resolves inside the dataset's **confinement root**:
 *
 * - the data dir the dataset lies in, once it is trusted (`trustRoot`; containment registers every
 *   data dir a client's path was checked against, so the server's data dir always is);
 * - else the folder holding the dataset (a file opened by `tessera inspect` may link to its
 *   siblings, never elsewhere).
 *
 * A link leading out is an error naming the file, the link and the rule, never a silent read (a
 * missing chunk would read as fill values). Checks are by real path (symlinks resolved).
 */
import { realpathSync } from "node:fs";
import { realpath } from "node:fs/promises";
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { DataError } from "./data-error.js";

/** Real paths of the trusted roots (data dirs), longest first. */
let trusted: string[] = [];

/** Whether `child` is `root` or inside it (both absolute and normalised). */
export function isInside(root: string, child: string): boolean {
  if (child === root) return true;
  const rel = relative(root, child);
  return rel !== "" && rel !== ".." && !rel.startsWith(`..${sep}`) && !isAbsolute(rel);
}

/** Trust `realDir` (a real, absolute folder) as a confinement root: links may lead anywhere inside it. */
export function trustRoot(realDir: string): void {
  if (trusted.includes(realDir)) return;
  trusted = [...trusted, realDir].sort((a, b) => b.length - a.length);
}

/** The real path of `p`: of its deepest existing ancestor when it does not exist (yet), the rest appended. */
function realOrResolved(p: string): string {
  const tail: string[] = [];
  let head = resolve(p);
  for (;;) {
    try {
      return join(realpathSync(head), ...tail.reverse());
    } catch {
      const up = dirname(head);
      if (up === head) return resolve(p);
      tail.push(basename(head));
      head = up;
    }
  }
}

/**
 * The confinement root of the dataset at `location`: the deepest trusted root holding its real path,
 * else the real folder holding it.
 */
export function confineRootFor(location: string): string {
  const real = realOrResolved(location);
  for (const root of trusted) if (isInside(root, real)) return root;
  return dirname(real);
}

/** A link in a dataset that leads outside its confinement root (or cannot be resolved). */
export class LinkOutsideError extends DataError {
  constructor(
    /** What the link is, with where it is (`/data/x.zarr: chunk X/0.0`). */
    readonly what: string,
    /** Where it leads (real path). */
    readonly target: string,
    readonly root: string,
  ) {
    super(
      `${what} is a link to ${target}, outside ${root}; links in a dataset are followed only when they stay inside the data dir`,
    );
    this.name = "LinkOutsideError";
  }
}

/**
 * Check that `path` (a file or folder that may be or pass through symlinks) resolves inside `root`
 * (compared with `root` as given and with its own real path: a data dir reached through a symlink holds
 * the real paths of its files); returns its real path. A path that does not exist is returned resolved (the caller reports it
 * missing). `what` names it in the error.
 */
export async function checkInside(path: string, root: string, what: string): Promise<string> {
  let real: string;
  try {
    real = await realpath(path);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return resolve(path);
    if (code === "ELOOP") throw new Error(`${what}: too many levels of symbolic links`, { cause: err });
    throw err;
  }
  if (!isInside(root, real) && !isInside(realOrResolved(root), real))
    throw new LinkOutsideError(what, real, root);
  return real;
}

/** `checkInside`, synchronously (for code running inside a synchronous library call). */
export function checkInsideSync(path: string, root: string, what: string): string {
  let real: string;
  try {
    real = realpathSync(path);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return resolve(path);
    throw err;
  }
  if (!isInside(root, real) && !isInside(realOrResolved(root), real))
    throw new LinkOutsideError(what, real, root);
  return real;
}
