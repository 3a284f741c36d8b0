/**
 * Does closing a session give its memory back? Cycles of open → normalize_total → log1p → scale (a dense X,
 * as after `sc.pp.scale`) → close on one service, printing RSS (and the JS heap and external/array-buffer
 * memory) after each phase, so a leak or a cache that keeps a closed session's arrays shows as growth
 * across cycles. The goal: back within 300 MB of the start after every close.
 *
 * Usage: `npm run bench:session-memory -- [--cells 50000] [--genes 3000] [--cycles 4]`.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { tableService } from "./table-service.js";

const { values } = parseArgs({
  options: {
    cells: { type: "string", default: "50000" },
    genes: { type: "string", default: "3000" },
    cycles: { type: "string", default: "4" },
  },
});
const mb = (b: number) => `${(b / 2 ** 20).toFixed(0)}`;
const gc = (globalThis as { gc?: () => void }).gc;
function report(label: string): number {
  gc?.();
  const m = process.memoryUsage();
  console.log(
    `${label.padEnd(28)} rss ${mb(m.rss).padStart(6)} MB  heap ${mb(m.heapUsed).padStart(5)}  external ${mb(m.external).padStart(6)}  arrayBuffers ${mb(m.arrayBuffers).padStart(6)}`,
  );
  return m.rss;
}

const dir = await mkdtemp(join(tmpdir(), "tessera-session-memory-"));
try {
  const { path, service } = await tableService(dir, Number(values.cells), Number(values.genes));
  const start = report("service started");
  /** One cycle; returns weak references only, so nothing here keeps the session alive afterwards. */
  const cycle = async (c: number): Promise<[WeakRef<object>, WeakRef<object>]> => {
    const s = await service.createSession({ source: { kind: "load", path } });
    await s.ready;
    report(`cycle ${c}: opened`);
    for (const fn of ["normalize_total", "log1p", "scale"]) {
      const out = await (await s.submit({ namespace: "sc.pp", function: fn, params: {} })).done;
      if (out.status !== "completed") throw new Error(`${fn}: ${out.error}`);
    }
    report(`cycle ${c}: scaled`);
    const refs: [WeakRef<object>, WeakRef<object>] = [new WeakRef(s), new WeakRef(s.data)];
    await service.deleteSession(s.id);
    return refs;
  };
  for (let c = 1; c <= Number(values.cycles); c++) {
    const [session, data] = await cycle(c);
    // Idle workers stop after 10 s (their thread holds its last jobs' shared arrays until then).
    await new Promise((r) => setTimeout(r, 11_000));
    const rss = report(`cycle ${c}: closed`);
    console.log(
      `  ${rss - start > 300 * 2 ** 20 ? "ABOVE" : "within"} 300 MB of the start (+${mb(rss - start)} MB); closed session still reachable: ${session.deref() !== undefined}, its data: ${data.deref() !== undefined}`,
    );
  }
  await service.close();
  report("service closed (pool gone)");
} finally {
  await rm(dir, { recursive: true, force: true });
}
