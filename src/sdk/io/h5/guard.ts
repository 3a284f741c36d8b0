/**
 * What libhdf5 may open (Node only). h5wasm's Node build reads host files directly (Emscripten's
 * NODERAWFS), so libhdf5 opens whatever a file's external links, virtual datasets or mount points name,
 * trying several candidate paths (the link's own, one beside the file, one in the current folder).
 * Every open goes through `FS.open`; this module wraps it once, and while a reader runs a synchronous
 * block under `guarded(root, main, fn)`, only the main file and regular files whose real path lies
 * inside `root` can be opened. Anything else fails as "permission denied" inside libhdf5 (the link
 * then does not resolve) and is recorded, so the reader can name it in its error.
 *
 * The explicit checks (which link, where it leads, which rule) live in `node.ts`; this is the net
 * under them for whatever libhdf5 finds on its own.
 */
import { realpathSync, statSync } from "node:fs";
import { resolve } from "node:path";
import { isInside } from "../confine.js";

/** The confinement of the synchronous block running now, or null (no reader running: no guard). */
let active: { root: string; main: string; refused: string[] } | null = null;

/** Folders whose files libhdf5 may always open: the filter plugins it loads on first use. */
const alwaysAllowed: string[] = [];

/** Let libhdf5 open any file under `dir` (real path), guarded or not (its filter plugin folder). */
export function allowOpensUnder(dir: string): void {
  const real = realpathSync(dir);
  if (!alwaysAllowed.includes(real)) alwaysAllowed.push(real);
}

interface EmscriptenFs {
  open: (path: string, flags: unknown, mode?: unknown) => unknown;
  ErrnoError: new (errno: number) => Error;
}

/** Emscripten's errno numbers (not the host's). */
const EACCES = 2;
const ENOENT = 44;
/** Emscripten's `O_DIRECTORY` open flag. */
const O_DIRECTORY = 0x10000;

const installed = new WeakSet<object>();

/** Wrap the module's `FS.open` (once per module instance). */
export function installOpenGuard(mod: { FS?: unknown }): void {
  const fs = mod.FS as EmscriptenFs | undefined;
  if (!fs || installed.has(fs)) return;
  installed.add(fs);
  const open = fs.open;
  fs.open = function guardedOpen(this: unknown, path: string, flags: unknown, mode?: unknown) {
    const a = active;
    if (a) {
      const abs = resolve(String(path));
      const allowed = abs === a.main || alwaysAllowed.some((d) => isInside(d, abs));
      if (!allowed && typeof flags === "number" && flags & O_DIRECTORY) {
        // libhdf5 scanning its default plugin folders: none of them is read.
        throw new fs.ErrnoError(ENOENT);
      }
      if (!allowed) {
        let real: string;
        try {
          if (!statSync(abs).isFile()) throw new Error("not a regular file");
          real = realpathSync(abs);
        } catch {
          a.refused.push(abs);
          throw new fs.ErrnoError(ENOENT);
        }
        if (real !== a.main && !isInside(a.root, real) && !alwaysAllowed.some((d) => isInside(d, real))) {
          a.refused.push(abs);
          throw new fs.ErrnoError(EACCES);
        }
      }
    }
    return open.call(this, path, flags, mode);
  };
}

/**
 * Run `fn` (synchronous h5wasm calls on the file `main`) with opens confined to `root`. Returns its
 * value; `refused` lists the paths libhdf5 tried and was refused meanwhile.
 */
export function guarded<T>(root: string, main: string, fn: () => T): { value: T; refused: string[] } {
  const prev = active;
  const state = { root, main: resolve(main), refused: [] as string[] };
  active = state;
  try {
    return { value: fn(), refused: state.refused };
  } finally {
    active = prev;
  }
}
