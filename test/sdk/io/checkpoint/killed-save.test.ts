/**
 * A save killed with SIGKILL at any moment never leaves a half-written file under the final name and never
 * damages the checkpoint it was replacing; what it leaves (a hidden temporary file beside the target, a staging
 * folder in the work dir) is removed when the server starts again, and the start says so in one log line.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { LEDGER_DIR, sweepScraps } from "../../../../src/sdk/io/store/pending-writes.js";
import { Service } from "../../../../src/sdk/session/service.js";

const CHILD = fileURLToPath(new URL("../../../helpers/save-child.ts", import.meta.url));
const sha = async (p: string) =>
  createHash("sha256")
    .update(await readFile(p))
    .digest("hex");

let root: string;
let dataDir: string;
let workDir: string;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "tessera-killed-save-"));
  dataDir = join(root, "data");
  workDir = join(root, "work");
  await mkdir(join(dataDir, "saves"), { recursive: true });
  await mkdir(workDir, { recursive: true });
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

/** Run the child; with `killAfterMs`, SIGKILL it that long after it reports `writing`. Resolves when it exits. */
function runSave(
  out: string,
  cells: number,
  killAfterMs?: number,
): Promise<{ code: number | null; ms: number }> {
  return new Promise((resolve, reject) => {
    const child: ChildProcess = spawn(
      process.execPath,
      ["--import", "tsx", CHILD, out, workDir, `${cells}`, "400"],
      {
        stdio: ["ignore", "pipe", "inherit"],
      },
    );
    let started = 0;
    child.stdout!.on("data", (b: Buffer) => {
      if (!started && b.toString().includes("writing")) {
        started = performance.now();
        if (killAfterMs !== undefined) setTimeout(() => child.kill("SIGKILL"), killAfterMs);
      }
    });
    child.on("error", reject);
    child.on("exit", (code) => resolve({ code, ms: performance.now() - started }));
  });
}

/** Hidden temporary files in the data dir, staging folders and ledger records in the work dir. */
async function scraps(): Promise<string[]> {
  const inData = (await readdir(join(dataDir, "saves"))).filter((n) => n.startsWith("."));
  const inWork = (await readdir(workDir)).filter((n) => n.includes("tessera-save-"));
  const ledger = await readdir(join(workDir, LEDGER_DIR)).catch(() => []);
  return [...inData, ...inWork, ...ledger];
}

describe("a save killed with SIGKILL", () => {
  it(
    "leaves the old checkpoint or the complete new one, and its scraps go at the next start",
    { timeout: 300_000 },
    async () => {
      const target = join(dataDir, "saves", "analysis.sdata.zarr.zip");
      // The old checkpoint (smaller), then a reference run of the new one to know its bytes and duration.
      expect((await runSave(target, 500)).code).toBe(0);
      const oldSha = await sha(target);
      const reference = join(dataDir, "saves", "reference.sdata.zarr.zip");
      const full = await runSave(reference, 6000);
      expect(full.code).toBe(0);
      const newSha = await sha(reference);
      await rm(reference);
      expect(await scraps()).toEqual([]);

      // Ten moments spread over the save, from its first milliseconds to past its end.
      const outcomes: string[] = [];
      for (let k = 0; k < 10; k++) {
        const delay = Math.round((full.ms * (k + 0.5)) / 9);
        await runSave(target, 6000, delay);
        const now = await sha(target);
        expect([oldSha, newSha]).toContain(now);
        outcomes.push(now === oldSha ? "old" : "new");
        if (now === newSha) {
          // Replaced: put the old bytes back so the next kill again replaces an old checkpoint.
          expect((await runSave(target, 500)).code).toBe(0);
          expect(await sha(target)).toBe(oldSha);
        }
      }
      expect(outcomes).toContain("old");

      // Restart: the service's start sweeps what the killed saves left, and says so.
      const left = await scraps();
      expect(left.length).toBeGreaterThan(0);
      const log = vi.spyOn(process.stderr, "write");
      const service = await Service.start({ env: { TESSERA_DATA_DIR: dataDir, TESSERA_WORK_DIR: workDir } });
      try {
        expect(await scraps()).toEqual([]);
        expect(log.mock.calls.map((c) => String(c[0])).join("")).toMatch(
          /removed \d+ leftover\(s\) of interrupted saves/,
        );
        expect(await sha(target)).toBe(oldSha);
      } finally {
        log.mockRestore();
        await service.close();
      }
    },
  );

  it("the sweep trusts a ledger record only for a hidden temporary file inside the data dir, and takes dead processes' raster caches", async () => {
    const outside = join(root, "precious.txt");
    const visible = join(dataDir, "saves", "mine.sdata.zarr.zip");
    for (const p of [outside, visible])
      await import("node:fs/promises").then((fs) => fs.writeFile(p, "keep"));
    await mkdir(join(workDir, LEDGER_DIR), { recursive: true });
    // Records of a dead process (pid 0x7fffffff does not exist) naming files the sweep must not touch.
    await writeFile(join(workDir, LEDGER_DIR, "2147483646-aa"), outside);
    await writeFile(join(workDir, LEDGER_DIR, "2147483646-bb"), visible);
    await writeFile(
      join(workDir, LEDGER_DIR, "2147483646-cc"),
      join(dataDir, "saves", "..", "..", "precious.txt"),
    );
    // A live process's record and staging folder are left alone.
    const live = join(dataDir, "saves", ".live.sdata.zarr.zip.abcdef.tmp");
    await writeFile(live, "in progress");
    await writeFile(join(workDir, LEDGER_DIR, `${process.pid}-dd`), live);
    await mkdir(join(workDir, `.tessera-save-${process.pid}-xyz`));
    // Raster caches: a dead process's goes, a live one's stays.
    await mkdir(join(workDir, "rasters", "2147483646-deadsession", "x"), { recursive: true });
    await writeFile(join(workDir, "rasters", "2147483646-deadsession", "x", "c"), "pixels");
    await mkdir(join(workDir, "rasters", `${process.pid}-livesession`), { recursive: true });
    expect(await sweepScraps(workDir, dataDir)).toEqual([
      { path: join(workDir, "rasters", "2147483646-deadsession"), bytes: 6 },
    ]);
    expect(await readdir(join(workDir, "rasters"))).toEqual([`${process.pid}-livesession`]);
    expect(await readFile(outside, "utf8")).toBe("keep");
    expect(await readFile(visible, "utf8")).toBe("keep");
    expect(await readFile(live, "utf8")).toBe("in progress");
    expect(await readdir(join(workDir, LEDGER_DIR))).toEqual([`${process.pid}-dd`]);
    expect(await readdir(workDir)).toContain(`.tessera-save-${process.pid}-xyz`);
  });
});
