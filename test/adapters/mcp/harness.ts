/**
 * The MCP tests' client: the SDK's own `Client` over `StreamableHTTPClientTransport` to the real
 * server's `POST /api/mcp` on 127.0.0.1, with a helper that calls a tool and returns its result.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";

/** A connected MCP client and a `call` helper. */
export interface McpTestClient {
  readonly client: Client;
  /** Call a tool; returns the raw result (isError, content, structuredContent). */
  call(name: string, args?: Record<string, unknown>): Promise<CallToolResult>;
  /** Call a tool that must succeed; returns its structured content. */
  ok<T = Record<string, unknown>>(name: string, args?: Record<string, unknown>): Promise<T>;
  close(): Promise<void>;
}

/** Connect to the server at `baseUrl`. */
export async function connectMcp(baseUrl: string): Promise<McpTestClient> {
  const client = new Client({ name: "tessera-test", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${baseUrl}/api/mcp`)));
  const call = async (name: string, args: Record<string, unknown> = {}) =>
    (await client.callTool({ name, arguments: args })) as CallToolResult;
  return {
    client,
    call,
    async ok<T>(name: string, args: Record<string, unknown> = {}) {
      const r = await call(name, args);
      if (r.isError) throw new Error(`${name} failed: ${JSON.stringify(r.content)}`);
      return r.structuredContent as T;
    },
    close: () => client.close(),
  };
}
