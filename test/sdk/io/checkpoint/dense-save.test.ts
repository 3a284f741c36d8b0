/**
 * Saving a session whose X is dense (20,000 × 3,000 float32, 229 MB, as `sc.pp.scale` leaves it) streams:
 * the save's extra memory stays bounded instead of growing with X (a CSC copy of X and a zip writer holding
 * every entry once took a 50,000-cell save past the server's memory and killed it), and the file it writes
 * serves X's values from both X and the column-major mirror.
 */
import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openCheckpoint, readGeneFromMirror } from "../../../../src/sdk/io/checkpoint/read.js";

const CELLS = 20_000;
const GENES = 3_000;
const CHILD = fileURLToPath(new URL("../../../helpers/dense-save-child.ts", import.meta.url));
const MB = 2 ** 20;

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "tessera-dense-save-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("a dense save", () => {
  it(
    `of ${CELLS} × ${GENES} takes a bounded amount of memory and reads back`,
    { timeout: 240_000 },
    async () => {
      const out = join(dir, "dense.sdata.zarr.zip");
      const { stdout } = await promisify(execFile)(
        process.execPath,
        ["--import", "tsx", CHILD, `${CELLS}`, `${GENES}`, out],
        {
          maxBuffer: MB,
        },
      );
      const { before, peak, xBytes } = JSON.parse(stdout) as { before: number; peak: number; xBytes: number };
      const extra = peak - before;
      console.log(
        `dense save ${CELLS} × ${GENES}: X ${(xBytes / MB).toFixed(0)} MB, RSS ${(before / MB).toFixed(0)} → peak ${(peak / MB).toFixed(0)} MB (+${(extra / MB).toFixed(0)} MB)`,
      );
      // A few block and chunk buffers (~100 MB here), not a copy of X (the old writer needed > 2 × X more).
      expect(extra).toBeLessThan(Math.min(300 * MB, 1.3 * xBytes));

      const cp = await openCheckpoint(out);
      const gene = await readGeneFromMirror(cp, "table", "gene2999");
      expect(gene.length).toBe(CELLS);
      for (const i of [0, 1, 12_345, CELLS - 1]) {
        const k = i * GENES + 2999;
        const want = Math.fround((((k * 2654435761) >>> 0) / 2 ** 32 - 0.5) * 4 || 1);
        expect(gene[i]).toBe(want);
      }
    },
  );
});
