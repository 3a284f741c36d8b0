/**
 * The readiness gate: data reads and data edits need a loaded object. While a session is `loading`
 * its object is still empty, and an `errored` session never got one; answering those calls with empty
 * lists or 404s would look like "this dataset has no such column". So every face (HTTP, MCP, the CLI,
 * scripts) refuses them through this one check, with a `StateError` (409) that says why.
 */
import { StateError } from "../errors.js";
import type { SessionStatus } from "./types.js";

/** What the readiness gate looks at: a session's id, status and load error. */
export interface ReadinessView {
  readonly id: string;
  readonly status: SessionStatus;
  summary(): { error: string | null };
}

/**
 * Throw a `StateError` (409) unless the session is `ready`; `what` names the refused call as a noun
 * phrase ("obs values", "displays", "a subset").
 */
export function requireReady(session: ReadinessView, what: string): void {
  if (session.status === "ready") return;
  if (session.status === "loading")
    throw new StateError(`session ${session.id} is still loading; ${what} must wait until it is ready`);
  throw new StateError(
    `session ${session.id} failed to load (${session.summary().error ?? "unknown error"}); it has no data for ${what}`,
  );
}
