/**
 * Progress notifications over real HTTP: a `tools/call` with a progressToken is answered as an SSE
 * stream carrying `notifications/progress` for the real job (a PCA's own progress reports, a recipe's
 * steps) and then the result; a call without one stays a JSON answer. The SDK's MCP client with
 * `onprogress` receives them, and a raw POST shows the framing.
 */
import type { Progress } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "../http/harness.js";
import { connectMcp, type McpTestClient } from "./harness.js";

let t: TestServer;
let mcp: McpTestClient;
let sid: string;
beforeAll(async () => {
  t = await startTestServer();
  sid = await t.openDemo();
  mcp = await connectMcp(t.url);
  await mcp.ok("set_active_session", { session_id: sid, take_control: true });
});
afterAll(async () => {
  await mcp?.close();
  await t?.close();
});

/** Call a tool with `onprogress`; its result and the progress received. */
async function withProgress(name: string, args: Record<string, unknown>) {
  const seen: Progress[] = [];
  const result = await mcp.client.callTool({ name, arguments: args }, undefined, {
    onprogress: (p) => seen.push(p),
    timeout: 600_000,
  });
  return { result: result.structuredContent as Record<string, unknown>, seen };
}

describe("progress notifications", () => {
  it("run_function with wait forwards a PCA's progress (increasing, ending at 1) before the result", async () => {
    for (const fn of ["normalize_total", "log1p"])
      await mcp.ok("run_function", { namespace: "sc.pp", function: fn, params: {} });
    const { result, seen } = await withProgress("run_function", {
      namespace: "sc.pp",
      function: "pca",
      params: { n_comps: 5 },
    });
    expect(result.status).toBe("completed");
    expect(seen.length).toBeGreaterThanOrEqual(2);
    for (let i = 1; i < seen.length; i++) expect(seen[i]!.progress).toBeGreaterThan(seen[i - 1]!.progress);
    expect(seen.at(-1)!.progress).toBe(1);
    expect(seen.every((p) => p.total === 1)).toBe(true);
    // The job's own messages come through (pca reports its phases).
    expect(seen.some((p) => typeof p.message === "string" && p.message.length > 0)).toBe(true);
  });

  it("run_recipe reports each step's end as a share of the whole", async () => {
    const { result, seen } = await withProgress("run_recipe", { recipe: "annotate_demo" });
    const steps = result.steps as { status: string }[];
    expect(steps.every((s) => s.status === "completed")).toBe(true);
    const n = steps.length;
    for (let i = 1; i <= n; i++) expect(seen.some((p) => Math.abs(p.progress - i / n) < 1e-12)).toBe(true);
    for (let i = 1; i < seen.length; i++) expect(seen[i]!.progress).toBeGreaterThan(seen[i - 1]!.progress);
  });

  it("on the wire: a call with a progressToken is an SSE answer (progress, then the result); without, JSON", async () => {
    const post = (id: number, meta: Record<string, unknown>) =>
      t.api("/api/mcp", {
        method: "POST",
        headers: { accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-06-18" },
        json: {
          jsonrpc: "2.0",
          id,
          method: "tools/call",
          params: {
            name: "run_function",
            arguments: { namespace: "custom", function: "sleep", params: { ms: 900 } },
            ...meta,
          },
        },
      });
    const streamed = await post(1, { _meta: { progressToken: "tok-1" } });
    expect(streamed.status).toBe(200);
    expect(streamed.headers.get("content-type")).toMatch(/^text\/event-stream/);
    const frames = (await streamed.text())
      .split("\n\n")
      .map((f) => f.split("\n").find((l) => l.startsWith("data: ")))
      .filter((l): l is string => !!l)
      .map(
        (l) => JSON.parse(l.slice(6)) as { method?: string; id?: number; params?: { progressToken: string } },
      );
    const last = frames.at(-1)!;
    expect(last.id).toBe(1);
    const progress = frames.filter((f) => f.method === "notifications/progress");
    expect(progress.length).toBeGreaterThanOrEqual(2);
    expect(progress.every((f) => f.params?.progressToken === "tok-1")).toBe(true);

    const plain = await post(2, {});
    expect(plain.headers.get("content-type")).toMatch(/^application\/json/);
    expect(((await plain.json()) as { id: number }).id).toBe(2);
  });

  it("a client that leaves mid-stream does not hurt the server; the job still completes", async () => {
    const ctrl = new AbortController();
    const r = await t.api("/api/mcp", {
      method: "POST",
      signal: ctrl.signal,
      headers: { accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-06-18" },
      json: {
        jsonrpc: "2.0",
        id: 9,
        method: "tools/call",
        params: {
          name: "run_function",
          arguments: { namespace: "custom", function: "sleep", params: { ms: 1500 } },
          _meta: { progressToken: 9 },
        },
      },
    });
    expect(r.headers.get("content-type")).toMatch(/^text\/event-stream/);
    ctrl.abort();
    const jobs = t.server.service.session(sid).queueView();
    const job = jobs.find((j) => j.descriptor?.function === "sleep");
    expect(job).toBeDefined();
    expect((await t.waitJob(sid, job!.job_id)).status).toBe("completed");
    // The endpoint still answers.
    expect((await mcp.ok<{ sessions: unknown[] }>("list_sessions")).sessions).toHaveLength(1);
  });
});
