/**
 * `POST /api/mcp`: MCP streamable HTTP in stateless JSON mode (agent-mcp.md section 1). Each POST gets a
 * fresh server and a fresh `WebStandardStreamableHTTPServerTransport`; the transport's `Response` is
 * copied into an ordinary fastify reply, so the app's hooks (guard, gzip, `Vary`, logging) apply as to
 * any route. No SSE here: GET and DELETE answer 405. The transport's own Host check is off (the app's
 * guard does that job for every route).
 */
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

/** Registers `POST /api/mcp` (and 405 for the other methods). */
export const mcpRoutes: RouteModule = (app, { service }) => {
  const agent = new McpAgent(service);
  app.addHook("onClose", async () => agent.stop());

  app.post(MCP_PATH, async (req: FastifyRequest, reply: FastifyReply) => {
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    const server = buildMcpServer(service, agent);
    try {
      await server.connect(transport);
      const res = await transport.handleRequest(webRequest(req), { parsedBody: req.body });
      void reply.code(res.status);
      res.headers.forEach((value, key) => {
        if (key !== "content-length") void reply.header(key, value);
      });
      const body = await res.text();
      return reply.send(res.status >= 400 ? withDetail(body) : body === "" ? undefined : body);
    } finally {
      await transport.close().catch(() => undefined);
      await server.close().catch(() => undefined);
    }
  });

  const notAllowed = async (_req: FastifyRequest, reply: FastifyReply) =>
    reply.code(405).header("allow", "POST").send({
      detail: "the MCP endpoint is stateless JSON: POST only (no SSE stream, no session to delete)",
    });
  app.get(MCP_PATH, notAllowed);
  app.delete(MCP_PATH, notAllowed);
};
