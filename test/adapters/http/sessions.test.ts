import { mkdir, mkdtemp, readdir, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "./harness.js";

let t: TestServer;
let outside: string;
beforeAll(async () => {
  t = await startTestServer();
  // A folder outside the data dir with a dataset-looking file, and a symlink to it inside the data dir.
  outside = await mkdtemp(join(tmpdir(), "tessera-outside-"));
  await writeFile(join(outside, "secret.h5ad"), "not for you");
  await symlink(outside, join(t.dataDir, "escape"));
  await writeFile(join(t.dataDir, "notes.txt"), "not a dataset");
});
afterAll(async () => {
  await t?.close();
  await rm(outside, { recursive: true, force: true });
});

interface Summary {
  id: string;
  name: string;
  status: string;
  resident_mb: number;
  parent_id: string | null;
  created_at: string;
  saved: boolean;
  read_only: boolean;
  error: string | null;
}

const post = (json: unknown, init: RequestInit = {}) =>
  t.api("/api/sessions", { method: "POST", json, ...init });

/** Poll the session until it leaves `loading`; returns its state. */
async function settled(id: string): Promise<{ summary: Summary } & Record<string, unknown>> {
  for (let i = 0; i < 400; i++) {
    const r = await t.api(`/api/sessions/${id}`);
    expect(r.status).toBe(200);
    const s = (await r.json()) as { summary: Summary } & Record<string, unknown>;
    if (s.summary.status !== "loading") return s;
    await new Promise((res) => setTimeout(res, 25));
  }
  throw new Error(`session ${id} still loading`);
}

async function del(id: string, init: RequestInit & { json?: unknown; clientId?: string } = {}) {
  return t.api(`/api/sessions/${id}`, { method: "DELETE", ...init });
}

async function expect400(res: Response, pattern: RegExp): Promise<void> {
  const body = (await res.json()) as { detail: string };
  expect(res.status, body.detail).toBe(400);
  expect(body.detail).toMatch(pattern);
}

describe("POST /api/sessions", () => {
  it("loads a checkpoint: 201, Location, the summary in status loading, then ready with its state", async () => {
    const seen: { event: string; data: Record<string, unknown> }[] = [];
    const stop = t.server.service.bus.subscribe((e) => {
      seen.push(e as never);
    });
    const r = await post({ source: { kind: "load", path: t.demo }, name: "mine", load_id: "L1" });
    expect(r.status).toBe(201);
    const s = (await r.json()) as Summary;
    expect(r.headers.get("location")).toBe(`/api/sessions/${s.id}`);
    expect(s).toMatchObject({
      name: "mine",
      status: "loading",
      parent_id: null,
      read_only: false,
      error: null,
    });
    expect(Object.keys(s).sort()).toEqual(
      [
        "created_at",
        "error",
        "id",
        "name",
        "parent_id",
        "read_only",
        "resident_mb",
        "saved",
        "status",
      ].sort(),
    );
    const state = await settled(s.id);
    stop();
    expect(state.summary.status).toBe("ready");
    expect(state.summary.saved).toBe(true);
    // session.created at once; progress routed by the client's load_id, ending with done.
    expect(seen.find((e) => e.event === "session.created")?.data).toMatchObject({ session_id: s.id });
    const loading = seen.filter((e) => e.event === "session.loading").map((e) => e.data);
    expect(loading.length).toBeGreaterThan(0);
    expect(loading.every((d) => d.load_id === "L1")).toBe(true);
    expect(loading.at(-1)).toMatchObject({ done: true, pct: 100 });
    expect(Object.keys(state).sort()).toEqual(
      ["app_state", "data_versions", "fields", "figures", "queue", "summary"].sort(),
    );
    expect((state.fields as { var_names_count: number }).var_names_count).toBe(40);
    const list = (await (await t.api("/api/sessions")).json()) as { sessions: Summary[] };
    expect(list.sessions.map((x) => x.id)).toContain(s.id);
    expect((await del(s.id)).status).toBe(200);
  });

  it("takes a path relative to the data dir", async () => {
    const r = await post({ source: { kind: "load", path: basename(t.demo) } });
    expect(r.status).toBe(201);
    const s = (await r.json()) as Summary;
    expect((await settled(s.id)).summary.status).toBe("ready");
    expect((await del(s.id)).status).toBe(200);
  });

  it("reads with a reader (read.read_data and io.open_with_meta)", async () => {
    const r = await post({
      source: { kind: "read", namespace: "read", function: "read_data", params: { path: t.demo } },
    });
    expect(r.status).toBe(201);
    const a = (await r.json()) as Summary;
    await mkdir(join(t.dataDir, "withmeta"), { recursive: true });
    await writeFile(join(t.dataDir, "withmeta", "meta.json"), JSON.stringify({ lab: "x" }));
    const r2 = await post({
      source: {
        kind: "read",
        namespace: "io",
        function: "open_with_meta",
        params: { path: t.demo, meta_file: "withmeta/meta.json" },
      },
    });
    // meta_file is joined onto the primary path's folder: data dir / withmeta / meta.json.
    expect(r2.status).toBe(201);
    const b = (await r2.json()) as Summary;
    expect((await settled(a.id)).summary.status).toBe("ready");
    const sb = await settled(b.id);
    expect(sb.summary.status, sb.summary.error ?? "").toBe("ready");
    expect(t.server.service.session(b.id).data.attrs.lab).toBe("x");
    expect((await del(a.id)).status).toBe(200);
    expect((await del(b.id)).status).toBe(200);
  });

  it("refuses malformed bodies with 400 and a detail naming the problem", async () => {
    const load = { kind: "load", path: t.demo };
    await expect400(
      await t.api("/api/sessions", {
        method: "POST",
        body: "{not json",
        headers: { "content-type": "application/json" },
      }),
      /JSON/i,
    );
    await expect400(await post([load]), /body must be a JSON object/);
    await expect400(await post("load"), /body must be a JSON object/);
    await expect400(await post({}), /"source" is required/);
    await expect400(await post({ source: load, extra: 1 }), /unknown field "extra"/);
    await expect400(
      await post({ source: { ...load, recursive: true } }),
      /source: unknown field "recursive"/,
    );
    await expect400(await post({ source: "x.zarr" }), /source must be an object/);
    await expect400(await post({ source: { kind: "open", path: t.demo } }), /source.kind must be/);
    await expect400(await post({ source: { path: t.demo } }), /source.kind must be/);
    await expect400(await post({ source: { kind: "load" } }), /"path" is required/);
    await expect400(await post({ source: { kind: "load", path: 7 } }), /source.path must be a string/);
    await expect400(await post({ source: { kind: "load", path: " " } }), /source.path must not be blank/);
    await expect400(await post({ source: load, name: 5 }), /name must be a string/);
    await expect400(await post({ source: load, name: "" }), /name must not be blank/);
    await expect400(await post({ source: load, load_id: ["a"] }), /load_id must be a string/);
    const read = { kind: "read", namespace: "read", function: "read_data", params: { path: t.demo } };
    await expect400(await post({ source: { ...read, namespace: undefined } }), /"namespace" is required/);
    await expect400(await post({ source: { ...read, namespace: "gr" } }), /namespace must be "read" or "io"/);
    await expect400(await post({ source: { ...read, function: undefined } }), /"function" is required/);
    await expect400(
      await post({ source: { ...read, function: "nope" } }),
      /unknown reader function read.nope/,
    );
    await expect400(await post({ source: { ...read, params: [t.demo] } }), /source.params must be an object/);
    await expect400(await post({ source: { ...read, params: {} } }), /path/);
    await expect400(
      await post({ source: { ...read, params: { path: t.demo, depth: 2 } } }),
      /depth|additional/,
    );
    expect((await t.api("/api/sessions")).status).toBe(200);
    // Nothing was created by any of these.
    expect(t.server.service.list()).toEqual([]);
  });

  it("refuses a load path that does not exist (400), so a typo costs no session", async () => {
    await expect400(await post({ source: { kind: "load", path: "nope.zarr" } }), /no such file or directory/);
    expect(t.server.service.list()).toEqual([]);
  });

  it("refuses every path outside the data dir with 400 (.., absolute, symlink, encoded, reader params)", async () => {
    const escapes: unknown[] = [
      { kind: "load", path: "../../etc/passwd" },
      { kind: "load", path: `${t.dataDir}/../${basename(t.dataDir)}/../etc` },
      { kind: "load", path: "/etc/passwd" },
      { kind: "load", path: join(outside, "secret.h5ad") },
      { kind: "load", path: "escape/secret.h5ad" },
      { kind: "load", path: join(t.dataDir, "escape", "secret.h5ad") },
      { kind: "read", namespace: "read", function: "read_data", params: { path: "/etc" } },
      { kind: "read", namespace: "read", function: "read_data", params: { path: "escape/secret.h5ad" } },
      { kind: "read", namespace: "read", function: "read_data", params: { path: "../x" } },
      { kind: "read", namespace: "io", function: "open_with_meta", params: { path: "/" } },
      // A relative file joined onto the primary path must stay inside too.
      {
        kind: "read",
        namespace: "io",
        function: "open_with_meta",
        params: { path: t.demo, meta_file: "../../../../../../etc/passwd" },
      },
      {
        kind: "read",
        namespace: "io",
        function: "open_with_meta",
        params: { path: t.demo, meta_file: join(outside, "secret.h5ad") },
      },
    ];
    for (const source of escapes) {
      const r = await post({ source });
      const body = (await r.json()) as { detail: string };
      expect(r.status, `${JSON.stringify(source)}: ${body.detail}`).toBe(400);
      expect(body.detail).toMatch(/outside the data dir/);
    }
    // A path param given as an object is refused too (its strings are paths; here also the wrong type).
    const obj = await post({
      source: { kind: "read", namespace: "read", function: "read_data", params: { path: { p: "/etc" } } },
    });
    expect(obj.status).toBe(400);
    // An encoded separator in a JSON body is not a separator: a file of that literal name, absent.
    await expect400(
      await post({ source: { kind: "load", path: "..%2F..%2Fetc%2Fpasswd" } }),
      /no such file or directory/,
    );
    expect(t.server.service.list()).toEqual([]);
  });

  it("refuses a session past TESSERA_MAX_SESSIONS with 503", async () => {
    const s = await startTestServer({ config: { maxSessions: 1 } });
    try {
      const a = await s.api("/api/sessions", {
        method: "POST",
        json: { source: { kind: "load", path: s.demo } },
      });
      expect(a.status).toBe(201);
      const b = await s.api("/api/sessions", {
        method: "POST",
        json: { source: { kind: "load", path: s.demo } },
      });
      expect(b.status).toBe(503);
      expect(((await b.json()) as { detail: string }).detail).toMatch(/at most 1 sessions/);
      // Closing one frees the slot.
      const id = ((await a.json()) as Summary).id;
      expect((await s.api(`/api/sessions/${id}`, { method: "DELETE" })).status).toBe(200);
      const c = await s.api("/api/sessions", {
        method: "POST",
        json: { source: { kind: "load", path: s.demo } },
      });
      expect(c.status).toBe(201);
    } finally {
      await s.close();
    }
  });

  it("a dataset that fails to load gives an errored session with its error", async () => {
    const r = await post({ source: { kind: "load", path: "notes.txt" } });
    expect(r.status).toBe(201);
    const s = (await r.json()) as Summary;
    const state = await settled(s.id);
    expect(state.summary.status).toBe("errored");
    expect(state.summary.error).toBeTruthy();
    // Asked to save, an errored session has nothing to save: 409, and it stays open.
    const d = await del(s.id, { json: { save: true } });
    expect(d.status).toBe(409);
    expect(((await d.json()) as { detail: string }).detail).toMatch(/nothing to save/);
    expect(t.server.service.list().map((x) => x.id)).toContain(s.id);
    expect((await del(s.id)).status).toBe(200);
  });
});

describe("GET /api/sessions", () => {
  it("lists every open session's summary", async () => {
    const before = (await (await t.api("/api/sessions")).json()) as { sessions: Summary[] };
    const a = await t.openDemo("a");
    const b = await t.openDemo("b");
    const r = await t.api("/api/sessions");
    expect(r.status).toBe(200);
    const { sessions } = (await r.json()) as { sessions: Summary[] };
    expect(sessions.length).toBe(before.sessions.length + 2);
    expect(sessions.find((x) => x.id === a)).toMatchObject({ name: "a", status: "ready" });
    expect(sessions.find((x) => x.id === b)).toMatchObject({ name: "b", status: "ready" });
    await del(a);
    await del(b);
  });
});

describe("GET /api/sessions/{id}", () => {
  it("answers 404 for an unknown session, with a detail", async () => {
    const r = await t.api("/api/sessions/not-a-session");
    expect(r.status).toBe(404);
    expect(((await r.json()) as { detail: string }).detail).toMatch(/no session "not-a-session"/);
    expect((await t.api("/api/sessions/%2E%2E%2Fetc")).status).toBe(404);
  });
});

describe("DELETE /api/sessions/{id}", () => {
  it("closes the session, answers {ok:true} and emits session.removed with reason closed", async () => {
    const id = await t.openDemo();
    const seen: { event: string; data: Record<string, unknown> }[] = [];
    const stop = t.server.service.bus.subscribe((e) => {
      seen.push(e as never);
    });
    const r = await del(id);
    stop();
    expect(r.status).toBe(200);
    expect(await r.json()).toEqual({ ok: true });
    expect(seen.filter((e) => e.event === "session.removed").map((e) => e.data)).toEqual([
      expect.objectContaining({ session_id: id, reason: "closed" }),
    ]);
    expect((await t.api(`/api/sessions/${id}`)).status).toBe(404);
    expect((await del(id)).status).toBe(404);
  });

  it("saves first with {save:true}: a new checkpoint appears in the data dir", async () => {
    const id = await t.openDemo("tosave");
    const before = new Set(await readdir(t.dataDir));
    const r = await del(id, { json: { save: true } });
    expect(r.status).toBe(200);
    const added = (await readdir(t.dataDir)).filter((f) => !before.has(f));
    expect(added.some((f) => /^tosave-[0-9a-f]+\.sdata\.zarr\.zip$/.test(f))).toBe(true);
    expect(t.server.service.list().map((x) => x.id)).not.toContain(id);
  });

  it("accepts {save:false} and an empty object; refuses bad bodies with 400 and keeps the session", async () => {
    const id = await t.openDemo();
    for (const json of [{ save: "yes" }, { save: 1 }, { save: null }, { keep: true }, [true], "save"]) {
      const r = await del(id, { json });
      expect(r.status, JSON.stringify(json)).toBe(400);
    }
    expect(t.server.service.list().map((x) => x.id)).toContain(id);
    expect((await del(id, { json: {} })).status).toBe(200);
    const id2 = await t.openDemo();
    expect((await del(id2, { json: { save: false } })).status).toBe(200);
  });

  it("is lock-gated: 423 while another viewer holds the lock, 200 for the holder", async () => {
    const id = await t.openDemo();
    t.server.service.presence.takeLock(id, "other-client", "other name");
    for (const clientId of [undefined, "me-client"]) {
      const r = await del(id, clientId ? { clientId } : {});
      expect(r.status).toBe(423);
      expect(await r.json()).toEqual({ detail: "session is locked by other name" });
    }
    expect(t.server.service.list().map((x) => x.id)).toContain(id);
    const ok = await del(id, { clientId: "other-client" });
    expect(ok.status).toBe(200);
  });

  it("closes a session that is still loading (no save asked)", async () => {
    const r = await post({ source: { kind: "load", path: t.demo } });
    const { id } = (await r.json()) as Summary;
    const d = await del(id);
    expect(d.status).toBe(200);
    expect(t.server.service.list().map((x) => x.id)).not.toContain(id);
    expect((await t.api(`/api/sessions/${id}`)).status).toBe(404);
  });

  it("answers odd ids with 404, never 500", async () => {
    for (const id of ["%00", "..", "a%2Fb", "%E2%9C%93", "x".repeat(900)]) {
      const r = await t.api(`/api/sessions/${id}`, { method: "DELETE" });
      expect(r.status, id).toBe(404);
    }
    expect((await t.api("/api/sessions/%ZZ")).status).toBe(400);
  });

  it("a failed save-before-close answers 500 and leaves the session open", async () => {
    // A working dir that cannot be created makes every save fail.
    const s = await startTestServer({ config: { workDir: join("/dev/null", "work") } });
    try {
      const id = await s.openDemo();
      const r = await s.api(`/api/sessions/${id}`, { method: "DELETE", json: { save: true } });
      expect(r.status).toBe(500);
      expect(((await r.json()) as { detail: string }).detail).toMatch(
        /save before closing failed.*still open/,
      );
      expect(s.server.service.list().map((x) => x.id)).toContain(id);
      expect((await s.api(`/api/sessions/${id}`)).status).toBe(200);
      expect((await s.api(`/api/sessions/${id}`, { method: "DELETE" })).status).toBe(200);
    } finally {
      await s.close();
    }
  });
});
