/**
 * Writing one element's transformation into a SpatialData zarr folder in place: only the element's
 * group attributes (`zarr.json` of zarr v3, `.zattrs` of v2) and the root's consolidated copy of
 * them change, so a large store is updated in milliseconds and every other byte stays as it was.
 *
 * Where the transformations live: `coordinateTransformations` of the group attrs for shapes and
 * points; `multiscales[0].coordinateTransformations` (under `ome` in NGFF 0.5) for images and labels.
 * The entry whose output system is `system` is replaced (or appended when there is none).
 */
import { constants } from "node:fs";
import { open, readFile, rename, unlink } from "node:fs/promises";
import { join } from "node:path";
import type { Transformation } from "../../data/transforms.js";
import { transformationToJson } from "../../data/transforms.js";
import { checkInside, confineRootFor } from "../confine.js";

type Json = Record<string, unknown>;

async function readJson(path: string): Promise<Json | null> {
  try {
    return JSON.parse(await readFile(path, "utf8")) as Json;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw err;
  }
}

/** Create-or-truncate for writing, never through a link (a link in the way is removed first). */
const WRITE_FLAGS = constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_NOFOLLOW;

async function writeJson(path: string, value: unknown): Promise<void> {
  // Written beside and renamed, so a reader never sees half a file; the rename replaces a link named
  // like the file instead of writing where it points.
  const tmp = `${path}.tessera-tmp`;
  let fh: Awaited<ReturnType<typeof open>>;
  try {
    fh = await open(tmp, WRITE_FLAGS, 0o666);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ELOOP") throw err;
    await unlink(tmp);
    fh = await open(tmp, WRITE_FLAGS, 0o666);
  }
  try {
    await fh.writeFile(JSON.stringify(value, null, 2));
  } finally {
    await fh.close();
  }
  await rename(tmp, path);
}

/** Replace (or add) the transformation into `system` in an element's attrs; false if none found. */
function patchAttrs(attrs: Json, system: string, json: Json): boolean {
  const replaceIn = (list: unknown[]): unknown[] => {
    const i = list.findIndex((t) => (t as { output?: { name?: string } })?.output?.name === system);
    const out = [...list];
    if (i >= 0) out[i] = json;
    else out.push(json);
    return out;
  };
  if (Array.isArray(attrs.coordinateTransformations)) {
    attrs.coordinateTransformations = replaceIn(attrs.coordinateTransformations);
    return true;
  }
  const holder = (attrs.ome && typeof attrs.ome === "object" ? (attrs.ome as Json) : attrs) as Json;
  const ms = holder.multiscales;
  if (Array.isArray(ms) && ms[0] && typeof ms[0] === "object") {
    const m0 = ms[0] as Json;
    m0.coordinateTransformations = replaceIn(
      Array.isArray(m0.coordinateTransformations) ? m0.coordinateTransformations : [],
    );
    return true;
  }
  return false;
}

/**
 * Set element `family/name`'s transformation into `system` to `t` in the zarr folder `root`.
 * Throws when the folder holds no such element or its attributes have no place for transformations.
 */
export async function writeElementTransform(
  root: string,
  family: string,
  name: string,
  system: string,
  t: Transformation,
): Promise<void> {
  const json = transformationToJson(t);
  const group = `${family}/${name}`;
  // The element's folder may be a link: written only when it stays inside the data dir.
  await checkInside(join(root, group), confineRootFor(root), `${root}: element ${group}`);
  const v3 = join(root, group, "zarr.json");
  const v2 = join(root, group, ".zattrs");
  const meta3 = await readJson(v3);
  if (meta3) {
    const attrs = (meta3.attributes ?? {}) as Json;
    if (!patchAttrs(attrs, system, json))
      throw new Error(`${group}/zarr.json has no coordinate transformations`);
    meta3.attributes = attrs;
    await writeJson(v3, meta3);
    const rootMeta = await readJson(join(root, "zarr.json"));
    const cons = (rootMeta?.consolidated_metadata as Json | undefined)?.metadata as
      | Record<string, Json>
      | undefined;
    if (rootMeta && cons?.[group]) {
      cons[group] = { ...cons[group], attributes: attrs };
      await writeJson(join(root, "zarr.json"), rootMeta);
    }
    return;
  }
  const attrs2 = await readJson(v2);
  if (!attrs2) throw new Error(`${root} has no element ${group}`);
  if (!patchAttrs(attrs2, system, json))
    throw new Error(`${group}/.zattrs has no coordinate transformations`);
  await writeJson(v2, attrs2);
  const zmeta = await readJson(join(root, ".zmetadata"));
  const m = zmeta?.metadata as Record<string, unknown> | undefined;
  if (zmeta && m && `${group}/.zattrs` in m) {
    m[`${group}/.zattrs`] = attrs2;
    await writeJson(join(root, ".zmetadata"), zmeta);
  }
}
