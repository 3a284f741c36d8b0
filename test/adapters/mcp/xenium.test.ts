/**
 * The agent workflow on real data, over real HTTP with the SDK's MCP client: the Xenium
 * fixture (`sfe-toy/xenium`, 526 cells with boundaries, copied into the data dir) opened with the
 * io.xenium reader, control taken, a display added with the cell boundaries drawn, looked at
 * (the 4.4 acceptance count against the session's obsm), a region marked, inspected, annotated and
 * subset, the child saved, control released.
 */

import { existsSync } from "node:fs";
import { cp } from "node:fs/promises";
import { join } from "node:path";
import type { Progress } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DenseArray } from "../../../src/sdk/data/arrays.js";
import { fixture } from "../../fixtures.js";
import { startTestServer, type TestServer } from "../http/harness.js";
import { connectMcp, type McpTestClient } from "./harness.js";

let t: TestServer;
let mcp: McpTestClient;
beforeAll(async () => {
  t = await startTestServer({ plugins: ["tessera", "testkit", "scanpy", "spatialdata-io"] });
  await cp(fixture("sfe-toy/xenium"), join(t.dataDir, "xenium"), { recursive: true });
  mcp = await connectMcp(t.url);
}, 120_000);
afterAll(async () => {
  await mcp?.close();
  await t?.close();
});

type Affine = [number, number, number, number, number, number];
const apply = (m: Affine, x: number, y: number) => [m[0] * x + m[1] * y + m[2], m[3] * x + m[4] * y + m[5]];

describe("an agent's session on the Xenium fixture", () => {
  let sid: string;
  let xs: number[];
  let ys: number[];
  let ring: number[][];
  let inside: number;

  it("opens it with the xenium reader and takes control", async () => {
    const seen: Progress[] = [];
    const res = await mcp.client.callTool(
      {
        name: "create_session",
        arguments: {
          reader: { namespace: "io", function: "xenium", params: { path: join(t.dataDir, "xenium") } },
          name: "xenium",
          timeout_s: 600,
        },
      },
      undefined,
      { onprogress: (p) => seen.push(p), timeout: 600_000 },
    );
    const r = res.structuredContent as { id: string; status: string };
    expect(r.status).toBe("ready");
    // The reader's own progress reports reached the client while it waited.
    expect(seen.length).toBeGreaterThan(0);
    for (let i = 1; i < seen.length; i++) expect(seen[i]!.progress).toBeGreaterThan(seen[i - 1]!.progress);
    sid = r.id;
    await mcp.ok("set_active_session", { session_id: sid, take_control: true });
    const s = t.server.service.session(sid);
    const sp = s.data.tables[s.activeTable!]!.obsm.spatial as DenseArray;
    xs = Array.from({ length: sp.shape[0]! }, (_, i) => Number(sp.data[i * sp.shape[1]!]));
    ys = Array.from({ length: sp.shape[0]! }, (_, i) => Number(sp.data[i * sp.shape[1]! + 1]));
    expect(xs.length).toBe(526);
  });

  it("adds a display with the cell boundaries and sees every cell; a pixel box selects the cells counted here", async () => {
    const { display } = await mcp.ok<{ display: { id: string } }>("add_display", {
      type: "spatial_canvas",
      encoding: { coords: "obsm:spatial", render_mode: "points+shapes", shapes_layer: "cell_boundaries" },
    });
    const v = await mcp.call("view_display", {
      display_id: display.id,
      viewport: "fit",
      width_px: 800,
      height_px: 600,
    });
    expect(v.isError).toBeFalsy();
    const meta = v.structuredContent as {
      pixel_to_world: Affine;
      render: { cells_in_view: number; shapes_drawn: number };
    };
    expect(meta.render.cells_in_view).toBe(526);
    // Every cell's boundary polygon is drawn (the fixture's morphology images lie elsewhere in world space).
    expect(meta.render.shapes_drawn).toBe(526);
    // The middle of the image, as pixels → world.
    ring = [
      [250, 150],
      [550, 150],
      [550, 450],
      [250, 450],
    ].map(([c, r]) => apply(meta.pixel_to_world, c!, r!));
    const [x0, y0] = ring[0]!;
    const [x1, y1] = ring[2]!;
    inside = xs.filter((x, i) => x > x0! && x < x1! && ys[i]! > y0! && ys[i]! < y1!).length;
    expect(inside).toBeGreaterThan(20);
    const marked = await mcp.call("view_display", {
      display_id: display.id,
      viewport: "fit",
      width_px: 800,
      height_px: 600,
      mark_polygons: [ring],
    });
    expect(marked.structuredContent).toMatchObject({ marks: { polygons: 1 } });
    const r = await mcp.ok<{ n_inside: number }>("inspect_region", { polygons: [ring] });
    expect(r.n_inside).toBe(inside);
  });

  it("annotates the region, subsets to it, saves the child and releases control", async () => {
    const a = await mcp.ok<{ status: string; n_cells: number }>("annotate_region", {
      region_set: "zone",
      category: "centre",
      polygons: [ring],
    });
    expect(a).toMatchObject({ status: "completed", n_cells: inside });
    const sub = await mcp.ok<{ status: string; child_id: string; n_obs: number }>("subset_to_region", {
      polygons: [ring],
    });
    // A subset keeps every cell whose spot (the table annotates cell_circles) meets the ring: all the
    // cells annotated by centroid, and the border cells whose circle reaches inside.
    expect(sub.status).toBe("completed");
    expect(sub.n_obs).toBeGreaterThanOrEqual(inside);
    const child = t.server.service.session(sub.child_id);
    const zone = child.data.tables[child.activeTable!]!.obs.columns.zone as unknown as {
      codes: Int32Array;
      categories: { values: string[] };
    };
    const centre = Array.from(zone.codes).filter(
      (c) => c >= 0 && zone.categories.values[c] === "centre",
    ).length;
    expect(centre).toBe(inside);
    const saved = await mcp.ok<{ status: string; path: string }>("save_checkpoint", { timeout_s: 600 });
    expect(saved.status).toBe("completed");
    expect(existsSync(saved.path)).toBe(true);
    await mcp.ok("release_control");
    expect(t.server.service.presence.lockOf(sub.child_id)).toBeNull();
  });
});
