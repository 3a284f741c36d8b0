/**
 * The figure thread's entry (`figure-thread.ts` starts it): it answers `{ id, op, input }` messages by
 * running the op — `draw` (the render core's per-cell passes and rasters, `draw.ts`), `pdf` (SVG →
 * vector PDF, pdfkit's JavaScript), `snapshot` (a snapshot's files, `snapshot-files.ts`) or `preview`
 * (a preview's PNG) — and posting `{ id, ok, value }` or `{ id, ok: false, error }`.
 * The cell arrays arrive on shared memory, so nothing large is copied to get here.
 */
import { parentPort, threadId } from "node:worker_threads";
import { drawDisplay } from "./draw.js";
import { svgToPdfHere } from "./export.js";
import type { FigureOps, FromFigureThread, ToFigureThread } from "./figure-thread.js";
import { previewPng, snapshotFiles } from "./snapshot-files.js";

const ops: { [K in keyof FigureOps]: (input: FigureOps[K][0]) => Promise<FigureOps[K][1]> } = {
  draw: (input) => drawDisplay(input),
  pdf: (input) => svgToPdfHere(input.svg, input.options),
  snapshot: (input) => snapshotFiles(input),
  preview: (input) => previewPng(input),
};

/** The buffers of the bytes in a result that own them (moved back, not copied; not Node's pool). */
function transferable(value: unknown): ArrayBuffer[] {
  const own = (v: unknown): v is Uint8Array =>
    v instanceof Uint8Array &&
    v.buffer instanceof ArrayBuffer &&
    v.byteOffset === 0 &&
    v.byteLength === v.buffer.byteLength;
  if (own(value)) return [value.buffer as ArrayBuffer];
  if (!value || typeof value !== "object") return [];
  const out = new Set<ArrayBuffer>();
  for (const v of Object.values(value)) if (own(v)) out.add(v.buffer as ArrayBuffer);
  return [...out];
}

parentPort!.on("message", async (msg: ToFigureThread) => {
  let reply: FromFigureThread;
  let transfer: ArrayBuffer[] = [];
  try {
    const run = ops[msg.op] as (input: unknown) => Promise<unknown>;
    const value = await run(msg.input);
    transfer = transferable(value);
    reply = { id: msg.id, ok: true, value, threadId };
  } catch (err) {
    const e = err as Error;
    reply = {
      id: msg.id,
      ok: false,
      error: { name: e?.name ?? "Error", message: e?.message ?? String(err), stack: e?.stack },
      threadId,
    };
  }
  parentPort!.postMessage(reply, transfer);
});
