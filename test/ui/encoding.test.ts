/**
 * The pure parts of the web app, in Node: the shared encoding module (palette keyed by sorted value,
 * the 100-category limit, viridis), cell colours, the field-version rule of the field cache, share
 * links, and the GeoArrow flattening checked against the server's own GeoArrow writer.
 */
import { tableToIPC } from "apache-arrow";
import { describe, expect, it } from "vitest";
import {
  CATEGORICAL_PALETTE,
  categoryColors,
  EMBEDDING_ENCODING_DEFAULTS,
  ISOLATE_DIM_ALPHA,
  MAX_COLORED_CATEGORIES,
  SPATIAL_ENCODING_DEFAULTS,
  VIRIDIS_LUT,
  withSpatialDefaults,
} from "../../src/sdk/display/encoding.js";
import { geoArrowTable } from "../../src/sdk/io/arrow/geoarrow.js";
import { decodeViewLink, encodeViewLink, encodingDiff } from "../../src/ui/app/view-link.js";
import { cellColors } from "../../src/ui/colors.js";
import { fieldVersion } from "../../src/ui/field-cache.js";
import { polygonsFromIpc } from "../../src/ui/geoarrow.js";

describe("encoding defaults and palettes", () => {
  it("has the spec's defaults (client.md 19.3)", () => {
    expect(SPATIAL_ENCODING_DEFAULTS).toMatchObject({
      point_size: 4,
      opacity: 0.85,
      colormap: "viridis",
      legend_visible: true,
      legend_scale: 1,
      lock_view: false,
      show_points: true,
      show_channel_legend: true,
      show_minimap: true,
      render_mode: "points",
      point_marker: "circle",
      boundary_style: "filled",
      boundary_line_width: 1,
      invert_x: false,
      invert_y: false,
      background: "dark",
    });
    expect(EMBEDDING_ENCODING_DEFAULTS).toMatchObject({
      x_component: 0,
      y_component: 1,
      z_component: 2,
      is_3d: false,
    });
    expect(
      withSpatialDefaults({ coords: "obsm:spatial", opacity: 0.5, point_size: undefined }),
    ).toMatchObject({
      opacity: 0.5,
      point_size: 4,
    });
  });

  it("viridis has 256 entries from dark purple to yellow", () => {
    expect(VIRIDIS_LUT.length).toBe(768);
    expect([...VIRIDIS_LUT.slice(0, 3)]).toEqual([0x44, 0x01, 0x54]);
    expect([...VIRIDIS_LUT.slice(765)]).toEqual([0xfd, 0xe7, 0x25]);
  });

  it("assigns category colours over the sorted values, keyed by value, overrides winning", () => {
    const a = categoryColors(["T cell", "B cell", "NK"])!;
    // sorted: B cell, NK, T cell
    expect(a).toEqual([CATEGORICAL_PALETTE[2], CATEGORICAL_PALETTE[0], CATEGORICAL_PALETTE[1]]);
    // Same values in another code order: same colours per value.
    const b = categoryColors(["NK", "T cell", "B cell"])!;
    expect(b).toEqual([CATEGORICAL_PALETTE[1], CATEGORICAL_PALETTE[2], CATEGORICAL_PALETTE[0]]);
    expect(categoryColors([3, 1, 2])).toEqual([
      CATEGORICAL_PALETTE[2],
      CATEGORICAL_PALETTE[0],
      CATEGORICAL_PALETTE[1],
    ]);
    expect(categoryColors(["x", "y"], { y: "#ABCDEF" })![1]).toBe("#abcdef");
    expect(categoryColors(Array.from({ length: MAX_COLORED_CATEGORIES + 1 }, (_, i) => `c${i}`))).toBeNull();
  });

  it("colours cells: viridis for numbers, neutral for missing, isolation dims the rest", () => {
    const num = cellColors(3, {
      path: "X:g",
      kind: "numeric",
      n: 3,
      values: new Float32Array([0, 1, Number.NaN]),
    });
    expect([...num.rgba.slice(0, 3)]).toEqual([0x44, 0x01, 0x54]);
    expect([...num.rgba.slice(4, 7)]).toEqual([0xfd, 0xe7, 0x25]);
    expect([...num.rgba.slice(8, 11)]).toEqual([150, 150, 150]);
    expect(num.legend).toMatchObject({ kind: "numeric", min: 0, max: 1, title: "g" });
    const cat = cellColors(
      3,
      { path: "obs:t", kind: "categorical", n: 3, codes: new Int32Array([0, 1, -1]), categories: ["a", "b"] },
      { isolated: "a" },
    );
    expect(cat.rgba[3]).toBe(255);
    expect(cat.rgba[7]).toBe(ISOLATE_DIM_ALPHA);
    expect(cat.legend).toMatchObject({
      kind: "categorical",
      items: [
        { value: "a", count: 1 },
        { value: "b", count: 1 },
      ],
    });
  });
});

describe("field versions", () => {
  it("sums the counters of the field's own path and of any path containing it", () => {
    const v = { "tables:table:obs:leiden": 2, "tables:table": 1, "tables:table:obsm:X_umap": 5 };
    expect(fieldVersion(v, "obs:leiden", "table")).toBe(3);
    expect(fieldVersion(v, "obs:cell_type", "table")).toBe(1);
    expect(fieldVersion(v, "X:CD3E", "table")).toBe(1);
    expect(fieldVersion({ "tables:table:X": 4 }, "X:CD3E", "table")).toBe(4);
    expect(fieldVersion(undefined, "obs:x", "table")).toBe(0);
  });
});

describe("share links", () => {
  it("round-trip, keep only differences, and refuse unreadable links", () => {
    const diff = encodingDiff({ color_by: "obs:a", opacity: 1 }, { color_by: "X:Ä", opacity: 1 });
    expect(diff).toEqual({ color_by: "X:Ä" });
    const link = { v: 1 as const, sp: { enc: diff, vp: { t: [1, 2], z: 3 } }, ui: { view: "canvas" } };
    const p = encodeViewLink(link);
    expect(p).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(decodeViewLink(p)).toEqual(link);
    expect(decodeViewLink("not-base64!")).toBeNull();
    expect(decodeViewLink(encodeViewLink({ v: 2 } as never))).toBeNull();
  });
});

describe("GeoArrow flattening", () => {
  it("reads the server's polygon payload into outer rings with their cells", () => {
    // Two squares: feature 0 → cell 5, feature 1 → cell -1.
    const shapes = {
      type: "polygon" as const,
      geomOffsets: Int32Array.from([0, 1, 2]),
      polygonOffsets: null,
      ringOffsets: Int32Array.from([0, 5, 10]),
      coords: Float64Array.from([0, 0, 1, 0, 1, 1, 0, 1, 0, 0, 2, 2, 3, 2, 3, 3, 2, 3, 2, 2]),
      cellIndex: Int32Array.from([5, -1]),
      index: null,
      count: 2,
    };
    const t = geoArrowTable(shapes, Int32Array.from([0, 1]));
    const p = polygonsFromIpc(tableToIPC(t, "stream"));
    expect(p.features).toBe(2);
    expect(p.length).toBe(2);
    expect([...p.cellIndex]).toEqual([5, -1]);
    expect([...p.startIndices]).toEqual([0, 5, 10]);
    expect([...p.positions.slice(0, 4)]).toEqual([0, 0, 1, 0]);
  });
});
