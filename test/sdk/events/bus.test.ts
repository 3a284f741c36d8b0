import { describe, expect, it, vi } from "vitest";
import { EventBus } from "../../../src/sdk/events/bus.js";
import { EVENT_NAMES, type TesseraEvent } from "../../../src/sdk/events/types.js";

const job = (n: number) => ({ session_id: "s", job_id: `j${n}` });

describe("EventBus", () => {
  it("assigns monotonic ids from 1 and returns the stored event", () => {
    const bus = new EventBus();
    expect(bus.lastId).toBe(0);
    const a = bus.emit("job.started", job(1));
    const b = bus.emit("job.failed", { ...job(1), error: "boom" });
    expect([a.id, b.id]).toEqual([1, 2]);
    expect(b).toEqual({ id: 2, event: "job.failed", data: { session_id: "s", job_id: "j1", error: "boom" } });
    expect(bus.lastId).toBe(2);
  });

  it("since(): baseline without a cursor, the events after a cursor, nothing past the end", () => {
    const bus = new EventBus();
    for (let i = 1; i <= 5; i++) bus.emit("job.started", job(i));
    expect(bus.since()).toEqual({ last_id: 5, events: [] });
    expect(bus.since(3).events.map((e) => e.id)).toEqual([4, 5]);
    expect(bus.since(0).events.map((e) => e.id)).toEqual([1, 2, 3, 4, 5]);
    expect(bus.since(5)).toEqual({ last_id: 5, events: [] });
    // A cursor from before a restart resynchronises to the baseline.
    expect(bus.since(99)).toEqual({ last_id: 5, events: [] });
  });

  it("keeps only the last `capacity` events in the ring", () => {
    const bus = new EventBus({ capacity: 4 });
    for (let i = 1; i <= 10; i++) bus.emit("job.started", job(i));
    expect(bus.oldestId).toBe(7);
    expect(bus.since(0).events.map((e) => e.id)).toEqual([7, 8, 9, 10]);
    expect(bus.since(8).events.map((e) => e.id)).toEqual([9, 10]);
    expect(bus.since(0).events.map((e) => (e.data as { job_id: string }).job_id)).toEqual([
      "j7",
      "j8",
      "j9",
      "j10",
    ]);
    expect(() => new EventBus({ capacity: 0 })).toThrow(/capacity/);
  });

  it("keeps at most `maxBytes` of event JSON: large events push the oldest out, the newest always stays", () => {
    const bus = new EventBus({ capacity: 100, maxBytes: 10_000 });
    const big = (n: number) => ({ session_id: "s", job_id: `j${n}`, name: "x".repeat(3_000) });
    for (let i = 1; i <= 10; i++) bus.emit("job.started", big(i));
    // ~3 KB each: three fit in 10 KB.
    expect(bus.oldestId).toBe(8);
    expect(bus.since(0).events.map((e) => e.id)).toEqual([8, 9, 10]);
    expect(bus.heldBytes).toBeLessThanOrEqual(10_000);
    expect(bus.heldBytes).toBe(bus.since(0).events.reduce((n, e) => n + JSON.stringify(e).length, 0));
    // A single event larger than the bound is still kept (alone), so live delivery and a resume of one work.
    bus.emit("job.completed", { session_id: "s", job_id: "huge", kind: "compute", name: "y".repeat(20_000) });
    expect(bus.since(0).events.map((e) => e.id)).toEqual([11]);
    // Small events fill the ring again; the count bound still holds.
    for (let i = 0; i < 150; i++) bus.emit("job.started", job(i));
    expect(bus.since(0).events.length).toBe(100);
    expect(bus.oldestId).toBe(bus.lastId - 99);
    expect(() => new EventBus({ maxBytes: 0 })).toThrow(/maxBytes/);
  });

  it("subscribe(): replays from a cursor, then delivers live events, until unsubscribed", () => {
    const bus = new EventBus();
    bus.emit("job.started", job(1));
    bus.emit("job.started", job(2));
    const seen: number[] = [];
    const off = bus.subscribe((e) => seen.push(e.id), 1);
    expect(seen).toEqual([2]);
    bus.emit("job.started", job(3));
    expect(seen).toEqual([2, 3]);
    off();
    bus.emit("job.started", job(4));
    expect(seen).toEqual([2, 3]);
    // Without a cursor: live only.
    const live: number[] = [];
    bus.subscribe((e) => live.push(e.id));
    bus.emit("job.started", job(5));
    expect(live).toEqual([5]);
  });

  it("a throwing subscriber never breaks the others, and the error is reported", () => {
    const errors: unknown[] = [];
    const bus = new EventBus({ onListenerError: (err) => errors.push(err) });
    const got: string[] = [];
    bus.subscribe(() => {
      throw new Error("bad subscriber");
    });
    bus.subscribe((e) => got.push(e.event));
    bus.emit("plot.drawn", { session_id: "s", plot_id: "p" });
    bus.emit("plot.invalidated", { session_id: "s", plot_ids: ["p"] });
    expect(got).toEqual(["plot.drawn", "plot.invalidated"]);
    expect(errors).toHaveLength(2);
    expect((errors[0] as Error).message).toBe("bad subscriber");
  });

  it("events emitted from inside a subscriber reach everyone in id order, once", () => {
    const bus = new EventBus();
    const a: number[] = [];
    const b: number[] = [];
    bus.subscribe((e) => {
      a.push(e.id);
      if (e.event === "job.completed") bus.emit("plot.invalidated", { session_id: "s", plot_ids: ["p1"] });
    });
    bus.subscribe((e) => b.push(e.id));
    bus.emit("job.completed", { ...job(1), kind: "compute" });
    expect(a).toEqual([1, 2]);
    expect(b).toEqual([1, 2]);
  });

  it("a subscriber added during delivery with a cursor sees each event once", () => {
    const bus = new EventBus();
    const late: number[] = [];
    bus.subscribe((e) => {
      if (e.id === 1) {
        bus.emit("job.started", job(2));
        bus.subscribe((x) => late.push(x.id), 0);
      }
    });
    bus.emit("job.started", job(1));
    bus.emit("job.started", job(3));
    expect(late).toEqual([1, 2, 3]);
  });

  it("type-checks known payloads and accepts every event of the spec's table", () => {
    const bus = new EventBus();
    const seen: TesseraEvent[] = [];
    bus.subscribe((e) => seen.push(e));
    bus.emit("session.loading", { load_id: "L", message: "reading X", pct: 40 });
    bus.emit("resource.sample", {
      global: { rss_mb: 1, work_dir_mb: 0, rss_pct: 1, cpu_pct: 3, cpu_count: 2, rasters_mb: 0 },
      per_session: { s: 1 },
    });
    // @ts-expect-error a known event with a wrong payload does not compile
    bus.emit("job.failed", { session_id: "s" });
    bus.emit("custom.thing", { anything: true });
    expect(seen.map((e) => e.event)).toEqual([
      "session.loading",
      "resource.sample",
      "job.failed",
      "custom.thing",
    ]);
    expect(EVENT_NAMES).toContain("platform.upload.failed");
    expect(new Set(EVENT_NAMES).size).toBe(20);
  });

  it("default error reporter logs to console.error", () => {
    const spy = vi.spyOn(console, "error").mockImplementation(() => {});
    const bus = new EventBus();
    bus.subscribe(() => {
      throw new Error("x");
    });
    bus.emit("memory.warning", { message: "high" });
    expect(spy).toHaveBeenCalledOnce();
    spy.mockRestore();
  });
});
