/**
 * The MCP server of one request (stateless: a fresh `Server` per POST, LIBRARIES.md section 7). The
 * low-level `Server` lists the tools with their JSON Schemas verbatim and calls them; every failure of
 * a tool — a bad argument, a locked session, an unknown id — is a tool error (`isError: true`) with
 * the message and status the HTTP API would give, never a protocol or transport error.
 */
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  CallToolRequestSchema,
  type CallToolResult,
  ErrorCode,
  ListResourcesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { TesseraError } from "../../sdk/errors.js";
import type { Service } from "../../sdk/session/service.js";
import { TESSERA_VERSION } from "../../sdk/version.js";
import type { McpAgent } from "./agent.js";
import { GUIDE_TOPICS, type GuideTopic, readGuide } from "./guides.js";
import { checkArgs, type McpTool, type ToolAnswer } from "./tool.js";
import { ALL_TOOLS } from "./tools/index.js";

/** The server instructions (agent-mcp.md section 1): the core loop, no undo, the app URL. */
export function instructions(appUrl: string | null): string {
  return [
    "Tessera is a spatial-omics analysis app; you drive the same sessions human viewers see.",
    "Core loop: list_sessions → set_active_session (take_control: true) → inspect (get_session, get_obs_summary, get_table, search_functions, describe_function, view_display) → act (run_function, run_recipe, update_display, annotate_region …) → verify visually (view_display, view_plot) → save_checkpoint → release_control.",
    "Selections: survey (view_display viewport 'fit') → zoom → draft a polygon in world coordinates (pixel_to_world) → mark it (mark_polygons) → inspect_region → act.",
    "There is NO UNDO: a compute changes the session's data in place. Inspect before you act; save before risky steps.",
    "Read the guides with read_guide (tessera, spatial-biology, analysis-playbooks, vision-and-selection).",
    appUrl
      ? `The app is at ${appUrl} — point the user there to watch.`
      : "The app URL is not configured (TESSERA_APP_URL).",
  ].join("\n");
}

/**
 * A tool's answer as the protocol's result: structured content plus the same as JSON text. Images
 * come first (agent-mcp.md 4.1: the PNG, then the metadata block).
 */
function toResult(answer: ToolAnswer): CallToolResult {
  return {
    content: [
      ...(answer.images ?? []).map((png) => ({
        type: "image" as const,
        data: Buffer.from(png).toString("base64"),
        mimeType: "image/png",
      })),
      { type: "text", text: JSON.stringify(answer.structured) },
    ],
    structuredContent: answer.structured,
  };
}

/** A failure as a tool error carrying the HTTP status the API would answer with. */
function toError(err: unknown): CallToolResult {
  const status = err instanceof TesseraError ? err.status : 500;
  const message = err instanceof Error ? err.message : String(err);
  return {
    isError: true,
    content: [{ type: "text", text: `${status >= 500 ? "internal error" : `error ${status}`}: ${message}` }],
    structuredContent: { error: message, status },
  };
}

/** The URI prefix of the guides as resources. */
export const GUIDE_URI = "tessera://guides/";

/** Build the server of one request. */
export function buildMcpServer(
  service: Service,
  agent: McpAgent,
  tools: readonly McpTool[] = ALL_TOOLS,
): Server {
  const byName = new Map(tools.map((t) => [t.name, t]));
  const server = new Server(
    { name: "tessera", version: TESSERA_VERSION },
    { capabilities: { tools: {}, resources: {} }, instructions: instructions(service.config.appUrl) },
  );
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: tools.map((t) => ({ name: t.name, description: t.description, inputSchema: t.inputSchema })),
  }));
  // The guides as resources too (`tessera://guides/<topic>`), for clients that read resources.
  server.setRequestHandler(ListResourcesRequestSchema, async () => ({
    resources: GUIDE_TOPICS.map((topic) => ({
      uri: `${GUIDE_URI}${topic}`,
      name: `guide: ${topic}`,
      mimeType: "text/markdown",
    })),
  }));
  server.setRequestHandler(ReadResourceRequestSchema, async (req) => {
    const topic = req.params.uri.startsWith(GUIDE_URI) ? req.params.uri.slice(GUIDE_URI.length) : "";
    if (!(GUIDE_TOPICS as readonly string[]).includes(topic))
      throw new McpError(ErrorCode.InvalidParams, `no resource "${req.params.uri}"`);
    return {
      contents: [
        { uri: req.params.uri, mimeType: "text/markdown", text: await readGuide(topic as GuideTopic) },
      ],
    };
  });
  server.setRequestHandler(CallToolRequestSchema, async (req, extra) => {
    const t = byName.get(req.params.name);
    if (!t) return toError(new TesseraError(`no tool "${req.params.name}"`, 404));
    const token = req.params._meta?.progressToken;
    // Progress must increase with every notification (MCP): a repeated or lower fraction is dropped.
    let last = Number.NEGATIVE_INFINITY;
    const progress = async (fraction: number, message?: string) => {
      if (token === undefined || !(fraction > last)) return;
      last = fraction;
      await extra
        .sendNotification({
          method: "notifications/progress",
          params: { progressToken: token, progress: fraction, total: 1, ...(message ? { message } : {}) },
        })
        .catch(() => undefined);
    };
    // A tool waiting on a long job is not idleness: the agent stays alive (and keeps its lock) meanwhile.
    const stopKeepAlive = agent.keepAlive();
    try {
      const args = checkArgs(t, req.params.arguments);
      return toResult(await t.run(args, { service, agent, progress, signal: extra.signal }));
    } catch (err) {
      return toError(err);
    } finally {
      stopKeepAlive();
    }
  });
  return server;
}
