/** The `tessera` command run as a real process (through tsx, on the sources). */
import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fixture } from "../../fixtures.js";

const run = promisify(execFile);
const MAIN = fileURLToPath(new URL("../../../src/adapters/cli/main.ts", import.meta.url));

async function tessera(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, ["--import", "tsx", MAIN, ...args], {
      maxBuffer: 64 << 20,
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "tessera-cli-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("tessera inspect", () => {
  it("--json prints the inventory object of a SpatialData store", async () => {
    const r = await tessera("inspect", fixture("vitessce-sdata-blobs-0.3-full/blobs.sdata.zarr"), "--json");
    expect(r.code).toBe(0);
    const inv = JSON.parse(r.stdout);
    expect(Object.keys(inv).sort()).toEqual([
      "coordinate_systems",
      "images",
      "labels",
      "points",
      "shapes",
      "tables",
    ]);
    expect(inv.coordinate_systems).toEqual(["global"]);
    expect(inv.images).toEqual([
      {
        name: "blobs_multiscale_image",
        levels: [
          { level: 0, width: 512, height: 512 },
          { level: 1, width: 256, height: 256 },
          { level: 2, width: 128, height: 128 },
        ],
        channels: ["0", "1", "2"],
        dtype: "float64",
        coordinate_systems: ["global"],
      },
    ]);
    expect(
      inv.shapes.map((s: { name: string; n: number; geometry: string }) => [s.name, s.n, s.geometry]),
    ).toEqual([
      ["blobs_circles", 5, "circle"],
      ["blobs_multipolygons", 2, "multipolygon"],
      ["blobs_polygons", 5, "polygon"],
    ]);
    expect(inv.points[0]).toMatchObject({
      name: "blobs_points",
      n: 200,
      columns: ["x", "y", "genes", "instance_id"],
    });
    expect(inv.tables[0]).toMatchObject({
      name: "table",
      n_obs: 26,
      n_vars: 3,
      obs: [
        { name: "instance_id", kind: "numeric" },
        { name: "region", kind: "categorical" },
      ],
    });
  });

  it("--field prints one field as CSV", async () => {
    const r = await tessera(
      "inspect",
      fixture("scanpy-pbmc68k-reduced/10x_pbmc68k_reduced.h5ad"),
      "--field",
      "obs:bulk_labels",
    );
    expect(r.code).toBe(0);
    const lines = r.stdout.trim().split("\n");
    expect(lines[0]).toBe("index,bulk_labels");
    expect(lines[1]).toBe("AAAGCCTGGCTAAC-1,CD14+ Monocyte");
    expect(lines).toHaveLength(701);
  });

  it("bad input exits non-zero naming the file and the problem", async () => {
    const missing = await tessera("inspect", join(dir, "nope.zarr"));
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/nope\.zarr: no such file or directory/);
    const text = join(dir, "notes.txt");
    await writeFile(text, "hello");
    const unknown = await tessera("inspect", text);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain(text);
    const field = await tessera(
      "inspect",
      fixture("scanpy-pbmc68k-reduced/10x_pbmc68k_reduced.h5ad"),
      "--field",
      "obs:nothing",
    );
    expect(field.code).toBe(1);
    expect(field.stderr).toMatch(/no column "nothing"/);
    const usage = await tessera("frobnicate");
    expect(usage.code).toBe(2);
  });
});

describe("help", () => {
  it("--help on every command prints its usage and exits 0 without doing anything (start serves nothing)", async () => {
    for (const c of ["inspect", "convert", "run", "start", "functions", "viewer"]) {
      const r = await tessera(c, "--help");
      expect(r.code, c).toBe(0);
      expect(r.stdout, c).toMatch(new RegExp(`^usage:\\n  tessera ${c}`));
    }
    const all = await tessera("--help");
    expect(all.stdout).toMatch(/tessera run RECIPE/);
    expect(all.stdout).toMatch(/default: tessera,scanpy/);
  });

  it("inspect --json with --field is a usage error, not CSV", async () => {
    const r = await tessera(
      "inspect",
      fixture("scanpy-pbmc68k-reduced/10x_pbmc68k_reduced.h5ad"),
      "--json",
      "--field",
      "obs:louvain",
    );
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--json and --field cannot be combined/);
    expect(r.stdout).toBe("");
  });
});

describe("tessera convert", () => {
  it("writes a checkpoint that inspects to the same inventory", async () => {
    const input = fixture("vitessce-sdata-blobs-0.7/blobs.sdata.zarr");
    const out = join(dir, "blobs.sdata.zarr.zip");
    const c = await tessera("convert", input, out);
    expect(c.code).toBe(0);
    expect(c.stdout).toMatch(/wrote .*blobs\.sdata\.zarr\.zip/);
    const a = await tessera("inspect", input, "--json");
    const b = await tessera("inspect", out, "--json");
    expect(JSON.parse(b.stdout)).toEqual(JSON.parse(a.stdout));
    // Deterministic bytes: converting again gives the identical file.
    const out2 = join(dir, "blobs2.sdata.zarr.zip");
    await tessera("convert", input, out2);
    expect(Buffer.compare(await readFile(out), await readFile(out2))).toBe(0);
  });

  it("refuses an output that is not a .zarr.zip", async () => {
    const r = await tessera(
      "convert",
      fixture("vitessce-sdata-blobs-0.7/blobs.sdata.zarr"),
      join(dir, "x.h5ad"),
    );
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/must be a \.sdata\.zarr\.zip/);
  });
});
