/**
 * Sending Apache Arrow payloads: one RecordBatch as an IPC stream, content type
 * `application/vnd.apache.arrow.stream` (compressed like JSON when the client allows it).
 */
import { type Table, tableToIPC } from "apache-arrow";
import type { FastifyReply } from "fastify";

/** Content type of Arrow IPC stream payloads. */
export const ARROW_STREAM = "application/vnd.apache.arrow.stream";

/** Serialise `table` as an IPC stream and send it. */
export function sendArrow(reply: FastifyReply, table: Table): FastifyReply {
  const bytes = tableToIPC(table, "stream");
  return reply.type(ARROW_STREAM).send(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
}
