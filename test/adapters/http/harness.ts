/**
 * Shared setup of the HTTP tests: a temp data dir with a small demo checkpoint, the real server
 * listening on 127.0.0.1 (a free port), and helpers to talk to it with fetch, decode Arrow payloads,
 * and open the demo as a session.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Table, tableFromIPC } from "apache-arrow";
import type { GuardOptions } from "../../../src/adapters/http/guard.js";
import { type RunningServer, startServer } from "../../../src/adapters/http/server.js";
import { generateDemo } from "../../../src/sdk/demo/generate.js";
import { writeCheckpointNamed } from "../../../src/sdk/io/checkpoint/write.js";
import type { ServiceConfig } from "../../../src/sdk/session/config.js";

/** A running test server on a fresh data dir holding the demo checkpoint. */
export interface TestServer {
  readonly server: RunningServer;
  /** Base URL (no trailing slash); the API is under `${url}/api`. */
  readonly url: string;
  readonly dataDir: string;
  /** Absolute path of the demo checkpoint in the data dir. */
  readonly demo: string;
  /**
   * fetch relative to the base URL (`api("/api/sessions")`). Like any script it sends
   * `X-Tessera-Client` (body-less mutating requests need it) and, when the server has a token, the token.
   */
  api(
    path: string,
    init?: RequestInit & { json?: unknown; clientId?: string; clientName?: string },
  ): Promise<Response>;
  /** Create a session from the demo checkpoint and wait until it is ready; returns its id. */
  openDemo(name?: string): Promise<string>;
  /** Wait until a job ends (polls `GET /jobs/{id}`); returns its final status body. */
  waitJob(sessionId: string, jobId: string, timeoutMs?: number): Promise<{ job_id: string; status: string }>;
  /** Stop the server and delete the data dir. */
  close(): Promise<void>;
}

/** Options of `startTestServer`. */
export interface TestServerOptions {
  /** Demo size (default 300 cells × 40 genes, 256 px image, 500 transcripts). */
  demo?: Parameters<typeof generateDemo>[0];
  /** Configuration overrides (data dir, work dir and recipes are set already). */
  config?: Partial<ServiceConfig>;
  /** Plugins (default tessera, testkit and scanpy). */
  plugins?: string[];
  /** Guard overrides (token, allowed hosts and origins); the server still listens on 127.0.0.1. */
  guard?: Partial<GuardOptions>;
}

/** Start a server on a fresh data dir with a small demo checkpoint in it. */
export async function startTestServer(opts: TestServerOptions = {}): Promise<TestServer> {
  const dataDir = await mkdtemp(join(tmpdir(), "tessera-http-"));
  const sd = generateDemo(opts.demo ?? { nCells: 300, nGenes: 40, imageSize: 256, nTranscripts: 500 });
  const { path: demo } = await writeCheckpointNamed(sd, dataDir, "demo", { name: "demo" });
  const server = await startServer({
    env: {},
    plugins: opts.plugins ?? ["tessera", "testkit", "scanpy"],
    config: {
      dataDir,
      computePoolWorkers: 2,
      nThreads: 1,
      workDir: join(dataDir, ".work"),
      // No resource.sample events unless a test asks: event streams stay deterministic.
      resourceHz: 0,
      ...opts.config,
    },
    port: 0,
    host: "127.0.0.1",
    ...(opts.guard ? { guard: opts.guard } : {}),
  });
  const url = server.url;
  const api: TestServer["api"] = (path, init = {}) => {
    const { json, clientId, clientName, ...rest } = init;
    const headers = new Headers(rest.headers);
    if (json !== undefined) {
      headers.set("content-type", "application/json");
      rest.body = JSON.stringify(json);
    }
    if (!headers.has("x-tessera-client")) headers.set("x-tessera-client", "test-harness");
    if (server.token && !headers.has("authorization")) headers.set("authorization", `Bearer ${server.token}`);
    if (clientId) headers.set("x-tessera-client-id", clientId);
    if (clientName) headers.set("x-tessera-client-name", clientName);
    return fetch(`${url}${path}`, { ...rest, headers });
  };
  const waitJob: TestServer["waitJob"] = async (sessionId, jobId, timeoutMs = 60_000) => {
    const t0 = Date.now();
    for (;;) {
      const r = await api(`/api/sessions/${sessionId}/jobs/${jobId}`);
      const body = (await r.json()) as { job_id: string; status: string };
      if (!["queued", "running", "pending"].includes(body.status)) return body;
      if (Date.now() - t0 > timeoutMs) throw new Error(`job ${jobId} still ${body.status}`);
      await new Promise((res) => setTimeout(res, 25));
    }
  };
  const openDemo: TestServer["openDemo"] = async (name) => {
    const s = server.service;
    const session = await s.createSession({
      source: { kind: "load", path: demo },
      ...(name ? { name } : {}),
    });
    await session.ready;
    if (session.status !== "ready") throw new Error(`demo did not load: ${session.summary().error}`);
    return session.id;
  };
  return {
    server,
    url,
    dataDir,
    demo,
    api,
    openDemo,
    waitJob,
    async close() {
      await server.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** Decode an Arrow IPC stream response body. */
export async function arrowOf(res: Response): Promise<Table> {
  return tableFromIPC(new Uint8Array(await res.arrayBuffer()));
}
