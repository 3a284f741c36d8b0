/**
 * A seeded property-based fuzzer over the whole HTTP API (issue 22): every registered route, its path
 * params, query and body generated from the route's own JSON Schema (and, for bodies the SDK checks,
 * from the schemas it checks them against: the function registry's params schemas, the recipe and
 * session request shapes), then mutated — hostile strings, wrong types, missing and unknown fields,
 * names that are built-in keys, traversal, deep nesting, raw bytes that are not JSON. Thousands of
 * requests against the real server on 127.0.0.1; none may answer 500 or above, and every error answer
 * is `{detail}`.
 */
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RouteEntry, routeTable } from "../../../src/adapters/http/app.js";
import { startTestServer, type TestServer } from "./harness.js";

/** The seed, and how many requests: fixed, so a failure replays. */
const SEED = Number(process.env.TESSERA_FUZZ_SEED ?? 22);
const RUNS = Number(process.env.TESSERA_FUZZ_RUNS ?? 2400);

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
type Schema = Record<string, unknown>;

let t: TestServer;
let sid: string;
let routes: RouteEntry[];
/** Function key → its params JSON Schema (from GET /api/functions). */
let functions: { key: string; namespace: string; name: string; schema: Schema }[];
const failures: string[] = [];
const counts = { requests: 0, byStatus: new Map<number, number>() };

beforeAll(async () => {
  t = await startTestServer({ config: { maxSessions: 1000, containerMemMb: 0 } });
  sid = await t.openDemo();
  routes = routeTable(t.server.app).filter((r) => {
    const methods = ([] as string[]).concat(r.method);
    // The event stream never ends; the web app's static files are not the API.
    return !methods.includes("HEAD") && r.url !== "/api/events" && r.url.startsWith("/api/");
  }) as RouteEntry[];
  const env = (await (await t.api("/api/functions")).json()) as {
    functions: { namespace: string; function: string; json_schema: Schema }[];
  };
  functions = env.functions.map((f) => ({
    key: `${f.namespace}.${f.function}`,
    namespace: f.namespace,
    name: f.function,
    schema: f.json_schema,
  }));
});

afterAll(async () => {
  await t?.close();
});

// ------------------------------------------------------------------ values

/** Strings meant to break things: traversal, encodings, built-in keys, control characters, sizes. */
const HOSTILE_STRINGS = [
  "",
  " ",
  "__proto__",
  "constructor",
  "toString",
  "hasOwnProperty",
  "../../etc/passwd",
  "..%2F..%2Fetc%2Fpasswd",
  "/etc/passwd",
  "file:///etc/passwd",
  "http://169.254.169.254/",
  "\u0000",
  "a\u0000b",
  "\u202e\u200b",
  "%",
  "%E0%A4%A",
  "obs:__proto__",
  "X:constructor",
  "tables:__proto__:obs:x",
  "layers:toString:g",
  "uns:a/b/../../c",
  "NaN",
  "-1",
  "1e309",
  "a".repeat(300),
  "é".repeat(200),
  "x/".repeat(600),
];

const hostileString = fc.constantFrom(...HOSTILE_STRINGS);
const anyString = fc.oneof(
  { weight: 3, arbitrary: fc.string({ maxLength: 12 }) },
  { weight: 2, arbitrary: hostileString },
  { weight: 1, arbitrary: fc.string({ unit: "grapheme", maxLength: 8 }) },
);
const hostileNumber = fc.constantFrom(0, -1, 1, 1.5, -0, 2 ** 31, 2 ** 53, -(2 ** 53), 1e308, -1e308, 1e-308);
const anyNumber = fc.oneof(
  fc.integer({ min: -5, max: 400 }),
  hostileNumber,
  fc.double({ noNaN: true, noDefaultInfinity: true }),
);
/** Any JSON value, bounded in size. */
const anyJson: fc.Arbitrary<Json> = fc.letrec<{ v: Json }>((tie) => ({
  v: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    fc.constant(null),
    fc.boolean(),
    anyNumber,
    anyString,
    fc.array(tie("v"), { maxLength: 4 }),
    fc.dictionary(anyString, tie("v"), { maxKeys: 4 }),
  ),
})).v;

function resolveRef(root: Schema, ref: string): Schema {
  const name = decodeURIComponent(ref.replace(/^#\/definitions\//, ""));
  return ((root.definitions as Record<string, Schema> | undefined)?.[name] ?? {}) as Schema;
}

/**
 * A value for `schema` (a JSON Schema as the routes and the registry write them): mostly valid, with
 * hostile values mixed in at every level so validation and what lies behind it are both exercised.
 */
function fromSchema(schema: Schema | undefined, root: Schema, depth = 0): fc.Arbitrary<Json> {
  if (!schema || depth > 5) return anyJson;
  if (typeof schema.$ref === "string") return fromSchema(resolveRef(root, schema.$ref), root, depth + 1);
  const alts = (schema.anyOf ?? schema.oneOf) as Schema[] | undefined;
  if (alts?.length) return fc.oneof(...alts.map((s) => fromSchema(s, root, depth + 1)));
  let valid: fc.Arbitrary<Json>;
  if (Array.isArray(schema.enum)) valid = fc.constantFrom(...(schema.enum as Json[]));
  else if (schema.const !== undefined) valid = fc.constant(schema.const as Json);
  else {
    const types = ([] as string[]).concat((schema.type as string | string[] | undefined) ?? []);
    if (types.length === 0) return anyJson;
    valid = fc.oneof(...types.map((ty) => typed(ty, schema, root, depth)));
  }
  return fc.oneof({ weight: 6, arbitrary: valid }, { weight: 1, arbitrary: anyJson });
}

function typed(ty: string, schema: Schema, root: Schema, depth: number): fc.Arbitrary<Json> {
  switch (ty) {
    case "null":
      return fc.constant(null);
    case "boolean":
      return fc.boolean();
    case "integer": {
      const min = typeof schema.minimum === "number" ? schema.minimum : -3;
      const max = typeof schema.maximum === "number" ? Math.min(schema.maximum, min + 500) : min + 500;
      return fc.oneof(fc.integer({ min, max }), hostileNumber);
    }
    case "number":
      return anyNumber;
    case "string": {
      const max = Math.min(typeof schema.maxLength === "number" ? schema.maxLength : 24, 40);
      return fc.oneof(fc.string({ maxLength: max }), hostileString);
    }
    case "array": {
      const items = fromSchema(schema.items as Schema | undefined, root, depth + 1);
      const maxLength = Math.min(typeof schema.maxItems === "number" ? schema.maxItems : 4, 4);
      return fc.array(items, { maxLength });
    }
    case "object": {
      const props = (schema.properties ?? {}) as Record<string, Schema>;
      const required = (schema.required as string[] | undefined) ?? [];
      const known = Object.keys(props);
      const rec: Record<string, fc.Arbitrary<Json>> = {};
      for (const k of known) rec[k] = fromSchema(props[k], root, depth + 1);
      const base = known.length
        ? fc.record(rec, { requiredKeys: required.filter((k) => known.includes(k)) })
        : fc.dictionary(anyString, anyJson, { maxKeys: 3 });
      // Now and then an unknown field or a built-in key beside the known ones.
      return fc.tuple(base, fc.option(fc.tuple(anyString, anyJson), { freq: 5 })).map(([o, extra]) => {
        const out = { ...(o as Record<string, Json>) };
        if (extra)
          Object.defineProperty(out, extra[0], { value: extra[1], enumerable: true, writable: true });
        return out;
      });
    }
    default:
      return anyJson;
  }
}

// ------------------------------------------------------------------ requests

/** A request as generated. */
interface Req {
  method: string;
  path: string;
  body?: { kind: "json"; value: Json } | { kind: "raw"; text: string; type: string };
}

/** A path param: usually a real id, else something hostile. */
function paramValue(name: string): fc.Arbitrary<string> {
  if (name === "id")
    return fc.oneof({ weight: 8, arbitrary: fc.constant("$SID") }, { weight: 1, arbitrary: anyString });
  if (name === "element")
    return fc.oneof(fc.constantFrom("morphology", "cell_boundaries", "transcripts"), anyString);
  if (name === "level" || name === "col" || name === "row")
    return fc.oneof(fc.integer({ min: -2, max: 5 }).map(String), anyString);
  if (name === "name") return fc.oneof(fc.constant("demo.sdata.zarr.zip"), anyString);
  return fc.oneof({ weight: 2, arbitrary: anyString }, { weight: 1, arbitrary: fc.uuid() });
}

/** A field path for `/data/*`, from the real names and the grammar, or hostile. */
const fieldPath = fc.oneof(
  fc
    .tuple(
      fc.constantFrom(
        "obs",
        "var",
        "obsm",
        "varm",
        "obsp",
        "varp",
        "X",
        "layers",
        "uns",
        "raw",
        "tables:table:obs",
        "shapes",
      ),
      fc.constantFrom(
        "cell_type",
        "spatial",
        "total_counts",
        "gene_0",
        "__proto__",
        "constructor",
        "",
        "a:b",
      ),
    )
    .map(([s, k]) => `${s}:${k}`),
  anyString,
);

/** The body of routes whose body the SDK checks (no route schema): the schemas it checks against. */
function sdkBody(method: string, url: string): fc.Arbitrary<Json> | null {
  const descriptor = fc.oneof(
    {
      weight: 4,
      arbitrary: fc.constantFrom(...functions).chain((f) =>
        fromSchema(f.schema, f.schema).map((params) => ({
          namespace: f.namespace,
          function: f.name,
          params,
        })),
      ),
    },
    { weight: 1, arbitrary: fromSchema(undefined, {}) },
  );
  if (method === "POST" && url === "/api/sessions")
    return fc.oneof(
      fc.record(
        {
          source: fc.record({ kind: fc.constant("load"), path: fc.oneof(fc.constant("$DEMO"), anyString) }),
          name: fc.option(anyString, { nil: undefined }),
        },
        { requiredKeys: ["source"] },
      ),
      descriptor.map((d) => ({ source: { kind: "read", ...(d as object) } }) as Json),
      anyJson,
    ) as fc.Arbitrary<Json>;
  if (url.endsWith("/jobs") || url.endsWith("/jobs/stage")) return descriptor as fc.Arbitrary<Json>;
  if (url.includes("/recipe/"))
    return fc
      .record(
        {
          meta: fc.record({ name: anyString }),
          steps: fc.array(descriptor, { maxLength: 3 }),
          params: fc.option(
            fc.array(
              fc.record({
                name: anyString,
                schema: fc.record({ type: fc.constantFrom("string", "number", "integer") }),
              }),
              { maxLength: 2 },
            ),
            { nil: undefined },
          ),
          values: fc.option(fc.dictionary(anyString, anyJson, { maxKeys: 2 }), { nil: undefined }),
          mode: fc.option(fc.oneof(fc.constantFrom("run", "stage"), anyString), { nil: undefined }),
        },
        { requiredKeys: ["steps"] },
      )
      .map((r) => r as Json);
  if (url.includes("/shape-annotations"))
    return fc.record({
      kind: fc.oneof(fc.constantFrom("polygon", "box", "text", "line", "arrow", "ellipse"), anyString),
      points: fc.array(fc.tuple(anyNumber, anyNumber), { maxLength: 6 }),
      text: fc.option(anyString, { nil: undefined }),
      color: fc.option(fc.oneof(fc.constant("#ff0000"), anyString), { nil: undefined }),
    }) as fc.Arbitrary<Json>;
  if (url.includes("/pending/") && method === "PUT")
    return fc.record({ params: fc.dictionary(anyString, anyJson, { maxKeys: 3 }) }) as fc.Arbitrary<Json>;
  return null;
}

/** Query strings: from the querystring schema when there is one, plus hostile pairs. */
function queryOf(schema: Schema | undefined): fc.Arbitrary<string> {
  const props = Object.keys((schema?.properties ?? {}) as object);
  const known = props.length
    ? fc.array(
        fc.tuple(
          fc.constantFrom(...props),
          fc.oneof(fc.string({ maxLength: 10 }), hostileString, fc.integer().map(String)),
        ),
        { maxLength: 3 },
      )
    : fc.constant([] as [string, string][]);
  const extra = fc.array(fc.tuple(anyString, anyString), { maxLength: 1 });
  return fc.tuple(known, extra).map(([a, b]) => {
    const q = new URLSearchParams();
    for (const [k, v] of [...a, ...b]) q.append(k, v);
    const s = q.toString();
    return s ? `?${s}` : "";
  });
}

/** A whole request for one route. */
function requestFor(route: RouteEntry): fc.Arbitrary<Req> {
  const methods = ([] as string[]).concat(route.method);
  const names = [...route.url.matchAll(/:([A-Za-z]+)/g)].map((m) => m[1]!);
  const params = fc.tuple(...names.map((n) => paramValue(n)));
  const star = route.url.endsWith("*")
    ? route.url.includes("/data/")
      ? fieldPath
      : anyString
    : fc.constant("");
  const schema = route.schema ?? {};
  const bodySchema = schema.body as Schema | undefined;
  const body: fc.Arbitrary<Req["body"]> = fc.oneof(
    {
      weight: 8,
      arbitrary: (bodySchema
        ? fromSchema(bodySchema, bodySchema)
        : (sdkBody(methods[0]!, route.url) ?? anyJson)
      ).map((value) => ({ kind: "json" as const, value })),
    },
    {
      weight: 1,
      arbitrary: fc
        .constantFrom("{", "[1,2", "", "null", '{"a":1}{', "\u0000", `${"[".repeat(80)}${"]".repeat(80)}`)
        .map((text) => ({ kind: "raw" as const, text, type: "application/json" })),
    },
    {
      weight: 1,
      arbitrary: fc
        .constantFrom("text/plain", "application/x-www-form-urlencoded", "application/xml")
        .map((type) => ({ kind: "raw" as const, text: "a=1", type })),
    },
  );
  return fc
    .tuple(fc.constantFrom(...methods), params, star, queryOf(schema.querystring as Schema | undefined), body)
    .map(([method, ps, s, q, b]) => {
      let i = 0;
      const path = route.url
        .replace(/:([A-Za-z]+)/g, () => encodeURIComponent(ps[i++]!))
        .replace(/\*$/, encodeURIComponent(s));
      const withBody = method === "POST" || method === "PUT" || method === "PATCH" || method === "DELETE";
      return { method, path: `${path}${q}`, ...(withBody ? { body: b } : {}) };
    });
}

async function send(req: Req): Promise<void> {
  const path = req.path.replaceAll("%24SID", sid).replaceAll("$SID", sid);
  const init: RequestInit & { json?: unknown } = { method: req.method };
  if (req.body?.kind === "json") {
    const text = JSON.stringify(req.body.value, (_k, v) => (v === "$DEMO" ? t.demo : v));
    init.headers = { "content-type": "application/json" };
    init.body = text;
  } else if (req.body?.kind === "raw") {
    init.headers = { "content-type": req.body.type };
    init.body = req.body.text;
  }
  const r = await t.api(path, init);
  counts.requests++;
  counts.byStatus.set(r.status, (counts.byStatus.get(r.status) ?? 0) + 1);
  const type = r.headers.get("content-type") ?? "";
  const text = type.includes("json") ? await r.text() : "";
  if (!type.includes("json")) await r.arrayBuffer();
  if (r.status >= 500) failures.push(`${req.method} ${path} → ${r.status} ${text.slice(0, 300)}`);
  else if (r.status >= 400 && type.includes("json")) {
    const body = JSON.parse(text) as Record<string, unknown>;
    if (typeof body.detail !== "string" || Object.keys(body).length !== 1)
      failures.push(`${req.method} ${path} → ${r.status} not {detail}: ${text.slice(0, 200)}`);
  }
  // Keep a session to aim at: the fuzzer may delete or close the demo.
  if (!t.server.service.list().some((s) => s.id === sid)) sid = await t.openDemo();
}

describe("fuzzing every route from its schema", () => {
  it(`${RUNS} seeded requests: none answers 500 or above, every error is {detail}`, async () => {
    const request = fc.constantFrom(...routes).chain(requestFor);
    const t0 = performance.now();
    await fc.assert(
      fc.asyncProperty(request, async (req) => {
        await send(req);
        return true;
      }),
      { seed: SEED, numRuns: RUNS, endOnFailure: true },
    );
    const secs = (performance.now() - t0) / 1000;
    const statuses = [...counts.byStatus.entries()].sort(([a], [b]) => a - b).map(([s, n]) => `${s}×${n}`);
    console.log(
      `fuzz: ${counts.requests} requests over ${routes.length} routes in ${secs.toFixed(1)} s: ${statuses.join(" ")}`,
    );
    expect(counts.requests).toBeGreaterThanOrEqual(2000);
    expect(failures.slice(0, 20)).toEqual([]);
  }, 180_000);
});
