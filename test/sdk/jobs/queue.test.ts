import { describe, expect, it } from "vitest";
import { SerialQueue } from "../../../src/sdk/jobs/queue.js";

const tick = (ms = 5) => new Promise((r) => setTimeout(r, ms));

describe("SerialQueue", () => {
  it("runs jobs one at a time in FIFO order and reports positions", async () => {
    const q = new SerialQueue();
    const log: string[] = [];
    let concurrent = 0;
    let maxConcurrent = 0;
    const job = (id: string) => async () => {
      concurrent++;
      maxConcurrent = Math.max(maxConcurrent, concurrent);
      log.push(`start ${id}`);
      await tick();
      log.push(`end ${id}`);
      concurrent--;
    };
    q.push("a", job("a"));
    q.push("b", job("b"));
    q.push("c", job("c"));
    expect(q.running).toBe("a");
    expect(q.queued).toEqual(["b", "c"]);
    expect([q.position("a"), q.position("b"), q.position("c"), q.position("zz")]).toEqual([0, 1, 2, null]);
    await q.idle();
    expect(log).toEqual(["start a", "end a", "start b", "end b", "start c", "end c"]);
    expect(maxConcurrent).toBe(1);
    expect(q.running).toBeNull();
    expect(q.position("a")).toBeNull();
  });

  it("cancels queued jobs only", async () => {
    const q = new SerialQueue();
    const ran: string[] = [];
    const job = (id: string) => async () => {
      ran.push(id);
      await tick();
    };
    q.push("a", job("a"));
    q.push("b", job("b"));
    q.push("c", job("c"));
    expect(q.cancel("a")).toBe(false); // running
    expect(q.cancel("b")).toBe(true);
    expect(q.cancel("b")).toBe(false);
    expect(q.position("c")).toBe(1);
    await q.idle();
    expect(ran).toEqual(["a", "c"]);
  });

  it("aborts the running job through its signal and moves on after a rejection", async () => {
    const errors: string[] = [];
    const q = new SerialQueue({ onError: (id, e) => errors.push(`${id}: ${(e as Error).message}`) });
    const ran: string[] = [];
    q.push("long", (signal) => {
      ran.push("long");
      return new Promise((_, reject) =>
        signal.addEventListener("abort", () => reject(new Error("aborted")), { once: true }),
      );
    });
    q.push("next", async () => {
      ran.push("next");
    });
    await tick();
    expect(q.abort("next", "x")).toBe(false);
    expect(q.abort("long")).toBe(true);
    await q.idle();
    expect(ran).toEqual(["long", "next"]);
    expect(errors).toEqual(["long: aborted"]);
  });

  it("idle() resolves at once when empty, and after cancelling the last queued job", async () => {
    const q = new SerialQueue();
    await q.idle();
    let release!: () => void;
    q.push(
      "a",
      () =>
        new Promise<void>((r) => {
          release = r;
        }),
    );
    q.push("b", async () => {});
    expect(q.cancel("b")).toBe(true);
    const done = q.idle();
    await tick();
    release();
    await done;
    expect(q.size).toBe(0);
  });

  it("rejects a duplicate id and runs jobs of different queues concurrently", async () => {
    const q1 = new SerialQueue();
    const q2 = new SerialQueue();
    let concurrent = 0;
    let max = 0;
    const job = async () => {
      concurrent++;
      max = Math.max(max, concurrent);
      await tick(20);
      concurrent--;
    };
    q1.push("x", job);
    expect(() => q1.push("x", job)).toThrow(/already/);
    q2.push("x", job);
    await Promise.all([q1.idle(), q2.idle()]);
    expect(max).toBe(2);
  });

  it("never runs a job synchronously inside push", () => {
    const q = new SerialQueue();
    let ran = false;
    q.push("a", async () => {
      ran = true;
    });
    expect(ran).toBe(false);
    return q.idle().then(() => expect(ran).toBe(true));
  });
});
