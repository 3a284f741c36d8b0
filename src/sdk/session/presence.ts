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
 * Everything is in process memory; nothing survives a restart, by design (no accounts).
 */
import { BadRequestError, ForbiddenError, LockConflictError, LockedError } from "./errors.js";

/** One session's entry of the PresenceView. */
export interface SessionPresence {
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
  id: string;
  name: string;
  sessionId: string | null;
  lastSeen: number;
  /** Agents (the MCP endpoint) use the longer idle timeout. */
  agent: boolean;
}

/** A fallback display name for a client that never sent one. */
function anonymousName(clientId: string): string {
  return `viewer ${clientId.slice(0, 8)}`;
}

/** Presence registry and edit locks (see the module comment). */
export class Presence {
  private readonly opts: PresenceOptions;
  private readonly clients = new Map<string, Client>();
  /** session id → client id holding its lock. */
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
    if (typeof beat.client_id !== "string" || beat.client_id.trim() === "")
      throw new BadRequestError("presence: client_id must be a non-empty string");
    if (typeof beat.name !== "string") throw new BadRequestError("presence: name must be a string");
    if (beat.session_id !== null && beat.session_id !== undefined && typeof beat.session_id !== "string")
      throw new BadRequestError("presence: session_id must be a string or null");
    this.sweep(false);
    const target = beat.session_id && this.opts.sessionExists(beat.session_id) ? beat.session_id : null;
    const prev = this.clients.get(beat.client_id);
    const name = beat.name.trim() || prev?.name || anonymousName(beat.client_id);
    const client: Client = {
      id: beat.client_id,
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
    this.touch(clientId, name);
    if (!holder) {
      this.locks.set(sessionId, clientId);
      this.changed();
    }
  }

  /** The holder of a session's lock, or null. */
  lockOf(sessionId: string): { client_id: string; name: string } | null {
    const holder = this.locks.get(sessionId);
    return holder ? { client_id: holder, name: this.nameOf(holder) } : null;
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
    for (const [sid, cid] of this.locks) entry(sid).lock = { client_id: cid, name: this.nameOf(cid) };
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
    this.clients.set(clientId, {
      id: clientId,
      name: name?.trim() || anonymousName(clientId),
      sessionId: null,
      lastSeen: this.now(),
      agent: false,
    });
  }

  private releaseIfHeld(sessionId: string, clientId: string): void {
    if (this.locks.get(sessionId) === clientId) this.locks.delete(sessionId);
  }

  private nameOf(clientId: string): string {
    return this.clients.get(clientId)?.name ?? anonymousName(clientId);
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
