/**
 * The server as users run it (`tessera start`, a real process on 127.0.0.1) killed with SIGKILL after a
 * computation: started again on the same data and work dirs, it serves the same session, id unchanged, with
 * the computation's result (replayed from the journal), and it does not open a second demo session.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const MAIN = fileURLToPath(new URL("../../../src/adapters/cli/main.ts", import.meta.url));
const HEADERS = { "content-type": "application/json", "x-tessera-client": "1" };

let root: string;
const children: ChildProcess[] = [];
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "tessera-restart-"));
});
afterAll(async () => {
  for (const c of children) if (c.exitCode === null) c.kill("SIGKILL");
  await rm(root, { recursive: true, force: true });
});

/** Start `tessera start` and resolve with its base URL once it serves. */
function startServer(): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, ["--import", "tsx", MAIN, "start"], {
    env: {
      ...process.env,
      TESSERA_DATA_DIR: join(root, "data"),
      TESSERA_WORK_DIR: join(root, "work"),
      TESSERA_PORT: "0",
      TESSERA_HOST: "127.0.0.1",
      TESSERA_COMPUTE_POOL_WORKERS: "1",
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.push(child);
  return new Promise((resolve, reject) => {
    let out = "";
    const timer = setTimeout(() => reject(new Error(`no start within 90 s:\n${out}`)), 90_000);
    const onData = (b: Buffer) => {
      out += b.toString();
      const m = /at (http:\/\/127\.0\.0\.1:\d+)\/api/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve({ child, url: m[1]! });
      }
    };
    child.stdout!.on("data", onData);
    child.stderr!.on("data", (b: Buffer) => {
      out += b.toString();
    });
    child.on("exit", (code) => reject(new Error(`exited ${code} before serving:\n${out}`)));
  });
}

// biome-ignore lint/suspicious/noExplicitAny: answers of several routes, read field by field
async function json(url: string, init: RequestInit = {}): Promise<{ status: number; body: any }> {
  const r = await fetch(url, { ...init, headers: { ...HEADERS, ...(init.headers ?? {}) } });
  return { status: r.status, body: await r.json().catch(() => null) };
}

async function until<T>(what: string, fn: () => Promise<T | undefined>, ms = 60_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe("a server killed with SIGKILL", () => {
  it("brings its session back, computation included, when started again", { timeout: 240_000 }, async () => {
    const first = await startServer();
    const sessions = (await json(`${first.url}/api/sessions`)).body.sessions as { id: string }[];
    expect(sessions).toHaveLength(1);
    const id = sessions[0]!.id;
    const job = await json(`${first.url}/api/sessions/${id}/jobs`, {
      method: "POST",
      body: JSON.stringify({
        namespace: "custom",
        function: "rename_obs_column",
        params: { old_name: "cell_type", new_name: "label" },
      }),
    });
    expect(job.status).toBe(200);
    await until("the rename", async () => {
      const r = await json(`${first.url}/api/sessions/${id}/jobs/${job.body.job_id}`);
      return r.body?.status === "completed" ? true : undefined;
    });
    // The journal is written a moment after the change.
    await new Promise((r) => setTimeout(r, 1000));
    first.child.kill("SIGKILL");
    await new Promise((r) => first.child.once("exit", r));

    const second = await startServer();
    const again = (await json(`${second.url}/api/sessions`)).body.sessions as { id: string }[];
    expect(again.map((s) => s.id)).toEqual([id]);
    await until("the replayed rename", async () => {
      const r = await fetch(`${second.url}/api/sessions/${id}/data/obs:label`, { headers: HEADERS });
      await r.arrayBuffer();
      return r.status === 200 ? true : undefined;
    });
    const gone = await fetch(`${second.url}/api/sessions/${id}/data/obs:cell_type`, { headers: HEADERS });
    expect(gone.status).toBe(404);
    second.child.kill("SIGTERM");
    const code = await new Promise((r) => second.child.once("exit", r));
    expect(code).toBe(0);
  });
});
