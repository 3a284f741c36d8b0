/**
 * Sessions survive a restart: with session recovery on, every open session is journalled in the work dir, and
 * the next service on that work dir brings it back under the same id — from its autosave, or from its source
 * with the journal's computations replayed — with its displays and pending steps. A session the user closed
 * does not come back. The "crash" is a service dropped without `close()` whose journal names a dead process.
 */
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { JOURNAL_DIR, type JournalRecord } from "../../../src/sdk/session/journal.js";
import { Service } from "../../../src/sdk/session/service.js";
import type { Session } from "../../../src/sdk/session/session.js";
import { demoDataDir } from "./helpers.js";

const rename = (old_name: string, new_name: string) => ({
  namespace: "custom",
  function: "rename_obs_column",
  params: { old_name, new_name },
});
const noop = { namespace: "custom", function: "noop", params: {} };

let dataDir: string;
let demo: string;
let cleanup: () => Promise<void>;
beforeAll(async () => {
  ({ dataDir, demo, cleanup } = await demoDataDir());
});
afterAll(async () => {
  await cleanup();
});

/** A service on `workDir` (recovery on unless said otherwise), as the session tests' helper makes them. */
function serviceOn(workDir: string, sessionRecovery = true): Promise<Service> {
  return Service.start({
    env: {},
    plugins: ["tessera", "testkit"],
    config: {
      dataDir,
      workDir,
      computePoolWorkers: 1,
      nThreads: 1,
      recipesDir: join(dataDir, "no-recipes"),
      sessionRecovery,
      autosaveS: 0,
    },
  });
}
const recovering = (workDir: string) => serviceOn(workDir);

/** Make the journals of `service` look like those of a process that died (a pid that cannot exist). */
async function crash(workDir: string, ids: string[]): Promise<void> {
  for (const id of ids) {
    const file = join(workDir, JOURNAL_DIR, id, "journal.json");
    const rec = JSON.parse(await readFile(file, "utf8")) as JournalRecord;
    await writeFile(file, JSON.stringify({ ...rec, pid: 2 ** 31 - 2 }));
  }
}

async function until(cond: () => boolean, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error("timed out");
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function untilAsync(cond: () => Promise<boolean>, ms = 30_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error("timed out");
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function settle(s: Session): Promise<void> {
  await s.ready;
  await s.idle();
  // The journal is written a moment after the last change.
  await new Promise((r) => setTimeout(r, 400));
}

describe("session recovery", () => {
  it("a crash: the session comes back from its source, its computations replayed, displays and pending kept", async () => {
    const workDir = join(dataDir, ".work-crash");
    const a = await recovering(workDir);
    const s = await a.createSession({ source: { kind: "load", path: demo }, name: "my analysis" });
    await s.ready;
    await (await s.submit(rename("cell_type", "label"))).done;
    const staged = await s.stage(noop);
    const display = s.addDisplay({
      type: "spatial_canvas",
      encoding: { coords: "obsm:spatial", color_by: "obs:label" },
      viewport: { target: [10, 20], zoom: -1 },
    });
    await settle(s);
    expect(s.saved).toBe(false);
    await crash(workDir, [s.id]);
    // The process "dies": no close(), no autosave. A new service on the same work dir starts.
    const b = await recovering(workDir);
    try {
      const back = b.session(s.id);
      expect(back.name).toBe("my analysis");
      await back.ready;
      await back.idle();
      expect(back.status).toBe("ready");
      const t = back.data.tables[back.activeTable!]!;
      expect(t.obs.columnOrder).toContain("label");
      expect(t.obs.columnOrder).not.toContain("cell_type");
      const hist = back.appState.compute_history;
      expect(hist.find((e) => e.id === staged)?.status).toBe("pending");
      expect(hist.filter((e) => e.function === "rename_obs_column").map((e) => e.status)).toEqual([
        "completed",
      ]);
      expect(back.appState.displays.map((d) => d.id)).toContain(display.id);
      expect(back.saved).toBe(false);
      expect(back.checkpointPath).toBe(demo);
    } finally {
      await b.close();
    }
    await a.close().catch(() => {});
  });

  it("a clean stop: unsaved sessions are autosaved and come back from the autosave; a closed one does not", async () => {
    const workDir = join(dataDir, ".work-clean");
    const a = await recovering(workDir);
    const kept = await a.createSession({ source: { kind: "load", path: demo }, name: "kept" });
    const closed = await a.createSession({ source: { kind: "load", path: demo }, name: "closed" });
    await kept.ready;
    await (await kept.submit(rename("cell_type", "kind"))).done;
    await settle(kept);
    await closed.ready;
    await a.deleteSession(closed.id);
    await a.close();
    // The next start is another process: the journal's pid is no longer running.
    await crash(workDir, [kept.id]);
    const journal = JSON.parse(
      await readFile(join(workDir, JOURNAL_DIR, kept.id, "journal.json"), "utf8"),
    ) as JournalRecord;
    expect(journal.autosave).toMatch(/^autosave-\d+\.sdata\.zarr\.zip$/);

    const b = await recovering(workDir);
    try {
      expect(b.sessions().map((s) => s.name)).toEqual(["kept"]);
      const back = b.session(kept.id);
      await back.ready;
      await back.idle();
      expect(back.data.tables[back.activeTable!]!.obs.columnOrder).toContain("kind");
      // Loaded from the autosave, nothing to replay: one completed rename in history, not two.
      expect(back.appState.compute_history.filter((e) => e.function === "rename_obs_column")).toHaveLength(1);
      expect(back.saved).toBe(false);
    } finally {
      await b.close();
    }
  });

  it("a subset child comes back from the autosave made when it was cut; the parent it closed does not", async () => {
    const workDir = join(dataDir, ".work-subset");
    const a = await recovering(workDir);
    const parent = await a.createSession({ source: { kind: "load", path: demo }, name: "whole" });
    await parent.ready;
    const ticket = await a.subset(parent.id, { cell_indices: [3, 5, 8, 13] });
    const out = await ticket.done;
    const childId = (out.result as { child_id: string }).child_id;
    await until(() => !a.sessions().some((s) => s.id === parent.id));
    await settle(a.session(childId));
    // The child's autosave (written once the subset has closed the parent) is named in its journal.
    const journalFile = join(workDir, JOURNAL_DIR, childId, "journal.json");
    await untilAsync(async () =>
      Boolean((JSON.parse(await readFile(journalFile, "utf8").catch(() => "{}")) as JournalRecord).autosave),
    );
    await crash(workDir, [childId]);
    const b = await recovering(workDir);
    try {
      expect(b.sessions().map((s) => s.id)).toEqual([childId]);
      const back = b.session(childId);
      await back.ready;
      expect(back.status).toBe("ready");
      expect(back.data.tables[back.activeTable!]!.obs.index.values).toHaveLength(4);
      expect(back.parentId).toBe(parent.id);
    } finally {
      await b.close();
    }
    await a.close().catch(() => {});
  });

  it("a server on another data dir sharing the work dir leaves the sessions alone", async () => {
    const workDir = join(dataDir, ".work-shared");
    const a = await recovering(workDir);
    const s = await a.createSession({ source: { kind: "load", path: demo }, name: "mine" });
    await settle(s);
    await crash(workDir, [s.id]);
    const other = await Service.start({
      env: {},
      plugins: ["tessera", "testkit"],
      config: {
        dataDir: join(dataDir, "elsewhere"),
        workDir,
        computePoolWorkers: 1,
        recipesDir: join(dataDir, "no-recipes"),
        sessionRecovery: true,
        autosaveS: 0,
      },
    });
    try {
      expect(other.sessions()).toEqual([]);
    } finally {
      await other.close();
    }
    // Its own data dir's next server still finds it.
    const b = await recovering(workDir);
    try {
      expect(b.sessions().map((x) => x.id)).toEqual([s.id]);
    } finally {
      await b.close();
    }
    await a.close().catch(() => {});
  });

  it("without recovery (the library's default) nothing is journalled", async () => {
    const workDir = join(dataDir, ".work-off");
    const a = await serviceOn(workDir, false);
    const s = await a.createSession({ source: { kind: "load", path: demo } });
    await settle(s);
    await a.close();
    await expect(readFile(join(workDir, JOURNAL_DIR, s.id, "journal.json"))).rejects.toThrow(/ENOENT/);
  });
});
