/**
 * What one MCP tool is: a name, a description, the JSON Schema of its own arguments (small literal
 * schemas: the tools' wrappers, never an operation's params, which come from the registry), and a
 * function over the SDK. Arguments are checked against that schema first, strictly (no coercion), so
 * a bad argument is a tool error naming the field, never a transport failure.
 */
import { Ajv, type ErrorObject, type ValidateFunction } from "ajv";
import { BadRequestError } from "../../sdk/errors.js";
import type { Service } from "../../sdk/session/service.js";
import type { McpAgent } from "./agent.js";

/** A JSON Schema object as the MCP tool listing carries it (`type: "object"` at the top). */
export interface ToolSchema {
  type: "object";
  properties?: Record<string, object>;
  required?: readonly string[];
  additionalProperties?: boolean;
  [key: string]: unknown;
}

/** What a tool's function is given. */
export interface ToolContext {
  readonly service: Service;
  /** The agent (its client id, active session, lock etiquette). */
  readonly agent: McpAgent;
  /** Reports progress when the client sent a progressToken (a no-op otherwise). */
  readonly progress: (fraction: number, message?: string) => Promise<void>;
  /** Aborted when the client cancels the request or the connection closes. */
  readonly signal: AbortSignal;
}

/** A tool's answer: structured content (also sent as JSON text), and images when it renders one. */
export interface ToolAnswer {
  readonly structured: Record<string, unknown>;
  /** PNG images (base64 is made by the server). */
  readonly images?: readonly Uint8Array[];
}

/** One tool. */
export interface McpTool {
  readonly name: string;
  readonly description: string;
  readonly inputSchema: ToolSchema;
  run(args: Record<string, unknown>, ctx: ToolContext): Promise<ToolAnswer>;
}

/** The pattern every tool name keeps to (the strictest clients' rule). */
export const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

const ajv = new Ajv({ coerceTypes: false, useDefaults: true, allErrors: false, strict: false });
const validators = new WeakMap<McpTool, ValidateFunction>();

/** The first schema error as a sentence naming the argument. */
function describe(tool: string, e: ErrorObject): string {
  const at = e.instancePath ? e.instancePath.slice(1).replaceAll("/", ".") : "";
  if (e.keyword === "additionalProperties")
    return `${tool}: unknown argument "${[at, (e.params as { additionalProperty: string }).additionalProperty].filter(Boolean).join(".")}"`;
  if (e.keyword === "required")
    return `${tool}: missing argument "${[at, (e.params as { missingProperty: string }).missingProperty].filter(Boolean).join(".")}"`;
  return `${tool}: argument "${at || "(arguments)"}" ${e.message ?? "is invalid"}`;
}

/**
 * The arguments checked against the tool's schema, defaults filled (a copy; the caller's object is
 * not changed). A `BadRequestError` naming the field otherwise.
 */
export function checkArgs(tool: McpTool, args: unknown): Record<string, unknown> {
  let v = validators.get(tool);
  if (!v) {
    v = ajv.compile(tool.inputSchema);
    validators.set(tool, v);
  }
  const copy = structuredClone(args ?? {}) as Record<string, unknown>;
  if (!v(copy)) throw new BadRequestError(describe(tool.name, v.errors![0]!));
  return copy;
}

/** Define a tool (typed arguments for the function body; the schema is the checked truth). */
export function tool<A>(def: {
  name: string;
  description: string;
  inputSchema: ToolSchema;
  run(args: A, ctx: ToolContext): Promise<ToolAnswer>;
}): McpTool {
  if (!TOOL_NAME.test(def.name)) throw new Error(`MCP tool name "${def.name}" breaks ${TOOL_NAME}`);
  return def as unknown as McpTool;
}

/** Small schema helpers for the tools' own arguments. */
export const S = {
  str: (description: string, extra: object = {}) => ({ type: "string", description, ...extra }),
  int: (description: string, dflt: number, min = 0, max = 10_000) => ({
    type: "integer",
    description,
    default: dflt,
    minimum: min,
    maximum: max,
  }),
  bool: (description: string, dflt: boolean) => ({ type: "boolean", description, default: dflt }),
  /** The session argument: optional, the agent's active session when absent. */
  session: {
    type: "string",
    minLength: 1,
    maxLength: 200,
    description: "Session id (default: the agent's active session).",
  },
} as const;
