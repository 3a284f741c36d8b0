/**
 * The guard over real HTTP on 127.0.0.1: foreign Host and Origin refused on every route group, simple
 * cross-site requests (form posts, no-preflight fetches) never mutate, a token when configured (as on
 * a non-loopback bind), CORS for listed embedding origins.
 */
import { readdir } from "node:fs/promises";
import { request } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "./harness.js";
import { openSse } from "./sse.js";

interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

/** One request with exactly these headers (fetch cannot set Host); the body, if any, is sent as is. */
function raw(
  base: string,
  path: string,
  opts: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const headers = { ...opts.headers };
    if (opts.body !== undefined) headers["content-length"] = String(Buffer.byteLength(opts.body));
    // A fresh connection each time: a refused request never poisons the next one.
    const req = request(`${base}${path}`, { agent: false, method: opts.method ?? "GET", headers }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (c: string) => {
        text += c;
      });
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text }));
    });
    req.on("error", reject);
    if (opts.body !== undefined) req.write(opts.body);
    req.end();
  });
}

const detailOf = (r: RawResponse): string => {
  const body = JSON.parse(r.text) as { detail?: unknown };
  expect(typeof body.detail).toBe("string");
  return body.detail as string;
};

let t: TestServer;
let sid: string;
let host: string;
/** One route of each group: REST reads, bulk data, events (stream and poll), presence, files, the
 * static app and MCP paths (404 today, still guarded), mutations. */
let routes: { method: string; path: string; json?: unknown }[];
/** The checkpoint files in the data dir before any test ran (what no refused request may change). */
let files0: string[];

beforeAll(async () => {
  t = await startTestServer();
  sid = await t.openDemo();
  host = new URL(t.url).host;
  files0 = await checkpointFiles();
  routes = [
    { method: "GET", path: "/api/sessions" },
    { method: "GET", path: `/api/sessions/${sid}` },
    { method: "GET", path: `/api/sessions/${sid}/data/obs:cell_type` },
    { method: "GET", path: `/api/sessions/${sid}/shapes/cells/geoarrow` },
    { method: "GET", path: "/api/events/poll" },
    { method: "GET", path: "/api/fs/browse" },
    { method: "GET", path: "/api/functions" },
    { method: "GET", path: "/" },
    { method: "GET", path: "/index.html" },
    { method: "POST", path: "/api/mcp", json: { jsonrpc: "2.0", id: 1, method: "tools/list" } },
    {
      method: "POST",
      path: "/api/presence",
      json: { client_id: "guard-test-client", name: "G", session_id: null },
    },
    { method: "POST", path: `/api/sessions/${sid}/save`, json: {} },
    { method: "POST", path: `/api/sessions/${sid}/pending/run-all` },
    { method: "DELETE", path: `/api/sessions/${sid}/lock` },
  ];
});
afterAll(async () => {
  await t?.close();
});

async function checkpointFiles(): Promise<string[]> {
  return (await readdir(t.dataDir)).filter((f) => f.endsWith(".zip")).sort();
}

describe("Host (DNS rebinding)", () => {
  it("a foreign Host is a 403 {detail} on every route group, the event stream included", async () => {
    for (const h of [
      "evil.example",
      `evil.example:${new URL(t.url).port}`,
      "attacker.rebind.example",
      "127.0.0.1.evil.example",
      `localhost.evil.example:${new URL(t.url).port}`,
      "0.0.0.0",
      "192.168.1.77",
      "[::2]",
    ])
      for (const r of [...routes, { method: "GET", path: "/api/events" }]) {
        const res = await raw(t.url, r.path, {
          method: r.method,
          headers: { host: h, "content-type": "application/json", "x-tessera-client": "1" },
          ...(r.method === "GET" ? {} : { body: JSON.stringify(r.json ?? {}) }),
        });
        expect(res.status, `${h} ${r.method} ${r.path}`).toBe(403);
        expect(detailOf(res)).toMatch(/^Host ".*" is not allowed/);
      }
    // Nothing was done on the way: no checkpoint written, no lock taken.
    expect(await checkpointFiles()).toEqual(files0);
    expect(t.server.service.presence.lockOf(sid)).toBeNull();
  });

  it("loopback Hosts are served in every form", async () => {
    const port = new URL(t.url).port;
    for (const h of [
      host,
      "127.0.0.1",
      `localhost:${port}`,
      "LOCALHOST",
      `127.9.8.7:${port}`,
      `[::1]:${port}`,
      `[0:0:0:0:0:0:0:1]:${port}`,
    ]) {
      const r = await raw(t.url, "/api/sessions", { headers: { host: h } });
      expect(r.status, h).toBe(200);
    }
    const s = await openSse(`${t.url}/api/events`, { host: `localhost:${port}` });
    expect(s.status).toBe(200);
    s.close();
  });

  it("a configured host (TESSERA_ALLOWED_HOSTS) is served; others still are not", async () => {
    const s = await startTestServer({ guard: { allowedHosts: ["tessera.lab.example"] } });
    try {
      const ok = await raw(s.url, "/api/sessions", { headers: { host: "tessera.lab.example:8000" } });
      expect(ok.status).toBe(200);
      const own = await raw(s.url, "/api/sessions", {
        headers: { host: "tessera.lab.example:8000", origin: "http://tessera.lab.example:8000" },
      });
      expect(own.status).toBe(200);
      expect((await raw(s.url, "/api/sessions", { headers: { host: "lab.example" } })).status).toBe(403);
    } finally {
      await s.close();
    }
  });
});

describe("Origin", () => {
  it("a foreign Origin is a 403 on every route group; nothing is changed", async () => {
    const port = new URL(t.url).port;
    for (const origin of [
      "https://evil.example",
      "http://evil.example",
      `http://localhost:${port}`, // not the origin of a page served from 127.0.0.1
      `http://127.0.0.1:${Number(port) + 1}`,
      `https://${host}`,
      "null",
    ])
      for (const r of [...routes, { method: "GET", path: "/api/events" }]) {
        const res = await raw(t.url, r.path, {
          method: r.method,
          headers: { origin, "content-type": "application/json", "x-tessera-client": "1" },
          ...(r.method === "GET" ? {} : { body: JSON.stringify(r.json ?? {}) }),
        });
        expect(res.status, `${origin} ${r.method} ${r.path}`).toBe(403);
        expect(detailOf(res)).toMatch(/^Origin ".*" is not allowed/);
        expect(res.headers["access-control-allow-origin"]).toBeUndefined();
      }
    expect(await checkpointFiles()).toEqual(files0);
    expect(t.server.service.presence.view().sessions).toEqual({});
  });

  it("the server's own origin is served (reads and JSON writes)", async () => {
    const origin = `http://${host}`;
    expect((await raw(t.url, "/api/sessions", { headers: { origin } })).status).toBe(200);
    const beat = await raw(t.url, "/api/presence", {
      method: "POST",
      headers: { origin, "content-type": "application/json" },
      body: JSON.stringify({ client_id: "own-origin-client", name: "Own", session_id: null }),
    });
    expect(beat.status).toBe(200);
    expect(beat.headers["access-control-allow-origin"]).toBeUndefined();
  });

  it("a listed embedding origin (TESSERA_ALLOWED_ORIGINS) is served with CORS headers and a preflight", async () => {
    const s = await startTestServer({ guard: { allowedOrigins: ["https://portal.example"] } });
    try {
      const origin = "https://portal.example";
      const pre = await raw(s.url, "/api/presence", {
        method: "OPTIONS",
        headers: {
          origin,
          "access-control-request-method": "POST",
          "access-control-request-headers": "content-type, x-tessera-client-id",
        },
      });
      expect(pre.status).toBe(204);
      expect(pre.headers["access-control-allow-origin"]).toBe(origin);
      expect(pre.headers["access-control-allow-methods"]).toMatch(/POST/);
      expect(pre.headers["access-control-allow-headers"]).toMatch(/content-type/);
      expect(pre.headers["access-control-allow-headers"]).toMatch(/x-tessera-client-id/);
      expect(pre.headers.vary).toMatch(/Origin/);
      const beat = await raw(s.url, "/api/presence", {
        method: "POST",
        headers: { origin, "content-type": "application/json" },
        body: JSON.stringify({ client_id: "embedded-client", name: "Embed", session_id: null }),
      });
      expect(beat.status).toBe(200);
      expect(beat.headers["access-control-allow-origin"]).toBe(origin);
      expect(beat.headers.vary).toMatch(/Origin/);
      // Errors carry the CORS header too, so the embedding page can read the detail.
      const missing = await raw(s.url, "/api/sessions/nope", { headers: { origin } });
      expect(missing.status).toBe(404);
      expect(missing.headers["access-control-allow-origin"]).toBe(origin);
      // The listed origin still cannot send a simple (form-like) mutation.
      const form = await raw(s.url, "/api/presence", {
        method: "POST",
        headers: { origin, "content-type": "application/x-www-form-urlencoded" },
        body: "client_id=embedded-client",
      });
      expect(form.status).toBe(415);
      // An unlisted origin gets neither a preflight nor an answer.
      const other = await raw(s.url, "/api/presence", {
        method: "OPTIONS",
        headers: { origin: "https://evil.example", "access-control-request-method": "POST" },
      });
      expect(other.status).toBe(403);
      expect(other.headers["access-control-allow-origin"]).toBeUndefined();
    } finally {
      await s.close();
    }
  });
});

describe("no simple cross-site request mutates", () => {
  it("form-encoded, multipart and text/plain bodies are a 415; nothing is written", async () => {
    for (const [type, body] of [
      ["application/x-www-form-urlencoded", "name=x"],
      [
        "multipart/form-data; boundary=b",
        "--b\r\nContent-Disposition: form-data; name=x\r\n\r\n1\r\n--b--\r\n",
      ],
      ["text/plain", '{"name":"x"}'],
      ["text/plain;charset=UTF-8", "{}"],
    ])
      for (const path of [
        `/api/sessions/${sid}/save`,
        `/api/sessions/${sid}/pending/run-all`,
        "/api/presence",
      ]) {
        const r = await raw(t.url, path, { method: "POST", headers: { "content-type": type }, body });
        expect(r.status, `${type} ${path}`).toBe(415);
        expect(detailOf(r)).toMatch(/must be JSON \(Content-Type: application\/json\)/);
      }
    expect(await checkpointFiles()).toEqual(files0);
  });

  it("a body-less POST or DELETE without X-Tessera-Client(-Id) is a 403; with it, it runs", async () => {
    const id = await t.openDemo("guarded");
    for (const [method, path] of [
      ["POST", `/api/sessions/${id}/save`],
      ["POST", `/api/sessions/${id}/pending/run-all`],
      ["POST", `/api/sessions/${id}/lock`],
      ["DELETE", `/api/sessions/${id}/lock`],
      ["DELETE", `/api/sessions/${id}`],
    ]) {
      const r = await raw(t.url, path, { method });
      expect(r.status, `${method} ${path}`).toBe(403);
      expect(detailOf(r)).toMatch(/X-Tessera-Client/);
    }
    expect(await checkpointFiles()).toEqual(files0);
    expect(t.server.service.list().map((s) => s.id)).toContain(id);
    // The same requests from a script (X-Tessera-Client) or the app (its client id) go through.
    const runAll = await raw(t.url, `/api/sessions/${id}/pending/run-all`, {
      method: "POST",
      headers: { "x-tessera-client": "1" },
    });
    expect(runAll.status).toBe(200);
    const save = await raw(t.url, `/api/sessions/${id}/save`, {
      method: "POST",
      headers: { "x-tessera-client-id": "app-client-0001" },
    });
    expect(save.status).toBe(200);
    await t.waitJob(id, (JSON.parse(save.text) as { job_id: string }).job_id);
    expect((await checkpointFiles()).length).toBe(files0.length + 1);
    const del = await raw(t.url, `/api/sessions/${id}`, {
      method: "DELETE",
      headers: { "x-tessera-client-id": "app-client-0001" },
    });
    expect(del.status).toBe(200);
  });
});

describe("token", () => {
  const token = "k9QpZr2vX7mL4sT8wY1bN6cD3fG5hJ0e";
  let s: TestServer;
  beforeAll(async () => {
    // What a non-loopback bind gets; here set explicitly on a 127.0.0.1 listener.
    s = await startTestServer({ guard: { token } });
  });
  afterAll(async () => {
    await s?.close();
  });

  it("without it, or with a wrong one, every route answers 401 {detail} with WWW-Authenticate", async () => {
    const attempts: Record<string, string>[] = [
      {},
      { authorization: "Bearer wrong-token-value" },
      { authorization: `Basic ${token}` },
      { cookie: "tessera-token-1=x" },
      { cookie: `tessera-token-${new URL(s.url).port}=wrong-token-value` },
    ];
    for (const headers of attempts)
      for (const path of ["/api/sessions", "/api/events/poll", "/", "/api/mcp", "/api/about/licenses"]) {
        const r = await raw(s.url, path, { headers });
        expect(r.status, `${JSON.stringify(headers)} ${path}`).toBe(401);
        expect(r.headers["www-authenticate"]).toMatch(/^Bearer/);
        expect(detailOf(r)).toMatch(/token/);
      }
    expect((await raw(s.url, `/api/sessions?token=nope`)).status).toBe(401);
    expect((await openSse(`${s.url}/api/events`)).status).toBe(401);
    const post = await raw(s.url, "/api/presence", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ client_id: "no-token-client", name: "x", session_id: null }),
    });
    expect(post.status).toBe(401);
    expect(s.server.service.presence.view().sessions).toEqual({});
  });

  it("accepted as a Bearer header, as ?token= (which sets an HttpOnly SameSite=Strict cookie) and as that cookie", async () => {
    const bearer = await raw(s.url, "/api/sessions", { headers: { authorization: `Bearer ${token}` } });
    expect(bearer.status).toBe(200);
    expect(bearer.headers["set-cookie"]).toBeUndefined();
    // ?token= is the guard's: routes whose query schema refuses unknown fields still answer.
    const q = await raw(s.url, `/api/fs/browse?token=${token}`);
    expect(q.status).toBe(200);
    const cookie = String(q.headers["set-cookie"]);
    const port = new URL(s.url).port;
    expect(cookie).toMatch(new RegExp(`^tessera-token-${port}=`));
    expect(cookie).toMatch(/; HttpOnly/);
    expect(cookie).toMatch(/; SameSite=Strict/);
    expect(cookie).toMatch(/; Path=\//);
    const jar = cookie.split(";")[0]!;
    expect((await raw(s.url, "/api/fs/datasets", { headers: { cookie: jar } })).status).toBe(200);
    const write = await raw(s.url, "/api/presence", {
      method: "POST",
      headers: { cookie: jar, "content-type": "application/json" },
      body: JSON.stringify({ client_id: "cookie-client", name: "C", session_id: null }),
    });
    expect(write.status).toBe(200);
    const stream = await openSse(`${s.url}/api/events?token=${token}`);
    expect(stream.status).toBe(200);
    stream.close();
    // The harness sends the token like any script.
    expect((await s.api("/api/sessions")).status).toBe(200);
  });

  it("the token does not replace the Host and Origin checks; probes need no token", async () => {
    const auth = { authorization: `Bearer ${token}` };
    expect((await raw(s.url, "/api/sessions", { headers: { ...auth, host: "evil.example" } })).status).toBe(
      403,
    );
    expect(
      (await raw(s.url, "/api/sessions", { headers: { ...auth, origin: "https://evil.example" } })).status,
    ).toBe(403);
    expect((await raw(s.url, "/api/healthz")).status).toBe(200);
    expect((await raw(s.url, "/api/readyz")).status).toBe(200);
    expect((await raw(s.url, "/api/healthz", { headers: { host: "evil.example" } })).status).toBe(403);
  });
});
