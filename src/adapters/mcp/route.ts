/**
 * `POST /api/mcp`: MCP streamable HTTP, stateless (agent-mcp.md section 1). Each POST gets a fresh
 * server and a fresh `WebStandardStreamableHTTPServerTransport`; the transport's `Response` is copied
 * into an ordinary fastify reply, so the app's hooks (guard, gzip, `Vary`, logging) apply as to any
 * route. The answer is JSON, except for a `tools/call` that carries a `progressToken`: a JSON answer
 * cannot hold the progress notifications a long tool sends before its result, so that one POST is
 * answered as an SSE stream (the notifications, then the result, then the stream ends) — still one
 * POST per exchange and no server-side session. GET (a standalone stream) and DELETE answer 405. The
 * transport's own Host check is off (the app's guard does that job for every route).
 */
import { Readable } from "node:stream";
import type { ReadableStream as NodeReadableStream } from "node:stream/web";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import type { FastifyReply, FastifyRequest } from "fastify";
import type { RouteModule } from "../http/deps.js";
import { McpAgent } from "./agent.js";
import { buildMcpServer } from "./server.js";

/** The MCP route's path. */
export const MCP_PATH = "/api/mcp";

/** A fastify request as a web `Request` (headers and URL; the body is handed over parsed). */
function webRequest(req: FastifyRequest): Request {
  const headers = new Headers();
  for (const [k, v] of Object.entries(req.headers)) {
    if (v === undefined) continue;
    for (const one of Array.isArray(v) ? v : [v]) headers.append(k, one);
  }
  return new Request(`http://${req.headers.host ?? "localhost"}${req.url}`, { method: req.method, headers });
}

/**
 * A transport-level refusal (406 without the MCP Accept header, 400 for a body that is no JSON-RPC
 * message …) answered in the API's one error shape, `{detail}`, naming the JSON-RPC code. A client
 * never parses a non-2xx answer as JSON-RPC (the SDK's client reports its text), so nothing is lost.
 */
function withDetail(body: string): string {
  let err: { code?: unknown; message?: unknown } | undefined;
  try {
    err = (JSON.parse(body) as { error?: { code?: unknown; message?: unknown } }).error;
  } catch {
    // Not JSON: the text itself is the detail.
  }
  const detail = err?.message
    ? `${String(err.message)}${err.code !== undefined ? ` (JSON-RPC ${String(err.code)})` : ""}`
    : body || "the MCP request was refused";
  return JSON.stringify({ detail });
}

/** Whether a POST carries a `tools/call` with a `progressToken` (answered as a stream, see above). */
export function wantsProgress(body: unknown): boolean {
  const messages = Array.isArray(body) ? body : [body];
  return messages.some((m) => {
    if (!m || typeof m !== "object") return false;
    const { method, params } = m as { method?: unknown; params?: { _meta?: { progressToken?: unknown } } };
    const token = params?._meta?.progressToken;
    return method === "tools/call" && (typeof token === "string" || typeof token === "number");
  });
}

/** Registers `POST /api/mcp` (and 405 for the other methods). */
export const mcpRoutes: RouteModule = (app, { service }) => {
  const agent = new McpAgent(service);
  app.addHook("onClose", async () => agent.stop());

  app.post(MCP_PATH, async (req: FastifyRequest, reply: FastifyReply) => {
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: !wantsProgress(req.body),
    });
    const server = buildMcpServer(service, agent);
    const finish = async () => {
      await transport.close().catch(() => undefined);
      await server.close().catch(() => undefined);
    };
    let streaming = false;
    try {
      await server.connect(transport);
      const res = await transport.handleRequest(webRequest(req), { parsedBody: req.body });
      void reply.code(res.status);
      res.headers.forEach((value, key) => {
        if (key !== "content-length") void reply.header(key, value);
      });
      if (res.ok && res.body && res.headers.get("content-type")?.startsWith("text/event-stream")) {
        // The stream ends after the result; a client that goes away ends it too (and the tool's
        // signal aborts when the transport closes).
        const body = Readable.fromWeb(res.body as NodeReadableStream<Uint8Array>);
        body.once("close", () => void finish());
        streaming = true;
        return reply.send(body);
      }
      const body = await res.text();
      return reply.send(res.status >= 400 ? withDetail(body) : body === "" ? undefined : body);
    } finally {
      if (!streaming) await finish();
    }
  });

  const notAllowed = async (_req: FastifyRequest, reply: FastifyReply) =>
    reply.code(405).header("allow", "POST").send({
      detail: "the MCP endpoint is stateless: POST only (no standalone SSE stream, no session to delete)",
    });
  app.get(MCP_PATH, notAllowed);
  app.delete(MCP_PATH, notAllowed);
};
