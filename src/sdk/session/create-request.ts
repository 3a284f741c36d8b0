/**
 * The body of `POST /api/sessions` (and the MCP tool that opens a session), checked strictly before
 * anything is touched: unknown fields, wrong types and a missing source are refused with a
 * `BadRequestError` that names the field, so a typo never silently becomes a default. Containment of
 * the paths is the session's job (`Session.create`); this module only checks the shape, plus (for a
 * `load`) that the contained path exists, so a typo does not cost a session slot.
 */
import { BadRequestError } from "../errors.js";
import type { SessionFunctions } from "./functions.js";
import { containPath, requireReadable } from "./paths.js";
import type { CreateSessionRequest, SessionSource } from "./types.js";

/** Longest accepted session name and load id (characters). */
const MAX_TEXT = 500;

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function typeName(v: unknown): string {
  return v === null ? "null" : Array.isArray(v) ? "array" : typeof v;
}

/** Refuse any key of `obj` not in `allowed`, naming it with its location. */
function onlyKeys(obj: Record<string, unknown>, allowed: readonly string[], at: string): void {
  for (const k of Object.keys(obj)) {
    if (!allowed.includes(k))
      throw new BadRequestError(`${at}: unknown field "${k}" (allowed: ${allowed.join(", ")})`);
  }
}

/** A non-blank string of at most MAX_TEXT characters, or a BadRequestError naming `at`. */
function text(v: unknown, at: string): string {
  if (typeof v !== "string") throw new BadRequestError(`${at} must be a string, got ${typeName(v)}`);
  if (v.trim() === "") throw new BadRequestError(`${at} must not be blank`);
  if (v.length > MAX_TEXT) throw new BadRequestError(`${at} is longer than ${MAX_TEXT} characters`);
  return v;
}

/** Check the `source` object of a create request. */
function parseSource(v: unknown): SessionSource {
  if (v === undefined) throw new BadRequestError(`body: "source" is required`);
  if (!isRecord(v)) throw new BadRequestError(`source must be an object, got ${typeName(v)}`);
  if (v.kind === "load") {
    onlyKeys(v, ["kind", "path"], "source");
    if (v.path === undefined) throw new BadRequestError(`source: "path" is required for kind "load"`);
    return { kind: "load", path: text(v.path, "source.path") };
  }
  if (v.kind === "read") {
    onlyKeys(v, ["kind", "namespace", "function", "params"], "source");
    if (v.namespace === undefined)
      throw new BadRequestError(`source: "namespace" is required for kind "read" ("read" or "io")`);
    if (v.namespace !== "read" && v.namespace !== "io")
      throw new BadRequestError(
        `source.namespace must be "read" or "io", got ${JSON.stringify(v.namespace)}`,
      );
    if (v.function === undefined) throw new BadRequestError(`source: "function" is required for kind "read"`);
    const fn = text(v.function, "source.function");
    if (v.params !== undefined && !isRecord(v.params))
      throw new BadRequestError(`source.params must be an object, got ${typeName(v.params)}`);
    return { kind: "read", namespace: v.namespace, function: fn, params: { ...(v.params ?? {}) } };
  }
  throw new BadRequestError(`source.kind must be "read" or "load", got ${JSON.stringify(v.kind ?? null)}`);
}

/**
 * Check the body of a create request: `{name?, source, load_id?}` with `source` either
 * `{kind:'read', namespace:'read'|'io', function, params?}` or `{kind:'load', path}`. Nothing else is
 * accepted. Returns the typed request; throws a `BadRequestError` (400) naming the first problem.
 */
export function parseCreateSessionRequest(body: unknown): CreateSessionRequest {
  if (!isRecord(body)) throw new BadRequestError(`body must be a JSON object, got ${typeName(body)}`);
  onlyKeys(body, ["name", "source", "load_id"], "body");
  const req: CreateSessionRequest = { source: parseSource(body.source) };
  if (body.name !== undefined) req.name = text(body.name, "name");
  if (body.load_id !== undefined) req.load_id = text(body.load_id, "load_id");
  return req;
}

/**
 * Checks of a create request that need the service: a reader function the registry knows (an unknown
 * one is a bad request, 400, not a missing resource), and a `load` path that lies under the data dir
 * (400 otherwise) and exists (400 "no such file or directory"). Existence is looked at only after
 * containment, so the answer never reveals what exists outside the data dir.
 */
export async function checkCreateSessionRequest(
  req: CreateSessionRequest,
  dataDir: string,
  functions: Pick<SessionFunctions, "get">,
): Promise<void> {
  const src = req.source;
  if (src.kind === "read") {
    const key = `${src.namespace}.${src.function}`;
    const entry = functions.get(key);
    if (!entry) throw new BadRequestError(`unknown reader function ${key}`);
    if (entry.effect_class !== "read")
      throw new BadRequestError(`${key} is not a reader (effect class ${entry.effect_class})`);
    return;
  }
  const real = await containPath(dataDir, src.path, "source.path");
  // There, and a file or folder (a FIFO or device would block whoever opens it).
  await requireReadable(real, "source.path", src.path);
}
