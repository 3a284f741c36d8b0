/**
 * Data reads need a loaded object. While a session is `loading` its object is still empty, and an
 * `errored` session never got one; answering those reads with empty lists or 404s would look like
 * "this dataset has no such column". So data routes refuse with a `StateError` (409) that says why.
 */
import { StateError } from "../errors.js";
import type { SessionStatus } from "./types.js";

/** Throw a `StateError` (409) unless the session is `ready`; `what` names the refused read. */
export function requireReady(
  session: { readonly id: string; readonly status: SessionStatus; summary(): { error: string | null } },
  what: string,
): void {
  if (session.status === "ready") return;
  if (session.status === "loading")
    throw new StateError(`session ${session.id} is still loading; ${what} can be read once it is ready`);
  throw new StateError(
    `session ${session.id} failed to load (${session.summary().error ?? "unknown error"}); it has no ${what}`,
  );
}
