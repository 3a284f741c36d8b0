/**
 * A client's mistake is never a 500 (issue 22, part 3): JSON nested past the bound, names that are
 * built-in keys, fastify's and node's own refusals, file-system errors from a client's path, unbounded
 * strings and polygons, and recipe requests too large to stage without holding the event loop. Every
 * answer is a 4xx whose `{detail}` says what was wrong.
 */
import { connect } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_JSON_DEPTH } from "../../../src/sdk/input-limits.js";
import { startTestServer, type TestServer } from "./harness.js";

let t: TestServer;
let sid: string;
beforeAll(async () => {
  t = await startTestServer();
  sid = await t.openDemo();
});
afterAll(async () => {
  await t?.close();
});

/** The `{detail}` of a 4xx answer (and that it is one). */
async function detail4xx(r: Response, label: string): Promise<string> {
  expect(r.status, label).toBeGreaterThanOrEqual(400);
  expect(r.status, label).toBeLessThan(500);
  const body = (await r.json()) as { detail?: unknown };
  expect(Object.keys(body), label).toEqual(["detail"]);
  expect(typeof body.detail, label).toBe("string");
  return body.detail as string;
}

const post = (path: string, body: string) =>
  t.api(path, { method: "POST", headers: { "content-type": "application/json" }, body });

/** `[[[…]]]` nested `n` deep. */
const nested = (n: number) => `${"[".repeat(n)}${"]".repeat(n)}`;

/** A raw HTTP exchange on a socket; resolves to what the server wrote. */
function rawRequest(text: string): Promise<string> {
  const { port } = new URL(t.url);
  return new Promise((resolve) => {
    let got = "";
    const s = connect(Number(port), "127.0.0.1", () => s.write(text));
    s.on("data", (d) => {
      got += d.toString();
    });
    s.on("close", () => resolve(got));
    s.on("error", () => resolve(got));
    setTimeout(() => s.destroy(), 3000).unref();
  });
}

describe("JSON nesting", () => {
  it(`a body nested deeper than ${MAX_JSON_DEPTH} levels is a 400, on every kind of body`, async () => {
    const deep = nested(20_000);
    const cases: [string, string][] = [
      [
        `/api/sessions/${sid}/jobs`,
        `{"namespace":"custom","function":"rename_obs_column","params":{"old_name":${deep}}}`,
      ],
      [`/api/sessions/${sid}/jobs/stage`, `{"namespace":"custom","function":"noop","params":{"a":${deep}}}`],
      ["/api/sessions", `{"source":${deep}}`],
      [
        "/api/sessions",
        `{"source":{"kind":"read","namespace":"read","function":"read_data","params":{"path":${deep}}}}`,
      ],
      [`/api/sessions/${sid}/recipe/run`, `{"meta":{"name":"x"},"steps":[],"mode":${deep}}`],
      [`/api/sessions/${sid}/recipe/preflight`, `{"meta":{"name":"x"},"steps":${deep}}`],
      [`/api/sessions/${sid}/shape-annotations`, `{"kind":${deep}}`],
      [`/api/sessions/${sid}/save`, `{"path":${deep}}`],
      [
        `/api/sessions/${sid}/displays`,
        `{"type":"spatial_canvas","encoding":{"coords":${deep}},"viewport":{}}`,
      ],
      [`/api/sessions/${sid}/subset`, `{"polygons":${deep}}`],
      ["/api/presence", `{"client_id":"abcdefgh12","name":${deep}}`],
    ];
    for (const [path, body] of cases) {
      const d = await detail4xx(await post(path, body), path);
      expect(d, path).toMatch(new RegExp(`deeper than ${MAX_JSON_DEPTH} levels`));
    }
    // Objects nest the same way; strings holding brackets are not nesting.
    const objects = `{"a":${'{"a":'.repeat(100)}1${"}".repeat(100)}}`;
    expect(await detail4xx(await post(`/api/sessions/${sid}/jobs/stage`, objects), "objects")).toMatch(
      /deeper/,
    );
    const inString = JSON.stringify({ namespace: "custom", function: "noop", params: { s: nested(500) } });
    const r = await post(`/api/sessions/${sid}/jobs/stage`, inString);
    expect(r.status).toBe(400);
    expect(await r.text()).not.toMatch(/deeper/);
    // At the bound it is accepted (and then judged on its content).
    const atBound = `{"namespace":"custom","function":"noop","params":{"a":${nested(MAX_JSON_DEPTH - 2)}}}`;
    expect(await detail4xx(await post(`/api/sessions/${sid}/jobs/stage`, atBound), "at bound")).not.toMatch(
      /deeper/,
    );
  });
});

describe("names that are built-in object keys", () => {
  it("path params and body keys named __proto__, constructor, toString … are 'not found', never a 500", async () => {
    const keys = ["__proto__", "constructor", "toString", "hasOwnProperty", "valueOf"];
    for (const k of keys) {
      const e = encodeURIComponent(k);
      for (const path of [
        `/api/sessions/${sid}/data/${encodeURIComponent(`obs:${k}`)}`,
        `/api/sessions/${sid}/data/${encodeURIComponent(`var:${k}`)}`,
        `/api/sessions/${sid}/data/${encodeURIComponent(`obsm:${k}`)}`,
        `/api/sessions/${sid}/data/${encodeURIComponent(`obsp:${k}`)}`,
        `/api/sessions/${sid}/data/${encodeURIComponent(`layers:${k}:g`)}`,
        `/api/sessions/${sid}/data/${encodeURIComponent(`X:${k}`)}`,
        `/api/sessions/${sid}/data/${encodeURIComponent(`tables:${k}:obs:cell_type`)}`,
        `/api/sessions/${sid}/shapes/${e}/geoarrow`,
        `/api/sessions/${sid}/obs/${e}/values`,
        `/api/sessions/${sid}/table?path=${encodeURIComponent(`tables:${k}:obs`)}`,
        `/api/sessions/${sid}/table?path=${encodeURIComponent(`shapes:${k}`)}`,
        `/api/sessions/${sid}/table?path=${encodeURIComponent(`points:${k}`)}`,
        `/api/sessions/${sid}/jobs/${e}`,
        `/api/sessions/${e}`,
      ]) {
        await detail4xx(await t.api(path), path);
      }
      for (const body of [
        { levels: { [k]: 0 } },
        { slots: { [k]: ["obs", "var", "uns"] } },
        { include: { images: [k] } },
      ]) {
        const r = await t.api(`/api/sessions/${sid}/save`, { method: "POST", json: { name: "x", ...body } });
        if (k === "__proto__") expect(r.status).toBeLessThan(500);
        else expect(await detail4xx(r, JSON.stringify(body))).toMatch(/unknown/);
      }
    }
  });

  it("a region set or recipe value named like a built-in key is an ordinary name", async () => {
    const r = await t.api(`/api/sessions/${sid}/annotate`, {
      method: "POST",
      json: { region_set: "constructor", category: "toString", cell_indices: [0, 1] },
    });
    expect(r.status).toBe(200);
    const { job_id } = (await r.json()) as { job_id: string };
    expect((await t.waitJob(sid, job_id)).status).toBe("completed");
    const col = await t.api(`/api/sessions/${sid}/obs/constructor/values`);
    expect(col.status).toBe(200);
    // A recipe param named `constructor` takes its default when no value is given (not Object).
    const pre = await t.api(`/api/sessions/${sid}/recipe/preflight`, {
      method: "POST",
      json: {
        meta: { name: "r" },
        params: [{ name: "constructor", schema: { type: "string", default: "renamed" } }],
        steps: [
          {
            namespace: "custom",
            function: "rename_obs_column",
            params: { old_name: "cell_type", new_name: { $param: "constructor" } },
          },
        ],
      },
    });
    expect(pre.status).toBe(200);
    expect(JSON.stringify(await pre.json())).toMatch(/obs:renamed/);
  });
});

describe("fastify's and node's own refusals", () => {
  it("a URL with bad percent-encoding is a 400 in the {detail} shape", async () => {
    const d = await detail4xx(await t.api("/api/sessions/%E0%A4%A"), "bad url");
    expect(d).toMatch(/malformed URL/);
  });

  it("a request node cannot parse is answered {detail}, not fastify's {error, message}", async () => {
    const got = await rawRequest("GET /api/sessions HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Bad: a\u0001b\r\n\r\n");
    expect(got).toMatch(/^HTTP\/1\.1 400/);
    const body = JSON.parse(got.slice(got.indexOf("\r\n\r\n") + 4)) as Record<string, unknown>;
    expect(Object.keys(body)).toEqual(["detail"]);
    expect(body.detail).toMatch(/malformed HTTP request/);
    // A GET whose chunked body node refuses (Content-Length beside Transfer-Encoding: smuggling).
    const smuggled = await rawRequest(
      "GET /api/sessions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
    );
    expect(smuggled).toMatch(/^HTTP\/1\.1 400/);
    expect(Object.keys(JSON.parse(smuggled.slice(smuggled.indexOf("\r\n\r\n") + 4)) as object)).toEqual([
      "detail",
    ]);
    // The server is still there.
    expect((await t.api("/api/healthz")).status).toBe(200);
  });

  it("unknown routes and methods, bad JSON, empty JSON and schema violations answer {detail}", async () => {
    expect(await detail4xx(await t.api("/api/nothing"), "404")).toMatch(/no route/);
    expect(await detail4xx(await t.api("/api/sessions", { method: "PATCH", json: {} }), "PATCH")).toMatch(
      /no route/,
    );
    expect(await detail4xx(await post("/api/sessions", "{"), "bad json")).toMatch(/not valid JSON/);
    expect(await detail4xx(await post("/api/sessions", ""), "empty")).toMatch(/empty/);
    expect(await detail4xx(await t.api(`/api/sessions/${sid}/var-names?limit=abc`), "querystring")).toMatch(
      /limit/,
    );
    expect(
      await detail4xx(await post("/api/sessions", '{"__proto__":{"x":1},"source":{}}'), "proto key"),
    ).toBeTruthy();
  });
});

describe("file-system errors from a client's path", () => {
  it("a name over 255 bytes, a path too long, a file as a folder are a 400 saying so", async () => {
    const long = "a".repeat(300);
    const cases: [string, RequestInit & { json?: unknown }][] = [
      [`/api/fs/browse?path=${long}`, {}],
      ["/api/sessions", { method: "POST", json: { source: { kind: "load", path: long } } }],
      [`/api/sessions/${sid}/save`, { method: "POST", json: { path: `${long}.sdata.zarr.zip` } }],
      [`/api/sessions/${sid}/save`, { method: "POST", json: { folder: long } }],
      [`/api/sessions/${sid}/save`, { method: "POST", json: { prefix: long } }],
      [`/api/sessions/${sid}/save`, { method: "POST", json: { name: "n".repeat(600) } }],
      [
        `/api/sessions/${sid}/points-transform`,
        { method: "POST", json: { affine: [1, 0, 0, 0, 1, 0], path: long } },
      ],
      ["/api/sessions", { method: "POST", json: { source: { kind: "load", path: "x".repeat(5000) } } }],
      [
        "/api/sessions",
        { method: "POST", json: { source: { kind: "load", path: "demo.sdata.zarr.zip/x" } } },
      ],
      [`/api/fs/browse?path=${encodeURIComponent(`${t.demo}/inner`)}`, {}],
    ];
    for (const [path, init] of cases) {
      const d = await detail4xx(await t.api(path, init), path.slice(0, 80));
      expect(d).not.toMatch(/^internal|ENAMETOOLONG:|EISDIR:|ENOTDIR:/);
    }
  });

  it("a reader param naming a missing file is a 400 at session creation, as for load", async () => {
    const read = await t.api("/api/sessions", {
      method: "POST",
      json: {
        source: { kind: "read", namespace: "read", function: "read_data", params: { path: "nope.h5ad" } },
      },
    });
    expect(await detail4xx(read, "read")).toMatch(/params\.path: "nope\.h5ad": no such file or directory/);
    const load = await t.api("/api/sessions", {
      method: "POST",
      json: { source: { kind: "load", path: "nope.h5ad" } },
    });
    expect(await detail4xx(load, "load")).toMatch(/no such file or directory/);
  });

  it("a URL is never a path under the data dir (file://, http://)", async () => {
    for (const path of ["file:///etc/passwd", "http://169.254.169.254/latest/x.zarr.zip", "FILE:///etc"]) {
      const r = await t.api("/api/sessions", {
        method: "POST",
        json: { source: { kind: "read", namespace: "read", function: "read_data", params: { path } } },
      });
      expect(await detail4xx(r, path)).toMatch(/is a URL/);
    }
  });
});

describe("bounded input", () => {
  it("names and free text past their bound are a 400 naming the field", async () => {
    const cases: [string, unknown, RegExp][] = [
      [
        `/api/sessions/${sid}/jobs`,
        {
          namespace: "custom",
          function: "rename_obs_column",
          params: { old_name: "cell_type", new_name: "n".repeat(257) },
        },
        /new_name.*256/,
      ],
      [
        `/api/sessions/${sid}/jobs/stage`,
        {
          namespace: "custom",
          function: "annotate_cells",
          params: { region_set: "r", category: "c".repeat(300), cell_indices: [0] },
        },
        /category/,
      ],
      [
        `/api/sessions/${sid}/shape-annotations`,
        { kind: "text", points: [[0, 0]], text: "t".repeat(10_001) },
        /text has 10001/,
      ],
      [
        `/api/sessions/${sid}/annotate`,
        { region_set: "r".repeat(300), category: "c", cell_indices: [0] },
        /region_set/,
      ],
      [
        `/api/sessions/${sid}/jobs/stage`,
        { namespace: "sc.pp", function: "normalize_total", params: { key_added: "k".repeat(10_001) } },
        /key_added.*10000/,
      ],
    ];
    for (const [path, json, re] of cases) {
      const r = await t.api(path, { method: "POST", json });
      expect(await detail4xx(r, path)).toMatch(re);
    }
  });

  it("a display's strings are bounded by the app-state schema (colormap 64, names 256, field paths 1,000)", async () => {
    const spatial = (encoding: Record<string, unknown>) => ({
      type: "spatial_canvas",
      encoding: { coords: "obsm:spatial", ...encoding },
      viewport: { target: [0, 0], zoom: 1 },
    });
    const cases: [Record<string, unknown>, RegExp][] = [
      [spatial({ colormap: "v".repeat(65) }), /colormap must NOT have more than 64 characters/],
      [spatial({ coords: `obsm:${"s".repeat(1000)}` }), /coords must NOT have more than 1000/],
      [spatial({ legend_title: "t".repeat(257) }), /legend_title/],
      [spatial({ category_colors: { "obs:cell_type": { T: "#".repeat(65) } } }), /64 characters/],
      [
        { ...spatial({}), viewport: { target: [0, 0, 0, 0], zoom: 1 } },
        /target must NOT have more than 3 items/,
      ],
    ];
    for (const [body, re] of cases) {
      const r = await t.api(`/api/sessions/${sid}/displays`, { method: "POST", json: body });
      expect(await detail4xx(r, JSON.stringify(body).slice(0, 60))).toMatch(re);
    }
    const ok = await t.api(`/api/sessions/${sid}/displays`, {
      method: "POST",
      json: spatial({ colormap: "viridis" }),
    });
    expect(ok.status).toBe(200);
  });

  it("a polygon over 100,000 vertices is a 400 (selections and drawn annotations)", async () => {
    const ring = Array.from({ length: 100_001 }, (_, i) => [i % 300, Math.floor(i / 300)]);
    const sub = await t.api(`/api/sessions/${sid}/subset`, { method: "POST", json: { polygons: [ring] } });
    expect(await detail4xx(sub, "subset")).toMatch(/100000/);
    const ann = await t.api(`/api/sessions/${sid}/shape-annotations`, {
      method: "POST",
      json: { kind: "polygon", points: ring },
    });
    expect(await detail4xx(ann, "annotation")).toMatch(/100000/);
    const cells = await t.api(`/api/sessions/${sid}/jobs/stage`, {
      method: "POST",
      json: {
        namespace: "custom",
        function: "annotate_cells",
        params: { region_set: "r", category: "c", polygons: [ring] },
      },
    });
    expect(await detail4xx(cells, "annotate_cells")).toMatch(/polygons/);
  });

  it("a recipe request of more than 1,000 steps is a 400; 1,000 staged steps hold the event loop briefly", async () => {
    const step = (i: number) => ({
      namespace: "custom",
      function: "rename_obs_column",
      params: { old_name: `a${i}`, new_name: `b${i}` },
    });
    const tooMany = Array.from({ length: 1001 }, (_, i) => step(i));
    const r = await t.api(`/api/sessions/${sid}/recipe/run`, {
      method: "POST",
      json: { meta: { name: "big" }, steps: tooMany, mode: "stage" },
    });
    expect(await detail4xx(r, "1001 steps")).toMatch(/at most 1000/);
    // The server runs in this process: measure the longest gap between 1 ms timer ticks while staging.
    let maxGap = 0;
    let last = performance.now();
    const tick = setInterval(() => {
      const now = performance.now();
      maxGap = Math.max(maxGap, now - last);
      last = now;
    }, 1);
    try {
      const ok = await t.api(`/api/sessions/${sid}/recipe/run`, {
        method: "POST",
        json: { meta: { name: "big" }, steps: tooMany.slice(0, 1000), mode: "stage" },
      });
      expect(ok.status).toBe(200);
      expect(((await ok.json()) as { staged: number }).staged).toBe(1000);
    } finally {
      clearInterval(tick);
    }
    // 20,000 steps held it for 4 s; a capped request holds it for a fraction of a second.
    expect(maxGap).toBeLessThan(500);
  });
});
