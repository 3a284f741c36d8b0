/**
 * Presence and the per-session edit lock (spec "Authentication" 3–5, "Presence and lock").
 *
 * Viewers announce themselves with a heartbeat (`client_id`, display name, the session they watch).
 * Exactly one client may edit a session: attaching to an unlocked session takes its lock, leaving it
 * (heartbeat naming another session or none) releases it, and so does silence longer than the
 * presence timeout. A mutating call from a client takes a free lock; from another client while the
 * lock is held it is refused with 423. Callers without a client id (CLI, scripts) write freely while
 * nobody holds the lock. `presence.updated` is emitted only when the picture changes.
 *
 * The client id is a secret: whoever presents it acts as that client (holds its locks, releases
 * them). It is never shown to anyone: every view (the PresenceView, its events, the lock holder,
 * fallback names) carries the client's public id instead, the first 16 hex digits of the SHA-256 of
 * its client id, which cannot be turned back into the id.
 *
 * Everything is in process memory; nothing survives a restart, by design (no accounts).
 */
import { createHash } from "node:crypto";
import { BadRequestError, ForbiddenError, LockConflictError, LockedError } from "../errors.js";

/** Client ids: 8–128 characters of `A–Z a–z 0–9 _ -` (a uuid fits). */
export const CLIENT_ID_PATTERN = /^[A-Za-z0-9_-]{8,128}$/;
/** Longest display name, in characters (code points). */
export const MAX_CLIENT_NAME = 64;
/** Characters a display name may not hold: controls, lone surrogates, bidirectional overrides. */
const NAME_FORBIDDEN = /[\p{Cc}\p{Cs}\u202A-\u202E\u2066-\u2069]/u;

/** Why `id` is not a valid client id (`what` names where it came from), or null when it is. */
export function clientIdProblem(id: unknown, what = "client id"): string | null {
  if (typeof id !== "string") return `${what} must be a string`;
  if (CLIENT_ID_PATTERN.test(id)) return null;
  const n = id.length;
  if (n < 8 || n > 128) return `${what} must be 8 to 128 characters long, got ${n}`;
  return `${what} may hold only the characters A-Z, a-z, 0-9, _ and -`;
}

/** Why `name` is not a valid display name (`what` names where it came from), or null when it is. */
export function clientNameProblem(name: unknown, what = "name"): string | null {
  if (typeof name !== "string") return `${what} must be a string`;
  const n = [...name].length;
  if (n > MAX_CLIENT_NAME) return `${what} must be at most ${MAX_CLIENT_NAME} characters long, got ${n}`;
  if (NAME_FORBIDDEN.test(name)) return `${what} may not hold control or bidirectional-override characters`;
  return null;
}

/** The public id of a client: the first 16 hex digits of SHA-256(client id), safe to show others. */
export function publicClientId(clientId: string): string {
  return createHash("sha256").update(clientId, "utf8").digest("hex").slice(0, 16);
}

function checkClientId(id: unknown, what?: string): asserts id is string {
  const problem = clientIdProblem(id, what);
  if (problem) throw new BadRequestError(problem);
}

function checkName(name: unknown, what?: string): void {
  const problem = clientNameProblem(name, what);
  if (problem) throw new BadRequestError(problem);
}

/** One session's entry of the PresenceView. */
export interface SessionPresence {
  /** The holder: `client_id` is its public id (never the secret client id), `name` its display name. */
  lock: { client_id: string; name: string } | null;
  viewers: string[];
}

/** The spec's PresenceView: sessions with no viewer and no lock are omitted. */
export interface PresenceView {
  sessions: Record<string, SessionPresence>;
}

/** A heartbeat (`POST /api/presence`). */
export interface Heartbeat {
  client_id: string;
  name: string;
  session_id: string | null;
}

/** Options of a `Presence` registry. */
export interface PresenceOptions {
  /** Seconds of silence after which a viewer drops and its locks are released (spec default 20). */
  timeoutS: number;
  /** Seconds an agent (MCP) client survives without a call (spec default 900). */
  agentTimeoutS: number;
  /** Whether a session id names an open session (a vanished session counts as none). */
  sessionExists(id: string): boolean;
  /** Called with the new view whenever it changes. */
  onChange(view: PresenceView): void;
  /** Clock in ms (tests). */
  now?: () => number;
}

interface Client {
  /** The secret client id. */
  id: string;
  /** Its public id (`publicClientId`). */
  pub: string;
  name: string;
  sessionId: string | null;
  lastSeen: number;
  /** Agents (the MCP endpoint) use the longer idle timeout. */
  agent: boolean;
}

/** A fallback display name for a client that never sent one (from its public id, never the secret). */
function anonymousName(publicId: string): string {
  return `viewer ${publicId.slice(0, 8)}`;
}

/** Presence registry and edit locks (see the module comment). */
export class Presence {
  private readonly opts: PresenceOptions;
  private readonly clients = new Map<string, Client>();
  /** session id → (secret) client id holding its lock. */
  private readonly locks = new Map<string, string>();
  private lastView = "";
  private timer: ReturnType<typeof setInterval> | null = null;

  constructor(opts: PresenceOptions) {
    this.opts = opts;
    this.lastView = JSON.stringify(this.view());
  }

  private now(): number {
    return this.opts.now ? this.opts.now() : Date.now();
  }

  /** Start the timer that drops silent clients (unref'd: it never keeps the process alive). */
  startSweeper(): void {
    if (this.timer) return;
    const periodMs = Math.max(50, Math.min(1000, (this.opts.timeoutS * 1000) / 4));
    this.timer = setInterval(() => this.sweep(), periodMs);
    this.timer.unref?.();
  }

  /** Stop the sweeper timer. */
  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /**
   * A heartbeat: register or refresh the client, rename it, move it to `session_id`. Attaching to a
   * session whose lock is free takes the lock; leaving a session releases the lock held on it.
   */
  heartbeat(beat: Heartbeat, opts: { agent?: boolean } = {}): PresenceView {
    checkClientId(beat.client_id, "presence: client_id");
    checkName(beat.name, "presence: name");
    if (beat.session_id !== null && beat.session_id !== undefined && typeof beat.session_id !== "string")
      throw new BadRequestError("presence: session_id must be a string or null");
    this.sweep(false);
    const target = beat.session_id && this.opts.sessionExists(beat.session_id) ? beat.session_id : null;
    const prev = this.clients.get(beat.client_id);
    const pub = prev?.pub ?? publicClientId(beat.client_id);
    const name = beat.name.trim() || prev?.name || anonymousName(pub);
    const client: Client = {
      id: beat.client_id,
      pub,
      name,
      sessionId: target,
      lastSeen: this.now(),
      agent: opts.agent ?? prev?.agent ?? false,
    };
    this.clients.set(client.id, client);
    if (prev?.sessionId && prev.sessionId !== target) this.releaseIfHeld(prev.sessionId, client.id);
    if (target && prev?.sessionId !== target && !this.locks.has(target)) this.locks.set(target, client.id);
    this.changed();
    return this.view();
  }

  /** Take the lock of `sessionId` for `clientId` (`POST /lock`): 400 without an id, 409 if held by another. */
  takeLock(sessionId: string, clientId: string | undefined, name?: string): void {
    if (!clientId) throw new BadRequestError("taking a lock needs the X-Tessera-Client-Id header");
    checkClientId(clientId);
    if (name !== undefined) checkName(name);
    this.sweep(false);
    const holder = this.locks.get(sessionId);
    if (holder && holder !== clientId)
      throw new LockConflictError(`session is locked by ${this.nameOf(holder)}`);
    this.touch(clientId, name);
    this.locks.set(sessionId, clientId);
    this.changed();
  }

  /** Release the lock of `sessionId` (`DELETE /lock`): 403 unless `clientId` holds it. */
  releaseLock(sessionId: string, clientId: string | undefined): void {
    this.sweep(false);
    const holder = this.locks.get(sessionId);
    if (!clientId || holder !== clientId)
      throw new ForbiddenError(
        holder ? "the caller does not hold this session's lock" : "this session's lock is not held",
      );
    this.locks.delete(sessionId);
    this.changed();
  }

  /**
   * Gate a mutating call: 423 while another client holds the lock; a client id takes a free lock;
   * no client id writes freely while the lock is free.
   */
  assertMutable(sessionId: string, clientId: string | undefined, name?: string): void {
    this.sweep(false);
    const holder = this.locks.get(sessionId);
    if (holder && holder !== clientId) throw new LockedError(this.nameOf(holder));
    if (!clientId) return;
    checkClientId(clientId);
    if (name !== undefined) checkName(name);
    this.touch(clientId, name);
    if (!holder) {
      this.locks.set(sessionId, clientId);
      this.changed();
    }
  }

  /** The holder of a session's lock as others see it (public id and name), or null. */
  lockOf(sessionId: string): { client_id: string; name: string } | null {
    const holder = this.locks.get(sessionId);
    return holder ? { client_id: this.publicOf(holder), name: this.nameOf(holder) } : null;
  }

  /**
   * The secret client id holding a session's lock, or null. Only for handing the lock on inside the
   * service (a subset's child takes its parent's holder); never show it to a client.
   */
  lockHolder(sessionId: string): string | null {
    return this.locks.get(sessionId) ?? null;
  }

  /** Forget a session (closed or removed): its lock and its viewers' attachment. */
  dropSession(sessionId: string): void {
    this.locks.delete(sessionId);
    for (const c of this.clients.values()) if (c.sessionId === sessionId) c.sessionId = null;
    this.changed();
  }

  /** The current PresenceView. */
  view(): PresenceView {
    const sessions: Record<string, SessionPresence> = {};
    const entry = (id: string) => {
      sessions[id] ??= { lock: null, viewers: [] };
      return sessions[id];
    };
    for (const c of this.clients.values()) if (c.sessionId) entry(c.sessionId).viewers.push(c.name);
    for (const [sid, cid] of this.locks)
      entry(sid).lock = { client_id: this.publicOf(cid), name: this.nameOf(cid) };
    for (const s of Object.values(sessions)) s.viewers.sort();
    return { sessions: Object.fromEntries(Object.entries(sessions).sort(([a], [b]) => a.localeCompare(b))) };
  }

  /** Drop clients silent past their timeout, releasing their locks; emits when something changed. */
  sweep(emit = true): void {
    const t = this.now();
    let dropped = false;
    for (const c of [...this.clients.values()]) {
      const limitMs = (c.agent ? this.opts.agentTimeoutS : this.opts.timeoutS) * 1000;
      if (t - c.lastSeen <= limitMs) continue;
      this.clients.delete(c.id);
      for (const [sid, holder] of [...this.locks]) if (holder === c.id) this.locks.delete(sid);
      dropped = true;
    }
    // Locks of sessions that no longer exist go too.
    for (const sid of [...this.locks.keys()]) if (!this.opts.sessionExists(sid)) this.locks.delete(sid);
    if (dropped || emit) this.changed();
  }

  private touch(clientId: string, name?: string): void {
    const c = this.clients.get(clientId);
    if (c) {
      c.lastSeen = this.now();
      if (name?.trim()) c.name = name.trim();
      return;
    }
    const pub = publicClientId(clientId);
    this.clients.set(clientId, {
      id: clientId,
      pub,
      name: name?.trim() || anonymousName(pub),
      sessionId: null,
      lastSeen: this.now(),
      agent: false,
    });
  }

  private releaseIfHeld(sessionId: string, clientId: string): void {
    if (this.locks.get(sessionId) === clientId) this.locks.delete(sessionId);
  }

  private nameOf(clientId: string): string {
    return this.clients.get(clientId)?.name ?? anonymousName(this.publicOf(clientId));
  }

  private publicOf(clientId: string): string {
    return this.clients.get(clientId)?.pub ?? publicClientId(clientId);
  }

  /** Emit the view when it differs from the last one emitted. */
  private changed(): void {
    const view = this.view();
    const json = JSON.stringify(view);
    if (json === this.lastView) return;
    this.lastView = json;
    this.opts.onChange(view);
  }
}
