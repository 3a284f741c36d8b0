/**
 * Errors every route shares: malformed requests are a clear 4xx with a `{detail}` body, never a 500
 * and never a crash; memory admission answers 503.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "./harness.js";

let t: TestServer;
let sid: string;
beforeAll(async () => {
  t = await startTestServer({ config: { maxSessions: 4 } });
  sid = await t.openDemo();
});
afterAll(async () => {
  await t?.close();
});

async function detail(r: Response): Promise<string> {
  const body = (await r.json()) as { detail?: unknown };
  expect(typeof body.detail).toBe("string");
  return body.detail as string;
}

describe("malformed requests", () => {
  it("bad JSON is a 400 naming the problem", async () => {
    const r = await t.api(`/api/sessions/${sid}/jobs`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: '{"namespace": "custom", ',
    });
    expect(r.status).toBe(400);
    expect(await detail(r)).toMatch(/JSON/i);
  });

  it("a body of a type other than JSON is a 415, plain text included (no form or text/plain post mutates)", async () => {
    const r = await t.api(`/api/sessions/${sid}/jobs`, {
      method: "POST",
      headers: { "content-type": "application/xml" },
      body: "<namespace>custom</namespace>",
    });
    expect(r.status).toBe(415);
    await detail(r);
    const r2 = await t.api(`/api/sessions/${sid}/jobs`, {
      method: "POST",
      headers: { "content-type": "text/plain" },
      body: "namespace=custom",
    });
    expect(r2.status).toBe(415);
    await detail(r2);
  });

  it("a body over the limit is a 413", async () => {
    const small = await startTestServer();
    try {
      // The app's limit is 64 MiB; send 65 MiB of JSON.
      const huge = `{"cell_indices":[${"1,".repeat(34 * 1024 * 1024)}1]}`;
      const r = await small.api("/api/sessions", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: huge,
      });
      expect(r.status).toBe(413);
      await detail(r);
      // The server is still alive.
      expect((await small.api("/api/healthz")).status).toBe(200);
    } finally {
      await small.close();
    }
  });

  it("odd path segments are a 4xx, never a 500", async () => {
    for (const p of [
      "/api/sessions/%00",
      "/api/sessions/..%2F..%2Fetc",
      `/api/sessions/${"x".repeat(2000)}`,
      "/api/sessions/%E0%A4%A",
      `/api/sessions/${sid}/data/%00`,
      `/api/sessions/${sid}/data/${encodeURIComponent("X:")}`,
      `/api/sessions/${sid}/obs/${encodeURIComponent("../../x")}/values`,
      `/api/sessions/${sid}/jobs/${encodeURIComponent("../x")}`,
      "/api/checkpoints/..%2Fdemo.sdata.zarr.zip",
    ]) {
      const r = await t.api(p);
      expect(r.status, p).toBeGreaterThanOrEqual(400);
      expect(r.status, p).toBeLessThan(500);
    }
  });

  it("wrong types and unknown fields are a 400 naming the field", async () => {
    const r1 = await t.api(`/api/sessions/${sid}/jobs`, {
      method: "POST",
      json: { namespace: "custom", function: "noop", params: {}, extra: 1 },
    });
    expect(r1.status).toBe(400);
    expect(await detail(r1)).toMatch(/extra/);
    const r2 = await t.api(`/api/sessions/${sid}/jobs`, {
      method: "POST",
      json: { namespace: "custom", function: "rename_obs_column", params: { old_name: 5, new_name: "x" } },
    });
    expect(r2.status).toBe(400);
    expect(await detail(r2)).toMatch(/old_name/);
  });
});

describe("admission", () => {
  it("past TESSERA_ADMISSION_PCT new sessions and jobs are refused with 503; reads and deletes still work", async () => {
    const s = await startTestServer();
    try {
      const id = await s.openDemo();
      // Then a 1 MB limit: the process is always past it.
      (s.server.service.config as { containerMemMb: number }).containerMemMb = 1;
      const r = await s.api("/api/sessions", {
        method: "POST",
        json: { source: { kind: "load", path: s.demo } },
      });
      expect(r.status).toBe(503);
      expect(await detail(r)).toMatch(/memory is at \d+% of the 1 MB limit/);
      // The open session: its reads are served, new jobs refused, delete allowed.
      expect((await s.api(`/api/sessions/${id}`)).status).toBe(200);
      const j = await s.api(`/api/sessions/${id}/jobs`, {
        method: "POST",
        json: { namespace: "custom", function: "noop", params: {} },
      });
      expect(j.status).toBe(503);
      expect((await s.api(`/api/sessions/${id}`, { method: "DELETE" })).status).toBe(200);
    } finally {
      await s.close();
    }
  });
});
