import { cp, mkdir, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { PathError } from "../../../src/sdk/errors.js";
import { parseRecipe } from "../../../src/sdk/recipes/model.js";
import type { Service } from "../../../src/sdk/session/service.js";
import { demoDataDir, openDemo, record, startService } from "./helpers.js";

let dataDir: string;
let demo: string;
let cleanup: () => Promise<void>;
let service: Service;

beforeAll(async () => {
  ({ dataDir, demo, cleanup } = await demoDataDir());
  service = await startService(dataDir);
});
afterEach(async () => {
  for (const s of service.sessions()) await service.deleteSession(s.id);
});
afterAll(async () => {
  await service?.close();
  await cleanup?.();
});

const sleep = (ms: number) => ({ namespace: "custom", function: "sleep", params: { ms } });
const rename = (old_name: string, new_name: string) => ({
  namespace: "custom",
  function: "rename_obs_column",
  params: { old_name, new_name },
});

describe("session lifecycle", () => {
  it("loads a checkpoint as its first job: loading → ready, with events", async () => {
    const rec = record(service);
    const s = await service.createSession({ source: { kind: "load", path: demo }, load_id: "L1" });
    expect(s.status).toBe("loading");
    expect(s.summary()).toMatchObject({
      status: "loading",
      saved: false,
      read_only: false,
      parent_id: null,
      error: null,
    });
    await s.ready;
    expect(s.status).toBe("ready");
    expect(s.name).toBe("demo");
    expect(s.saved).toBe(true);
    expect(s.activeTable).toBe("table");
    const names = rec.events.map((e) => e.event);
    expect(names[0]).toBe("session.created");
    expect(names).toContain("session.loading");
    expect(names.at(-1)).toBe("session.updated");
    const loading = rec.events.filter((e) => e.event === "session.loading").map((e) => e.data);
    expect(loading.every((d) => d.load_id === "L1")).toBe(true);
    expect(loading.at(-1)).toMatchObject({ pct: 100, done: true });
    expect((rec.events.at(-1)!.data.summary as { status: string }).status).toBe("ready");
    rec.stop();
    const st = s.state();
    expect(st.fields.obs.find((f) => f.name === "cell_type")).toEqual({
      name: "cell_type",
      kind: "categorical",
    });
    expect(st.fields.obsm).toEqual([{ name: "spatial", n_components: 2 }]);
    expect(st.fields).toMatchObject({
      has_x: true,
      var_names_count: 40,
      images: ["morphology"],
      shapes: ["cell_boundaries"],
    });
    await service.deleteSession(s.id);
    expect(() => service.session(s.id)).toThrow(/no session/);
  });

  it("ends errored with the message when the load fails", async () => {
    const rec = record(service);
    const s = await service.createSession({ source: { kind: "load", path: "missing.sdata.zarr.zip" } });
    await s.ready;
    expect(s.status).toBe("errored");
    expect(s.summary().error).toMatch(/missing\.sdata\.zarr\.zip: no such file or directory/);
    expect(rec.events.map((e) => e.event)).toEqual(
      expect.arrayContaining(["session.errored", "session.updated"]),
    );
    rec.stop();
    await service.deleteSession(s.id);
  });

  it("reads a dataset through the built-in read.read_data reader", async () => {
    const rec = record(service);
    const s = await service.createSession({
      source: { kind: "read", namespace: "read", function: "read_data", params: { path: demo } },
    });
    await s.ready;
    expect(s.status).toBe("ready");
    expect(s.appState.compute_history[0]).toMatchObject({
      namespace: "read",
      function: "read_data",
      status: "completed",
    });
    expect(s.appState.compute_history[0]!.structural_diff.tables).toEqual(["table"]);
    expect(rec.events.some((e) => e.event === "job.log")).toBe(true);
    rec.stop();
    await service.deleteSession(s.id);
  });

  it("refuses a reader namespace other than read/io and more sessions than the limit", async () => {
    await expect(
      service.createSession({
        source: { kind: "read", namespace: "custom" as "read", function: "noop", params: {} },
      }),
    ).rejects.toMatchObject({ status: 400 });
    const small = await startService(dataDir, {
      config: { dataDir, maxSessions: 1, computePoolWorkers: 1, recipesDir: dataDir },
    });
    try {
      await small.createSession({ source: { kind: "load", path: demo } });
      await expect(small.createSession({ source: { kind: "load", path: demo } })).rejects.toMatchObject({
        status: 503,
      });
    } finally {
      await small.close();
    }
  });
});

describe("jobs", () => {
  it("runs a session's jobs in FIFO order and commits each in one step", async () => {
    const s = await openDemo(service, demo);
    const rec = record(service, s.id);
    const a = await s.submit(sleep(150));
    const b = await s.submit(sleep(10));
    const c = await s.submit(rename("cell_type", "label"));
    expect(rec.events.filter((e) => e.event === "job.queued").map((e) => e.data.position)).toEqual([0, 1, 2]);
    const before = s.data;
    const outs = await Promise.all([a.done, b.done, c.done]);
    expect(outs.map((o) => o.status)).toEqual(["completed", "completed", "completed"]);
    const order = rec.events.filter((e) => e.event === "job.completed").map((e) => e.data.job_id);
    expect(order).toEqual([a.job_id, b.job_id, c.job_id]);
    // Each started only after the previous completed.
    const seq = rec.events
      .filter((e) => e.event === "job.started" || e.event === "job.completed")
      .map((e) => `${e.event}:${e.data.job_id}`);
    expect(seq).toEqual([a, b, c].flatMap((t) => [`job.started:${t.job_id}`, `job.completed:${t.job_id}`]));
    expect(
      rec.events.find((e) => e.event === "job.completed" && e.data.job_id === c.job_id)!.data,
    ).toMatchObject({
      kind: "compute",
      structural_diff: { obs: ["cell_type", "label"] },
    });
    expect(before.tables.table!.obs.columns.cell_type).toBeDefined();
    expect(s.data.tables.table!.obs.columns.label).toEqual(before.tables.table!.obs.columns.cell_type);
    expect(s.data.tables.table!.obs.columns.cell_type).toBeUndefined();
    const entry = s.appState.compute_history.find((e) => e.id === c.job_id)!;
    expect(entry).toMatchObject({ status: "completed", library_versions: { tessera: expect.any(String) } });
    expect(Date.parse(entry.started_at!)).toBeLessThanOrEqual(Date.parse(entry.finished_at!));
    expect(s.dataVersions).toEqual({
      "tables:table:obs:cell_type": 1,
      "tables:table:obs:label": 1,
      "tables:table:uns:cell_type_colors": 1,
      "tables:table:uns:label_colors": 1,
    });
    expect(s.saved).toBe(false);
    const col = await s.field("obs:label");
    expect(col.nRows).toBe(300);
    rec.stop();
    await service.deleteSession(s.id);
  });

  it("serves reads of the committed object while a job runs", async () => {
    const s = await openDemo(service, demo);
    const before = s.data;
    const seen: boolean[] = [];
    const stop = service.bus.subscribe((e) => {
      const d = e.data as { session_id?: string };
      if (e.event === "job.started" && d.session_id === s.id)
        seen.push(s.data === before && "cell_type" in s.data.tables.table!.obs.columns);
    }, service.bus.lastId);
    await s.submit(sleep(200));
    const t = await s.submit(rename("cell_type", "kind"));
    await new Promise((r) => setTimeout(r, 80));
    // The sleep is running: reads answer at once with the old object.
    expect(s.queueView().map((q) => q.status)).toEqual(["running", "queued"]);
    expect(s.data).toBe(before);
    expect((await s.field("obs:cell_type")).nRows).toBe(300);
    await t.done;
    stop();
    expect(seen).toEqual([true, true]);
    expect(s.data).not.toBe(before);
    expect(s.data.tables.table!.obs.columns.kind).toBeDefined();
    await service.deleteSession(s.id);
  });

  it("runs two sessions at once", async () => {
    const s1 = await openDemo(service, demo);
    const s2 = await openDemo(service, demo);
    const rec = record(service);
    const [a, b] = await Promise.all([s1.submit(sleep(400)), s2.submit(sleep(400))]);
    await Promise.all([a.done, b.done]);
    // Both were running at the same time: each started before either finished.
    const seq = rec.events
      .filter((e) => e.event === "job.started" || e.event === "job.completed")
      .map((e) => `${e.event}:${e.data.session_id}`);
    expect(seq.slice(0, 2).sort()).toEqual([`job.started:${s1.id}`, `job.started:${s2.id}`].sort());
    expect(seq.slice(2).every((x) => x.startsWith("job.completed"))).toBe(true);
    rec.stop();
    await service.deleteSession(s1.id);
    await service.deleteSession(s2.id);
  });

  it("cancels queued jobs only", async () => {
    const s = await openDemo(service, demo);
    const before = s.data;
    const running = await s.submit(sleep(200));
    const queued = await s.submit(rename("cell_type", "x"));
    expect(s.cancel(queued.job_id)).toBe(true);
    expect(s.cancel(running.job_id)).toBe(false);
    expect((await queued.done).status).toBe("cancelled");
    expect((await running.done).status).toBe("completed");
    expect(s.appState.compute_history.find((e) => e.id === queued.job_id)!.status).toBe("cancelled");
    expect(s.data).toBe(before);
    expect(s.job(queued.job_id).status).toBe("cancelled");
    await service.deleteSession(s.id);
  });

  it("leaves the data exactly as before when an operation fails or crashes its worker", async () => {
    const s = await openDemo(service, demo);
    const before = s.data;
    const rec = record(service, s.id);
    const f = await s.submit({ namespace: "custom", function: "fail", params: { message: "nope" } });
    const c = await s.submit({ namespace: "custom", function: "crash", params: {} });
    await Promise.all([f.done, c.done]);
    expect(await f.done).toMatchObject({ status: "failed", error: expect.stringContaining("nope") });
    expect(await c.done).toMatchObject({ status: "failed", error: expect.stringMatching(/crash/) });
    // Nothing was committed by either: the very same object, no version moved.
    expect(s.data).toBe(before);
    expect(s.dataVersions).toEqual({});
    const failed = s.appState.compute_history.find((e) => e.id === f.job_id)!;
    expect(failed).toMatchObject({ status: "failed", structural_diff: {} });
    expect(failed.log).toContain("about to fail");
    expect(failed.error).toContain("nope");
    expect(s.job(f.job_id).log).toContain("about to fail");
    expect(rec.events.filter((e) => e.event === "job.failed").map((e) => e.data.job_id)).toEqual([
      f.job_id,
      c.job_id,
    ]);
    // The worker was replaced: the next job runs.
    const after = await s.submit(rename("cell_type", "still_works"));
    expect((await after.done).status).toBe("completed");
    // Only the rename moved the data: the failed and crashed jobs touched nothing.
    expect(Object.keys(s.dataVersions).sort()).toEqual([
      "tables:table:obs:cell_type",
      "tables:table:obs:still_works",
      "tables:table:uns:cell_type_colors",
      "tables:table:uns:still_works_colors",
    ]);
    expect(s.data.tables.table!.obs.columns.still_works).toEqual(before.tables.table!.obs.columns.cell_type);
    rec.stop();
    await service.deleteSession(s.id);
  });

  it("runs extracts at once, outside the queue and the history", async () => {
    const s = await openDemo(service, demo);
    // Long enough that the extract cannot outlast it on a loaded machine; closing the session stops it.
    const busy = await s.submit(sleep(120_000));
    let busyDone = false;
    void busy.done.then(() => {
      busyDone = true;
    });
    const x = await s.submit({
      namespace: "custom",
      function: "obs_values",
      params: { column: "cell_type" },
    });
    const out = await x.done;
    // Answered while the compute still holds the queue.
    expect(busyDone).toBe(false);
    expect(s.queueView().map((q) => q.job_id)).toEqual([busy.job_id]);
    expect(out.status).toBe("completed");
    const values = (out.result as { values: { value: string; count: number }[] }).values;
    expect(values.reduce((p, v) => p + v.count, 0)).toBe(300);
    expect(s.appState.compute_history.every((e) => e.function !== "obs_values")).toBe(true);
    await service.deleteSession(s.id);
  });

  it("validates params at submission, with the field named", async () => {
    const s = await openDemo(service, demo);
    await expect(
      s.submit({ namespace: "custom", function: "rename_obs_column", params: { old_name: "a" } }),
    ).rejects.toThrow(/new_name/);
    await expect(s.submit({ namespace: "custom", function: "nonesuch", params: {} })).rejects.toThrow(
      "unknown function custom.nonesuch",
    );
    expect(s.appState.compute_history).toEqual([]);
    await service.deleteSession(s.id);
  });
});

describe("staging", () => {
  it("stages, edits, runs one, runs all, deletes only pending", async () => {
    const s = await openDemo(service, demo);
    const a = await s.stage(rename("cell_type", "wrong"));
    const b = await s.stage(rename("total_counts", "counts"));
    const c = await s.stage(rename("cell_area", "area"));
    expect(s.appState.compute_history.map((e) => e.status)).toEqual(["pending", "pending", "pending"]);
    expect(s.data.tables.table!.obs.columns.wrong).toBeUndefined();
    await s.updatePending(a, { old_name: "cell_type", new_name: "ctype" });
    await expect(s.updatePending(a, { old_name: "cell_type" })).rejects.toThrow(/new_name/);
    expect(s.appState.compute_history[0]!.params).toEqual({ old_name: "cell_type", new_name: "ctype" });
    s.deleteEntry(c);
    const ta = await s.runPending(a);
    expect(() => s.deleteEntry(a)).toThrow(/only pending/);
    await expect(s.updatePending(a, {})).rejects.toThrow(/only pending/);
    await ta.done;
    const rest = await s.runAllPending();
    expect(rest.map((t) => t.job_id)).toEqual([b]);
    await rest[0]!.done;
    expect(s.appState.compute_history.map((e) => [e.id, e.status])).toEqual([
      [a, "completed"],
      [b, "completed"],
    ]);
    expect(Object.keys(s.data.tables.table!.obs.columns)).toEqual(
      expect.arrayContaining(["ctype", "counts", "cell_area"]),
    );
    await service.deleteSession(s.id);
  });
});

describe("plots", () => {
  it("draws, invalidates when a referenced field changes, and redraws", async () => {
    const s = await openDemo(service, demo);
    const rec = record(service, s.id);
    const p = await s.submit({ namespace: "pl", function: "test_scatter", params: { color: "cell_type" } });
    expect((await p.done).status).toBe("completed");
    const plot = s.appState.plots.find((x) => x.id === p.job_id)!;
    expect(plot.status).toBe("drawn");
    expect(plot.references).toEqual(
      expect.arrayContaining(["tables:table:obsm:spatial", "tables:table:obs:cell_type"]),
    );
    const svg = new TextDecoder().decode((await s.figure(p.job_id, "svg"))!);
    expect(svg).toMatch(/^<svg/);
    expect(s.state().figures[p.job_id]!.svg).toBe(svg.length);
    expect(rec.events.some((e) => e.event === "plot.drawn" && e.data.plot_id === p.job_id)).toBe(true);
    // A field it did not read: still drawn.
    await (await s.submit(rename("cell_area", "area"))).done;
    expect(s.appState.plots[0]!.status).toBe("drawn");
    // A category rename of the column it coloured by: invalidated, figure unreachable.
    await (
      await s.submit({
        namespace: "custom",
        function: "rename_categories",
        params: { key: "cell_type", mapping: { Tumor: "Tumour" } },
      })
    ).done;
    expect(s.appState.plots[0]!.status).toBe("invalidated");
    expect(rec.events.find((e) => e.event === "plot.invalidated")!.data.plot_ids).toEqual([p.job_id]);
    expect(await s.figure(p.job_id, "svg")).toBeNull();
    expect(s.state().figures).toEqual({});
    const r = await s.redraw(p.job_id);
    expect(["queued", "running"]).toContain(s.appState.plots[0]!.status);
    await r.done;
    expect(s.appState.plots[0]!.status).toBe("drawn");
    expect(await s.figure(p.job_id, "svg")).not.toBeNull();
    rec.stop();
    await service.deleteSession(s.id);
  });
});

describe("path containment", () => {
  it("refuses sources and reader params outside the data dir", async () => {
    const attacks = [
      { kind: "load" as const, path: "../etc/passwd" },
      { kind: "load" as const, path: "/etc/passwd" },
      {
        kind: "read" as const,
        namespace: "read" as const,
        function: "read_data",
        params: { path: `${dataDir}/../x` },
      },
      {
        kind: "read" as const,
        namespace: "io" as const,
        function: "open_with_meta",
        params: { path: demo, meta_file: "../../../etc/passwd" },
      },
    ];
    for (const source of attacks) {
      const err = await service.createSession({ source }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(PathError);
      expect((err as PathError).status).toBe(400);
    }
    // A symlink inside the data dir that points out of it.
    await symlink("/etc", join(dataDir, "etc-link"));
    await expect(
      service.createSession({ source: { kind: "load", path: "etc-link/hostname" } }),
    ).rejects.toBeInstanceOf(PathError);
    expect(service.sessions()).toEqual([]);
    const s = await openDemo(service, demo);
    // The same containment applies to reader jobs, stages and pending edits on an open session.
    await expect(
      s.submit({ namespace: "io", function: "open_with_meta", params: { path: "/etc" } }),
    ).rejects.toBeInstanceOf(PathError);
    await expect(
      s.stage({ namespace: "read", function: "read_data", params: { path: "../x" } }),
    ).rejects.toBeInstanceOf(PathError);
    const ok = await s.stage({ namespace: "read", function: "read_data", params: { path: demo } });
    await expect(s.updatePending(ok, { path: "/tmp" })).rejects.toBeInstanceOf(PathError);
    await expect(s.save({ path: "/tmp/out.sdata.zarr.zip" })).rejects.toBeInstanceOf(PathError);
    await expect(s.save({ folder: "../up" })).rejects.toBeInstanceOf(PathError);
    await expect(s.save({ prefix: "../x" })).rejects.toMatchObject({ status: 400 });
    await expect(s.save({ path: "a.zip", prefix: "b" })).rejects.toMatchObject({ status: 400 });
    await expect(s.save({ figures: ["nope"] })).rejects.toThrow(/not drawn/);
    await service.deleteSession(s.id);
  });
});

describe("checkpoint round trip", () => {
  it("saves as a job and restores history, plots (with figures) and displays", async () => {
    const s = await openDemo(service, demo, "roundtrip");
    await (await s.submit(rename("cell_area", "area"))).done;
    const p = await s.submit({
      namespace: "pl",
      function: "test_scatter",
      params: { color: "cell_type", max_points: 50 },
    });
    await p.done;
    await s.stage(rename("nucleus_area", "nucleus"));
    const display = s.addDisplay({
      type: "spatial_canvas",
      encoding: { coords: "obsm:spatial", color_by: "obs:cell_type" },
      viewport: { target: [10, 20], zoom: -1 },
    });
    const svg = await s.figure(p.job_id, "svg");
    const rec = record(service, s.id);
    const save = await s.save({ folder: "saves", prefix: "rt", name: "renamed" });
    const out = await save.done;
    expect(out.status).toBe("completed");
    const path = (out.result as { path: string }).path;
    expect(path).toMatch(new RegExp(`^${dataDir}/saves/rt-[0-9a-f]+\\.sdata\\.zarr\\.zip$`));
    expect(s.saved).toBe(true);
    expect(s.checkpointPath).toBe(path);
    expect(s.name).toBe("renamed");
    const names = rec.events.map((e) => e.event).filter((n) => n !== "job.log");
    expect(names).toEqual(["job.queued", "job.started", "job.completed", "session.updated"]);
    expect(rec.events.find((e) => e.event === "job.completed")!.data).toMatchObject({ kind: "save", path });
    rec.stop();

    const back = await service.createSession({ source: { kind: "load", path } });
    await back.ready;
    expect(back.status).toBe("ready");
    expect(back.name).toBe("renamed");
    expect(back.saved).toBe(true);
    expect(back.appState.compute_history).toEqual(s.appState.compute_history);
    expect(back.appState.plots).toEqual(s.appState.plots);
    expect(back.appState.displays).toEqual([display]);
    expect(back.data.tables.table!.obs.columns.area).toBeDefined();
    expect(await back.figure(p.job_id, "svg")).toEqual(svg);
    expect(back.state().figures[p.job_id]).toEqual({ svg: svg!.length });
    // The pending step came back pending and can run.
    const pending = back.appState.compute_history.find((e) => e.status === "pending")!;
    await (await back.runPending(pending.id)).done;
    expect(back.data.tables.table!.obs.columns.nucleus).toBeDefined();
    expect(back.exportRecipe().steps.map((x) => x.params)).toEqual([
      { old_name: "cell_area", new_name: "area" },
      { old_name: "nucleus_area", new_name: "nucleus" },
    ]);
    await service.deleteSession(s.id);
    await service.deleteSession(back.id);
  });
});

describe("recipes on a session", () => {
  it("preflights, stages and runs a recipe; a bad recipe queues nothing", async () => {
    const s = await openDemo(service, demo);
    const recipe = parseRecipe({
      schema_version: 1,
      meta: { name: "two", description: "" },
      params: [{ name: "to", schema: { type: "string" }, required: true }],
      steps: [
        {
          namespace: "custom",
          function: "rename_obs_column",
          params: { old_name: "cell_type", new_name: { $param: "to" } },
        },
        { namespace: "pl", function: "test_scatter", params: { color: { $param: "to" } } },
      ],
    });
    expect(s.preflight(recipe)).toEqual({ produced: [], unresolved: ["to"], unknown_functions: [] });
    expect(s.preflight(recipe, { to: "kind" }).produced).toEqual(["obs:kind"]);
    await expect(s.runRecipe(recipe)).rejects.toThrow("required param(s) without a value: to");
    await expect(s.runRecipe(recipe, { values: { to: "k", extra: 1 } })).rejects.toThrow(
      "no such param(s): extra",
    );
    const broken = {
      ...recipe,
      steps: [
        recipe.steps[0]!,
        { namespace: "custom", function: "rename_obs_column", params: { old_name: 3 } },
      ],
    };
    await expect(s.runRecipe(broken, { values: { to: "k" } })).rejects.toThrow(
      /step 2: custom\.rename_obs_column: .*params\.old_name: must be string/,
    );
    expect(s.appState.compute_history).toEqual([]);
    const staged = await s.runRecipe(recipe, { values: { to: "kind" }, mode: "stage" });
    expect(staged.staged).toHaveLength(2);
    expect(s.appState.compute_history.map((e) => e.status)).toEqual(["pending"]);
    expect(s.appState.plots.map((p) => p.status)).toEqual(["pending"]);
    const tickets = await s.runAllPending();
    const outs = await Promise.all(tickets.map((t) => t.done));
    expect(outs.map((o) => o.status)).toEqual(["completed", "completed"]);
    expect(s.appState.plots[0]!.references).toContain("tables:table:obs:kind");
  });
});

describe("watchdog and removal", () => {
  it("fails a job running past TESSERA_LONG_RUNNING_S, data untouched; deletion emits session.removed", async () => {
    const quick = await startService(dataDir, {
      config: {
        dataDir,
        longRunningS: 0.3,
        computePoolWorkers: 1,
        recipesDir: dataDir,
        nThreads: 1,
        workDir: dataDir,
      },
    });
    try {
      const s = await openDemo(quick, demo);
      const before = s.data;
      const out = await (await s.submit(sleep(5000))).done;
      expect(out.status).toBe("failed");
      expect(out.error).toMatch(/TESSERA_LONG_RUNNING_S/);
      expect(s.data).toBe(before);
      const rec = record(quick);
      await quick.deleteSession(s.id);
      expect(rec.events.map((e) => [e.event, e.data.reason])).toEqual([["session.removed", "closed"]]);
    } finally {
      await quick.close();
    }
  });
});

describe("reader sessions", () => {
  it("re-running a reader on an open session replaces the object and invalidates every plot", async () => {
    const s = await openDemo(service, demo);
    await (await s.submit({ namespace: "pl", function: "test_scatter", params: {} })).done;
    await (await s.submit(rename("cell_type", "gone"))).done;
    const rec = record(service, s.id);
    const out = await (await s.submit({ namespace: "read", function: "read_data", params: { path: demo } }))
      .done;
    expect(out.status).toBe("completed");
    expect(s.data.tables.table!.obs.columns.cell_type).toBeDefined();
    expect(s.data.tables.table!.obs.columns.gone).toBeUndefined();
    expect(s.appState.plots[0]!.status).toBe("invalidated");
    expect(rec.events.some((e) => e.event === "plot.invalidated")).toBe(true);
    expect(s.dataVersions["tables:table"]).toBe(1);
    expect(s.appState.compute_history.at(-1)!.structural_diff).toMatchObject({
      tables: ["table"],
      images: ["morphology"],
    });
    rec.stop();
  });

  it("joins a relative metadata file onto the reader's primary path", async () => {
    const folder = join(dataDir, "with-meta");
    await mkdir(folder, { recursive: true });
    await writeFile(join(folder, "meta.json"), JSON.stringify({ lab: "tessera" }));
    await cp(demo, join(folder, "data.sdata.zarr.zip"));
    const s = await service.createSession({
      source: {
        kind: "read",
        namespace: "io",
        function: "open_with_meta",
        params: { path: join(folder, "data.sdata.zarr.zip"), meta_file: "meta.json" },
      },
    });
    await s.ready;
    expect(s.summary().error).toBeNull();
    expect(s.data.attrs.lab).toBe("tessera");
    // The history keeps the params as given, not the resolved paths.
    expect(s.appState.compute_history[0]!.params.meta_file).toBe("meta.json");
  });
});
