import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { publicClientId as pub } from "../../../src/sdk/session/presence.js";
import { startTestServer, type TestServer } from "./harness.js";
import { openSse } from "./sse.js";

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
    const A = { clientId: "client-a-7f3e9b1c", clientName: "Ada Lovelace" };
    const B = { clientId: "client-b-2d8a4e6f", clientName: "Bea Bishop" };
    let cursor = await lastId(t);

    const ra = await beat(t, A.clientId, "Ada Lovelace", sid);
    expect(ra.status).toBe(200);
    expect(await ra.json()).toEqual({
      sessions: {
        [sid]: { lock: { client_id: pub(A.clientId), name: "Ada Lovelace" }, viewers: ["Ada Lovelace"] },
      },
    });
    expect(await presenceEvents(t, cursor)).toHaveLength(1);

    // The same heartbeat again changes nothing, so no event.
    cursor = await lastId(t);
    await beat(t, A.clientId, "Ada Lovelace", sid);
    expect(await presenceEvents(t, cursor)).toEqual([]);

    const rb = await beat(t, B.clientId, "Bea Bishop", sid);
    const viewB = await rb.json();
    expect(viewB.sessions[sid].lock).toEqual({ client_id: pub(A.clientId), name: "Ada Lovelace" });
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
      clientId: "writer-client",
      clientName: "Wri Ter",
    });
    expect(r.status).toBe(200);
    await t.waitJob(sid, (await r.json()).job_id);
    expect(t.server.service.presence.lockOf(sid)).toEqual({
      client_id: pub("writer-client"),
      name: "Wri Ter",
    });
    const other = await t.api(`/api/sessions/${sid}/jobs`, {
      method: "POST",
      json: noop,
      clientId: "other-client",
    });
    expect(other.status).toBe(423);
    expect(
      (await t.api(`/api/sessions/${sid}/lock`, { method: "DELETE", clientId: "writer-client" })).status,
    ).toBe(200);
  });

  it("lock routes: 400 without a client id, 404 for an unknown session", async () => {
    const sid = await t.openDemo();
    const r = await t.api(`/api/sessions/${sid}/lock`, { method: "POST" });
    expect(r.status).toBe(400);
    expect((await r.json()).detail).toMatch(/X-Tessera-Client-Id/);
    expect((await t.api(`/api/sessions/${sid}/lock`, { method: "DELETE" })).status).toBe(403);
    for (const method of ["POST", "DELETE"]) {
      const u = await t.api("/api/sessions/nope/lock", { method, clientId: "x-client" });
      expect(u.status, method).toBe(404);
    }
  });

  it("a heartbeat naming a vanished session counts as none; renames show in the view", async () => {
    const v = await (await beat(t, "ghost-client", "Gho St", "no-such-session")).json();
    expect(
      Object.values(v.sessions).some((s) => (s as { viewers: string[] }).viewers.includes("Gho St")),
    ).toBe(false);
    const sid = await t.openDemo();
    await beat(t, "renamer-client", "Old Name", sid);
    const renamed = await (await beat(t, "renamer-client", "New Name", sid)).json();
    expect(renamed.sessions[sid]).toEqual({
      lock: { client_id: pub("renamer-client"), name: "New Name" },
      viewers: ["New Name"],
    });
    await beat(t, "renamer-client", "New Name", null);
  });

  it("refuses malformed heartbeats with 400", async () => {
    const cases: [unknown, RegExp][] = [
      [{ name: "x", session_id: null }, /client_id/],
      [{ client_id: "", name: "x", session_id: null }, /client_id/],
      [{ client_id: "a-client", name: "x", session_id: null, extra: 1 }, /unknown field "extra"/],
      [{ client_id: "a-client", name: { first: "x" }, session_id: null }, /name/],
      [{ client_id: "a-client", name: "x", session_id: ["s"] }, /session_id/],
      [{ client_id: "short", name: "x", session_id: null }, /client_id must NOT have fewer than 8/],
      [
        { client_id: "x".repeat(10_240), name: "x", session_id: null },
        /client_id must NOT have more than 128/,
      ],
      [{ client_id: "has spaces in it", name: "x", session_id: null }, /client_id must match pattern/],
      [{ client_id: "a-client", name: "n".repeat(65), session_id: null }, /name must NOT have more than 64/],
      [{ client_id: "a-client", name: "bell\u0007", session_id: null }, /name may not hold control/],
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
    await beat(t, "leaver-client", "Lea Ver", sid);
    expect(t.server.service.presence.lockOf(sid)?.client_id).toBe(pub("leaver-client"));
    await t.server.service.deleteSession(sid);
    const v = await (await beat(t, "leaver-client", "Lea Ver", sid)).json();
    expect(v.sessions[sid]).toBeUndefined();
  });
});

describe("identity: the client id is a secret, others see a public id", () => {
  const secretA = "6a1f0c9e-4b7d-4e2a-9c3f-8d5b2a7e1f40";
  const secretB = "0b9e7d1c-2f4a-4c6e-8a1b-3d5f7e9c2a64";

  it("no answer, event or stream another client can read carries the holder's client id", async () => {
    const sid = await t.openDemo();
    const cursor = await lastId(t);
    const stream = await openSse(`${t.url}/api/events?last_event_id=${cursor}`, {
      "x-tessera-client-id": secretB,
    });
    try {
      await t.api(`/api/sessions/${sid}/lock`, {
        method: "POST",
        clientId: secretA,
        clientName: "Ada Lovelace",
      });
      await beat(t, secretA, "Ada Lovelace", sid);
      const seenByB: string[] = [];
      const viewB = await beat(t, secretB, "Bea Bishop", sid);
      seenByB.push(await viewB.text());
      seenByB.push(await (await t.api(`/api/events/poll?after=${cursor}`)).text());
      seenByB.push(await (await t.api(`/api/events/poll?after=${cursor}`, { clientId: secretB })).text());
      const refused = await t.api(`/api/sessions/${sid}/jobs`, {
        method: "POST",
        json: noop,
        clientId: secretB,
      });
      expect(refused.status).toBe(423);
      seenByB.push(await refused.text());
      const take = await t.api(`/api/sessions/${sid}/lock`, { method: "POST", clientId: secretB });
      expect(take.status).toBe(409);
      seenByB.push(await take.text());
      seenByB.push(await (await t.api(`/api/sessions/${sid}`, { clientId: secretB })).text());
      seenByB.push(await (await t.api("/api/sessions", { clientId: secretB })).text());
      await stream.waitFor(() =>
        stream.frames.some(
          (f) =>
            f.event === "presence.updated" &&
            JSON.stringify(f.data).includes("Bea Bishop") &&
            JSON.stringify(f.data).includes(pub(secretA)),
        ),
      );
      seenByB.push(stream.raw());
      const all = seenByB.join("\n");
      expect(all).not.toContain(secretA);
      expect(all).toContain(pub(secretA));
      expect(JSON.parse(seenByB[0]!).sessions[sid]).toEqual({
        lock: { client_id: pub(secretA), name: "Ada Lovelace" },
        viewers: ["Ada Lovelace", "Bea Bishop"],
      });
      expect(JSON.parse(seenByB[3]!)).toEqual({ detail: "session is locked by Ada Lovelace" });
    } finally {
      stream.close();
      await beat(t, secretB, "Bea Bishop", null);
      await beat(t, secretA, "Ada Lovelace", null);
    }
  });

  it("the public id cannot act for its owner: no write, no release, no take, no rename", async () => {
    const sid = await t.openDemo();
    await beat(t, secretA, "Ada Lovelace", sid);
    const impostor = { clientId: pub(secretA), clientName: "Mallory" };
    const job = await t.api(`/api/sessions/${sid}/jobs`, { method: "POST", json: noop, ...impostor });
    expect(job.status).toBe(423);
    expect((await t.api(`/api/sessions/${sid}/lock`, { method: "DELETE", ...impostor })).status).toBe(403);
    expect((await t.api(`/api/sessions/${sid}/lock`, { method: "POST", ...impostor })).status).toBe(409);
    const renamed = await (await beat(t, pub(secretA), "Renamed By Mallory", sid)).json();
    expect(renamed.sessions[sid].lock).toEqual({ client_id: pub(secretA), name: "Ada Lovelace" });
    expect(t.server.service.presence.lockOf(sid)).toEqual({ client_id: pub(secretA), name: "Ada Lovelace" });
    // The holder itself, with its secret, still may.
    const mine = await t.api(`/api/sessions/${sid}/jobs`, { method: "POST", json: noop, clientId: secretA });
    expect(mine.status).toBe(200);
    await t.waitJob(sid, (await mine.json()).job_id);
    await beat(t, pub(secretA), "Renamed By Mallory", null);
    await beat(t, secretA, "Ada Lovelace", null);
  });

  it("malformed client id or name headers are a 400 naming the header, on any route", async () => {
    const sid = await t.openDemo();
    const cases: [Record<string, string>, RegExp][] = [
      [
        { "x-tessera-client-id": "x".repeat(10_240) },
        /X-Tessera-Client-Id header must be 8 to 128 .* got 10240/,
      ],
      [{ "x-tessera-client-id": "short" }, /X-Tessera-Client-Id header must be 8 to 128/],
      [{ "x-tessera-client-id": "not/a;valid=id" }, /X-Tessera-Client-Id header may hold only/],
      [{ "x-tessera-client-name": "n".repeat(65) }, /X-Tessera-Client-Name header must be at most 64/],
      [{ "x-tessera-client-name": "tab\there" }, /X-Tessera-Client-Name header may not hold control/],
    ];
    for (const [headers, detail] of cases)
      for (const [method, path] of [
        ["GET", "/api/sessions"],
        ["GET", `/api/sessions/${sid}`],
        ["POST", `/api/sessions/${sid}/lock`],
        ["DELETE", `/api/sessions/${sid}/lock`],
      ] as const) {
        const r = await t.api(path, { method, headers });
        expect(r.status, `${method} ${path} ${JSON.stringify(headers).slice(0, 60)}`).toBe(400);
        expect((await r.json()).detail).toMatch(detail);
      }
    expect(t.server.service.presence.lockOf(sid)).toBeNull();
  });
});

describe("presence timeout", () => {
  it("a silent viewer drops after TESSERA_PRESENCE_TIMEOUT_S and its lock is released (presence.updated)", async () => {
    const s = await startTestServer({ config: { presenceTimeoutS: 0.3 } });
    try {
      const sid = await s.openDemo();
      const cursor = await lastId(s);
      const v = await (await beat(s, "quiet-client", "Qui Et", sid)).json();
      expect(v.sessions[sid].lock.client_id).toBe(pub("quiet-client"));
      // A heartbeat within the timeout keeps it.
      await new Promise((r) => setTimeout(r, 200));
      await beat(s, "quiet-client", "Qui Et", sid);
      await new Promise((r) => setTimeout(r, 200));
      expect(s.server.service.presence.lockOf(sid)?.client_id).toBe(pub("quiet-client"));
      // Silence past the timeout: dropped by the sweeper, without any request.
      await new Promise((r) => setTimeout(r, 600));
      const events = await presenceEvents(s, cursor);
      expect(events.at(-1)).toEqual({ sessions: {} });
      expect(events).toHaveLength(2);
      const other = await s.api(`/api/sessions/${sid}/lock`, { method: "POST", clientId: "next-client" });
      expect(other.status).toBe(200);
    } finally {
      await s.close();
    }
  });
});
