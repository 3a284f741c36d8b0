/** Paths of the shared test fixtures (`../shared/data` and `../shared/reference` beside the repo). */
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../", import.meta.url));

/** Absolute path of a file or folder under `../shared/data`. */
export function fixture(rel: string): string {
  const p = fileURLToPath(new URL(`../shared/data/${rel}`, new URL(`file://${ROOT}`)));
  if (!existsSync(p)) throw new Error(`fixture missing: ${p}`);
  return p;
}

/** Absolute path of a file or folder under `../shared/reference`. */
export function reference(rel: string): string {
  const p = fileURLToPath(new URL(`../shared/reference/${rel}`, new URL(`file://${ROOT}`)));
  if (!existsSync(p)) throw new Error(`reference missing: ${p}`);
  return p;
}
