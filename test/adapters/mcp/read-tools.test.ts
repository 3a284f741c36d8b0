/**
 * POST /api/mcp over real HTTP with the SDK's MCP client: the tool listing, and the read-only tools
 * (guides, sessions, data dir, readers, the function registry, jobs), and bad arguments as tool errors.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GUIDE_TOPICS } from "../../../src/adapters/mcp/guides.js";
import { startTestServer, type TestServer } from "../http/harness.js";
import { connectMcp, type McpTestClient } from "./harness.js";

let t: TestServer;
let mcp: McpTestClient;
let sid: string;
beforeAll(async () => {
  t = await startTestServer();
  sid = await t.openDemo("demo-session");
  mcp = await connectMcp(t.url);
});
afterAll(async () => {
  await mcp?.close();
  await t?.close();
});

describe("the endpoint", () => {
  it("initialises with Tessera's instructions (core loop, no undo)", () => {
    const text = mcp.client.getInstructions() ?? "";
    expect(text).toMatch(/list_sessions → set_active_session/);
    expect(text).toMatch(/NO UNDO/);
    expect(mcp.client.getServerVersion()?.name).toBe("tessera");
  });

  it("lists tools with names clients accept and object schemas", async () => {
    const { tools } = await mcp.client.listTools();
    const names = tools.map((x) => x.name);
    for (const n of [
      "read_guide",
      "list_sessions",
      "get_session",
      "list_datasets",
      "browse_data_dir",
      "list_readers",
      "search_functions",
      "describe_function",
      "list_jobs",
      "get_job",
    ])
      expect(names).toContain(n);
    for (const x of tools) {
      expect(x.name).toMatch(/^[a-zA-Z0-9_-]{1,64}$/);
      expect(x.inputSchema.type).toBe("object");
    }
  });

  it("lists exactly the 33 tools of agent-mcp.md section 3, in its order", async () => {
    const names = (await mcp.client.listTools()).tools.map((x) => x.name);
    expect(names).toEqual([
      "read_guide",
      "list_sessions",
      "get_session",
      "create_session",
      "set_active_session",
      "release_control",
      "save_checkpoint",
      "close_session",
      "list_datasets",
      "browse_data_dir",
      "list_readers",
      "search_functions",
      "describe_function",
      "run_function",
      "list_jobs",
      "get_job",
      "list_recipes",
      "run_recipe",
      "list_plots",
      "view_plot",
      "view_display",
      "update_display",
      "add_display",
      "inspect_region",
      "annotate_region",
      "subset_to_region",
      "list_shape_annotations",
      "add_shape_annotation",
      "delete_shape_annotation",
      "get_obs_summary",
      "get_table",
      "search_genes",
      "export_figure",
    ]);
  });

  it("answers GET and DELETE with 405 (stateless: no standalone SSE stream)", async () => {
    for (const method of ["GET", "DELETE"]) {
      const r = await t.api("/api/mcp", { method });
      expect(r.status).toBe(405);
      expect(r.headers.get("allow")).toBe("POST");
    }
  });

  it("answers a POST without the MCP Accept header 406, not 500", async () => {
    const r = await t.api("/api/mcp", {
      method: "POST",
      json: { jsonrpc: "2.0", id: 1, method: "tools/list", params: {} },
    });
    expect(r.status).toBe(406);
    // The API's one error shape, naming the JSON-RPC code.
    expect(await r.json()).toEqual({ detail: expect.stringMatching(/Not Acceptable.*JSON-RPC -32000/) });
  });
});

describe("read-only tools", () => {
  it("read_guide returns each guide's markdown", async () => {
    for (const topic of GUIDE_TOPICS) {
      const g = await mcp.ok<{ topic: string; text: string }>("read_guide", { topic });
      expect(g.topic).toBe(topic);
      expect(g.text.length).toBeGreaterThan(500);
      expect(g.text.startsWith("# ")).toBe(true);
    }
  });

  it("list_sessions shows the open session, no active session and the app URL", async () => {
    const r = await mcp.ok<{
      sessions: { id: string; name: string; lock: unknown }[];
      active_session_id: unknown;
    }>("list_sessions");
    expect(r.sessions.map((s) => s.id)).toEqual([sid]);
    expect(r.sessions[0]!.name).toBe("demo-session");
    expect(r.sessions[0]!.lock).toBeNull();
    expect(r.active_session_id).toBeNull();
  });

  it("get_session returns fields, displays, history and the active table as the SDK holds them", async () => {
    const r = await mcp.ok<Record<string, unknown>>("get_session", { session_id: sid, history_limit: 5 });
    const st = JSON.parse(JSON.stringify(t.server.service.session(sid).state()));
    expect(r.fields).toEqual(st.fields);
    expect(r.displays).toEqual(st.app_state.displays);
    expect(r.active_table).toBe(t.server.service.session(sid).activeTable);
    expect((r.summary as { id: string }).id).toBe(sid);
  });

  it("get_session without a session and no active one is a tool error saying what to do", async () => {
    const r = await mcp.call("get_session", {});
    expect(r.isError).toBe(true);
    expect((r.content[0] as { text: string }).text).toMatch(/set_active_session/);
    expect(r.structuredContent).toMatchObject({ status: 400 });
  });

  it("list_datasets finds the demo checkpoint; browse_data_dir lists it and refuses ../", async () => {
    const d = await mcp.ok<{ datasets: { path: string }[] }>("list_datasets");
    expect(d.datasets.length).toBe(1);
    expect(JSON.stringify(d.datasets[0])).toMatch(/demo/);
    const b = await mcp.ok<{ entries: { name: string; kind: string }[] }>("browse_data_dir", {});
    expect(b.entries.some((e) => e.kind === "dataset" && e.name.startsWith("demo"))).toBe(true);
    const bad = await mcp.call("browse_data_dir", { path: "../.." });
    expect(bad.isError).toBe(true);
    expect(bad.structuredContent).toMatchObject({ status: 400 });
  });

  it("list_readers lists the io/read keys with params and path_kind", async () => {
    const r = await mcp.ok<{
      readers: { key: string; params: { name: string; required: boolean; path_kind: string | null }[] }[];
    }>("list_readers");
    expect(r.readers.length).toBeGreaterThan(0);
    for (const x of r.readers) expect(x.key).toMatch(/^(io|read)\./);
    const withPath = r.readers.flatMap((x) => x.params).filter((p) => p.path_kind !== null);
    expect(withPath.length).toBeGreaterThan(0);
  });

  it("search_functions finds sc.pp.pca by words, within a namespace, bounded by limit", async () => {
    const r = await mcp.ok<{ functions: { key: string }[]; total: number; library_versions: object }>(
      "search_functions",
      { query: "pca", namespace: "sc" },
    );
    expect(r.functions.map((f) => f.key)).toContain("sc.pp.pca");
    expect(r.functions.every((f) => f.key.startsWith("sc."))).toBe(true);
    const all = await mcp.ok<{ functions: unknown[]; total: number }>("search_functions", { limit: 3 });
    expect(all.functions.length).toBe(3);
    expect(all.total).toBeGreaterThan(3);
  });

  it("describe_function returns the registry entry's schema verbatim; an unknown key is a 404 tool error", async () => {
    const r = await mcp.ok<{ key: string; json_schema: object }>("describe_function", { key: "sc.pp.pca" });
    expect(r.json_schema).toEqual(t.server.service.registry.get("sc.pp.pca")!.json_schema);
    const bad = await mcp.call("describe_function", { key: "sc.pp.nope" });
    expect(bad.isError).toBe(true);
    expect(bad.structuredContent).toMatchObject({ status: 404 });
  });

  it("list_jobs and get_job read a job a script ran", async () => {
    const r = await t.api(`/api/sessions/${sid}/jobs`, {
      method: "POST",
      json: { namespace: "custom", function: "noop", params: {} },
    });
    const { job_id } = (await r.json()) as { job_id: string };
    await t.waitJob(sid, job_id);
    const jobs = await mcp.ok<{ history: { id: string }[]; queue: unknown[] }>("list_jobs", {
      session_id: sid,
    });
    expect(jobs.history.map((h) => h.id)).toContain(job_id);
    const j = await mcp.ok<{ status: string; log: string; entry: { id: string } }>("get_job", {
      session_id: sid,
      job_id,
    });
    expect(j.status).toBe("completed");
    expect(j.entry.id).toBe(job_id);
  });
});

describe("bad arguments are tool errors naming the field", () => {
  it.each([
    ["read_guide", { topic: "cooking" }, /topic/],
    ["read_guide", {}, /missing argument "topic"/],
    ["get_session", { session_id: sid, history_limit: "5" }, /history_limit/],
    ["search_functions", { bogus: 1 }, /unknown argument "bogus"/],
    ["get_session", { session_id: "no-such" }, /no session/],
  ])("%s %j", async (name, args, msg) => {
    const r = await mcp.call(name, args as Record<string, unknown>);
    expect(r.isError).toBe(true);
    expect((r.content[0] as { text: string }).text).toMatch(msg);
  });

  it("an unknown tool is a tool error, and the server keeps answering", async () => {
    const r = await mcp.call("drop_tables", {});
    expect(r.isError).toBe(true);
    expect((await mcp.client.listTools()).tools.length).toBeGreaterThan(0);
  });
});

describe("catalog tools", () => {
  it("list_recipes lists the same recipes as GET /api/recipes", async () => {
    const r = await mcp.ok<{ recipes: { name: string }[] }>("list_recipes");
    const http = (await (await t.api("/api/recipes")).json()) as { recipes: { name: string }[] };
    expect(r.recipes.map((x) => x.name)).toEqual(http.recipes.map((x) => x.name));
    expect(r.recipes.length).toBeGreaterThan(0);
  });

  it("list_plots lists the session's plots with figure_available", async () => {
    const r = await mcp.ok<{ plots: unknown[] }>("list_plots", { session_id: sid });
    expect(r.plots).toEqual(
      t.server.service
        .session(sid)
        .appState.plots.map((p) => ({ ...p, figure_available: expect.any(Boolean) })),
    );
  });

  it("search_genes puts prefix matches first, then substring matches, case-insensitively", async () => {
    const s = t.server.service.session(sid);
    const names = Array.from(s.data.tables[s.activeTable!]!.var.index.values as ArrayLike<unknown>, String);
    const probe = names[0]!.slice(0, 2).toLowerCase();
    const r = await mcp.ok<{ genes: string[]; total: number }>("search_genes", {
      session_id: sid,
      query: probe.toUpperCase(),
      limit: 5000,
    });
    const starts = names.filter((n) => n.toLowerCase().startsWith(probe)).sort();
    const contains = names
      .filter((n) => !n.toLowerCase().startsWith(probe) && n.toLowerCase().includes(probe))
      .sort();
    expect(r.genes).toEqual([...starts, ...contains]);
    expect(r.total).toBe(starts.length + contains.length);
    const one = await mcp.ok<{ genes: string[] }>("search_genes", {
      session_id: sid,
      query: probe,
      limit: 1,
    });
    expect(one.genes).toEqual([starts[0]]);
  });
});

describe("get_obs_summary", () => {
  const obs = () => {
    const s = t.server.service.session(sid);
    return s.data.tables[s.activeTable!]!.obs;
  };

  it("a categorical column: counts per category, largest first, summing to the cell count", async () => {
    const [name, col] = Object.entries(obs().columns).find(([, c]) => c.kind === "categorical")!;
    if (col.kind !== "categorical" || col.categories.kind !== "string")
      throw new Error("demo has no string categorical");
    const r = await mcp.ok<{ kind: string; counts: { value: string; count: number }[]; n: number }>(
      "get_obs_summary",
      { session_id: sid, column: name },
    );
    expect(r.kind).toBe("categorical");
    const cats = col.categories.values;
    for (const { value, count } of r.counts)
      expect(count).toBe(Array.from(col.codes).filter((c) => c >= 0 && cats[c] === value).length);
    expect(r.counts.reduce((n, c) => n + c.count, 0)).toBe(
      Array.from(col.codes).filter((c) => c >= 0).length,
    );
    for (let i = 1; i < r.counts.length; i++)
      expect(r.counts[i - 1]!.count).toBeGreaterThanOrEqual(r.counts[i]!.count);
  });

  it("a numeric column: min, max, mean and median as computed here", async () => {
    const [name, col] = Object.entries(obs().columns).find(
      ([, c]) => c.kind === "dense" && c.dtype !== "bool",
    )!;
    if (col.kind !== "dense") throw new Error("unreachable");
    const v = Array.from(col.data as ArrayLike<number>, Number).filter((x) => !Number.isNaN(x));
    const sorted = [...v].sort((a, b) => a - b);
    const mid = sorted.length / 2;
    const median = sorted.length % 2 ? sorted[Math.floor(mid)]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
    const r = await mcp.ok<Record<string, number>>("get_obs_summary", { session_id: sid, column: name });
    expect(r.kind).toBe("numeric");
    expect(r.min).toBe(Math.min(...v));
    expect(r.max).toBe(Math.max(...v));
    expect(r.mean).toBeCloseTo(v.reduce((a, b) => a + b, 0) / v.length, 9);
    expect(r.median).toBe(median);
    expect(r.n_nan).toBe(col.data.length - v.length);
  });

  it("an unknown column is a 404 tool error naming it", async () => {
    const r = await mcp.call("get_obs_summary", { session_id: sid, column: "no_such_col" });
    expect(r.structuredContent).toMatchObject({ status: 404 });
    expect((r.content[0] as { text: string }).text).toMatch(/no_such_col/);
  });
});

describe("guides as resources", () => {
  it("lists the four guides and reads each with the same text as read_guide", async () => {
    const { resources } = await mcp.client.listResources();
    expect(resources.map((r) => r.uri)).toEqual(GUIDE_TOPICS.map((g) => `tessera://guides/${g}`));
    for (const topic of GUIDE_TOPICS) {
      const r = await mcp.client.readResource({ uri: `tessera://guides/${topic}` });
      const viaTool = await mcp.ok<{ text: string }>("read_guide", { topic });
      expect((r.contents[0] as { text: string }).text).toBe(viaTool.text);
    }
  });

  it("an unknown resource is an error, and the server keeps answering", async () => {
    await expect(mcp.client.readResource({ uri: "tessera://guides/../../etc/passwd" })).rejects.toThrow(
      /no resource/,
    );
    expect((await mcp.client.listResources()).resources.length).toBe(4);
  });
});
