/**
 * `tessera start` (what `npm start` runs): make sure the data dir holds a dataset (the generated
 * demo when it is empty), start the HTTP service on `TESSERA_HOST:TESSERA_PORT`, and open that
 * dataset as the first session so a client finds something to look at. Off loopback the server
 * needs a token: the printed URL carries it (`…/?token=…`).
 */

import { ensureDemoDataset } from "../../sdk/demo/ensure.js";
import { readConfig } from "../../sdk/session/config.js";
import { isLoopbackBind } from "../http/guard.js";
import { startServer } from "../http/server.js";

/** Serve the API with the demo dataset open; stops on SIGINT/SIGTERM. */
export async function startCommand(): Promise<void> {
  // The server keeps its sessions across restarts unless TESSERA_SESSION_RECOVERY=0 (journal.ts).
  const config = readConfig({ TESSERA_SESSION_RECOVERY: "1", ...process.env });
  const { path, created } = await ensureDemoDataset(config.dataDir);
  process.stdout.write(`${created ? "generated" : "found"} demo dataset ${path}\n`);
  const server = await startServer({ logger: false, config });
  const restored = server.service.sessions();
  // Sessions the last run left open come back; the demo opens only when there are none.
  const sessions = restored.length
    ? restored
    : [await server.service.createSession({ source: { kind: "load", path } })];
  for (const session of sessions) {
    await session.ready;
    process.stdout.write(
      `session ${session.id} (${session.name}): ${session.status}${session.summary().error ? ` — ${session.summary().error}` : ""}\n`,
    );
  }
  process.stdout.write(`Tessera is serving ${config.dataDir} at ${server.url}/api (Ctrl-C stops)\n`);
  if (!server.token) process.stdout.write(`open the web app: ${server.openUrl}\n`);
  if (server.token) {
    process.stdout.write(`open ${server.openUrl}\n`);
    // From other machines: the addresses and names the server answers to besides loopback.
    const { port, search } = new URL(server.openUrl);
    for (const h of server.guard.allowedHosts) {
      const name = h.includes(":") && !h.startsWith("[") ? `[${h}]` : h;
      if (h !== "*" && !isLoopbackBind(h)) process.stdout.write(`  or http://${name}:${port}/${search}\n`);
    }
    process.stdout.write(
      `API clients send Authorization: Bearer ${server.token} (the token ${config.token ? "is TESSERA_TOKEN" : "changes at every start unless TESSERA_TOKEN is set"})\n`,
    );
  }
  // A signal can arrive twice (Ctrl-C reaches the launcher's process group, a process manager may signal
  // both): the first starts the shutdown, the others must not cut a save in progress short.
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    process.stdout.write(`\n${signal}: shutting down (waiting for saves in progress)\n`);
    await server.close();
    process.exit(0);
  };
  process.on("SIGINT", () => void stop("SIGINT"));
  process.on("SIGTERM", () => void stop("SIGTERM"));
  process.on("SIGHUP", () => void stop("SIGHUP"));
  // Started by bin/tessera.js's launcher: if the launcher is killed outright (SIGKILL), stop as well rather
  // than live on unseen holding the port.
  const launcher = Number(process.env.TESSERA_LAUNCHER_PID);
  if (Number.isInteger(launcher) && launcher > 0) {
    setInterval(() => {
      if (process.ppid !== launcher) void stop("launcher exited");
    }, 2000).unref();
  }
}
