import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "./harness.js";

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(async () => {
  await t?.close();
});

const beat = (srv: TestServer, client_id: string, name: string, session_id: string | null) =>
  srv.api("/api/presence", { method: "POST", json: { client_id, name, session_id } });
/** presence.updated events after `after`, through the polling route. */
const presenceEvents = async (srv: TestServer, after: number) =>
  (
    (await (await srv.api(`/api/events/poll?after=${after}`)).json()).events as {
      event: string;
      data: unknown;
    }[]
  )
    .filter((e) => e.event === "presence.updated")
    .map((e) => e.data);
const lastId = async (srv: TestServer) =>
  (await (await srv.api("/api/events/poll")).json()).last_id as number;
const noop = { namespace: "custom", function: "noop", params: {} };

describe("presence and the edit lock", () => {
  it("attaching takes the lock; others get 423/409/403; leaving frees it for the next viewer", async () => {
    const sid = await t.openDemo();
    const A = { clientId: "client-a", clientName: "Ada Lovelace" };
    const B = { clientId: "client-b", clientName: "Bea Bishop" };
    let cursor = await lastId(t);

    const ra = await beat(t, A.clientId, "Ada Lovelace", sid);
    expect(ra.status).toBe(200);
    expect(await ra.json()).toEqual({
      sessions: {
        [sid]: { lock: { client_id: "client-a", name: "Ada Lovelace" }, viewers: ["Ada Lovelace"] },
      },
    });
    expect(await presenceEvents(t, cursor)).toHaveLength(1);

    // The same heartbeat again changes nothing, so no event.
    cursor = await lastId(t);
    await beat(t, A.clientId, "Ada Lovelace", sid);
    expect(await presenceEvents(t, cursor)).toEqual([]);

    const rb = await beat(t, B.clientId, "Bea Bishop", sid);
    const viewB = await rb.json();
    expect(viewB.sessions[sid].lock).toEqual({ client_id: "client-a", name: "Ada Lovelace" });
    expect(viewB.sessions[sid].viewers).toEqual(["Ada Lovelace", "Bea Bishop"]);
    expect(await presenceEvents(t, cursor)).toEqual([viewB]);

    const job = await t.api(`/api/sessions/${sid}/jobs`, { method: "POST", json: noop, ...B });
    expect(job.status).toBe(423);
    expect(await job.json()).toEqual({ detail: "session is locked by Ada Lovelace" });
    const take = await t.api(`/api/sessions/${sid}/lock`, { method: "POST", ...B });
    expect(take.status).toBe(409);
    expect((await take.json()).detail).toBe("session is locked by Ada Lovelace");
    const rel = await t.api(`/api/sessions/${sid}/lock`, { method: "DELETE", ...B });
    expect(rel.status).toBe(403);
    expect((await rel.json()).detail).toMatch(/does not hold/);
    // A may mutate while holding the lock.
    const mine = await t.api(`/api/sessions/${sid}/jobs`, { method: "POST", json: noop, ...A });
    expect(mine.status).toBe(200);
    await t.waitJob(sid, (await mine.json()).job_id);

    // A leaves: the lock is released; B (still attached) takes it explicitly.
    cursor = await lastId(t);
    const left = await (await beat(t, A.clientId, "Ada Lovelace", null)).json();
    expect(left.sessions[sid]).toEqual({ lock: null, viewers: ["Bea Bishop"] });
    expect(await presenceEvents(t, cursor)).toEqual([left]);
    const mine2 = await t.api(`/api/sessions/${sid}/lock`, { method: "POST", ...B });
    expect(mine2.status).toBe(200);
    expect(await mine2.json()).toEqual({ ok: true });
    // Taking it again is fine (idempotent); A is now the one refused.
    expect((await t.api(`/api/sessions/${sid}/lock`, { method: "POST", ...B })).status).toBe(200);
    const aJob = await t.api(`/api/sessions/${sid}/jobs`, { method: "POST", json: noop, ...A });
    expect(aJob.status).toBe(423);
    expect(await aJob.json()).toEqual({ detail: "session is locked by Bea Bishop" });
    // A caller without a client id may not write while someone holds the lock.
    expect((await t.api(`/api/sessions/${sid}/jobs`, { method: "POST", json: noop })).status).toBe(423);

    const drop = await t.api(`/api/sessions/${sid}/lock`, { method: "DELETE", ...B });
    expect(drop.status).toBe(200);
    expect(await drop.json()).toEqual({ ok: true });
    expect((await t.api(`/api/sessions/${sid}/lock`, { method: "DELETE", ...B })).status).toBe(403);
    // Nobody holds it: a caller without a client id writes freely.
    const free = await t.api(`/api/sessions/${sid}/jobs`, { method: "POST", json: noop });
    expect(free.status).toBe(200);
    await t.waitJob(sid, (await free.json()).job_id);
    await beat(t, B.clientId, "Bea Bishop", null);
  });

  it("a mutating request takes a free lock for its caller", async () => {
    const sid = await t.openDemo();
    const r = await t.api(`/api/sessions/${sid}/jobs`, {
      method: "POST",
      json: noop,
      clientId: "writer",
      clientName: "Wri Ter",
    });
    expect(r.status).toBe(200);
    await t.waitJob(sid, (await r.json()).job_id);
    expect(t.server.service.presence.lockOf(sid)).toEqual({ client_id: "writer", name: "Wri Ter" });
    const other = await t.api(`/api/sessions/${sid}/jobs`, { method: "POST", json: noop, clientId: "other" });
    expect(other.status).toBe(423);
    expect((await t.api(`/api/sessions/${sid}/lock`, { method: "DELETE", clientId: "writer" })).status).toBe(
      200,
    );
  });

  it("lock routes: 400 without a client id, 404 for an unknown session", async () => {
    const sid = await t.openDemo();
    const r = await t.api(`/api/sessions/${sid}/lock`, { method: "POST" });
    expect(r.status).toBe(400);
    expect((await r.json()).detail).toMatch(/X-Tessera-Client-Id/);
    expect((await t.api(`/api/sessions/${sid}/lock`, { method: "DELETE" })).status).toBe(403);
    for (const method of ["POST", "DELETE"]) {
      const u = await t.api("/api/sessions/nope/lock", { method, clientId: "x" });
      expect(u.status, method).toBe(404);
    }
  });

  it("a heartbeat naming a vanished session counts as none; renames show in the view", async () => {
    const v = await (await beat(t, "ghost", "Gho St", "no-such-session")).json();
    expect(
      Object.values(v.sessions).some((s) => (s as { viewers: string[] }).viewers.includes("Gho St")),
    ).toBe(false);
    const sid = await t.openDemo();
    await beat(t, "renamer", "Old Name", sid);
    const renamed = await (await beat(t, "renamer", "New Name", sid)).json();
    expect(renamed.sessions[sid]).toEqual({
      lock: { client_id: "renamer", name: "New Name" },
      viewers: ["New Name"],
    });
    await beat(t, "renamer", "New Name", null);
  });

  it("refuses malformed heartbeats with 400", async () => {
    const cases: [unknown, RegExp][] = [
      [{ name: "x", session_id: null }, /client_id/],
      [{ client_id: "", name: "x", session_id: null }, /client_id/],
      [{ client_id: "a", name: "x", session_id: null, extra: 1 }, /unknown field "extra"/],
      [{ client_id: "a", name: { first: "x" }, session_id: null }, /name/],
      [{ client_id: "a", name: "x", session_id: ["s"] }, /session_id/],
      [[], /body must be object/],
    ];
    for (const [json, detail] of cases) {
      const r = await t.api("/api/presence", { method: "POST", json });
      expect(r.status, JSON.stringify(json)).toBe(400);
      expect((await r.json()).detail).toMatch(detail);
    }
    const bad = await t.api("/api/presence", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{",
    });
    expect(bad.status).toBe(400);
  });

  it("a session removed while locked drops out of the view", async () => {
    const sid = await t.openDemo();
    await beat(t, "leaver", "Lea Ver", sid);
    expect(t.server.service.presence.lockOf(sid)?.client_id).toBe("leaver");
    await t.server.service.deleteSession(sid);
    const v = await (await beat(t, "leaver", "Lea Ver", sid)).json();
    expect(v.sessions[sid]).toBeUndefined();
  });
});

describe("presence timeout", () => {
  it("a silent viewer drops after TESSERA_PRESENCE_TIMEOUT_S and its lock is released (presence.updated)", async () => {
    const s = await startTestServer({ config: { presenceTimeoutS: 0.3 } });
    try {
      const sid = await s.openDemo();
      const cursor = await lastId(s);
      const v = await (await beat(s, "quiet", "Qui Et", sid)).json();
      expect(v.sessions[sid].lock.client_id).toBe("quiet");
      // A heartbeat within the timeout keeps it.
      await new Promise((r) => setTimeout(r, 200));
      await beat(s, "quiet", "Qui Et", sid);
      await new Promise((r) => setTimeout(r, 200));
      expect(s.server.service.presence.lockOf(sid)?.client_id).toBe("quiet");
      // Silence past the timeout: dropped by the sweeper, without any request.
      await new Promise((r) => setTimeout(r, 600));
      const events = await presenceEvents(s, cursor);
      expect(events.at(-1)).toEqual({ sessions: {} });
      expect(events).toHaveLength(2);
      const other = await s.api(`/api/sessions/${sid}/lock`, { method: "POST", clientId: "next" });
      expect(other.status).toBe(200);
    } finally {
      await s.close();
    }
  });
});
