import { describe, expect, it } from "vitest";
import {
  BadRequestError,
  ForbiddenError,
  LockConflictError,
  LockedError,
} from "../../../src/sdk/session/errors.js";
import { Presence, type PresenceView } from "../../../src/sdk/session/presence.js";

/** A Presence on a fake clock, with sessions s1..s3 open and every emitted view recorded. */
function setup(opts: { timeoutS?: number; agentTimeoutS?: number } = {}) {
  let clock = 1_000_000;
  const open = new Set(["s1", "s2", "s3"]);
  const views: PresenceView[] = [];
  const p = new Presence({
    timeoutS: opts.timeoutS ?? 20,
    agentTimeoutS: opts.agentTimeoutS ?? 900,
    sessionExists: (id) => open.has(id),
    onChange: (v) => views.push(v),
    now: () => clock,
  });
  return {
    p,
    views,
    open,
    advance(ms: number) {
      clock += ms;
    },
  };
}

describe("Presence heartbeats", () => {
  it("attaching to a free session takes its lock; a second viewer only watches", () => {
    const { p, views } = setup();
    const v1 = p.heartbeat({ client_id: "a", name: "Ada", session_id: "s1" });
    expect(v1).toEqual({ sessions: { s1: { lock: { client_id: "a", name: "Ada" }, viewers: ["Ada"] } } });
    const v2 = p.heartbeat({ client_id: "b", name: "Bea", session_id: "s1" });
    expect(v2.sessions.s1).toEqual({ lock: { client_id: "a", name: "Ada" }, viewers: ["Ada", "Bea"] });
    expect(views).toEqual([v1, v2]);
  });

  it("emits only when the picture changes, not on every heartbeat", () => {
    const { p, views, advance } = setup();
    p.heartbeat({ client_id: "a", name: "Ada", session_id: "s1" });
    for (let i = 0; i < 5; i++) {
      advance(5000);
      p.heartbeat({ client_id: "a", name: "Ada", session_id: "s1" });
    }
    p.sweep();
    expect(views).toHaveLength(1);
    p.heartbeat({ client_id: "a", name: "Ada L.", session_id: "s1" });
    expect(views).toHaveLength(2);
    expect(views[1]!.sessions.s1!.lock?.name).toBe("Ada L.");
  });

  it("moving to another session releases the old lock and takes the new one when free", () => {
    const { p } = setup();
    p.heartbeat({ client_id: "a", name: "Ada", session_id: "s1" });
    p.heartbeat({ client_id: "b", name: "Bea", session_id: "s2" });
    const v = p.heartbeat({ client_id: "a", name: "Ada", session_id: "s2" });
    expect(v.sessions.s1).toBeUndefined();
    expect(v.sessions.s2).toEqual({ lock: { client_id: "b", name: "Bea" }, viewers: ["Ada", "Bea"] });
    const left = p.heartbeat({ client_id: "b", name: "Bea", session_id: null });
    expect(left.sessions.s2).toEqual({ lock: null, viewers: ["Ada"] });
  });

  it("a vanished session counts as none; a blank name keeps the old one or gets a fallback", () => {
    const { p } = setup();
    expect(p.heartbeat({ client_id: "a", name: "Ada", session_id: "gone" })).toEqual({ sessions: {} });
    p.heartbeat({ client_id: "a", name: "  ", session_id: "s1" });
    expect(p.view().sessions.s1!.viewers).toEqual(["Ada"]);
    p.heartbeat({ client_id: "0123456789abcdef", name: "", session_id: "s2" });
    expect(p.view().sessions.s2!.viewers).toEqual(["viewer 01234567"]);
  });

  it("rejects malformed heartbeats with a BadRequestError", () => {
    const { p } = setup();
    expect(() => p.heartbeat({ client_id: "", name: "x", session_id: null })).toThrow(BadRequestError);
    expect(() => p.heartbeat({ client_id: "a", name: 3 as unknown as string, session_id: null })).toThrow(
      BadRequestError,
    );
    expect(() => p.heartbeat({ client_id: "a", name: "x", session_id: 5 as unknown as string })).toThrow(
      BadRequestError,
    );
  });
});

describe("Presence locks", () => {
  it("takeLock: 400 without id, 409 (naming the holder) when another holds it, idempotent for the holder", () => {
    const { p } = setup();
    expect(() => p.takeLock("s1", undefined)).toThrow(BadRequestError);
    p.takeLock("s1", "a", "Ada");
    p.takeLock("s1", "a");
    expect(p.lockOf("s1")).toEqual({ client_id: "a", name: "Ada" });
    const err = (() => {
      try {
        p.takeLock("s1", "b", "Bea");
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(LockConflictError);
    expect((err as LockConflictError).status).toBe(409);
    expect((err as Error).message).toBe("session is locked by Ada");
  });

  it("releaseLock: 403 unless the caller holds it", () => {
    const { p, views } = setup();
    expect(() => p.releaseLock("s1", "a")).toThrow(ForbiddenError);
    p.takeLock("s1", "a", "Ada");
    expect(() => p.releaseLock("s1", "b")).toThrow(ForbiddenError);
    expect(() => p.releaseLock("s1", undefined)).toThrow(ForbiddenError);
    p.releaseLock("s1", "a");
    expect(p.lockOf("s1")).toBeNull();
    expect(views.at(-1)).toEqual({ sessions: {} });
  });

  it("assertMutable: 423 for others, takes a free lock for an id, lets anonymous callers write while free", () => {
    const { p, views } = setup();
    p.assertMutable("s1", undefined);
    expect(p.lockOf("s1")).toBeNull();
    expect(views).toHaveLength(0);
    p.assertMutable("s1", "a", "Ada");
    expect(p.lockOf("s1")).toEqual({ client_id: "a", name: "Ada" });
    expect(views).toHaveLength(1);
    p.assertMutable("s1", "a");
    expect(views).toHaveLength(1);
    expect(() => p.assertMutable("s1", "b")).toThrow(LockedError);
    expect(() => p.assertMutable("s1", undefined)).toThrow("session is locked by Ada");
    try {
      p.assertMutable("s1", "b");
    } catch (e) {
      expect((e as LockedError).status).toBe(423);
    }
  });

  it("an explicit release is respected: the still-attached viewer does not retake it on its next beat", () => {
    const { p } = setup();
    p.heartbeat({ client_id: "a", name: "Ada", session_id: "s1" });
    p.releaseLock("s1", "a");
    p.heartbeat({ client_id: "a", name: "Ada", session_id: "s1" });
    expect(p.lockOf("s1")).toBeNull();
    p.takeLock("s1", "b", "Bea");
    expect(p.lockOf("s1")?.client_id).toBe("b");
  });
});

describe("Presence timeouts and session removal", () => {
  it("a viewer silent past the timeout drops and its locks are released (one event)", () => {
    const { p, views, advance } = setup({ timeoutS: 20 });
    p.heartbeat({ client_id: "a", name: "Ada", session_id: "s1" });
    p.heartbeat({ client_id: "b", name: "Bea", session_id: "s1" });
    advance(15_000);
    p.heartbeat({ client_id: "b", name: "Bea", session_id: "s1" });
    advance(6_000);
    p.sweep();
    expect(p.view()).toEqual({ sessions: { s1: { lock: null, viewers: ["Bea"] } } });
    expect(views).toHaveLength(3);
    p.sweep();
    expect(views).toHaveLength(3);
  });

  it("exactly at the timeout the viewer is still there; a lock taken by a request also expires", () => {
    const { p, advance } = setup({ timeoutS: 20 });
    p.assertMutable("s2", "cli", "Script");
    advance(20_000);
    p.sweep();
    expect(p.lockOf("s2")?.client_id).toBe("cli");
    advance(1);
    p.sweep();
    expect(p.lockOf("s2")).toBeNull();
  });

  it("an agent survives the viewer timeout up to its own idle release", () => {
    const { p, advance } = setup({ timeoutS: 20, agentTimeoutS: 900 });
    p.heartbeat({ client_id: "mcp", name: "Assistant", session_id: "s1" }, { agent: true });
    advance(600_000);
    p.sweep();
    expect(p.lockOf("s1")?.client_id).toBe("mcp");
    // A later beat without the flag keeps the client an agent.
    p.heartbeat({ client_id: "mcp", name: "Assistant", session_id: "s1" });
    advance(899_000);
    p.sweep();
    expect(p.lockOf("s1")?.client_id).toBe("mcp");
    advance(2_000);
    p.sweep();
    expect(p.lockOf("s1")).toBeNull();
  });

  it("a closed session loses its lock and viewers (dropSession, or on the next sweep)", () => {
    const { p, open, views } = setup();
    p.heartbeat({ client_id: "a", name: "Ada", session_id: "s1" });
    p.takeLock("s2", "b", "Bea");
    p.dropSession("s1");
    expect(p.view()).toEqual({ sessions: { s2: { lock: { client_id: "b", name: "Bea" }, viewers: [] } } });
    open.delete("s2");
    p.sweep();
    expect(p.view()).toEqual({ sessions: {} });
    expect(views.at(-1)).toEqual({ sessions: {} });
  });

  it("the sweeper timer drops silent viewers on real time", async () => {
    const views: PresenceView[] = [];
    const p = new Presence({
      timeoutS: 0.1,
      agentTimeoutS: 900,
      sessionExists: () => true,
      onChange: (v) => views.push(v),
    });
    p.startSweeper();
    try {
      p.heartbeat({ client_id: "a", name: "Ada", session_id: "s1" });
      await new Promise((r) => setTimeout(r, 300));
      expect(p.view()).toEqual({ sessions: {} });
      expect(views.at(-1)).toEqual({ sessions: {} });
    } finally {
      p.stop();
    }
  });
});
