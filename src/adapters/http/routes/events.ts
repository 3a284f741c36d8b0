/**
 * Routes: the event stream (spec "Events"). `GET /api/events` is raw Server-Sent Events written
 * straight to the socket (hijacked, so never compressed): `id:`/`event:`/`data:` frames from the
 * service's EventBus, resumable with `Last-Event-ID`, a `: keepalive` comment on an idle stream, never
 * ended by the server except at shutdown. `GET /api/events/poll` is the JSON fallback over the same
 * ring.
 */
import type { ServerResponse } from "node:http";
import type { FastifyRequest } from "fastify";
import { BadRequestError } from "../../../sdk/errors.js";
import type { EventBus } from "../../../sdk/events/bus.js";
import type { TesseraEvent } from "../../../sdk/events/types.js";
import type { RouteModule } from "../deps.js";

/** Name of the synthetic event telling a resuming client that events it asked for are gone. */
export const MISSED_EVENT = "events.missed";

/** A write buffer past which a client is too slow to keep: it is dropped and resumes on reconnect. */
const MAX_BUFFERED_BYTES = 16 * 1024 * 1024;

/** One SSE frame. `data` is JSON on one line (JSON.stringify never emits a raw newline). */
function frame(e: { id?: number; event: string; data: unknown }): string {
  return `${e.id !== undefined ? `id: ${e.id}\n` : ""}event: ${e.event}\ndata: ${JSON.stringify(e.data)}\n\n`;
}

/** An event cursor (`after`, `Last-Event-ID`): a non-negative integer, or undefined when absent. */
function cursor(raw: unknown, name: string): number | undefined {
  const v = Array.isArray(raw) ? raw[0] : raw;
  if (v === undefined || v === null || String(v).trim() === "") return undefined;
  const s = String(v).trim();
  if (!/^\d{1,15}$/.test(s))
    throw new BadRequestError(`${name} must be a non-negative integer event id, got ${JSON.stringify(s)}`);
  return Number(s);
}

/** Where a stream resumes: the `Last-Event-ID` header (a reconnect), else the `last_event_id` query. */
function resumeFrom(req: FastifyRequest): number | undefined {
  const header = cursor(req.headers["last-event-id"], "Last-Event-ID");
  return header ?? cursor((req.query as { last_event_id?: unknown }).last_event_id, "last_event_id");
}

/**
 * The `events.missed` notice for a resume the ring cannot serve in full: `evicted` when events after
 * the cursor are gone from the ring, `unknown` when the cursor is newer than any event (a server
 * restart). Null when nothing was missed.
 */
function missedNotice(bus: EventBus, after: number): { event: string; data: object } | null {
  if (after > bus.lastId)
    return {
      event: MISSED_EVENT,
      data: { reason: "unknown", after, oldest_id: bus.oldestId, last_id: bus.lastId },
    };
  if (after + 1 < bus.oldestId)
    return {
      event: MISSED_EVENT,
      data: { reason: "evicted", after, oldest_id: bus.oldestId, last_id: bus.lastId },
    };
  return null;
}

/** Registers the events routes. */
export const eventsRoutes: RouteModule = (app, { service, sseKeepaliveMs = 15_000 }) => {
  const streams = new Set<ServerResponse>();
  // preClose, not onClose: fastify closes the HTTP server before onClose hooks, and that close waits
  // for these never-ending responses.
  app.addHook("preClose", async () => {
    for (const res of streams) res.end();
    streams.clear();
  });

  app.get("/api/events", (req, reply) => {
    const after = resumeFrom(req);
    reply.hijack();
    const res = reply.raw;
    req.raw.socket.setTimeout(0);
    req.raw.socket.setNoDelay(true);
    req.raw.socket.setKeepAlive(true);
    res.writeHead(200, {
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-cache",
      connection: "keep-alive",
      "x-accel-buffering": "no",
    });
    // HEAD (fastify answers it with this handler): the headers only, never a stream held open.
    if (req.method === "HEAD") {
      res.end();
      return;
    }
    streams.add(res);
    const keepalive = setInterval(() => write(": keepalive\n\n"), sseKeepaliveMs);
    keepalive.unref();
    let unsubscribe: (() => void) | null = null;
    let closed = false;
    const close = () => {
      closed = true;
      clearInterval(keepalive);
      unsubscribe?.();
      streams.delete(res);
    };
    function write(text: string): void {
      if (closed || res.writableEnded || res.destroyed) return;
      res.write(text);
      keepalive.refresh();
      if (res.writableLength > MAX_BUFFERED_BYTES) {
        close();
        res.destroy();
      }
    }
    res.on("close", close);
    write("retry: 3000\n\n");
    const notice = after === undefined ? null : missedNotice(service.bus, after);
    if (notice) write(frame(notice));
    unsubscribe = service.bus.subscribe((e: TesseraEvent) => write(frame(e)), after);
    // The replay above may already have dropped a client that cannot keep up.
    if (closed || res.destroyed) close();
  });

  app.get("/api/events/poll", async (req) => {
    const after = cursor((req.query as { after?: unknown }).after, "after");
    const page = service.bus.since(after);
    return {
      last_id: page.last_id,
      events: page.events.map((e) => ({ id: e.id, event: e.event, data: e.data })),
    };
  });
};
