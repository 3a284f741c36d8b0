/**
 * The event stream (client.md 1.4): one `EventSource` on `/api/events`; the browser reconnects on
 * its own and resumes with `Last-Event-ID`. Only after the stream fails fatally (closed) does the
 * client fall back to polling `/api/events/poll?after=` every 2 s, from the last id it saw; every
 * 30 s of polling it tries the stream again (`?last_event_id=`).
 */
import type { ApiClient } from "../http.js";

/** An event as delivered. */
export interface AppEvent {
  id: number | null;
  event: string;
  data: Record<string, unknown>;
}

/** Event names the app listens to. */
export const APP_EVENTS = [
  "job.queued",
  "job.started",
  "job.completed",
  "job.failed",
  "job.cancelled",
  "job.log",
  "plot.drawn",
  "plot.invalidated",
  "display.updated",
  "session.loading",
  "session.created",
  "session.updated",
  "session.removed",
  "session.errored",
  "presence.updated",
  "resource.sample",
  "memory.warning",
  "events.missed",
] as const;

const POLL_MS = 2000;
const RETRY_SSE_MS = 30_000;

/** The stream: `on(event)` for every event, `onMode` when it switches between sse and poll. */
export class EventStream {
  lastId = 0;
  mode: "sse" | "poll" | "closed" = "closed";
  private es: EventSource | null = null;
  private pollTimer: ReturnType<typeof setTimeout> | null = null;
  private stopped = false;
  private pollingSince = 0;

  constructor(
    private readonly api: ApiClient,
    private readonly on: (e: AppEvent) => void,
    private readonly onMode: (mode: "sse" | "poll") => void = () => {},
  ) {}

  start(): void {
    this.stopped = false;
    this.openSse();
  }

  stop(): void {
    this.stopped = true;
    this.es?.close();
    this.es = null;
    if (this.pollTimer) clearTimeout(this.pollTimer);
    this.mode = "closed";
  }

  private openSse(): void {
    if (this.stopped) return;
    const url = this.api.url(`/api/events${this.lastId ? `?last_event_id=${this.lastId}` : ""}`);
    let es: EventSource;
    try {
      es = new EventSource(url, { withCredentials: false });
    } catch {
      this.startPolling();
      return;
    }
    this.es = es;
    es.onopen = () => {
      this.mode = "sse";
      this.onMode("sse");
    };
    const handler = (ev: MessageEvent) => {
      const id = ev.lastEventId ? Number(ev.lastEventId) : null;
      if (id !== null && Number.isFinite(id)) this.lastId = id;
      let data: Record<string, unknown> = {};
      try {
        data = JSON.parse(String(ev.data)) as Record<string, unknown>;
      } catch {
        /* keep {} */
      }
      this.on({ id, event: ev.type, data });
    };
    for (const name of APP_EVENTS) es.addEventListener(name, handler as EventListener);
    es.onerror = () => {
      // CONNECTING: the browser retries by itself (with Last-Event-ID). CLOSED: fatal.
      if (es.readyState === EventSource.CLOSED) {
        es.close();
        this.es = null;
        this.startPolling();
      }
    };
  }

  private startPolling(): void {
    if (this.stopped) return;
    this.mode = "poll";
    this.onMode("poll");
    this.pollingSince = Date.now();
    const tick = async () => {
      if (this.stopped) return;
      try {
        const q = this.lastId ? `?after=${this.lastId}` : "";
        const r = await this.api.json<{
          last_id: number;
          events: { id: number; event: string; data: Record<string, unknown> }[];
        }>(`/api/events/poll${q}`);
        if (r.last_id < this.lastId)
          this.on({ id: null, event: "events.missed", data: { reason: "unknown" } });
        else if (r.events.length && r.events[0]!.id > this.lastId + 1 && this.lastId)
          this.on({ id: null, event: "events.missed", data: { reason: "evicted" } });
        for (const e of r.events) this.on({ id: e.id, event: e.event, data: e.data });
        this.lastId = r.last_id;
      } catch {
        /* server away: keep polling */
      }
      if (Date.now() - this.pollingSince > RETRY_SSE_MS) {
        this.openSse();
        return;
      }
      this.pollTimer = setTimeout(tick, POLL_MS);
    };
    void tick();
  }
}
