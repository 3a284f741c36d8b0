/**
 * squidpy's `pl` plots through the engine on real data: a 1,500-cell subsample of synth_10k, squidpy's
 * `gr` computations run first (their uns results are what the plots read), each plot checked against
 * the stored result (heatmap colours, labels, curves, dots) and invalidated when its result is recomputed.
 * The figure route is checked over real HTTP at the end.
 */
import { cp, mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { colormapRgb } from "../../../src/sdk/figures/plots/colormaps.js";
import { Tessera, type TesseraSession } from "../../../src/sdk/tessera.js";
import { fixture, reference } from "../../fixtures.js";
import { elementsOf, near, pdfFacts, pixelAt, rgbOf, textsOf } from "./pixels.js";

let dataDir: string;
let t: Tessera;
let s: TesseraSession;
const N = 1500;
const CK = "domain";

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), "tessera-sqplots-"));
  await cp(reference("synth_10k/input.h5ad"), join(dataDir, "synth.h5ad"));
  t = await Tessera.start({ dataDir, plugins: ["tessera", "scanpy", "squidpy", "plots"] });
  s = await t.open("synth.h5ad");
  await s.run("sc.pp.subsample", { n_obs: N, random_state: 0 });
  await s.run("gr.spatial_neighbors", { coord_type: "generic", n_neighs: 6 });
}, 120_000);
afterAll(async () => {
  await t?.close();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

const table = () => s.data.tables[Object.keys(s.data.tables)[0]!]!;
const clusters = () => {
  const c = table().obs.columns[CK]!;
  if (c.kind !== "categorical" || c.categories.kind !== "string") throw new Error("not categorical");
  return c.categories.values.map(String);
};
const uns = (k: string) =>
  table().uns.entries[k] as unknown as {
    kind: string;
    entries: Record<string, { data: ArrayLike<number> }>;
  } & {
    data: ArrayLike<number>;
  };

async function draw(key: string, params: Record<string, unknown>) {
  const out = await s.run(key, params);
  const id = (out.result as { plot_id: string }).plot_id;
  const svg = new TextDecoder().decode(await s.figure(id, "svg"));
  return { id, svg, png: await s.figure(id, "png"), pdf: await s.figure(id, "pdf") };
}

describe("squidpy pl plots through the engine", () => {
  it("nhood_enrichment: a square per cluster pair coloured by its z-score, cluster colours beside; invalidated by a recompute", async () => {
    await s.run("gr.nhood_enrichment", { cluster_key: CK, n_perms: 50, seed: 0 });
    const f = await draw("pl.nhood_enrichment", { cluster_key: CK });
    const k = clusters().length;
    const cells = elementsOf(f.svg, "rect", "cell");
    expect(cells).toHaveLength(k * k);
    const z = Array.from(uns(`${CK}_nhood_enrichment`).entries.zscore!.data, Number);
    const [lo, hi] = [Math.min(...z), Math.max(...z)];
    for (const i of [0, k + 1, k * k - 1]) {
      const want = colormapRgb("viridis", (z[i]! - lo) / (hi - lo));
      expect(near(rgbOf(cells[i]!.fill!), want, 1)).toBe(true);
      const c = cells[i]!;
      const px = await pixelAt(f.png, Number(c.x) + Number(c.width) / 2, Number(c.y) + Number(c.height) / 2);
      expect(near(px, want, 3), `${px} vs ${want}`).toBe(true);
    }
    expect(elementsOf(f.svg, "rect", "row-color")).toHaveLength(k);
    for (const c of clusters()) expect(textsOf(f.svg)).toContain(c);
    expect(textsOf(f.svg)).toContain("Neighborhood enrichment");
    expect((await pdfFacts(f.pdf)).header).toBe("%PDF-");
    expect((await pdfFacts(f.pdf)).fills).toBeGreaterThanOrEqual(k * k);
    const counts = await draw("pl.nhood_enrichment", { cluster_key: CK, mode: "count", annotate: true });
    const cnt = Array.from(uns(`${CK}_nhood_enrichment`).entries.count!.data, Number);
    expect(textsOf(counts.svg)).toContain(String(Number(cnt[0]!.toPrecision(2))));
    await s.run("gr.nhood_enrichment", { cluster_key: CK, n_perms: 20, seed: 1 });
    expect(s.appState.plots.find((p) => p.id === f.id)!.status).toBe("invalidated");
  });

  it("interaction_matrix and centrality_scores", async () => {
    await s.run("gr.interaction_matrix", { cluster_key: CK });
    const im = await draw("pl.interaction_matrix", { cluster_key: CK });
    const k = clusters().length;
    expect(elementsOf(im.svg, "rect", "cell")).toHaveLength(k * k);
    expect(textsOf(im.svg)).toContain("Interaction matrix");
    await s.run("gr.centrality_scores", { cluster_key: CK });
    const cs = await draw("pl.centrality_scores", { cluster_key: CK });
    const texts = textsOf(cs.svg);
    for (const score of ["degree_centrality", "average_clustering", "closeness_centrality"])
      expect(texts).toContain(score);
    expect(elementsOf(cs.svg, "circle", "marker")).toHaveLength(3 * k);
    const one = await draw("pl.centrality_scores", { cluster_key: CK, score: "degree_centrality" });
    expect(elementsOf(one.svg, "circle", "marker")).toHaveLength(k);
  });

  it("co_occurrence: one curve per cluster in each chosen cluster's panel", async () => {
    await s.run("gr.co_occurrence", { cluster_key: CK });
    const [a, b] = clusters();
    const f = await draw("pl.co_occurrence", { cluster_key: CK, clusters: [a!, b!] });
    expect(elementsOf(f.svg, "path", "series")).toHaveLength(2 * clusters().length);
    expect(textsOf(f.svg)).toEqual(expect.arrayContaining([a!, b!, "distance", `p(exp|${a})/p(exp)`]));
  });

  it("ripley: a curve per cluster over the simulations' envelope", async () => {
    await s.run("gr.ripley", { cluster_key: CK, mode: "L", n_simulations: 10, seed: 0 });
    const f = await draw("pl.ripley", { cluster_key: CK, mode: "L" });
    expect(elementsOf(f.svg, "path", "series")).toHaveLength(clusters().length + 1);
    expect(elementsOf(f.svg, "path", "band")).toHaveLength(1);
    expect(textsOf(f.svg)).toContain("Ripley's L");
    await expect(s.run("pl.ripley", { cluster_key: CK, mode: "F" })).rejects.toThrow(/gr\.ripley/);
  });

  it("ligrec: dots for the tested interactions, brackets per source cluster", async () => {
    const csv = await readFile(reference("synth_10k/lr_pairs.csv"), "utf8");
    const pairs = csv
      .trim()
      .split("\n")
      .slice(1, 9)
      .map((l) => l.split(","));
    await s.run("gr.ligrec", { cluster_key: CK, interactions: pairs, n_perms: 50, seed: 0, use_raw: false });
    const [src] = clusters();
    const f = await draw("pl.ligrec", { cluster_key: CK, source_groups: src!, alpha: 0.05 });
    const dots =
      elementsOf(f.svg, "circle", "dot").length + elementsOf(f.svg, "circle", "dot highlighted").length;
    expect(dots).toBeGreaterThan(0);
    const texts = textsOf(f.svg);
    expect(texts).toContain(src);
    expect(texts).toContain("log2(mean + 1)");
    expect(texts.some((x) => x.startsWith(`${src}|`))).toBe(true);
  });

  it("spatial_scatter: every cell at its coordinates, y down", async () => {
    const f = await draw("pl.spatial_scatter", { color: CK });
    const pts = elementsOf(f.svg, "circle", "point");
    expect(pts).toHaveLength(N);
    for (const c of clusters()) expect(textsOf(f.svg)).toContain(c);
  });

  it("spatial_scatter shapes: Visium spots drawn at their size in coordinate units as circles (the default with a spot diameter), squares and squidpy's flat-topped hexagons", async () => {
    // squidpy's own Visium test data: 49 spots, uns spatial/V1_Adult_Mouse_Brain/scalefactors
    await cp(fixture("squidpy-tests/test_data.h5ad"), join(dataDir, "visium.h5ad"));
    const v = await t.open("visium.h5ad");
    const vt = v.data.tables[Object.keys(v.data.tables)[0]!]!;
    const spot = 89.44476048022638; // spot_diameter_fullres of the file
    const xy = vt.obsm.spatial as unknown as { data: ArrayLike<number | bigint>; shape: number[] };
    const n = xy.shape[0]!;
    const xOf = (i: number) => Number(xy.data[i * 2]!); // int64 in the file
    const drawIn = async (params: Record<string, unknown>) => {
      const out = await v.run("pl.spatial_scatter", { img: false, ...params });
      const id = (out.result as { plot_id: string }).plot_id;
      return { svg: new TextDecoder().decode(await v.figure(id, "svg")), png: await v.figure(id, "png") };
    };
    // default: circles of radius spot/2 in data units; px per unit from two spots' centres
    const circ = elementsOf((await drawIn({ color: "leiden" })).svg, "circle", "point").map((c) => ({
      x: Number(c.cx),
      y: Number(c.cy),
      r: Number(c.r),
    }));
    expect(circ).toHaveLength(n);
    const byX = [...Array(n).keys()].sort((a, b) => xOf(a) - xOf(b));
    const [lo, hi] = [byX[0]!, byX[n - 1]!];
    // points are drawn in plotting order; find each spot's circle by its position rank along x
    const cx = circ.map((c) => c.x).sort((a, b) => a - b);
    const pxPerUnit = (cx[n - 1]! - cx[0]!) / (xOf(hi) - xOf(lo));
    for (const c of circ) expect(c.r).toBeCloseTo((spot / 2) * pxPerUnit, 2);
    // size scales the spot (squidpy: spot_diameter_fullres · size · 0.5)
    const half = elementsOf((await drawIn({ color: "leiden", size: 0.5 })).svg, "circle", "point");
    expect(Number(half[0]!.r)).toBeCloseTo((spot / 4) * pxPerUnit, 2);
    // squares: side = spot
    const sq = elementsOf((await drawIn({ color: "leiden", shape: "square" })).svg, "rect", "point");
    expect(sq).toHaveLength(n);
    for (const r of sq) expect(Number(r.width)).toBeCloseTo(spot * pxPerUnit, 2);
    // hexagons: six vertices at the spot radius from the centre, flat top and bottom
    const hex = await drawIn({ color: "leiden", shape: "hex" });
    const paths = elementsOf(hex.svg, "path", "point");
    expect(paths).toHaveLength(n);
    const r = (spot / 2) * pxPerUnit;
    const centres: { x: number; y: number; fill: string }[] = [];
    for (const p of paths) {
      const pts = [...p.d!.matchAll(/[ML]([\d.-]+) ([\d.-]+)/g)].map((m) => [Number(m[1]), Number(m[2])]);
      expect(pts).toHaveLength(6);
      const x = pts.reduce((a, q) => a + q[0]!, 0) / 6;
      const y = pts.reduce((a, q) => a + q[1]!, 0) / 6;
      for (const q of pts) expect(Math.hypot(q[0]! - x, q[1]! - y)).toBeCloseTo(r, 1);
      const ys = pts.map((q) => q[1]!).sort((a, b) => a - b);
      expect(ys[1]! - ys[0]!).toBeLessThan(0.02); // two vertices on the top edge
      centres.push({ x, y, fill: p.fill! });
    }
    expect(centres.map((c) => c.x).sort((a, b) => a - b)[0]).toBeCloseTo(cx[0]!, 1);
    // PNG: the spot's colour at its centre and just inside its right vertex; white just above its
    // flat top edge (at 0.93 r, inside a circle of the same radius), spots being 100 µm apart
    for (const c of centres.slice(0, 5)) {
      expect(near(await pixelAt(hex.png, c.x, c.y), rgbOf(c.fill), 6)).toBe(true);
      expect(near(await pixelAt(hex.png, c.x + 0.8 * r, c.y), rgbOf(c.fill), 12)).toBe(true);
      expect(near(await pixelAt(hex.png, c.x, c.y - 0.95 * r), [255, 255, 255], 12)).toBe(true);
    }
    await expect(v.run("pl.spatial_scatter", { shape: "star" })).rejects.toThrow(/circle|shape/);
    await expect(v.run("pl.spatial_scatter", { shape: "hex", library_id: "nope" })).rejects.toThrow(
      /library_id "nope"/,
    );
  });

  it("the figure route serves svg, png and pdf over HTTP", async () => {
    const { startTestServer } = await import("../../adapters/http/harness.js");
    const srv = await startTestServer({ plugins: ["tessera", "scanpy", "plots"] });
    try {
      const sid = await srv.openDemo();
      const r = await srv.api(`/api/sessions/${sid}/jobs`, {
        method: "POST",
        json: { namespace: "sc.pl", function: "embedding", params: { basis: "spatial", color: "cell_type" } },
      });
      expect(r.status).toBe(200);
      const { job_id } = await r.json();
      expect((await srv.waitJob(sid, job_id)).status).toBe("completed");
      for (const [fmt, type, magic] of [
        ["svg", "image/svg+xml", "<?xml"],
        ["png", "image/png", "\x89PNG"],
        ["pdf", "application/pdf", "%PDF-"],
      ] as const) {
        const res = await srv.api(`/api/sessions/${sid}/plots/${job_id}/figure?fmt=${fmt}`);
        expect(res.status, fmt).toBe(200);
        expect(res.headers.get("content-type")).toContain(type);
        const body = Buffer.from(await res.arrayBuffer());
        expect(body.subarray(0, magic.length).toString("latin1")).toBe(magic);
      }
      const st = srv.server.service.session(sid).state() as {
        app_state: { plots: { id: string; namespace: string; function: string }[] };
      };
      expect(st.app_state.plots.find((p) => p.id === job_id)).toMatchObject({
        namespace: "pl",
        function: "embedding",
      });
      const redraw = await srv.api(`/api/sessions/${sid}/plots/${job_id}/redraw`, { method: "POST" });
      expect(redraw.status).toBe(200);
    } finally {
      await srv.close();
    }
  });
});
