/**
 * The analysis panels' pure models: the history rules (badges, what may be deleted or cancelled,
 * elapsed time, the jobs that block the app) and the save dialog's model (sizes, running total,
 * file-name preview, and a body that names only the trims, so an untouched checklist is the
 * whole-object save). The recipe form entry is the recipe's params as a function's schema.
 */
import { describe, expect, it } from "vitest";
import {
  badgeText,
  blockingLabel,
  cancellable,
  deletable,
  drivingJob,
  duration,
  elapsed,
} from "../../../src/ui/app/analysis/history-model.js";
import { recipeFormEntry } from "../../../src/ui/app/analysis/recipe-model.js";
import {
  displayedObsmSlots,
  fileNamePreview,
  formatMb,
  fullSelection,
  imageCost,
  prefixProblem,
  runningTotal,
  type SizedInventory,
  saveBody,
} from "../../../src/ui/app/analysis/save-model.js";
import { defaultsOf, widgetOf } from "../../../src/ui/app/form-model.js";

const entry = (status: string) =>
  ({
    id: "e",
    namespace: "sc.pp",
    function: "pca",
    params: {},
    status,
    library_versions: {},
    started_at: null,
    finished_at: null,
    structural_diff: {},
  }) as never;

describe("history model", () => {
  it("badges: pending is a draft; pending, failed and cancelled rows delete, only queued rows cancel", () => {
    expect(badgeText("pending")).toBe("draft");
    expect(badgeText("drawn")).toBe("drawn");
    expect(
      ["pending", "queued", "running", "completed", "failed", "cancelled"].filter((s) => deletable(entry(s))),
    ).toEqual(["pending", "failed", "cancelled"]);
    expect(["pending", "queued", "running", "completed"].filter((s) => cancellable(entry(s)))).toEqual([
      "queued",
    ]);
  });

  it("elapsed and duration", () => {
    const t0 = "2026-01-01T10:00:00.000Z";
    expect(elapsed(t0, Date.parse(t0) + 65_400)).toBe("1:05");
    expect(elapsed(t0, Date.parse(t0) + 3_725_000)).toBe("1:02:05");
    expect(elapsed(null, 0)).toBe("");
    expect(duration(t0, "2026-01-01T10:00:01.250Z")).toBe("1.3 s");
    expect(duration(t0, null)).toBe("");
  });

  it("save, subset and points-transform jobs block; computes and shape edits do not", () => {
    const q = (namespace: string, fn: string) => ({
      job_id: "j",
      status: "queued",
      descriptor: { namespace, function: fn },
    });
    expect(blockingLabel(q("session", "save"))).toMatch(/Saving/);
    expect(blockingLabel(q("session", "subset"))).toMatch(/subset/);
    expect(blockingLabel(q("session", "points_transform"))).toMatch(/transform/);
    expect(blockingLabel(q("session", "shape_annotation.add"))).toBeNull();
    expect(blockingLabel(q("sc.pp", "pca"))).toBeNull();
  });
});

const inv: SizedInventory = {
  tables: [
    {
      name: "table",
      active: true,
      size_mb: 3,
      slots: [
        { path: "X", size_mb: 2, required: false },
        { path: "obs", size_mb: 0.5, required: true },
        { path: "var", size_mb: 0.25, required: true },
        { path: "uns", size_mb: 0, required: true },
        { path: "obsm/X_pca", size_mb: 0.25, required: false },
      ],
    },
  ],
  images: [
    {
      name: "img",
      size_mb: 21,
      levels: [
        { level: 0, width: 400, height: 400, size_mb: 16 },
        { level: 1, width: 200, height: 200, size_mb: 4 },
        { level: 2, width: 100, height: 100, size_mb: 1 },
      ],
    },
  ],
  labels: [{ name: "lab", size_mb: 1 }],
  points: [{ name: "pts", size_mb: null }],
  shapes: [{ name: "shp", size_mb: 0.5 }],
};

describe("save model", () => {
  it("an untouched checklist is the whole-object save: only name, folder and prefix", () => {
    expect(saveBody(inv, ["p1"], fullSelection(), { name: "n", folder: "out", prefix: "pre" })).toEqual({
      name: "n",
      folder: "out",
      prefix: "pre",
    });
  });

  it("names exactly the trims: dropped elements, a coarser image level, dropped slots and figures", () => {
    const sel = fullSelection();
    sel.dropped.labels.add("lab");
    sel.levels.img = 1;
    sel.droppedSlots.table = new Set(["X"]);
    sel.droppedFigures.add("p1");
    expect(saveBody(inv, ["p1", "p2"], sel, { name: "n", folder: "", prefix: "pre" })).toEqual({
      name: "n",
      prefix: "pre",
      include: { labels: [] },
      levels: { img: 1 },
      slots: { table: ["obs", "var", "uns", "obsm/X_pca"] },
      figures: ["p2"],
    });
  });

  it("costs, the running total, and 'at least' when a size is unknown", () => {
    expect(imageCost(inv.images[0]!, 0)).toBe(21);
    expect(imageCost(inv.images[0]!, 1)).toBe(5);
    const all = runningTotal(inv, { p1: 1048576 }, fullSelection());
    expect(all).toMatchObject({ kept: 6, total: 6, unknown: true });
    expect(all.mb).toBeCloseTo(3 + 21 + 1 + 0.5 + 1);
    const sel = fullSelection();
    sel.dropped.points.add("pts");
    sel.levels.img = 2;
    const t = runningTotal(inv, {}, sel);
    expect(t).toMatchObject({ kept: 4, total: 5, unknown: false });
    expect(t.mb).toBeCloseTo(3 + 1 + 1 + 0.5);
    expect(formatMb(2048)).toBe("2.00 GB");
    expect(formatMb(12.34, true)).toBe("at least 12.3 MB");
    expect(formatMb(0.01)).toBe("< 0.1 MB");
    expect(formatMb(null)).toBe("size unknown");
  });

  it("previews the file name and checks the prefix as the server does", () => {
    expect(fileNamePreview("/data/out/", "run1")).toBe("/data/out/run1-<content hash>.sdata.zarr.zip");
    expect(fileNamePreview("", "run1")).toBe("run1-<content hash>.sdata.zarr.zip");
    expect(prefixProblem("")).toMatch(/blank/);
    expect(prefixProblem(".hidden")).toMatch(/dot/);
    expect(prefixProblem("a/b")).toMatch(/separator/);
    expect(prefixProblem("ok")).toBeNull();
  });
});

describe("recipe form entry", () => {
  it("turns the recipe's params into a function schema the generated form renders", () => {
    const e = recipeFormEntry({
      name: "r",
      description: "d",
      params: [
        {
          name: "col",
          schema: { type: "string", default: "cell_type" },
          widget: "obs_categorical",
          required: true,
          tooltip: "the column",
        },
        { name: "res", schema: { type: "number", default: 1 }, required: false },
      ],
      steps: [],
    });
    expect(e.json_schema.required).toEqual(["col"]);
    expect(defaultsOf(e)).toEqual({ col: "cell_type", res: 1 });
    expect(widgetOf(e.json_schema.properties!.col!, e.ui_schema.col)).toBe("obs_categorical");
    expect(widgetOf(e.json_schema.properties!.res!, e.ui_schema.res)).toBe("number");
    expect(e.ui_schema.col!.tooltip).toBe("the column");
  });
});

describe("displays → locked obsm slots, redraw jobs", () => {
  it("locks the obsm keys displays draw from (spatial coords, embedding key), not other tables' or bad paths", () => {
    const d = (type: string, encoding: Record<string, unknown>) =>
      ({ id: type, type, encoding, viewport: { target: [], zoom: 0 } }) as never;
    expect(
      [
        ...displayedObsmSlots([
          d("spatial_canvas", { coords: "obsm:spatial" }),
          d("embedding_canvas", { obsm_key: "X_umap" }),
          d("embedding_canvas", { obsm_key: "obsm:X_pca" }),
          d("spatial_canvas", { coords: "tables:other:obsm:spatial" }),
          d("spatial_canvas", { coords: "not a path::" }),
        ]),
      ].sort(),
    ).toEqual(["obsm/X_pca", "obsm/X_umap", "obsm/spatial"]);
    expect(displayedObsmSlots([]).size).toBe(0);
  });

  it("finds the job driving a running plot: the queue's running job of the same function", () => {
    const plot = {
      id: "p1",
      namespace: "pl",
      function: "umap",
      status: "running",
      params: {},
      references: [],
    };
    const q = (job_id: string, status: string, fn: string) => ({
      job_id,
      status,
      descriptor: { namespace: "pl", function: fn },
    });
    expect(drivingJob(plot as never, [q("j0", "running", "umap"), q("j1", "queued", "umap")])).toBe("j0");
    expect(drivingJob(plot as never, [q("j0", "running", "spatial")])).toBeNull();
    expect(drivingJob({ ...plot, status: "drawn" } as never, [q("j0", "running", "umap")])).toBeNull();
    // A first draw's job is the plot's own id (its log is found under it already).
    expect(drivingJob(plot as never, [q("p1", "running", "umap")])).toBeNull();
  });
});
