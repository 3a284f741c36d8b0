/**
 * `POST /points-transform`: set the points-to-global affine of the active table's region element in
 * the session and on disk, as queued work (so it lands after every job queued before it).
 *
 * Where it is written (`path`, default: the session's own dataset):
 * - a SpatialData `.zarr` folder: only the element's attributes (and the root's consolidated copy)
 *   are rewritten, in place, inside the same job, before the commit; a failed write commits nothing.
 * - a `.zarr.zip` checkpoint: a zip cannot be patched, so the whole object is written through the
 *   session's save, queued right after the transform. With no `path` (a session opened from a
 *   checkpoint) that is a named save into the checkpoint's folder: a new `<name>-<hash>` file the
 *   session adopts, leaving the file it reads lazily from untouched. An explicit `path` is written as
 *   given, except the very file the session is reading from, which cannot be replaced while open.
 * The answer's `job_id` is the job that finishes last (the save for a checkpoint); `path` and
 * `pattern` are what `POST /save` answers for the same write.
 */

import { stat } from "node:fs/promises";
import { dirname, join } from "node:path";
import { type Affine6, pointsTransformChange, validateAffine } from "../data/points-transform.js";
import { BadRequestError } from "../errors.js";
import { writeElementTransform } from "../io/spatialdata/write-element-transform.js";
import { containPath } from "./paths.js";
import { requireReady } from "./readiness.js";
import type { Session } from "./session.js";

/** The body of `POST /points-transform`. */
export interface PointsTransformRequest {
  affine: unknown;
  path?: unknown;
}

/** What the request queued: the job to wait for and where the transform is written. */
export interface PointsTransformTicket {
  job_id: string;
  /** The folder or checkpoint written; null for a content-addressed save (see `pattern`). */
  path: string | null;
  /**
   * For a content-addressed save, `<folder>/<name>-<hash>.sdata.zarr.zip` (the final path arrives on
   * the save's `job.completed`), as `POST /save` answers it.
   */
  pattern?: string | null;
}

const isZip = (p: string) => /\.zarr\.zip$/i.test(p);

async function isDir(p: string): Promise<boolean> {
  try {
    return (await stat(p)).isDirectory();
  } catch {
    return false;
  }
}

/** The file or folder the session's data was read from, when it was read from disk. */
function ownDataset(s: Session): string | null {
  return s.checkpointPath ?? (s.source.kind === "load" ? s.source.path : null);
}

/** Validate (400/404/409 now, nothing queued on error) and queue the transform and its write. */
export async function setPointsTransform(
  s: Session,
  dataDir: string,
  req: PointsTransformRequest,
): Promise<PointsTransformTicket> {
  requireReady(s, "a points transform");
  const affine: Affine6 = validateAffine(req.affine);
  const { region, system } = pointsTransformChange(s.data, s.activeTable, affine);
  const own = ownDataset(s);
  let target: string;
  if (req.path !== undefined) target = await containPath(dataDir, req.path, "path");
  else if (own) target = await containPath(dataDir, own, "path");
  else
    throw new BadRequestError("the session was not read from a dataset on disk: give the path to write to");
  const readingFrom = s.data.source?.path
    ? await containPath(dataDir, s.data.source.path, "path").catch(() => null)
    : null;
  let folder = false;
  if (isZip(target)) {
    if (req.path !== undefined && target === readingFrom)
      throw new BadRequestError(
        `${req.path} is the checkpoint this session reads from and cannot be rewritten while it is open; omit path to write a new checkpoint beside it`,
      );
  } else if (await isDir(target)) {
    if (!(await isDir(join(target, region.family, region.element.name))))
      throw new BadRequestError(
        `the dataset at ${target} has no element ${region.family}/${region.element.name}`,
      );
    folder = true;
  } else
    throw new BadRequestError(
      `path must be a SpatialData .zarr folder or a .zarr.zip checkpoint (got ${target})`,
    );

  const descriptor = {
    namespace: "session",
    function: "points_transform",
    params: { affine, element: region.element.name, coordinate_system: system, path: target },
  };
  const ticket = s.queueOwnJob("points_transform", descriptor, async ({ data, activeTable }) => {
    const next = pointsTransformChange(data, activeTable, affine);
    if (folder) {
      const { family, element } = next.region;
      await writeElementTransform(
        target,
        family,
        element.name,
        next.system,
        element.transformations[next.system]!,
      );
      const notes = next.annotations;
      if (notes && (await isDir(join(target, "shapes", notes.name))))
        await writeElementTransform(
          target,
          "shapes",
          notes.name,
          next.system,
          notes.transformations[next.system]!,
        );
    }
    return { change: next.change, result: { element: next.region.element.name, affine, path: target } };
  });
  if (folder) return { job_id: ticket.job_id, path: target };
  if (req.path !== undefined) {
    const save = await s.save({ path: target });
    return { job_id: save.job_id, path: target };
  }
  const save = await s.save({ folder: dirname(target) });
  return { job_id: save.job_id, path: save.path, pattern: save.pattern };
}
