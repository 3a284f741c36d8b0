/**
 * The session journal: what it takes to bring every open session back after the server stops, cleanly or not.
 *
 * For each open session, `<workDir>/sessions/<id>/journal.json` holds its source, name, the checkpoint it was
 * last saved to, and its whole app state (history, pending steps, plots, displays), rewritten atomically (temp
 * file, then rename) a moment after each change. Sessions whose data changed since they were last saved are
 * also autosaved, when idle, every `TESSERA_AUTOSAVE_S` seconds and when the server shuts down, as a checkpoint
 * in the same folder. At the next start (`recover`), each journal left by a process that is gone becomes a
 * session again under the same id: loaded from its autosave (or, without one, from its source), then brought
 * up to the journal: its displays and pending steps restored, and the computations done after the autosave
 * replayed from their recorded parameters. Jupyter's autosave loses what happened since the last autosave; a
 * replay of the journal rebuilds it.
 *
 * A session closed by the user is forgotten (its folder removed); one still open when the server stops is kept.
 * @module
 */
import { randomBytes } from "node:crypto";
import { mkdir, readdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { AppState } from "../io/checkpoint/app-state.js";
import { writeCheckpoint } from "../io/checkpoint/write.js";
import { processAlive } from "../io/store/pending-writes.js";
import type { SessionSource } from "./types.js";

/** Folder of the journals inside the work dir. */
export const JOURNAL_DIR = "sessions";

/** What one session's `journal.json` holds. */
export interface JournalRecord {
  /** Format of this record (1). */
  version: 1;
  /** Process that wrote it; a journal of a live process other than this one is never recovered. */
  pid: number;
  /**
   * The data dir of the server that wrote it: a server on another data dir sharing the work dir (the default
   * work dir is the system temp folder) leaves it alone.
   */
  data_dir: string;
  id: string;
  name: string;
  source: SessionSource;
  parent_id: string | null;
  /** The user's checkpoint the session was last loaded from or saved to. */
  saved_path: string | null;
  /** Whether the data equals that checkpoint's (nothing to autosave). */
  saved: boolean;
  app_state: AppState;
  active_table: string | null;
  /** The newest autosave checkpoint in the session's folder (file name), or null. */
  autosave: string | null;
  /** The session's data versions at that autosave (JSON), to tell whether the data changed since. */
  autosave_versions: string | null;
  updated_at: string;
}

/** The part of a session the journal reads (the Session class satisfies it). */
export interface JournaledSession {
  readonly id: string;
  readonly name: string;
  readonly source: SessionSource;
  readonly parentId: string | null;
  readonly status: string;
  readonly saved: boolean;
  readonly checkpointPath: string | null;
  readonly appState: AppState;
  readonly activeTable: string | null;
  readonly dataVersions: object;
  readonly data: Parameters<typeof writeCheckpoint>[0];
  /** Whether no job is queued or running. */
  isIdle(): boolean;
}

/** A journal left by a process that is gone, ready to become a session again. */
export interface RecoverableSession {
  record: JournalRecord;
  /** Absolute path of its autosave checkpoint, or null. */
  autosavePath: string | null;
}

/** Write `text` at `file` atomically: a temporary name in the same folder, then a rename over it. */
async function writeAtomic(file: string, text: string): Promise<void> {
  const tmp = `${file}.${randomBytes(4).toString("hex")}.tmp`;
  await writeFile(tmp, text);
  await rename(tmp, file);
}

/** Options of a {@link SessionJournal}. */
export interface JournalOptions {
  /** Delay between a change and the journal write (ms; default 250): a burst of events writes once. */
  debounceMs?: number;
  /** Report a failed journal write or autosave (default: stderr). */
  onError?: (what: string, err: unknown) => void;
}

/** The journals of one work dir (see the module comment). */
export class SessionJournal {
  readonly root: string;
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private readonly writes = new Map<string, Promise<void>>();
  /** Per session: the autosave file and the versions it holds. */
  private readonly autosaves = new Map<string, { file: string; versions: string }>();
  /** Files a restored session reads from (its lazy elements): never removed while it is open. */
  private readonly pinned = new Map<string, string>();
  private readonly debounceMs: number;
  private readonly onError: (what: string, err: unknown) => void;

  constructor(
    readonly workDir: string,
    readonly dataDir: string,
    opts: JournalOptions = {},
  ) {
    this.root = join(workDir, JOURNAL_DIR);
    this.debounceMs = opts.debounceMs ?? 250;
    this.onError =
      opts.onError ??
      ((what, err) =>
        process.stderr.write(`tessera: ${what}: ${err instanceof Error ? err.message : String(err)}\n`));
  }

  /** The folder of session `id`. */
  dir(id: string): string {
    return join(this.root, id);
  }

  /** Journals of processes that are gone, oldest first, each claimed for this process. */
  async recoverable(): Promise<RecoverableSession[]> {
    const out: RecoverableSession[] = [];
    for (const id of await readdir(this.root).catch(() => [] as string[])) {
      if (!/^[A-Za-z0-9_-]{1,128}$/.test(id)) continue;
      const file = join(this.dir(id), "journal.json");
      let record: JournalRecord;
      try {
        record = JSON.parse(await readFile(file, "utf8")) as JournalRecord;
      } catch {
        continue; // a journal being written by a live process, or damaged: never guessed at
      }
      if (record.version !== 1 || record.id !== id || processAlive(record.pid)) continue;
      if (record.data_dir !== this.dataDir) continue; // another server's sessions
      // Claim it at once, so another server starting on the same work dir does not restore it too.
      record = { ...record, pid: process.pid };
      await writeAtomic(file, JSON.stringify(record));
      const autosavePath = record.autosave ? join(this.dir(id), record.autosave) : null;
      if (record.autosave && autosavePath) {
        this.autosaves.set(id, { file: record.autosave, versions: record.autosave_versions ?? "" });
      }
      out.push({ record, autosavePath });
    }
    return out.sort((a, b) => (a.record.updated_at < b.record.updated_at ? -1 : 1));
  }

  /** Keep `file` (a restored session's autosave, which it reads lazily) until the session is forgotten. */
  pin(id: string, file: string): void {
    this.pinned.set(id, file);
  }

  /** Write session `s`'s journal a moment from now (a burst of changes writes once). */
  schedule(s: JournaledSession): void {
    const t = this.timers.get(s.id);
    if (t) t.refresh();
    else {
      const timer = setTimeout(() => {
        this.timers.delete(s.id);
        void this.write(s);
      }, this.debounceMs);
      timer.unref();
      this.timers.set(s.id, timer);
    }
  }

  /** Write session `s`'s journal now (after any write already in flight for it). */
  write(s: JournaledSession): Promise<void> {
    const t = this.timers.get(s.id);
    if (t) {
      clearTimeout(t);
      this.timers.delete(s.id);
    }
    const prev = this.writes.get(s.id) ?? Promise.resolve();
    const next = prev.then(async () => {
      try {
        await mkdir(this.dir(s.id), { recursive: true });
        await writeAtomic(join(this.dir(s.id), "journal.json"), JSON.stringify(this.recordOf(s)));
      } catch (err) {
        this.onError(`journal of session ${s.id}`, err);
      }
    });
    this.writes.set(s.id, next);
    void next.then(() => {
      if (this.writes.get(s.id) === next) this.writes.delete(s.id);
    });
    return next;
  }

  /**
   * Autosave `s` when its data changed since it was saved or last autosaved and it is idle (or `force`, at
   * shutdown, once its jobs have ended): a checkpoint in its folder, then the journal naming it. The previous
   * autosave is removed unless the session reads from it. Returns whether it wrote one.
   */
  async autosave(s: JournaledSession, opts: { force?: boolean } = {}): Promise<boolean> {
    if (s.status !== "ready" || (!opts.force && !s.isIdle())) return false;
    const versions = JSON.stringify(s.dataVersions);
    const last = this.autosaves.get(s.id);
    // Nothing computed since the load (versions empty) or since the last autosave: the source or that file
    // already holds the data.
    // A subset child differs from its source from the start: it is always autosaved.
    if (s.saved || (versions === "{}" && !s.parentId) || last?.versions === versions) return false;
    const file = `autosave-${Date.now()}.sdata.zarr.zip`;
    try {
      await mkdir(this.dir(s.id), { recursive: true });
      await writeCheckpoint(s.data, join(this.dir(s.id), file), {
        appState: s.appState,
        name: s.name,
        activeTable: s.activeTable,
        workDir: this.workDir,
      });
    } catch (err) {
      this.onError(`autosave of session ${s.id}`, err);
      return false;
    }
    this.autosaves.set(s.id, { file, versions });
    await this.write(s);
    if (last && last.file !== this.pinned.get(s.id))
      await rm(join(this.dir(s.id), last.file), { force: true });
    return true;
  }

  /** Forget session `id` (closed by the user): its journal and autosaves go. */
  async forget(id: string): Promise<void> {
    const t = this.timers.get(id);
    if (t) clearTimeout(t);
    this.timers.delete(id);
    await this.writes.get(id);
    this.autosaves.delete(id);
    this.pinned.delete(id);
    await rm(this.dir(id), { recursive: true, force: true });
  }

  /** Stop the pending debounced writes (they are written now) before the process exits. */
  async flush(sessions: readonly JournaledSession[]): Promise<void> {
    await Promise.all(sessions.map((s) => this.write(s)));
  }

  private recordOf(s: JournaledSession): JournalRecord {
    const auto = this.autosaves.get(s.id);
    return {
      version: 1,
      pid: process.pid,
      data_dir: this.dataDir,
      id: s.id,
      name: s.name,
      source: s.source,
      parent_id: s.parentId,
      saved_path: s.checkpointPath,
      saved: s.saved,
      app_state: s.appState,
      active_table: s.activeTable,
      autosave: auto?.file ?? null,
      autosave_versions: auto?.versions ?? null,
      updated_at: new Date().toISOString(),
    };
  }
}
