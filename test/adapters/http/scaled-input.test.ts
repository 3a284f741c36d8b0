/**
 * Data already scaled (pbmc68k_reduced's X: z-scores, negative values) run through normalize_total or
 * log1p over HTTP: the job is accepted (200) and fails (the spec reports failed jobs through the job, its
 * log and its history entry, not the HTTP status) with a message naming the negative values, their
 * minimum, the likely cause and what the operation expects. Counts still normalise.
 */
import { copyFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadMatrix } from "../../../src/sdk/data/lazy.js";
import { readH5ad } from "../../../src/sdk/io/anndata/read-h5ad.js";
import { fixture } from "../../fixtures.js";
import { startTestServer, type TestServer } from "./harness.js";

let t: TestServer;
let scaled: string;
let demo: string;
beforeAll(async () => {
  t = await startTestServer();
  const path = join(t.dataDir, "pbmc68k_reduced.h5ad");
  await copyFile(fixture("scanpy-pbmc68k-reduced/10x_pbmc68k_reduced.h5ad"), path);
  const session = await t.server.service.createSession({ source: { kind: "load", path } });
  await session.ready;
  if (session.status !== "ready") throw new Error(`did not load: ${session.summary().error}`);
  scaled = session.id;
  demo = await t.openDemo();
}, 120_000);
afterAll(async () => {
  await t?.close();
});

/** Run `sc.pp.<fn>` over HTTP and wait for the job's end; returns the final job body. */
async function run(sid: string, fn: string, params: object = {}) {
  const r = await t.api(`/api/sessions/${sid}/jobs`, {
    method: "POST",
    json: { namespace: "sc.pp", function: fn, params },
  });
  expect(r.status).toBe(200);
  const { job_id } = (await r.json()) as { job_id: string };
  const end = (await t.waitJob(sid, job_id, 120_000)) as { status: string; error?: string };
  return { job_id, ...end };
}

describe("negative values in X", () => {
  it("normalize_total fails naming them and asking for counts", async () => {
    const end = await run(scaled, "normalize_total");
    expect(end.status).toBe("failed");
    expect(end.error).toMatch(
      /normalize_total: X has negative values \(min -\d+(\.\d+)?\): it looks already scaled or log-transformed; normalize_total expects counts/,
    );
    const log = await (await t.api(`/api/sessions/${scaled}/jobs/${end.job_id}/log`)).json();
    expect(log.status).toBe("failed");
  });

  it("log1p fails naming them and pointing before sc.pp.scale", async () => {
    const end = await run(scaled, "log1p");
    expect(end.status).toBe("failed");
    expect(end.error).toMatch(
      /log1p: X has negative values \(min -\d+(\.\d+)?\): .*log1p expects counts or normalised counts .*before sc\.pp\.scale/,
    );
  });

  it("the message's minimum is X's", async () => {
    const { table } = await readH5ad(fixture("scanpy-pbmc68k-reduced/10x_pbmc68k_reduced.h5ad"));
    const x = await loadMatrix(table.X!);
    let min = Number.POSITIVE_INFINITY;
    for (const v of x.data as Float32Array) if (v < min) min = v;
    expect(min).toBeLessThan(0);
    const end = await run(scaled, "log1p");
    expect(end.error).toContain(`(min ${Number(min.toPrecision(3))})`);
  });

  it("counts still normalise and log-transform", async () => {
    expect((await run(demo, "normalize_total")).status).toBe("completed");
    expect((await run(demo, "log1p")).status).toBe("completed");
  });
});
