/**
 * Scraps of interrupted saves, and how they are found again after a crash.
 *
 * A save writes under temporary names and renames at the end (temp → fsync → rename), so a process killed
 * mid-save never leaves a half-written file under a final name; it leaves the temporary file instead, and a
 * staging folder in the work dir. Temporary files sit next to the user's files in the data dir, which may be
 * their home folder: a restart cannot walk it to find them. So every temporary file is first recorded in a
 * ledger in the work dir (`<workDir>/pending-writes/<pid>-<random>`, holding the file's absolute path) and the
 * record is removed once the file is renamed or deleted. At startup, {@link sweepScraps} removes what dead
 * processes left: their staging folders and the files their ledger records name. Records of live processes
 * (another server sharing the work dir) are left alone.
 * @module
 */
import { randomBytes } from "node:crypto";
import { lstat, mkdir, readdir, readFile, rm, unlink, writeFile } from "node:fs/promises";
import { basename, isAbsolute, join, relative, resolve } from "node:path";

/** Folder of the ledger inside the work dir. */
export const LEDGER_DIR = "pending-writes";

/** Prefix of a save's staging folder in the work dir: hidden, with the writer's pid (`.tessera-save-<pid>-…`). */
export const STAGE_PREFIX = ".tessera-save-";

/** The staging folder prefix of this process (`mkdtemp` adds a random suffix). */
export function stagePrefix(): string {
  return `${STAGE_PREFIX}${process.pid}-`;
}

/** What a temporary file's basename looks like: hidden, ending `.tmp` or a checkpoint's `.pending-…zip`. */
const TEMP_NAME = /^\..+(\.tmp|\.pending-\d+-\d+\.zip)$/;

/**
 * Record that `file` (absolute) is about to be written under a temporary name. Returns the function that removes
 * the record; call it once the file has been renamed or removed. No-op when `workDir` is undefined.
 */
export async function recordPendingWrite(
  workDir: string | undefined,
  file: string,
): Promise<() => Promise<void>> {
  if (!workDir) return async () => {};
  const dir = join(workDir, LEDGER_DIR);
  await mkdir(dir, { recursive: true });
  const record = join(dir, `${process.pid}-${randomBytes(6).toString("hex")}`);
  await writeFile(record, resolve(file));
  return async () => {
    await rm(record, { force: true });
  };
}

/** Whether a process with this pid is running (signal 0 probes without sending anything). */
export function processAlive(pid: number): boolean {
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** The pid in `<pid>-…` (ledger records) or `.tessera-save-<pid>-…` (staging folders); NaN when absent. */
function pidOf(name: string): number {
  const m = /^(?:\.tessera-save-)?(\d+)-/.exec(name);
  return m ? Number(m[1]) : Number.NaN;
}

/** Bytes under a path (a file's size, a folder's files added up), 0 when it is gone. */
async function sizeOf(path: string): Promise<number> {
  const st = await lstat(path).catch(() => null);
  if (!st) return 0;
  if (!st.isDirectory()) return st.size;
  let n = 0;
  for (const e of await readdir(path).catch(() => [])) n += await sizeOf(join(path, e));
  return n;
}

/** One removed scrap. */
export interface SweptScrap {
  path: string;
  bytes: number;
}

/**
 * Remove what interrupted saves of dead processes left: staging folders in `workDir` (also the visible
 * `tessera-save-*` folders of older versions, which carry no pid), the raster caches of their sessions
 * (`rasters/<pid>-…`) and the temporary files their ledger records name. A record is trusted only for a hidden temporary name inside `dataDir` (a tampered ledger cannot make the
 * sweep delete anything else). Returns what was removed.
 */
export async function sweepScraps(workDir: string, dataDir: string): Promise<SweptScrap[]> {
  const removed: SweptScrap[] = [];
  const root = resolve(dataDir);
  const entries = await readdir(workDir).catch(() => [] as string[]);
  for (const name of entries) {
    const legacy = name.startsWith("tessera-save-");
    if (!legacy && !(name.startsWith(STAGE_PREFIX) && !processAlive(pidOf(name)))) continue;
    const path = join(workDir, name);
    const bytes = await sizeOf(path);
    await rm(path, { recursive: true, force: true });
    removed.push({ path, bytes });
  }
  // Raster caches of sessions of dead processes (`rasters/<pid>-<session id>`, see raster/hub.ts).
  const rasters = join(workDir, "rasters");
  for (const name of await readdir(rasters).catch(() => [] as string[])) {
    const pid = pidOf(name);
    if (!Number.isFinite(pid) || processAlive(pid)) continue;
    const path = join(rasters, name);
    const bytes = await sizeOf(path);
    await rm(path, { recursive: true, force: true });
    removed.push({ path, bytes });
  }
  const ledger = join(workDir, LEDGER_DIR);
  for (const name of await readdir(ledger).catch(() => [] as string[])) {
    if (processAlive(pidOf(name))) continue;
    const record = join(ledger, name);
    const target = (await readFile(record, "utf8").catch(() => "")).trim();
    const rel = relative(root, target);
    const inside = isAbsolute(target) && rel !== "" && !rel.startsWith("..") && !isAbsolute(rel);
    if (inside && TEMP_NAME.test(basename(target))) {
      const st = await lstat(target).catch(() => null);
      if (st?.isFile()) {
        await unlink(target).catch(() => {});
        removed.push({ path: target, bytes: st.size });
      }
    }
    await rm(record, { force: true });
  }
  return removed;
}
