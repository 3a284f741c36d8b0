import { describe, expect, it } from "vitest";
import { BadRequestError, ForbiddenError, LockConflictError, LockedError } from "../../../src/sdk/errors.js";
import { Presence, type PresenceView, publicClientId } from "../../../src/sdk/session/presence.js";

/** Secret client ids (as a browser mints them) and their public ids, the only ones views show. */
const A = "client-a-0001";
const B = "client-b-0002";
const CLI = "cli-script-01";
const MCP = "mcp-agent-001";
const pub = publicClientId;

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
    const v1 = p.heartbeat({ client_id: A, name: "Ada", session_id: "s1" });
    expect(v1).toEqual({ sessions: { s1: { lock: { client_id: pub(A), name: "Ada" }, viewers: ["Ada"] } } });
    const v2 = p.heartbeat({ client_id: B, name: "Bea", session_id: "s1" });
    expect(v2.sessions.s1).toEqual({ lock: { client_id: pub(A), name: "Ada" }, viewers: ["Ada", "Bea"] });
    expect(views).toEqual([v1, v2]);
  });

  it("emits only when the picture changes, not on every heartbeat", () => {
    const { p, views, advance } = setup();
    p.heartbeat({ client_id: A, name: "Ada", session_id: "s1" });
    for (let i = 0; i < 5; i++) {
      advance(5000);
      p.heartbeat({ client_id: A, name: "Ada", session_id: "s1" });
    }
    p.sweep();
    expect(views).toHaveLength(1);
    p.heartbeat({ client_id: A, name: "Ada L.", session_id: "s1" });
    expect(views).toHaveLength(2);
    expect(views[1]!.sessions.s1!.lock?.name).toBe("Ada L.");
  });

  it("moving to another session releases the old lock and takes the new one when free", () => {
    const { p } = setup();
    p.heartbeat({ client_id: A, name: "Ada", session_id: "s1" });
    p.heartbeat({ client_id: B, name: "Bea", session_id: "s2" });
    const v = p.heartbeat({ client_id: A, name: "Ada", session_id: "s2" });
    expect(v.sessions.s1).toBeUndefined();
    expect(v.sessions.s2).toEqual({ lock: { client_id: pub(B), name: "Bea" }, viewers: ["Ada", "Bea"] });
    const left = p.heartbeat({ client_id: B, name: "Bea", session_id: null });
    expect(left.sessions.s2).toEqual({ lock: null, viewers: ["Ada"] });
  });

  it("a vanished session counts as none; a blank name keeps the old one or gets a fallback", () => {
    const { p } = setup();
    expect(p.heartbeat({ client_id: A, name: "Ada", session_id: "gone" })).toEqual({ sessions: {} });
    p.heartbeat({ client_id: A, name: "  ", session_id: "s1" });
    expect(p.view().sessions.s1!.viewers).toEqual(["Ada"]);
    // The fallback name comes from the public id, never from the secret.
    p.heartbeat({ client_id: "0123456789abcdef", name: "", session_id: "s2" });
    const fallback = `viewer ${pub("0123456789abcdef").slice(0, 8)}`;
    expect(p.view().sessions.s2!.viewers).toEqual([fallback]);
    expect(p.lockOf("s2")).toEqual({ client_id: pub("0123456789abcdef"), name: fallback });
  });

  it("rejects malformed heartbeats with a BadRequestError", () => {
    const { p } = setup();
    expect(() => p.heartbeat({ client_id: "", name: "x", session_id: null })).toThrow(BadRequestError);
    expect(() => p.heartbeat({ client_id: A, name: 3 as unknown as string, session_id: null })).toThrow(
      BadRequestError,
    );
    expect(() => p.heartbeat({ client_id: A, name: "x", session_id: 5 as unknown as string })).toThrow(
      BadRequestError,
    );
  });

  it("client ids are 8–128 characters of [A-Za-z0-9_-]; names at most 64 printable characters", () => {
    const { p } = setup();
    const bad: [string, RegExp][] = [
      ["short", /8 to 128 characters long, got 5/],
      ["x".repeat(129), /got 129/],
      ["x".repeat(10_240), /got 10240/],
      ["has space in it", /only the characters/],
      ["ünïcödé-id", /only the characters/],
      ["semi;colon-id", /only the characters/],
    ];
    for (const [id, msg] of bad) {
      expect(() => p.heartbeat({ client_id: id, name: "x", session_id: null }), id).toThrow(msg);
      expect(() => p.takeLock("s1", id), id).toThrow(BadRequestError);
      expect(() => p.assertMutable("s1", id), id).toThrow(BadRequestError);
    }
    expect(() => p.heartbeat({ client_id: A, name: "n".repeat(65), session_id: null })).toThrow(
      /at most 64 characters/,
    );
    for (const name of ["bell\u0007", "new\nline", "rtl\u202Eoverride", "\u0000"])
      expect(() => p.heartbeat({ client_id: A, name, session_id: null }), JSON.stringify(name)).toThrow(
        /control or bidirectional-override/,
      );
    // 64 characters of any script (counted as characters, not UTF-16 units) are fine.
    p.heartbeat({ client_id: A, name: "😀".repeat(64), session_id: "s1" });
    p.heartbeat({ client_id: "x".repeat(128), name: "Zoë Ångström", session_id: "s1" });
    expect(p.view().sessions.s1!.viewers).toEqual(["Zoë Ångström", "😀".repeat(64)].sort());
  });

  it("views carry public ids only: first 16 hex of SHA-256(client id), never the client id", () => {
    const { p, views } = setup();
    expect(pub("abcdefgh")).toMatch(/^[0-9a-f]{16}$/);
    expect(pub("abcdefgh")).toBe("9c56cc51b374c3ba");
    p.heartbeat({ client_id: A, name: "Ada", session_id: "s1" });
    p.takeLock("s2", B);
    p.assertMutable("s3", CLI);
    const seen = JSON.stringify([p.view(), views, p.lockOf("s1"), p.lockOf("s2"), p.lockOf("s3")]);
    for (const secret of [A, B, CLI]) {
      expect(seen).not.toContain(secret);
      expect(seen).toContain(pub(secret));
    }
    // The public id is not a key: it cannot act for its owner.
    expect(() => p.assertMutable("s1", pub(A))).toThrow("session is locked by Ada");
    expect(() => p.releaseLock("s1", pub(A))).toThrow(ForbiddenError);
    expect(() => p.takeLock("s1", pub(A))).toThrow(LockConflictError);
    // The service hands a lock on by the secret it keeps (lockHolder), not by what views show.
    expect(p.lockHolder("s1")).toBe(A);
  });
});

describe("Presence locks", () => {
  it("takeLock: 400 without id, 409 (naming the holder) when another holds it, idempotent for the holder", () => {
    const { p } = setup();
    expect(() => p.takeLock("s1", undefined)).toThrow(BadRequestError);
    p.takeLock("s1", A, "Ada");
    p.takeLock("s1", A);
    expect(p.lockOf("s1")).toEqual({ client_id: pub(A), name: "Ada" });
    const err = (() => {
      try {
        p.takeLock("s1", B, "Bea");
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
    expect(() => p.releaseLock("s1", A)).toThrow(ForbiddenError);
    p.takeLock("s1", A, "Ada");
    expect(() => p.releaseLock("s1", B)).toThrow(ForbiddenError);
    expect(() => p.releaseLock("s1", undefined)).toThrow(ForbiddenError);
    p.releaseLock("s1", A);
    expect(p.lockOf("s1")).toBeNull();
    expect(views.at(-1)).toEqual({ sessions: {} });
  });

  it("assertMutable: 423 for others, takes a free lock for an id, lets anonymous callers write while free", () => {
    const { p, views } = setup();
    p.assertMutable("s1", undefined);
    expect(p.lockOf("s1")).toBeNull();
    expect(views).toHaveLength(0);
    p.assertMutable("s1", A, "Ada");
    expect(p.lockOf("s1")).toEqual({ client_id: pub(A), name: "Ada" });
    expect(views).toHaveLength(1);
    p.assertMutable("s1", A);
    expect(views).toHaveLength(1);
    expect(() => p.assertMutable("s1", B)).toThrow(LockedError);
    expect(() => p.assertMutable("s1", undefined)).toThrow("session is locked by Ada");
    try {
      p.assertMutable("s1", B);
    } catch (e) {
      expect((e as LockedError).status).toBe(423);
    }
  });

  it("an explicit release is respected: the still-attached viewer does not retake it on its next beat", () => {
    const { p } = setup();
    p.heartbeat({ client_id: A, name: "Ada", session_id: "s1" });
    p.releaseLock("s1", A);
    p.heartbeat({ client_id: A, name: "Ada", session_id: "s1" });
    expect(p.lockOf("s1")).toBeNull();
    p.takeLock("s1", B, "Bea");
    expect(p.lockOf("s1")?.client_id).toBe(pub(B));
  });
});

describe("Presence timeouts and session removal", () => {
  it("a viewer silent past the timeout drops and its locks are released (one event)", () => {
    const { p, views, advance } = setup({ timeoutS: 20 });
    p.heartbeat({ client_id: A, name: "Ada", session_id: "s1" });
    p.heartbeat({ client_id: B, name: "Bea", session_id: "s1" });
    advance(15_000);
    p.heartbeat({ client_id: B, name: "Bea", session_id: "s1" });
    advance(6_000);
    p.sweep();
    expect(p.view()).toEqual({ sessions: { s1: { lock: null, viewers: ["Bea"] } } });
    expect(views).toHaveLength(3);
    p.sweep();
    expect(views).toHaveLength(3);
  });

  it("exactly at the timeout the viewer is still there; a lock taken by a request also expires", () => {
    const { p, advance } = setup({ timeoutS: 20 });
    p.assertMutable("s2", CLI, "Script");
    advance(20_000);
    p.sweep();
    expect(p.lockOf("s2")?.client_id).toBe(pub(CLI));
    advance(1);
    p.sweep();
    expect(p.lockOf("s2")).toBeNull();
  });

  it("an agent survives the viewer timeout up to its own idle release", () => {
    const { p, advance } = setup({ timeoutS: 20, agentTimeoutS: 900 });
    p.heartbeat({ client_id: MCP, name: "Assistant", session_id: "s1" }, { agent: true });
    advance(600_000);
    p.sweep();
    expect(p.lockOf("s1")?.client_id).toBe(pub(MCP));
    // A later beat without the flag keeps the client an agent.
    p.heartbeat({ client_id: MCP, name: "Assistant", session_id: "s1" });
    advance(899_000);
    p.sweep();
    expect(p.lockOf("s1")?.client_id).toBe(pub(MCP));
    advance(2_000);
    p.sweep();
    expect(p.lockOf("s1")).toBeNull();
  });

  it("a closed session loses its lock and viewers (dropSession, or on the next sweep)", () => {
    const { p, open, views } = setup();
    p.heartbeat({ client_id: A, name: "Ada", session_id: "s1" });
    p.takeLock("s2", B, "Bea");
    p.dropSession("s1");
    expect(p.view()).toEqual({ sessions: { s2: { lock: { client_id: pub(B), name: "Bea" }, viewers: [] } } });
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
      p.heartbeat({ client_id: A, name: "Ada", session_id: "s1" });
      await new Promise((r) => setTimeout(r, 300));
      expect(p.view()).toEqual({ sessions: {} });
      expect(views.at(-1)).toEqual({ sessions: {} });
    } finally {
      p.stop();
    }
  });
});
