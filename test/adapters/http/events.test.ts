import { mkdtemp, rm } from "node:fs/promises";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildApp } from "../../../src/adapters/http/app.js";
import { EventBus } from "../../../src/sdk/events/bus.js";
import { Service } from "../../../src/sdk/session/service.js";
import { startTestServer, type TestServer } from "./harness.js";
import { openSse, type SseStream } from "./sse.js";

let t: TestServer;
/** A second server: a small event ring (5 events) and a 100 ms keepalive, on a testkit-only service. */
let small: { service: Service; app: FastifyInstance; url: string; dir: string };

async function startSmall(): Promise<typeof small> {
  const dir = await mkdtemp(join(tmpdir(), "tessera-sse-"));
  const service = await Service.start({
    env: {},
    plugins: ["testkit"],
    config: {
      dataDir: dir,
      workDir: join(dir, ".work"),
      recipesDir: dir,
      computePoolWorkers: 1,
      nThreads: 1,
      resourceHz: 0,
    },
    bus: new EventBus({ capacity: 5 }),
  });
  const app = await buildApp({ service, sseKeepaliveMs: 100 });
  await app.listen({ port: 0, host: "127.0.0.1" });
  const addr = app.server.address() as { port: number };
  return { service, app, url: `http://127.0.0.1:${addr.port}`, dir };
}

beforeAll(async () => {
  t = await startTestServer();
  small = await startSmall();
});
afterAll(async () => {
  await t?.close();
  await small?.app.close();
  await small?.service.close();
  await rm(small.dir, { recursive: true, force: true });
});

const warn = (bus: EventBus, message: string) => bus.emit("memory.warning", { message });
const ids = (s: SseStream) => s.frames.filter((f) => f.id !== undefined).map((f) => f.id!);

describe("GET /api/events", () => {
  it("streams text/event-stream with the spec's headers, uncompressed even when gzip is accepted", async () => {
    const s = await openSse(`${t.url}/api/events`, { "accept-encoding": "gzip, deflate" });
    try {
      expect(s.status).toBe(200);
      expect(s.headers["content-type"]).toMatch(/^text\/event-stream/);
      expect(s.headers["cache-control"]).toBe("no-cache");
      expect(s.headers.connection).toBe("keep-alive");
      expect(s.headers["x-accel-buffering"]).toBe("no");
      expect(s.headers["content-encoding"]).toBeUndefined();
      warn(t.server.service.bus, "plain text please");
      await s.waitFor(() => s.frames.some((f) => f.event === "memory.warning"));
      expect(s.raw()).toContain("event: memory.warning\ndata: ");
      expect(s.frames[0]?.retry).toBe(3000);
    } finally {
      s.close();
    }
  });

  it("sends live events with monotonic ids, as the bus numbered them, from real routes", async () => {
    const bus = t.server.service.bus;
    const s = await openSse(`${t.url}/api/events`);
    try {
      const start = bus.lastId;
      const r = await t.api("/api/presence", {
        method: "POST",
        json: { client_id: "sse-viewer", name: "Stream Watcher", session_id: null },
      });
      expect(r.status).toBe(200);
      const id = await t.openDemo();
      const job = await (
        await t.api(`/api/sessions/${id}/jobs`, {
          method: "POST",
          json: { namespace: "custom", function: "noop", params: {} },
        })
      ).json();
      await t.waitJob(id, job.job_id);
      await s.waitFor(() =>
        s.frames.some(
          (f) => f.event === "job.completed" && (f.data as { job_id: string }).job_id === job.job_id,
        ),
      );
      const got = ids(s);
      expect(got.length).toBeGreaterThan(4);
      for (let i = 1; i < got.length; i++) expect(got[i]).toBe(got[i - 1]! + 1);
      expect(got[0]).toBe(start + 1);
      const events = s.frames.map((f) => f.event);
      for (const e of ["session.created", "session.updated", "job.queued", "job.started", "job.completed"])
        expect(events).toContain(e);
      // Every payload but session.loading and presence.updated carries the session id.
      for (const f of s.frames.filter((f) => f.event?.startsWith("job.")))
        expect((f.data as { session_id: string }).session_id).toBe(id);
    } finally {
      s.close();
    }
  });

  it("resumes with Last-Event-ID: exactly the missed events, in order, then live ones", async () => {
    const bus = t.server.service.bus;
    const first = await openSse(`${t.url}/api/events`);
    warn(bus, "seen-1");
    await first.waitFor(() =>
      first.frames.some((f) => (f.data as { message?: string })?.message === "seen-1"),
    );
    const lastSeen = ids(first).at(-1)!;
    first.close();
    const missed = ["missed-1", "missed-2", "missed-3"].map((m) => warn(bus, m).id);
    const again = await openSse(`${t.url}/api/events`, { "last-event-id": String(lastSeen) });
    try {
      await again.waitFor(() => ids(again).length >= 3);
      expect(ids(again)).toEqual(missed);
      expect(again.frames.map((f) => (f.data as { message?: string })?.message).filter(Boolean)).toEqual([
        "missed-1",
        "missed-2",
        "missed-3",
      ]);
      const live = warn(bus, "live-1").id;
      await again.waitFor(() => ids(again).includes(live));
      expect(ids(again)).toEqual([...missed, live]);
    } finally {
      again.close();
    }
  });

  it("resumes from the last_event_id query when no header is sent; the header wins over it", async () => {
    const bus = t.server.service.bus;
    const a = warn(bus, "q-1").id;
    const b = warn(bus, "q-2").id;
    const q = await openSse(`${t.url}/api/events?last_event_id=${a - 1}`);
    const h = await openSse(`${t.url}/api/events?last_event_id=${a - 1}`, { "last-event-id": String(a) });
    try {
      await q.waitFor(() => ids(q).length >= 2);
      expect(ids(q)).toEqual([a, b]);
      await h.waitFor(() => ids(h).length >= 1);
      expect(ids(h)).toEqual([b]);
    } finally {
      q.close();
      h.close();
    }
  });

  it("refuses a malformed Last-Event-ID or last_event_id with 400", async () => {
    for (const [path, headers] of [
      ["/api/events", { "last-event-id": "abc" }],
      ["/api/events", { "last-event-id": "-3" }],
      ["/api/events?last_event_id=1.5", {}],
    ] as const) {
      const r = await t.api(path, { headers });
      expect(r.status, `${path} ${JSON.stringify(headers)}`).toBe(400);
      expect((await r.json()).detail).toMatch(/Last-Event-ID|last_event_id/);
    }
  });

  it("answers HEAD with the stream's headers and ends at once", async () => {
    const bus = t.server.service.bus;
    const before = bus.subscriberCount;
    const r = await t.api("/api/events", { method: "HEAD" });
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toMatch(/^text\/event-stream/);
    expect(bus.subscriberCount).toBe(before);
    // The keep-alive connection is free for the next request.
    expect((await t.api("/api/healthz")).status).toBe(200);
  });

  it("unsubscribes when the client goes away", async () => {
    const bus = t.server.service.bus;
    const before = bus.subscriberCount;
    const s = await openSse(`${t.url}/api/events`);
    await s.waitFor(() => s.frames.length > 0);
    expect(bus.subscriberCount).toBe(before + 1);
    s.close();
    for (let i = 0; i < 100 && bus.subscriberCount !== before; i++)
      await new Promise((r) => setTimeout(r, 10));
    expect(bus.subscriberCount).toBe(before);
  });

  it("sends `: keepalive` comments on an idle stream at the configured interval", async () => {
    const s = await openSse(`${small.url}/api/events`);
    try {
      await s.waitFor(() => s.comments.filter((c) => c === "keepalive").length >= 3, 2000);
      expect(s.raw()).toContain(": keepalive\n\n");
      // An event resets the idle timer; the stream stays open.
      warn(small.service.bus, "between keepalives");
      await s.waitFor(() => s.frames.some((f) => f.event === "memory.warning"));
    } finally {
      s.close();
    }
  });

  it("tells a client whose cursor fell out of the ring (events.missed, evicted), then sends what is left", async () => {
    const bus = small.service.bus;
    const from = bus.lastId;
    const emitted = Array.from({ length: 8 }, (_, i) => warn(bus, `ring-${i}`).id);
    const s = await openSse(`${small.url}/api/events`, { "last-event-id": String(from) });
    try {
      await s.waitFor(() => ids(s).length >= 5);
      const notice = s.frames.find((f) => f.event === "events.missed");
      expect(notice?.id).toBeUndefined();
      expect(notice?.data).toEqual({
        reason: "evicted",
        after: from,
        oldest_id: bus.oldestId,
        last_id: bus.lastId,
      });
      expect(ids(s)).toEqual(emitted.slice(-5));
      expect(s.frames.findIndex((f) => f.event === "events.missed")).toBeLessThan(
        s.frames.findIndex((f) => f.id !== undefined),
      );
    } finally {
      s.close();
    }
  });

  it("tells a client whose cursor is newer than any event (a server restart: events.missed, unknown)", async () => {
    const bus = small.service.bus;
    const s = await openSse(`${small.url}/api/events`, { "last-event-id": String(bus.lastId + 1000) });
    try {
      await s.waitFor(() => s.frames.some((f) => f.event === "events.missed"));
      expect(s.frames.find((f) => f.event === "events.missed")?.data).toMatchObject({ reason: "unknown" });
      const live = warn(bus, "after restart").id;
      await s.waitFor(() => ids(s).includes(live));
      expect(ids(s)).toEqual([live]);
    } finally {
      s.close();
    }
  });

  it("app.close() ends open streams instead of hanging", async () => {
    const other = await startSmall();
    try {
      const s = await openSse(`${other.url}/api/events`);
      await s.waitFor(() => s.frames.length > 0);
      const t0 = Date.now();
      await other.app.close();
      await s.ended;
      expect(Date.now() - t0).toBeLessThan(3000);
    } finally {
      await other.service.close();
      await rm(other.dir, { recursive: true, force: true });
    }
  });
});

describe("GET /api/events/poll", () => {
  it("without after gives the baseline: the newest id and no events", async () => {
    const bus = t.server.service.bus;
    warn(bus, "poll-baseline");
    const r = await t.api("/api/events/poll");
    expect(r.status).toBe(200);
    expect(await r.json()).toEqual({ last_id: bus.lastId, events: [] });
  });

  it("with after gives the events after it, as {id, event, data}", async () => {
    const bus = t.server.service.bus;
    const after = bus.lastId;
    const a = warn(bus, "poll-1");
    const b = warn(bus, "poll-2");
    const body = await (await t.api(`/api/events/poll?after=${after}`)).json();
    expect(body).toEqual({
      last_id: b.id,
      events: [
        { id: a.id, event: "memory.warning", data: { message: "poll-1" } },
        { id: b.id, event: "memory.warning", data: { message: "poll-2" } },
      ],
    });
    const none = await (await t.api(`/api/events/poll?after=${b.id}`)).json();
    expect(none).toEqual({ last_id: b.id, events: [] });
    // A cursor newer than any event (from before a restart) gets the baseline to resynchronise.
    const ahead = await (await t.api(`/api/events/poll?after=${b.id + 50}`)).json();
    expect(ahead).toEqual({ last_id: b.id, events: [] });
  });

  it("from a cursor out of the ring gives what the ring holds (the gap shows in the first id)", async () => {
    const bus = small.service.bus;
    const from = bus.lastId;
    const emitted = Array.from({ length: 7 }, (_, i) => warn(bus, `gap-${i}`).id);
    const body = await (await fetch(`${small.url}/api/events/poll?after=${from}`)).json();
    expect(body.events.map((e: { id: number }) => e.id)).toEqual(emitted.slice(-5));
    expect(body.events[0].id).toBeGreaterThan(from + 1);
  });

  it("answers a bad after with 400", async () => {
    for (const bad of ["abc", "-1", "1.5", "1e3", "0x10"]) {
      const r = await t.api(`/api/events/poll?after=${encodeURIComponent(bad)}`);
      expect(r.status, bad).toBe(400);
      expect((await r.json()).detail).toContain("after must be a non-negative integer");
    }
  });

  it("is gzip-encoded JSON when the client accepts gzip (unlike the stream)", async () => {
    const enc = await new Promise<string | undefined>((resolve, reject) => {
      const req = request(
        `${t.url}/api/events/poll?after=0`,
        { headers: { "accept-encoding": "gzip" } },
        (res) => {
          res.resume();
          resolve(res.headers["content-encoding"]);
        },
      );
      req.on("error", reject);
      req.end();
    });
    expect(enc).toBe("gzip");
  });
});
