/** The test plugin's operations, called directly (and `crash` inside a real worker thread). */
import { cp, mkdtemp, rm, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { Worker } from "node:worker_threads";
import { beforeAll, describe, expect, it } from "vitest";
import type { SpatialData } from "../../src/sdk/data/spatialdata.js";
import { generateDemo } from "../../src/sdk/demo/generate.js";
import { fixture } from "../fixtures.js";
import { testContext } from "./context.js";
import { crash, echo_params, fail, noop, sleep, with_callback } from "./testkit/ops.js";
import { test_scatter } from "./testkit/plots.js";
import { open_with_meta } from "./testkit/readers.js";

let sd: SpatialData;
beforeAll(() => {
  sd = generateDemo({ nCells: 300 });
});

describe("testkit computes", () => {
  it("noop returns an empty change", async () => {
    expect(await noop(sd, {}, testContext().ctx)).toEqual({});
  });

  it("sleep waits, reports progress and logs", async () => {
    const { ctx, logs, progress } = testContext();
    const t0 = Date.now();
    expect(await sleep(sd, { ms: 60, message: "zzz" }, ctx)).toEqual({});
    expect(Date.now() - t0).toBeGreaterThanOrEqual(55);
    expect(logs).toEqual(["zzz"]);
    expect(progress.at(-1)).toBe(1);
  });

  it("sleep stops when the signal aborts", async () => {
    const ac = new AbortController();
    const { ctx } = testContext("table", ac.signal);
    const t0 = Date.now();
    setTimeout(() => ac.abort(new Error("cancelled")), 30);
    await expect(sleep(sd, { ms: 10_000 }, ctx)).rejects.toThrow("cancelled");
    expect(Date.now() - t0).toBeLessThan(2000);
  });

  it("fail throws its message", async () => {
    await expect(fail(sd, {}, testContext().ctx)).rejects.toThrow("testkit.fail: failed on purpose");
    await expect(fail(sd, { message: "boom" }, testContext().ctx)).rejects.toThrow("boom");
  });

  it("crash refuses to run on the main thread", async () => {
    await expect(crash(sd, {}, testContext().ctx)).rejects.toThrow("only runs in a worker thread");
  });

  it("crash ends the worker thread that runs it", async () => {
    const ops = fileURLToPath(new URL("./testkit/ops.ts", import.meta.url));
    const tsx = pathToFileURL(
      createRequire(import.meta.url)
        .resolve("tsx/esm/api")
        .replace(/\.cjs$/, ".mjs"),
    ).href;
    const code = `
      const { parentPort, workerData } = require("node:worker_threads");
      (async () => {
        const { tsImport } = await import(workerData.tsx);
        const { crash } = await tsImport(workerData.ops, workerData.parent);
        parentPort.postMessage("loaded");
        await crash({}, { mode: "exit" }, {});
        parentPort.postMessage("survived");
      })();
    `;
    const worker = new Worker(code, { eval: true, workerData: { tsx, ops, parent: import.meta.url } });
    const messages: unknown[] = [];
    const errors: unknown[] = [];
    worker.on("message", (m) => messages.push(m));
    worker.on("error", (e) => errors.push(e));
    const exitCode = await new Promise<number>((resolve) => worker.on("exit", resolve));
    expect(errors).toEqual([]);
    expect(messages).toEqual(["loaded"]);
    expect(exitCode).toBe(1);
  });
});

describe("testkit extracts and plots", () => {
  it("with_callback multiplies the cell count and calls the callback when given in code", async () => {
    const seen: number[] = [];
    expect(await with_callback(sd, { scale: 2, on_value: (v) => seen.push(v) }, testContext().ctx)).toEqual({
      value: 600,
    });
    expect(seen).toEqual([600]);
  });

  it("echo_params returns its params", async () => {
    expect(await echo_params(sd, { cluster_key: "cell_type", n_neighbors: 3 }, testContext().ctx)).toEqual({
      cluster_key: "cell_type",
      n_neighbors: 3,
    });
  });

  it("test_scatter draws an SVG and lists the field paths it read", async () => {
    const res = await test_scatter(sd, { color: "cell_type", max_points: 50 }, testContext().ctx);
    expect(res.kind).toBe("plot");
    expect(res.svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"')).toBe(true);
    expect(res.svg.match(/<circle /g)).toHaveLength(50);
    expect(res.references).toEqual(["tables:table:obsm:spatial", "tables:table:obs:cell_type"]);
    await expect(test_scatter(sd, { basis: "X_umap" }, testContext().ctx)).rejects.toThrow(
      'no dense obsm "X_umap"',
    );
  });
});

describe("testkit reader", () => {
  it("open_with_meta opens a store and merges a metadata file joined onto its path", async () => {
    const dir = await mkdtemp(join(tmpdir(), "tessera-testkit-"));
    try {
      const store = join(dir, "blobs.sdata.zarr");
      await cp(fixture("vitessce-sdata-blobs-0.7/blobs.sdata.zarr"), store, { recursive: true });
      await writeFile(join(store, "meta.json"), JSON.stringify({ sample: "S1", operator: "test" }));
      const { ctx } = testContext();
      const out = await open_with_meta(sd, { path: store, meta_file: "meta.json" }, ctx);
      expect(out.attrs).toMatchObject({ sample: "S1", operator: "test" });
      expect(Object.keys(out.images).sort()).toEqual(["blobs_image", "blobs_multiscale_image"]);
      await expect(open_with_meta(sd, { path: store, meta_file: "missing.json" }, ctx)).rejects.toThrow(
        "missing.json: cannot read the metadata file",
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
