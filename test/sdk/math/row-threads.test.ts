import { describe, expect, it } from "vitest";
import { rowShares, runKernelThreads, runRowKernel } from "../../../src/sdk/math/row-threads.js";

/** Part p writes p + 1 into its slot, waits for the other part, then reads the other's slot. */
function exchange(part: number, words: Int32Array, out: Int32Array): void {
  Atomics.store(words, 1 + part, part + 1);
  Atomics.add(words, 0, 1);
  Atomics.notify(words, 0);
  while (Atomics.load(words, 0) < 2) Atomics.wait(words, 0, Atomics.load(words, 0), 50);
  out[part] = Atomics.load(words, 2 - part);
}

/** Part 1 fails at once; part 0 waits for it until the failure flag (words[3] = 2) is set. */
function failingTeam(part: number, words: Int32Array): void {
  const inner = (): never => {
    throw new Error("part one broke");
  };
  if (part === 1) inner();
  while (Atomics.load(words, 3) !== 2) Atomics.wait(words, 0, 0, 50);
  throw new Error("gave up waiting");
}

/** Counts the calls its thread has run (a global of the thread) into out[part]. */
function countCalls(part: number, out: Int32Array): void {
  const g = globalThis as { kernelCalls?: number };
  g.kernelCalls = (g.kernelCalls ?? 0) + 1;
  out[part] = part === 0 ? 0 : g.kernelCalls;
}

/** Throws in part 1 only. */
function throwsInPartOne(part: number): void {
  if (part === 1) throw new RangeError("part one refused");
}

describe("kernel threads", () => {
  it("keeps its threads for the next call, also after a kernel threw", async () => {
    const out = new Int32Array(new SharedArrayBuffer(8));
    await runKernelThreads(countCalls, 2, (p) => [p, out]);
    const first = out[1]!;
    await expect(runKernelThreads(throwsInPartOne, 2, (p) => [p])).rejects.toThrow("part one refused");
    await runKernelThreads(countCalls, 2, (p) => [p, out]);
    // The same thread ran both counting calls (a new one would count 1 again).
    expect(out[1]).toBe(first + 1);
  });

  it("runs again around and after the time an idle thread exits", async () => {
    const out = new Int32Array(new SharedArrayBuffer(8));
    for (const wait of [1400, 1500, 1600, 2500]) {
      await runKernelThreads(countCalls, 2, (p) => [p, out]);
      await new Promise((r) => setTimeout(r, wait));
      await runKernelThreads(countCalls, 2, (p) => [p, out]);
      expect(out[1]).toBeGreaterThan(0);
    }
  }, 60_000);

  it("runs parts at once on shared memory (they can wait on each other)", async () => {
    const words = new Int32Array(new SharedArrayBuffer(16));
    const out = new Int32Array(new SharedArrayBuffer(8));
    await runKernelThreads(exchange, 2, (p) => [p, words, out]);
    expect(Array.from(out)).toEqual([2, 1]);
  });

  it("a worker's failure wakes the waiting part and is the error reported", async () => {
    const words = new Int32Array(new SharedArrayBuffer(16));
    await expect(
      runKernelThreads(failingTeam, 2, (p) => [p, words], undefined, { words, state: 3, wake: 0 }),
    ).rejects.toThrow("part one broke");
  });

  it("row kernels split rows by stored entries", async () => {
    const indptr = [0, 1, 2, 10, 11, 12];
    expect(rowShares(indptr, 5, 2)).toEqual([0, 3, 5]);
    const out = new Int32Array(new SharedArrayBuffer(20));
    const fill = (r0: number, r1: number, o: Int32Array) => {
      for (let i = r0; i < r1; i++) o[i] = i * 10;
    };
    const bounds = rowShares(indptr, 5, 2);
    await runRowKernel(fill, bounds, (p) => [bounds[p], bounds[p + 1], out]);
    expect(Array.from(out)).toEqual([0, 10, 20, 30, 40]);
  });
});
