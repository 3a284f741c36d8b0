import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "./harness.js";

let t: TestServer;
let sid: string;
beforeAll(async () => {
  t = await startTestServer();
  sid = await t.openDemo();
});
afterAll(async () => {
  await t?.close();
});

const post = (path: string, json?: unknown, who: { clientId?: string; clientName?: string } = {}) =>
  t.api(path, { method: "POST", ...(json !== undefined ? { json } : {}), ...who });
const job = (ns: string, fn: string, params: object = {}) => ({ namespace: ns, function: fn, params });
const S = () => `/api/sessions/${sid}`;
/** The session's state through the SDK (the sessions routes are another group's). */
const state = (id = sid) => JSON.parse(JSON.stringify(t.server.service.session(id).state()));
const entry = async (id: string) => {
  const st = state();
  return [...st.app_state.compute_history, ...st.app_state.plots].find((e: { id: string }) => e.id === id);
};

describe("POST /jobs", () => {
  it("queues a compute: {job_id, status:'queued'}, then GET /jobs/{id} follows it to completed", async () => {
    const r = await post(`${S()}/jobs`, job("custom", "noop"));
    expect(r.status).toBe(200);
    const body = await r.json();
    expect(body).toEqual({ job_id: expect.any(String), status: "queued" });
    const end = await t.waitJob(sid, body.job_id);
    expect(end).toEqual({
      job_id: body.job_id,
      status: "completed",
      kind: "compute",
      error: null,
      result: { structural_diff: {} },
    });
    expect((await entry(body.job_id)).status).toBe("completed");
  });

  it("accepts a descriptor without params (they default to {})", async () => {
    const r = await post(`${S()}/jobs`, { namespace: "custom", function: "noop" });
    expect(r.status).toBe(200);
    await t.waitJob(sid, (await r.json()).job_id);
  });

  it("runs an extract at once and answers with its value; it never enters history", async () => {
    const r = await post(`${S()}/jobs`, job("custom", "with_callback", { scale: 2 }));
    expect(r.status).toBe(200);
    const body = await r.json();
    expect(body).toEqual({
      job_id: expect.any(String),
      status: "completed",
      result: { value: 600 },
      error: null,
    });
    expect(await entry(body.job_id)).toBeUndefined();
    expect((await (await t.api(`${S()}/jobs/${body.job_id}`)).json()).status).toBe("completed");
  });

  it("a failing job is accepted (200), then fails with its error on the job, the log and the entry", async () => {
    const r = await post(`${S()}/jobs`, job("custom", "fail", { message: "boom on purpose" }));
    expect(r.status).toBe(200);
    const { job_id } = await r.json();
    const end = await t.waitJob(sid, job_id);
    expect(end).toMatchObject({ status: "failed", error: "boom on purpose" });
    const log = await (await t.api(`${S()}/jobs/${job_id}/log`)).json();
    expect(log.status).toBe("failed");
    expect(log.log).toContain("about to fail");
    expect(log.log).toContain("boom on purpose");
    expect((await entry(job_id)).status).toBe("failed");
  });

  it("refuses malformed descriptors with 400 naming the problem", async () => {
    const cases: [unknown, RegExp][] = [
      [{ namespace: "custom" }, /function/],
      [{ function: "noop", params: {} }, /namespace/],
      [{ namespace: "custom", function: "noop", params: {}, extra: 1 }, /unknown field "extra"/],
      [{ namespace: "custom", function: "noop", params: [1] }, /params must be object/],
      [{ namespace: "custom", function: "noop", params: "x" }, /params must be object/],
      [{ namespace: "", function: "noop" }, /namespace/],
      [[], /body must be object/],
      [{ namespace: "custom", function: "nonesuch", params: {} }, /unknown function custom\.nonesuch/],
      [{ namespace: "custom", function: "sleep", params: { ms: -5 } }, /params\.ms: must be >= 0/],
      [{ namespace: "custom", function: "sleep", params: { ms: "long" } }, /params\.ms: must be integer/],
      [{ namespace: "custom", function: "sleep", params: { nap: 1 } }, /params\.nap: unknown parameter/],
    ];
    for (const [body, detail] of cases) {
      const r = await post(`${S()}/jobs`, body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect((await r.json()).detail, JSON.stringify(body)).toMatch(detail);
    }
    const bad = await t.api(`${S()}/jobs`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{not json",
    });
    expect(bad.status).toBe(400);
    expect((await bad.json()).detail).toBeTruthy();
    const history = state().app_state.compute_history;
    expect(history.some((e: { function: string }) => e.function === "nonesuch")).toBe(false);
  });

  it("answers 404 for an unknown session, job or log", async () => {
    expect((await post("/api/sessions/nope/jobs", job("custom", "noop"))).status).toBe(404);
    expect((await t.api(`${S()}/jobs/nope`)).status).toBe(404);
    expect((await t.api(`${S()}/jobs/nope/log`)).status).toBe(404);
    expect((await t.api(`${S()}/jobs/nope`, { method: "DELETE" })).status).toBe(404);
  });
});

describe("cancelling and deleting", () => {
  it("cancels a queued job (200), refuses a running or finished one (409), keeps running entries (409)", async () => {
    const running = (await (await post(`${S()}/jobs`, job("custom", "sleep", { ms: 1500 }))).json()).job_id;
    const queued = (await (await post(`${S()}/jobs`, job("custom", "sleep", { ms: 10 }))).json()).job_id;
    for (let i = 0; i < 100; i++) {
      if ((await (await t.api(`${S()}/jobs/${running}`)).json()).status === "running") break;
      await new Promise((r) => setTimeout(r, 10));
    }
    const q = state().queue;
    expect(q.map((x: { job_id: string; status: string }) => [x.job_id, x.status])).toEqual([
      [running, "running"],
      [queued, "queued"],
    ]);
    const del = await t.api(`${S()}/jobs/${queued}`, { method: "DELETE" });
    expect(del.status).toBe(200);
    expect(await del.json()).toEqual({ ok: true });
    expect((await (await t.api(`${S()}/jobs/${queued}`)).json()).status).toBe("cancelled");
    expect((await entry(queued)).status).toBe("cancelled");
    const again = await t.api(`${S()}/jobs/${queued}`, { method: "DELETE" });
    expect(again.status).toBe(409);
    expect((await again.json()).detail).toMatch(/is cancelled; only queued jobs can be cancelled/);
    // A cancelled entry changed nothing: it may be deleted from history.
    expect((await t.api(`${S()}/history/${queued}`, { method: "DELETE" })).status).toBe(200);
    expect(await entry(queued)).toBeUndefined();
    const run = await t.api(`${S()}/jobs/${running}`, { method: "DELETE" });
    expect(run.status).toBe(409);
    expect((await run.json()).detail).toMatch(/is running/);
    const hist = await t.api(`${S()}/history/${running}`, { method: "DELETE" });
    expect(hist.status).toBe(409);
    expect((await hist.json()).detail).toMatch(
      /running; only pending, failed or cancelled steps can be deleted/,
    );
    expect((await t.waitJob(sid, running)).status).toBe("completed");
    const done = await t.api(`${S()}/history/${running}`, { method: "DELETE" });
    expect(done.status).toBe(409);
    expect((await t.api(`${S()}/history/nope`, { method: "DELETE" })).status).toBe(404);
  });
});

describe("staging and pending steps", () => {
  it("stages, edits, runs one, runs all, deletes a pending one", async () => {
    const stage = async (ms: number) => {
      const r = await post(`${S()}/jobs/stage`, job("custom", "sleep", { ms }));
      expect(r.status).toBe(200);
      const b = await r.json();
      expect(b).toEqual({ step_id: expect.any(String), status: "pending" });
      return b.step_id as string;
    };
    const a = await stage(1);
    const b = await stage(2);
    const c = await stage(3);
    const d = await stage(4);
    expect((await entry(a)).status).toBe("pending");

    const put = await t.api(`${S()}/pending/${a}`, { method: "PUT", json: { params: { ms: 5 } } });
    expect(put.status).toBe(200);
    expect(await put.json()).toEqual({ ok: true });
    expect((await entry(a)).params.ms).toBe(5);
    for (const [body, detail] of [
      [{ params: { ms: -1 } }, /params\.ms: must be >= 0/],
      [{ params: { ms: 1 }, extra: true }, /unknown field "extra"/],
      [{}, /params/],
      [{ params: [] }, /params must be object/],
    ] as const) {
      const r = await t.api(`${S()}/pending/${a}`, { method: "PUT", json: body });
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect((await r.json()).detail).toMatch(detail);
    }
    expect((await t.api(`${S()}/pending/nope`, { method: "PUT", json: { params: {} } })).status).toBe(404);

    const run = await post(`${S()}/pending/${a}/run`);
    expect(run.status).toBe(200);
    expect(await run.json()).toEqual({ ok: true, job_id: a });
    await t.waitJob(sid, a);
    expect((await entry(a)).status).toBe("completed");
    const twice = await post(`${S()}/pending/${a}/run`);
    expect(twice.status).toBe(409);
    expect((await t.api(`${S()}/pending/${a}`, { method: "PUT", json: { params: {} } })).status).toBe(409);
    expect((await post(`${S()}/pending/nope/run`)).status).toBe(404);

    const del = await t.api(`${S()}/history/${d}`, { method: "DELETE" });
    expect(del.status).toBe(200);
    expect(await del.json()).toEqual({ ok: true });
    expect(await entry(d)).toBeUndefined();

    const all = await post(`${S()}/pending/run-all`);
    expect(all.status).toBe(200);
    expect(await all.json()).toEqual({ queued: 2 });
    await t.waitJob(sid, b);
    await t.waitJob(sid, c);
    expect((await entry(c)).status).toBe("completed");
    expect(await (await post(`${S()}/pending/run-all`)).json()).toEqual({ queued: 0 });
  });

  it("refuses to stage an extract or an unknown function (400)", async () => {
    const ex = await post(`${S()}/jobs/stage`, job("custom", "with_callback"));
    expect(ex.status).toBe(400);
    expect((await ex.json()).detail).toMatch(/extract/);
    expect((await post(`${S()}/jobs/stage`, job("custom", "nonesuch"))).status).toBe(400);
    expect((await post(`${S()}/jobs/stage`, { namespace: "custom" })).status).toBe(400);
  });
});

describe("plots", () => {
  it("draws a plot, serves its figure by format, redraws it", async () => {
    const r = await post(`${S()}/jobs`, job("pl", "test_scatter", { color: "cell_type" }));
    const { job_id } = await r.json();
    expect((await t.waitJob(sid, job_id)).status).toBe("completed");
    const svg = await t.api(`${S()}/plots/${job_id}/figure?fmt=svg`);
    expect(svg.status).toBe(200);
    expect(svg.headers.get("content-type")).toMatch(/^image\/svg\+xml/);
    const text = await svg.text();
    expect(text.startsWith("<svg")).toBe(true);
    expect(state().figures[job_id].svg).toBe(Buffer.byteLength(text));
    expect((await t.api(`${S()}/plots/${job_id}/figure?fmt=svg&t=12345`)).status).toBe(200);
    const dflt = await t.api(`${S()}/plots/${job_id}/figure`);
    expect(dflt.status).toBe(200);
    expect(dflt.headers.get("content-type")).toMatch(/^image\/svg\+xml/);
    // This plot draws SVG only.
    for (const fmt of ["png", "pdf"]) {
      const miss = await t.api(`${S()}/plots/${job_id}/figure?fmt=${fmt}`);
      expect(miss.status, fmt).toBe(404);
      expect((await miss.json()).detail).toContain(`no ${fmt} figure`);
    }
    const bad = await t.api(`${S()}/plots/${job_id}/figure?fmt=bmp`);
    expect(bad.status).toBe(400);
    expect((await bad.json()).detail).toMatch(/fmt/);
    expect((await t.api(`${S()}/plots/nope/figure?fmt=svg`)).status).toBe(404);

    // A sleep ahead in the queue keeps the redraw queued while we try a second one.
    const blocker = (await (await post(`${S()}/jobs`, job("custom", "sleep", { ms: 400 }))).json()).job_id;
    const redraw = await post(`${S()}/plots/${job_id}/redraw`);
    expect(redraw.status).toBe(200);
    const rb = await redraw.json();
    expect(rb).toEqual({ ok: true, job_id: expect.any(String) });
    // While the redraw is queued or running, another redraw is refused.
    const busy = await post(`${S()}/plots/${job_id}/redraw`);
    expect(busy.status).toBe(409);
    expect((await busy.json()).detail).toMatch(/is queued; it cannot be redrawn now/);
    await t.waitJob(sid, blocker);
    expect((await t.waitJob(sid, rb.job_id)).status).toBe("completed");
    expect((await t.api(`${S()}/plots/${job_id}/figure?fmt=svg`)).status).toBe(200);
    expect((await post(`${S()}/plots/nope/redraw`)).status).toBe(404);
  });

  it("an invalidated plot has no figure (404) until redrawn", async () => {
    const { job_id } = await (
      await post(`${S()}/jobs`, job("pl", "test_scatter", { color: "cell_type" }))
    ).json();
    await t.waitJob(sid, job_id);
    const ren = await (
      await post(
        `${S()}/jobs`,
        job("custom", "rename_obs_column", { old_name: "cell_type", new_name: "cell_type" }),
      )
    ).json();
    const out = await t.waitJob(sid, ren.job_id);
    if (out.status !== "completed") {
      // A no-op rename may be refused; touch the column another way.
      const c = await (
        await post(
          `${S()}/jobs`,
          job("custom", "rename_obs_column", { old_name: "cell_type", new_name: "ct2" }),
        )
      ).json();
      expect((await t.waitJob(sid, c.job_id)).status).toBe("completed");
      const back = await (
        await post(
          `${S()}/jobs`,
          job("custom", "rename_obs_column", { old_name: "ct2", new_name: "cell_type" }),
        )
      ).json();
      expect((await t.waitJob(sid, back.job_id)).status).toBe("completed");
    }
    const plot = state().app_state.plots.find((p: { id: string }) => p.id === job_id);
    expect(plot.status).toBe("invalidated");
    expect((await t.api(`${S()}/plots/${job_id}/figure?fmt=svg`)).status).toBe(404);
    const rd = await (await post(`${S()}/plots/${job_id}/redraw`)).json();
    expect((await t.waitJob(sid, rd.job_id)).status).toBe("completed");
    expect((await t.api(`${S()}/plots/${job_id}/figure?fmt=svg`)).status).toBe(200);
  });
});

describe("the edit lock on job routes", () => {
  it("every mutating route answers 423 to others while a viewer holds the lock; reads stay open", async () => {
    const id = await t.openDemo("locked");
    const base = `/api/sessions/${id}`;
    const staged = (await (await post(`${base}/jobs/stage`, job("custom", "noop"))).json()).step_id;
    const queued = (await (await post(`${base}/jobs`, job("custom", "noop"))).json()).job_id;
    await t.waitJob(id, queued);
    const alice = { clientId: "alice-id", clientName: "Alice" };
    const take = await t.api(`${base}/lock`, { method: "POST", ...alice });
    expect(take.status).toBe(200);
    const routes: [string, string, unknown?][] = [
      ["POST", `${base}/jobs`, job("custom", "noop")],
      ["POST", `${base}/jobs/stage`, job("custom", "noop")],
      ["DELETE", `${base}/jobs/${queued}`],
      ["POST", `${base}/pending/run-all`],
      ["POST", `${base}/pending/${staged}/run`],
      ["PUT", `${base}/pending/${staged}`, { params: {} }],
      ["DELETE", `${base}/history/${staged}`],
      ["POST", `${base}/plots/whatever/redraw`],
    ];
    for (const who of [{ clientId: "bob-id-client", clientName: "Bob" }, {}]) {
      for (const [method, path, json] of routes) {
        const r = await t.api(path, { method, ...(json !== undefined ? { json } : {}), ...who });
        expect(r.status, `${method} ${path} as ${JSON.stringify(who)}`).toBe(423);
        expect(await r.json()).toEqual({ detail: "session is locked by Alice" });
      }
    }
    for (const path of [`${base}/jobs/${queued}`, `${base}/jobs/${queued}/log`])
      expect((await t.api(path, { clientId: "bob-id-client" })).status).toBe(200);
    // The holder itself may mutate.
    const mine = await post(`${base}/jobs`, job("custom", "noop"), alice);
    expect(mine.status).toBe(200);
    await t.waitJob(id, (await mine.json()).job_id);
    expect((await t.api(`${base}/lock`, { method: "DELETE", ...alice })).status).toBe(200);
  });
});

describe("odd paths and limits", () => {
  it("every route answers 404 for an unknown session, and odd ids are clear 404s, never 500s", async () => {
    const routes: [string, string, unknown?][] = [
      ["POST", "jobs", job("custom", "noop")],
      ["POST", "jobs/stage", job("custom", "noop")],
      ["GET", "jobs/x"],
      ["GET", "jobs/x/log"],
      ["DELETE", "jobs/x"],
      ["POST", "pending/run-all"],
      ["POST", "pending/x/run"],
      ["PUT", "pending/x", { params: {} }],
      ["DELETE", "history/x"],
      ["POST", "plots/x/redraw"],
      ["GET", "plots/x/figure?fmt=svg"],
    ];
    for (const [method, rest, json] of routes) {
      const r = await t.api(`/api/sessions/no-such-session/${rest}`, {
        method,
        ...(json !== undefined ? { json } : {}),
      });
      expect(r.status, `${method} ${rest}`).toBe(404);
      expect((await r.json()).detail).toMatch(/no session/);
    }
    for (const odd of ["%2F..%2Fetc", "a%00b", "x".repeat(900), "%E2%9C%93", "..", "job%20id"]) {
      for (const path of [`${S()}/jobs/${odd}`, `${S()}/jobs/${odd}/log`, `${S()}/plots/${odd}/figure`]) {
        const r = await t.api(path);
        expect(r.status, path.slice(0, 120)).toBe(404);
      }
      const d = await t.api(`${S()}/history/${odd}`, { method: "DELETE" });
      expect(d.status).toBe(404);
    }
  });

  it("new work is refused with 503 past the memory admission threshold; cancelling is not", async () => {
    const config = t.server.service.config as { containerMemMb: number; admissionPct: number };
    const saved = { mem: config.containerMemMb, pct: config.admissionPct };
    const staged = (await (await post(`${S()}/jobs/stage`, job("custom", "noop"))).json()).step_id;
    try {
      config.containerMemMb = 1;
      config.admissionPct = 0.01;
      for (const [path, body] of [
        [`${S()}/jobs`, job("custom", "noop")],
        [`${S()}/jobs/stage`, job("custom", "noop")],
        [`${S()}/pending/run-all`, undefined],
      ] as const) {
        const r = await post(path, body);
        expect(r.status, path).toBe(503);
        expect((await r.json()).detail).toMatch(/refused: memory is at/);
      }
      expect((await t.api(`${S()}/history/${staged}`, { method: "DELETE" })).status).toBe(200);
      // Saving is never refused: it is how a user keeps work on a full server.
      const save = await post(`${S()}/save`, {});
      expect(save.status).toBe(200);
      const saveJob = await t.api(`${S()}/jobs/${(await save.json()).job_id}`);
      expect(saveJob.status).toBe(200);
    } finally {
      config.containerMemMb = saved.mem;
      config.admissionPct = saved.pct;
    }
  });
});
