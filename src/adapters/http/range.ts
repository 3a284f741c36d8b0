/**
 * HTTP Range serving (RFC 9110 §14) for byte resources: checkpoint files now, raster chunk keys
 * later. One range per request: `bytes=a-b`, `bytes=a-` and `bytes=-n` answer 206 with
 * `Content-Range`; a range starting past the end answers 416 with `Content-Range: bytes * /size`;
 * a header that does not parse, names several ranges, or fails `If-Range` is ignored (200 with the
 * whole body, as the RFC allows). Every answer carries `Accept-Ranges: bytes`; HEAD gets the same
 * headers and no body. Bodies are never compressed (the routes set `compress: false`).
 */
import type { FastifyReply, FastifyRequest } from "fastify";

/** A byte range, both ends inclusive. */
export interface ByteRange {
  readonly start: number;
  readonly end: number;
}

/** What a Range header asks of a resource of `size` bytes. */
export type RangeRequest =
  | { readonly kind: "whole" }
  | ({ readonly kind: "range" } & ByteRange)
  | { readonly kind: "unsatisfiable" };

/** Parse a Range header against a size (see the module comment for what is ignored). */
export function parseRange(header: string | undefined, size: number): RangeRequest {
  if (header === undefined) return { kind: "whole" };
  const m = /^\s*bytes\s*=\s*(\d*)\s*-\s*(\d*)\s*$/i.exec(header);
  if (!m || (m[1] === "" && m[2] === "")) return { kind: "whole" };
  if (m[1] === "") {
    // Suffix: the last n bytes.
    const n = Number(m[2]);
    if (n === 0 || size === 0) return { kind: "unsatisfiable" };
    return { kind: "range", start: Math.max(0, size - n), end: size - 1 };
  }
  const start = Number(m[1]);
  const end = m[2] === "" ? size - 1 : Number(m[2]);
  if (!Number.isSafeInteger(start) || !Number.isSafeInteger(end)) return { kind: "whole" };
  if (m[2] !== "" && end < start) return { kind: "whole" };
  if (start >= size) return { kind: "unsatisfiable" };
  return { kind: "range", start, end: Math.min(end, size - 1) };
}

/** A resource served with Range support. */
export interface RangeResource {
  readonly size: number;
  readonly contentType: string;
  /** Strong validator; also what `If-Range` is compared with. */
  readonly etag?: string;
  readonly lastModified?: Date;
  /** The bytes `[start, end]` (inclusive) as a stream or a buffer. */
  body(range: ByteRange): NodeJS.ReadableStream | Uint8Array;
}

/** Whether an `If-Range` header (absent, an ETag, or a date) still matches the resource. */
function ifRangeHolds(value: string | undefined, res: RangeResource): boolean {
  if (value === undefined) return true;
  const v = value.trim();
  if (v.startsWith('"') || v.startsWith("W/")) return res.etag !== undefined && v === res.etag;
  const date = Date.parse(v);
  if (Number.isNaN(date) || !res.lastModified) return false;
  return Math.floor(res.lastModified.getTime() / 1000) <= Math.floor(date / 1000);
}

/** Answer `req` with `res` (200, 206 or 416; HEAD without a body). */
export function sendRange(req: FastifyRequest, reply: FastifyReply, res: RangeResource): FastifyReply {
  reply.header("accept-ranges", "bytes");
  reply.header("cache-control", "no-cache");
  if (res.etag) reply.header("etag", res.etag);
  if (res.lastModified) reply.header("last-modified", res.lastModified.toUTCString());
  const header = typeof req.headers.range === "string" ? req.headers.range : undefined;
  const ifRange = typeof req.headers["if-range"] === "string" ? req.headers["if-range"] : undefined;
  const asked = ifRangeHolds(ifRange, res) ? parseRange(header, res.size) : { kind: "whole" as const };
  if (asked.kind === "unsatisfiable") {
    reply.code(416).header("content-range", `bytes */${res.size}`).header("content-length", "0");
    return reply.send();
  }
  const range = asked.kind === "range" ? asked : { start: 0, end: res.size - 1 };
  if (asked.kind === "range")
    reply.code(206).header("content-range", `bytes ${range.start}-${range.end}/${res.size}`);
  reply.type(res.contentType).header("content-length", String(Math.max(0, range.end - range.start + 1)));
  if (req.method === "HEAD" || res.size === 0) return reply.send();
  return reply.send(res.body(range));
}
