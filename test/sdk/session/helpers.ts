/** Shared setup of the session tests: a temp data dir with a small demo checkpoint, and a service on it. */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { generateDemo } from "../../../src/sdk/demo/generate.js";
import type { TesseraEvent } from "../../../src/sdk/events/types.js";
import { writeCheckpointNamed } from "../../../src/sdk/io/checkpoint/write.js";
import { Service } from "../../../src/sdk/session/service.js";
import type { Session } from "../../../src/sdk/session/session.js";

/** A small demo (300 cells, 40 genes, 256 px rasters) as a checkpoint in a fresh data dir. */
export async function demoDataDir(): Promise<{
  dataDir: string;
  demo: string;
  cleanup: () => Promise<void>;
}> {
  const dataDir = await mkdtemp(join(tmpdir(), "tessera-session-"));
  const sd = generateDemo({ nCells: 300, nGenes: 40, imageSize: 256, nTranscripts: 500 });
  const { path } = await writeCheckpointNamed(sd, dataDir, "demo", { name: "demo" });
  return { dataDir, demo: path, cleanup: () => rm(dataDir, { recursive: true, force: true }) };
}

/** A service on `dataDir` with the tessera and testkit plugins and two worker threads. */
export function startService(
  dataDir: string,
  extra: Partial<Parameters<typeof Service.start>[0]> = {},
): Promise<Service> {
  return Service.start({
    env: {},
    plugins: ["tessera", "testkit"],
    config: {
      dataDir,
      computePoolWorkers: 2,
      nThreads: 1,
      workDir: join(dataDir, ".work"),
      recipesDir: join(dataDir, "no-recipes"),
    },
    ...extra,
  });
}

/** Events of the bus from now on, for one session (or all). */
export function record(
  service: Service,
  sessionId?: string,
): { events: TesseraEvent<Record<string, unknown>>[]; stop: () => void } {
  const events: TesseraEvent<Record<string, unknown>>[] = [];
  const stop = service.bus.subscribe((e) => {
    const d = e.data as Record<string, unknown>;
    if (!sessionId || d.session_id === sessionId) events.push(e as TesseraEvent<Record<string, unknown>>);
  }, service.bus.lastId);
  return { events, stop };
}

/** Open the demo checkpoint and wait until it is ready. */
export async function openDemo(service: Service, demo: string, name?: string): Promise<Session> {
  const s = await service.createSession({ source: { kind: "load", path: demo }, ...(name ? { name } : {}) });
  await s.ready;
  if (s.status !== "ready") throw new Error(`demo did not load: ${s.summary().error}`);
  return s;
}
