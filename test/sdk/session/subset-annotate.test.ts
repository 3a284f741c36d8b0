import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DisplaySpec } from "../../../src/sdk/io/checkpoint/app-state.js";
import { displayForRegionSet } from "../../../src/sdk/session/annotate.js";
import type { Service } from "../../../src/sdk/session/service.js";
import { childAppState, childName } from "../../../src/sdk/session/subset.js";
import { demoDataDir, openDemo, record, startService } from "./helpers.js";

let service: Service;
let demo: string;
let cleanup: () => Promise<void>;
beforeAll(async () => {
  const d = await demoDataDir();
  demo = d.demo;
  cleanup = d.cleanup;
  service = await startService(d.dataDir, { plugins: ["tessera", "scanpy"] });
});
afterAll(async () => {
  await service?.close();
  await cleanup?.();
});

describe("Service.subset", () => {
  it("fails the job and leaves the parent open when the table changed while the subset was queued", async () => {
    const s = await openDemo(service, demo);
    const rec = record(service, s.id);
    const shrink = await s.submit({ namespace: "sc.pp", function: "subsample", params: { n_obs: 100 } });
    const ticket = await service.subset(s.id, { cell_indices: [250, 251] });
    expect((await shrink.done).status).toBe("completed");
    const out = await ticket.done;
    rec.stop();
    expect(out.status).toBe("failed");
    expect(out.error).toMatch(/active table changed while the subset was queued/);
    expect(service.session(s.id).status).toBe("ready");
    expect(service.job(s.id, ticket.job_id).status).toBe("failed");
    expect(rec.events.map((e) => e.event)).not.toContain("session.removed");
    expect(service.sessions().filter((x) => x.parentId === s.id)).toHaveLength(0);
  });
});

describe("what a subset child inherits", () => {
  it("keeps history and displays, turns drawn plots stale, drops the parent's recorded name", () => {
    const app = {
      schema_version: 1 as const,
      name: "parent name",
      compute_history: [],
      plots: [
        {
          id: "p1",
          namespace: "pl" as const,
          function: "f",
          params: {},
          status: "drawn" as const,
          references: [],
          library_versions: {},
        },
        {
          id: "p2",
          namespace: "pl" as const,
          function: "f",
          params: {},
          status: "pending" as const,
          references: [],
          library_versions: {},
        },
      ],
      displays: [],
    };
    const child = childAppState(app);
    expect(child.name).toBeUndefined();
    expect(child.plots.map((p) => p.status)).toEqual(["invalidated", "pending"]);
    expect(childName("demo")).toBe("demo-subset");
  });
});

describe("displayForRegionSet", () => {
  it("points the display at the region set and merges the colour override", () => {
    const d: DisplaySpec = {
      id: "e",
      type: "embedding_canvas",
      encoding: { obsm_key: "X_umap", color_by: "X:CD3E", category_colors: { "obs:r": { a: "#000000" } } },
      viewport: { target: [0, 0], zoom: 1 },
    };
    const out = displayForRegionSet(d, "r", "b", "#ffffff");
    expect(out.encoding).toEqual({
      obsm_key: "X_umap",
      color_by: "obs:r",
      category_colors: { "obs:r": { a: "#000000", b: "#ffffff" } },
    });
    expect(d.encoding.color_by).toBe("X:CD3E");
    expect(displayForRegionSet(d, "r", "b").encoding.category_colors).toEqual(d.encoding.category_colors);
  });
});
