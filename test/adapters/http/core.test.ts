import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "./harness.js";

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(async () => {
  await t?.close();
});

describe("the app's shared behaviour", () => {
  it("answers healthz and readyz", async () => {
    const h = await t.api("/api/healthz");
    expect(h.status).toBe(200);
    expect(await h.json()).toEqual({ status: "ok" });
    const r = await (await t.api("/api/readyz")).json();
    expect(r.status).toBe("ready");
    expect(r.functions).toBeGreaterThan(30);
  });

  it("answers an unknown route with 404 and a detail", async () => {
    const r = await t.api("/api/nope?x=1");
    expect(r.status).toBe(404);
    expect(await r.json()).toEqual({ detail: "no route GET /api/nope" });
  });

  it("gzips JSON when allowed, honours q=0 refusals, and always sends Vary", async () => {
    const { request } = await import("node:http");
    const get = (ae: string | null) =>
      new Promise<{ enc: string | undefined; vary: string | undefined }>((resolve, reject) => {
        const req = request(
          `${t.url}/api/readyz`,
          { headers: ae === null ? {} : { "accept-encoding": ae } },
          (res) => {
            res.resume();
            res.on("end", () =>
              resolve({ enc: res.headers["content-encoding"], vary: res.headers.vary as string | undefined }),
            );
          },
        );
        req.on("error", reject);
        req.end();
      });
    for (const [ae, gz] of [
      ["gzip", true],
      ["gzip;q=0", false],
      ["*;q=0", false],
      ["br", false],
      [null, false],
      ["GZIP;q=0.5", true],
    ] as const) {
      const r = await get(ae);
      expect(r.enc, `accept-encoding ${ae}`).toBe(gz ? "gzip" : undefined);
      expect(r.vary?.toLowerCase()).toContain("accept-encoding");
    }
  });
});

describe("resource samples", () => {
  it("the running server emits resource.sample at TESSERA_RESOURCE_HZ with the spec's fields", async () => {
    const s = await startTestServer({ config: { resourceHz: 20 } });
    try {
      const id = await s.openDemo();
      const seen: { event: string; data: unknown }[] = [];
      const stop = s.server.service.bus.subscribe((e) => {
        seen.push(e);
      });
      await new Promise((r) => setTimeout(r, 300));
      stop();
      const samples = seen.filter((e) => e.event === "resource.sample");
      expect(samples.length).toBeGreaterThanOrEqual(3);
      const d = samples.at(-1)!.data as {
        global: Record<string, number>;
        per_session: Record<string, number>;
      };
      expect(Object.keys(d.global).sort()).toEqual(
        ["cpu_count", "cpu_pct", "rasters_mb", "rss_mb", "rss_pct", "work_dir_mb"].sort(),
      );
      expect(d.global.rss_mb).toBeGreaterThan(10);
      expect(d.per_session[id]).toBeGreaterThan(0);
    } finally {
      await s.close();
    }
  });
});
