/**
 * `tessera inspect` on h5ad files with HDF5 filters (test/data/h5, written by anndata + h5py), run as a real
 * process: an LZF file used to abort h5wasm, and an unknown filter must end in a message, not a crash.
 */
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

const run = promisify(execFile);
const MAIN = fileURLToPath(new URL("../../../src/adapters/cli/main.ts", import.meta.url));
const DATA = fileURLToPath(new URL("../../data/h5/", import.meta.url));

async function tessera(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, ["--import", "tsx", MAIN, ...args]);
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

describe("tessera inspect on filtered h5ad files", () => {
  it("prints the inventory of an LZF-compressed h5ad", async () => {
    const file = `${DATA}lzf.h5ad`;
    const r = await tessera("inspect", file);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(
      [
        file,
        "tables:",
        "  table: 50 obs × 20 vars",
        "    obs: cell_type (categorical), n_counts (numeric)",
        "    var: -",
        "    obsm: X_pca (dense, 5)",
        "    varm: -",
        "    layers: dense (dense, 20)",
        "    obsp: -   uns: -",
        "coordinate systems: -",
        "",
      ].join("\n"),
    );
  });

  it("ends with exit code 1 and a message naming file, dataset and filter for an unknown filter", async () => {
    const file = `${DATA}unknown-filter.h5ad`;
    const r = await tessera("inspect", file, "--field", "layers:dense");
    expect(r.code).toBe(1);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain(
      `${file}: /layers/dense: cannot read dataset: it is compressed with HDF5 filter 305`,
    );
    expect(r.stderr).not.toMatch(/Aborted|RuntimeError|HDF5-DIAG/);
  });
});
