/**
 * The figure thread's entry (`figure-thread.ts` starts it): it answers `{ id, op, input }` messages by
 * running the op — `draw` (the render core's per-cell passes and rasters, `draw.ts`) or `pdf` (SVG →
 * vector PDF, pdfkit's JavaScript) — and posting `{ id, ok, value }` or `{ id, ok: false, error }`.
 * The cell arrays arrive on shared memory, so nothing large is copied to get here.
 */
import { parentPort, threadId } from "node:worker_threads";
import { drawDisplay } from "./draw.js";
import { svgToPdfHere } from "./export.js";
import type { FigureOps, FromFigureThread, ToFigureThread } from "./figure-thread.js";

const ops: { [K in keyof FigureOps]: (input: FigureOps[K][0]) => Promise<FigureOps[K][1]> } = {
  draw: (input) => drawDisplay(input),
  pdf: (input) => svgToPdfHere(input.svg, input.options),
};

parentPort!.on("message", async (msg: ToFigureThread) => {
  let reply: FromFigureThread;
  const transfer: ArrayBuffer[] = [];
  try {
    const run = ops[msg.op] as (input: unknown) => Promise<unknown>;
    const value = await run(msg.input);
    // PDF bytes go back moved, not copied, when they own their buffer (not a slice of Node's pool)
    if (
      value instanceof Uint8Array &&
      value.buffer instanceof ArrayBuffer &&
      value.byteOffset === 0 &&
      value.byteLength === value.buffer.byteLength
    )
      transfer.push(value.buffer);
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
