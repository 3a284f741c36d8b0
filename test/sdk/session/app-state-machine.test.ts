import { describe, expect, it } from "vitest";
import { StateError } from "../../../src/sdk/errors.js";
import { emptyAppState } from "../../../src/sdk/io/checkpoint/app-state.js";
import {
  addEntry,
  discardEntry,
  invalidatePlots,
  pendingIds,
  settleLoadedState,
  transition,
  updatePendingParams,
} from "../../../src/sdk/session/app-state-machine.js";
import {
  bumpVersions,
  canonicalFieldPath,
  fieldPathsOverlap,
  referencesTouched,
} from "../../../src/sdk/session/versions.js";

const LIB = { tessera: "0.1.0" };
const rename = {
  namespace: "custom",
  function: "rename_obs_column",
  params: { old_name: "a", new_name: "b" },
};
const plot = { namespace: "pl", function: "embedding", params: { color: "leiden" } };

describe("history transitions", () => {
  it("walks pending → queued → running → completed and refuses the rest", () => {
    let s = addEntry(emptyAppState(), "h1", rename, "pending", LIB);
    expect(s.compute_history[0]).toMatchObject({
      id: "h1",
      status: "pending",
      started_at: null,
      structural_diff: {},
      library_versions: LIB,
    });
    s = updatePendingParams(s, "h1", { old_name: "x", new_name: "y" });
    expect(s.compute_history[0]!.params).toEqual({ old_name: "x", new_name: "y" });
    s = transition(s, "h1", "queued");
    expect(() => updatePendingParams(s, "h1", {})).toThrow(StateError);
    expect(() => discardEntry(s, "h1")).toThrow(/only pending, failed or cancelled/);
    expect(() => transition(s, "h1", "completed")).toThrow(StateError);
    s = transition(s, "h1", "running", { started_at: "2026-01-01T00:00:00.000Z" });
    expect(() => transition(s, "h1", "cancelled")).toThrow(/running; it cannot become cancelled/);
    s = transition(s, "h1", "completed", {
      finished_at: "2026-01-01T00:00:01.000Z",
      structural_diff: { obs: ["y", "x"] },
      log: "",
    });
    expect(s.compute_history[0]).toMatchObject({ status: "completed", structural_diff: { obs: ["y", "x"] } });
    expect(() => transition(s, "h1", "queued")).toThrow(StateError);
  });

  it("cancels only queued entries and deletes pending, failed and cancelled ones", () => {
    let s = addEntry(emptyAppState(), "a", rename, "queued", LIB);
    s = addEntry(s, "b", rename, "pending", LIB);
    s = transition(s, "a", "cancelled");
    expect(s.compute_history[0]!.status).toBe("cancelled");
    expect(pendingIds(s)).toEqual(["b"]);
    s = discardEntry(s, "b");
    expect(s.compute_history.map((e) => e.id)).toEqual(["a"]);
    s = addEntry(s, "c", rename, "queued", LIB);
    s = transition(s, "c", "running", { started_at: "2026-01-01T00:00:00.000Z" });
    s = transition(s, "c", "failed", { finished_at: "2026-01-01T00:00:01.000Z" });
    s = discardEntry(discardEntry(s, "c"), "a");
    expect(s.compute_history).toEqual([]);
    expect(() => discardEntry(s, "zzz")).toThrow(/no history entry/);
  });

  it("never mutates its input", () => {
    const s0 = addEntry(emptyAppState(), "a", rename, "queued", LIB);
    const frozen = JSON.stringify(s0);
    transition(s0, "a", "running");
    expect(JSON.stringify(s0)).toBe(frozen);
  });
});

describe("plots", () => {
  it("goes queued → running → drawn → invalidated → queued (redraw)", () => {
    let s = addEntry(emptyAppState(), "p1", plot, "queued", LIB);
    expect(s.plots[0]).toMatchObject({ namespace: "pl", status: "queued", references: [] });
    expect(s.compute_history).toEqual([]);
    s = transition(s, "p1", "running");
    s = transition(s, "p1", "drawn", { references: ["obs:leiden", "obsm:X_umap"] });
    const none = invalidatePlots(s, ["tables:table:obs:cell_type"], "table");
    expect(none.ids).toEqual([]);
    expect(none.state).toBe(s);
    const hit = invalidatePlots(s, ["tables:table:obs:leiden"], "table");
    expect(hit.ids).toEqual(["p1"]);
    expect(hit.state.plots[0]!.status).toBe("invalidated");
    // Another table's leiden column does not touch the active table's plot.
    expect(invalidatePlots(s, ["tables:other:obs:leiden"], "table").ids).toEqual([]);
    s = transition(hit.state, "p1", "queued");
    expect(s.plots[0]!.status).toBe("queued");
  });

  it("settles in-flight work of a loaded state", () => {
    let s = transition(addEntry(emptyAppState(), "a", rename, "queued", LIB), "a", "running");
    s = addEntry(s, "b", rename, "pending", LIB);
    s = addEntry(s, "p", plot, "queued", LIB);
    const settled = settleLoadedState(s);
    expect(settled.compute_history.map((e) => e.status)).toEqual(["cancelled", "pending"]);
    expect(settled.plots[0]!.status).toBe("failed");
  });
});

describe("field paths and data versions", () => {
  it("qualifies table paths with the active table", () => {
    expect(canonicalFieldPath("obs:leiden", "table")).toBe("tables:table:obs:leiden");
    expect(canonicalFieldPath("X:CD3E", "t2")).toBe("tables:t2:X:CD3E");
    expect(canonicalFieldPath("tables:a:obsm:X_umap", "table")).toBe("tables:a:obsm:X_umap");
    expect(canonicalFieldPath("images:morphology", "table")).toBe("images:morphology");
    expect(canonicalFieldPath("not a path", "table")).toBe("not a path");
  });

  it("overlaps on whole segments only", () => {
    expect(fieldPathsOverlap("tables:t", "tables:t:obs:x")).toBe(true);
    expect(fieldPathsOverlap("tables:t:X", "tables:t:X:CD3E")).toBe(true);
    expect(fieldPathsOverlap("tables:t:obs:leiden", "tables:t:obs:leiden_2")).toBe(false);
    expect(fieldPathsOverlap("tables:t", "tables:t2:obs:x")).toBe(false);
    expect(referencesTouched(["X:CD3E"], ["tables:table:X"], "table")).toBe(true);
    expect(referencesTouched(["obs:a"], ["tables:table"], "table")).toBe(true);
  });

  it("counts commits per field path", () => {
    let v = bumpVersions({}, ["tables:t:obs:a", "tables:t:obs:a", "images:i"]);
    expect(v).toEqual({ "tables:t:obs:a": 1, "images:i": 1 });
    v = bumpVersions(v, ["tables:t:obs:a"]);
    expect(v["tables:t:obs:a"]).toBe(2);
  });
});
