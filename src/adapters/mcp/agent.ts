/**
 * The agent as a viewer (agent-mcp.md section 2). One agent per server: a client id minted when the
 * server starts (it is the lock holder's secret, so it is never a constant anyone could send in
 * `X-Tessera-Client-Id`), the display name "the assistant", a heartbeat every 5 s while it is active,
 * explicit take/release of the edit lock, and an idle release after `TESSERA_MCP_IDLE_RELEASE_S`
 * without a tool call: then its lock and its presence go.
 */
import { randomUUID } from "node:crypto";
import { BadRequestError, LockedError, TesseraError } from "../../sdk/errors.js";
import type { Service } from "../../sdk/session/service.js";
import type { Session } from "../../sdk/session/session.js";

/** The name other viewers see for the agent. */
export const AGENT_NAME = "the assistant";
/** Heartbeat interval while the agent is active (spec: 5 s). */
export const AGENT_HEARTBEAT_MS = 5_000;

/** The MCP agent's identity and state across the stateless requests of one server. */
export class McpAgent {
  /** The agent's secret client id (holds its locks). */
  readonly clientId = `mcp-${randomUUID()}`;
  private active: string | null = null;
  private lastCall = 0;
  private timer: ReturnType<typeof setInterval> | null = null;

  constructor(
    private readonly service: Service,
    private readonly heartbeatMs = AGENT_HEARTBEAT_MS,
  ) {}

  /** The active session id, or null (a session closed meanwhile counts as none). */
  get activeSession(): string | null {
    if (this.active && !this.service.sessions().some((s) => s.id === this.active)) this.active = null;
    return this.active;
  }

  /** Seconds without a tool call after which the agent's lock and presence are released. */
  private get idleMs(): number {
    return this.service.config.mcpIdleReleaseS * 1000;
  }

  /** Every tool call: the agent is alive (refreshes presence, restarts the heartbeat). */
  touch(): void {
    this.lastCall = Date.now();
    if (this.active) this.beat();
    this.ensureTimer();
  }

  /**
   * Keep the agent alive while a tool runs (waiting on a long job is not idleness): touched now and
   * then often enough that no idle check falls between two touches. Returns the function that stops it.
   */
  keepAlive(): () => void {
    this.touch();
    const every = Math.max(50, Math.min(this.heartbeatMs, this.idleMs / 2));
    const timer = setInterval(() => this.touch(), every);
    timer.unref();
    return () => clearInterval(timer);
  }

  /** The session a tool names, or the active one; a 400 when there is neither. */
  sessionId(explicit: string | undefined): string {
    const id = explicit ?? this.activeSession;
    if (!id)
      throw new BadRequestError(
        "no session given and the agent has no active session: call set_active_session (or pass session_id)",
      );
    return id;
  }

  /**
   * The session for a change, after the SDK's mutation gate with the agent as caller. The agent must
   * have taken the lock explicitly (set_active_session with take_control): a session whose lock is
   * free is refused too (423), so an agent never edits behind a viewer's back by accident.
   */
  mutable(explicit: string | undefined, opts: { work?: string; ready?: string } = {}): Session {
    const id = this.sessionId(explicit);
    this.service.session(id);
    const holder = this.service.presence.lockOf(id);
    if (this.service.presence.lockHolder(id) !== this.clientId) {
      if (holder) throw new LockedError(holder.name);
      throw new TesseraError(
        "the agent does not hold this session's edit lock: call set_active_session with take_control true first",
        423,
      );
    }
    return this.service.mutableSession(id, { clientId: this.clientId, clientName: AGENT_NAME }, opts);
  }

  /** Point the agent at a session; with `takeControl` it takes the edit lock (409 if another holds it). */
  attach(sessionId: string, takeControl: boolean): void {
    this.service.session(sessionId);
    const heldBefore = this.service.presence.lockHolder(sessionId) === this.clientId;
    if (this.active && this.active !== sessionId) this.releaseHeld(this.active);
    if (takeControl) this.service.presence.takeLock(sessionId, this.clientId, AGENT_NAME);
    this.active = sessionId;
    this.beat();
    // Attaching takes a free lock for a browser; the agent takes it only when asked.
    if (!takeControl && !heldBefore && this.service.presence.lockHolder(sessionId) === this.clientId)
      this.service.presence.releaseLock(sessionId, this.clientId);
  }

  /** Detach from the active session and release the agent's locks. Returns the session left, or null. */
  detach(): string | null {
    const left = this.active;
    for (const s of this.service.sessions()) this.releaseHeld(s.id);
    this.active = null;
    if (this.lastCall) this.beat();
    return left;
  }

  /** Whether the agent holds a session's lock. */
  holds(sessionId: string): boolean {
    return this.service.presence.lockHolder(sessionId) === this.clientId;
  }

  /** Stop the heartbeat (server shutdown). */
  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  private releaseHeld(sessionId: string): void {
    if (this.holds(sessionId)) this.service.presence.releaseLock(sessionId, this.clientId);
  }

  private beat(): void {
    this.service.presence.heartbeat(
      { client_id: this.clientId, name: AGENT_NAME, session_id: this.activeSession },
      { agent: true },
    );
  }

  private ensureTimer(): void {
    if (this.timer) return;
    this.timer = setInterval(() => this.tick(), this.heartbeatMs);
    this.timer.unref();
  }

  private tick(): void {
    if (Date.now() - this.lastCall >= this.idleMs) {
      // Idle: release everything, then let presence forget the agent (no more heartbeats).
      this.detach();
      this.stop();
      return;
    }
    if (this.active) this.beat();
  }
}
