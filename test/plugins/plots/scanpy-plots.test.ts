/**
 * scanpy's `sc.pl` plots drawn through the engine (real worker threads) on real data: a 1,200-cell
 * subsample of the synth_10k reference counts after the standard chain, checked against values the test
 * computes itself (group means → colours at the cell's pixel, fractions → dot sizes, category and gene
 * names in the SVG, the number of points drawn, PDF vector content).
 */
import { cp, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { columnValue } from "../../../src/sdk/data/dataframe.js";
import { colormapRgb } from "../../../src/sdk/figures/plots/colormaps.js";
import { Tessera, type TesseraSession } from "../../../src/sdk/tessera.js";
import { reference } from "../../fixtures.js";
import { elementsOf, near, pdfFacts, pixelAt, rgbOf, textsOf } from "./pixels.js";

let dataDir: string;
let t: Tessera;
let s: TesseraSession;
const N = 1200;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), "tessera-plots-"));
  await cp(reference("synth_10k/input.h5ad"), join(dataDir, "synth.h5ad"));
  t = await Tessera.start({ dataDir, plugins: ["tessera", "scanpy", "plots"] });
  s = await t.open("synth.h5ad");
  await s.run("sc.pp.subsample", { n_obs: N, random_state: 0 });
  await s.run("sc.pp.normalize_total", {});
  await s.run("sc.pp.log1p", {});
  await s.run("sc.pp.highly_variable_genes", { flavor: "seurat", n_top_genes: 300 });
  await s.run("sc.pp.pca", { n_comps: 20 });
  await s.run("sc.pp.neighbors", { n_neighbors: 10 });
  await s.run("sc.tl.umap", { random_state: 0 });
  await s.run("sc.tl.rank_genes_groups", { groupby: "domain", method: "t-test" });
}, 240_000);
afterAll(async () => {
  await t?.close();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

const table = () => s.data.tables[Object.keys(s.data.tables)[0]!]!;
const categories = () => {
  const c = table().obs.columns.domain!;
  if (c.kind !== "categorical" || c.categories.kind !== "string")
    throw new Error("domain is not categorical");
  return { codes: c.codes, names: c.categories.values.map(String) };
};
const genes = () => table().var.index.values.slice(0, 4).map(String);

/** Draw a plot, returning its id and its three formats. */
async function draw(key: string, params: Record<string, unknown>) {
  const out = await s.run(key, params);
  const id = (out.result as { plot_id: string }).plot_id;
  const svg = new TextDecoder().decode(await s.figure(id, "svg"));
  return { id, svg, png: await s.figure(id, "png"), pdf: await s.figure(id, "pdf") };
}

/** Mean of gene `g` per category code (over the cells of the current table). */
async function groupMeans(g: string): Promise<{ mean: number[]; frac: number[] }> {
  const v = (await s.values(`X:${g}`)) as number[];
  const { codes, names } = categories();
  const sum = new Array(names.length).fill(0);
  const cnt = new Array(names.length).fill(0);
  const nz = new Array(names.length).fill(0);
  v.forEach((x, i) => {
    const c = codes[i]!;
    if (c < 0) return;
    sum[c] += x;
    cnt[c]++;
    if (x > 0) nz[c]++;
  });
  return { mean: sum.map((x, i) => x / cnt[i]), frac: nz.map((x, i) => x / cnt[i]) };
}

describe("sc.pl plots through the engine", () => {
  it("umap: one vector point per cell, categories in the legend, a PNG, a vector PDF; the entry is recorded as pl", async () => {
    const f = await draw("sc.pl.umap", { color: "domain" });
    expect(elementsOf(f.svg, "circle", "point")).toHaveLength(N);
    const texts = textsOf(f.svg);
    for (const c of categories().names) expect(texts).toContain(c);
    expect(texts).toContain("domain");
    expect(Buffer.from(f.png.subarray(1, 4)).toString()).toBe("PNG");
    const pdf = await pdfFacts(f.pdf);
    expect(pdf.header).toBe("%PDF-");
    expect(pdf.fills).toBeGreaterThan(N / 2);
    const plot = s.appState.plots.find((p) => p.id === f.id)!;
    expect(plot).toMatchObject({ namespace: "pl", function: "umap", status: "drawn" });
    expect(plot.references).toEqual(
      expect.arrayContaining([expect.stringMatching(/obsm:X_umap$/), expect.stringMatching(/obs:domain$/)]),
    );
  });

  it("embedding of a gene: colours follow viridis over the gene's range, highest drawn last", async () => {
    const g = genes()[0]!;
    const f = await draw("sc.pl.embedding", { basis: "pca", color: g, components: "1,2" });
    const pts = elementsOf(f.svg, "circle", "point");
    expect(pts).toHaveLength(N);
    const v = (await s.values(`X:${g}`)) as number[];
    const max = Math.max(...v);
    const min = Math.min(...v);
    // The last point drawn is a cell with the highest value, in viridis' top colour.
    expect(pts.at(-1)!.fill).toBe(
      `#${colormapRgb("viridis", (max - min) / (max - min))
        .map((c) => c.toString(16).padStart(2, "0"))
        .join("")}`,
    );
    expect(textsOf(f.svg)).toEqual(expect.arrayContaining(["PCA1", "PCA2", g]));
  });

  it("matrixplot: each square's colour is the group's mean on viridis, in the SVG and at its PNG pixel", async () => {
    const gs = genes().slice(0, 3);
    const f = await draw("sc.pl.matrixplot", { var_names: gs, groupby: "domain" });
    const cells = elementsOf(f.svg, "rect", "cell");
    const { names } = categories();
    expect(cells).toHaveLength(names.length * gs.length);
    const means = await Promise.all(gs.map(groupMeans));
    const all = means.flatMap((m) => m.mean);
    const [lo, hi] = [Math.min(...all), Math.max(...all)];
    for (const [r, c] of [
      [0, 0],
      [3, 1],
      [names.length - 1, 2],
    ] as const) {
      const want = colormapRgb("viridis", (means[c]!.mean[r]! - lo) / (hi - lo));
      const rect = cells[r * gs.length + c]!;
      expect(near(rgbOf(rect.fill!), want, 1)).toBe(true);
      const px = await pixelAt(
        f.png,
        Number(rect.x) + Number(rect.width) / 2,
        Number(rect.y) + Number(rect.height) / 2,
      );
      expect(near(px, want, 3), `pixel ${px} vs ${want}`).toBe(true);
    }
    for (const n of [...names, ...gs]) expect(textsOf(f.svg)).toContain(n);
  });

  it("dotplot: dot colour is the mean on Reds, dot area the expressing fraction^1.5 (dot_max rounded up to 0.1)", async () => {
    const gs = genes().slice(0, 2);
    const f = await draw("sc.pl.dotplot", {
      var_names: { first: [gs[0]!], second: [gs[1]!] },
      groupby: "domain",
    });
    const dots = elementsOf(f.svg, "circle", "dot");
    const stats = await Promise.all(gs.map(groupMeans));
    const { names } = categories();
    const allMean = stats.flatMap((m) => m.mean);
    const [lo, hi] = [Math.min(...allMean), Math.max(...allMean)];
    const dotMax = Math.ceil(Math.max(...stats.flatMap((m) => m.frac)) * 10) / 10;
    const big = dots.map((d) => Number(d.r));
    const cellR = Math.max(...big) / Math.sqrt((Math.max(...stats.flatMap((m) => m.frac)) / dotMax) ** 1.5);
    let k = 0;
    for (let r = 0; r < names.length; r++)
      for (let c = 0; c < gs.length; c++) {
        const frac = stats[c]!.frac[r]!;
        if (frac === 0) continue;
        const d = dots[k++]!;
        expect(near(rgbOf(d.fill!), colormapRgb("Reds", (stats[c]!.mean[r]! - lo) / (hi - lo)), 1)).toBe(
          true,
        );
        expect(Number(d.r)).toBeCloseTo(cellR * Math.sqrt((frac / dotMax) ** 1.5), 2);
      }
    expect(k).toBe(dots.length);
    expect(textsOf(f.svg)).toEqual(
      expect.arrayContaining(["first", "second", "Fraction of cells in group (%)"]),
    );
  });

  it("violin, stacked_violin and heatmap draw every group", async () => {
    const { names } = categories();
    const gs = genes().slice(0, 3);
    const v = await draw("sc.pl.violin", { keys: [gs[0]!, "total_counts"].slice(0, 1), groupby: "domain" });
    expect(elementsOf(v.svg, "path", "violin")).toHaveLength(names.length);
    for (const n of names) expect(textsOf(v.svg)).toContain(n);
    const sv = await draw("sc.pl.stacked_violin", { var_names: gs, groupby: "domain" });
    expect(elementsOf(sv.svg, "path", "violin")).toHaveLength(names.length * gs.length);
    const hm = await draw("sc.pl.heatmap", { var_names: gs, groupby: "domain" });
    expect(elementsOf(hm.svg, "rect", "group-strip")).toHaveLength(names.length);
    expect(elementsOf(hm.svg, "image", "heatmap-raster")).toHaveLength(1);
  });

  it("rank_genes_groups plots show each group's top genes under its bracket", async () => {
    const r = table().uns.entries.rank_genes_groups as { kind: "dict"; entries: Record<string, unknown> };
    const namesFrame = r.entries.names as { columns: Record<string, never>; columnOrder: string[] };
    const g0 = namesFrame.columnOrder[0]!;
    const top = [0, 1, 2].map((i) => String(columnValue(namesFrame.columns[g0]!, i)));
    for (const key of ["dotplot", "matrixplot", "heatmap", "stacked_violin"]) {
      const f = await draw(`sc.pl.rank_genes_groups_${key}`, { n_genes: 3 });
      const texts = textsOf(f.svg);
      for (const g of top) expect(texts, key).toContain(g);
      if (key === "dotplot" || key === "matrixplot") expect(texts, key).toContain(g0);
      const plot = s.appState.plots.find((p) => p.id === f.id)!;
      expect(plot.references.some((x) => x.endsWith("uns:rank_genes_groups"))).toBe(true);
    }
    const lfc = await draw("sc.pl.rank_genes_groups_matrixplot", {
      n_genes: 2,
      values_to_plot: "logfoldchanges",
    });
    expect(textsOf(lfc.svg)).toContain("log fold change");
  });

  it("highly_variable_genes and pca_variance_ratio", async () => {
    const h = await draw("sc.pl.highly_variable_genes", {});
    const nHv = (await s.values("var:highly_variable")).filter((x) => x === true).length;
    expect(nHv).toBe(300);
    const black = elementsOf(h.svg, "circle", "marker").filter((m) => m.fill === "#000000");
    expect(black).toHaveLength(2 * nHv);
    const p = await draw("sc.pl.pca_variance_ratio", { n_pcs: 10 });
    expect(textsOf(p.svg)).toEqual(expect.arrayContaining(["PC1", "PC10"]));
    expect(elementsOf(p.svg, "circle", "marker")).toHaveLength(10);
  });

  it("bad params are refused before anything is queued, naming the field", async () => {
    await expect(s.run("sc.pl.dotplot", { var_names: ["nope-gene"], groupby: "domain" })).rejects.toThrow(
      /gene "nope-gene"/,
    );
    await expect(s.run("sc.pl.umap", { color: "domain", cmap: "jet" })).rejects.toThrow(/cmap/);
    await expect(s.run("sc.pl.matrixplot", { var_names: genes(), groupby: "niche" })).rejects.toThrow(
      /numeric/,
    );
  });

  it("a sc.pl figure survives a checkpoint: served from the file after reopening, and redrawn there", async () => {
    const f = await draw("sc.pl.matrixplot", { var_names: genes().slice(0, 2), groupby: "domain" });
    const path = await s.save();
    const s2 = await t.open(path);
    const plot = s2.appState.plots.find((p) => p.id === f.id)!;
    expect(plot).toMatchObject({ namespace: "pl", function: "matrixplot", status: "drawn" });
    expect(Buffer.from(await s2.figure(f.id, "png")).equals(Buffer.from(f.png))).toBe(true);
    const ticket = await s2.session.redraw(f.id);
    expect((await ticket.done).status).toBe("completed");
    expect(new TextDecoder().decode(await s2.figure(f.id, "svg"))).toBe(f.svg);
  });

  it("gene plots on a reopened checkpoint read their genes from the session's column mirror, the same values as X; once X changes they read X", async () => {
    const gs = genes().slice(0, 3);
    const kinds: [string, Record<string, unknown>][] = [
      ["sc.pl.matrixplot", { var_names: gs, groupby: "domain" }],
      ["sc.pl.dotplot", { var_names: gs, groupby: "domain" }],
      ["sc.pl.stacked_violin", { var_names: gs, groupby: "domain" }],
      ["sc.pl.heatmap", { var_names: gs, groupby: "domain" }],
      ["sc.pl.violin", { keys: gs[0], groupby: "domain" }],
      ["sc.pl.embedding", { basis: "pca", color: gs[0], components: "1,2" }],
    ];
    // drawn here from X (a session opened from h5ad has no mirror)
    const fromX = new Map<string, string>();
    for (const [key, params] of kinds) fromX.set(key, (await draw(key, params)).svg);
    const path = await s.save();
    const s2 = await t.open(path);
    const viaMirror = /read from the session's column mirror/;
    const drawIn = async (session: TesseraSession, key: string, params: Record<string, unknown>) => {
      const out = await session.run(key, params);
      const id = (out.result as { plot_id: string }).plot_id;
      return {
        svg: new TextDecoder().decode(await session.figure(id, "svg")),
        log: session.session.job(out.job_id).log,
      };
    };
    for (const [key, params] of kinds) {
      const f = await drawIn(s2, key, params);
      expect(f.log, key).toMatch(viaMirror);
      expect(f.svg, key).toBe(fromX.get(key));
    }
    // X replaced by a compute: the mirror no longer holds it, the plot reads X (the new values)
    await s2.run("sc.pp.scale", { max_value: 10 });
    const after = await drawIn(s2, "sc.pl.matrixplot", { var_names: gs, groupby: "domain" });
    expect(after.log).not.toMatch(viaMirror);
    expect(after.svg).not.toBe(fromX.get("sc.pl.matrixplot"));
  });

  it("a plot is invalidated when a field it read changes, and redraws with the new data", async () => {
    const f = await draw("sc.pl.umap", { color: "domain" });
    const other = await draw("sc.pl.pca_variance_ratio", {});
    const first = categories().names[0]!;
    await s.run("custom.rename_categories", { key: "domain", mapping: { [first]: "renamed_domain" } });
    expect(s.appState.plots.find((p) => p.id === f.id)!.status).toBe("invalidated");
    expect(s.appState.plots.find((p) => p.id === other.id)!.status).toBe("drawn");
    await expect(s.figure(f.id, "svg")).rejects.toThrow(/no svg figure/);
    const ticket = await s.session.redraw(f.id);
    expect((await ticket.done).status).toBe("completed");
    const svg = new TextDecoder().decode(await s.figure(f.id, "svg"));
    expect(textsOf(svg)).toContain("renamed_domain");
    expect(textsOf(svg)).not.toContain(first);
  });

  it("dendrogram: groups in sc.tl.dendrogram's leaf order, the tree beside the rows (matrixplot, dotplot, heatmap, stacked_violin)", async () => {
    const gs = genes().slice(0, 3);
    const { names } = categories();
    // computed on the fly (uns has no dendrogram yet), as scanpy does
    const onTheFly = await draw("sc.pl.matrixplot", { var_names: gs, groupby: "domain", dendrogram: true });
    await s.run("sc.tl.dendrogram", { groupby: "domain" });
    const dat = table().uns.entries.dendrogram_domain as unknown as {
      entries: Record<string, { values: string[] }>;
    };
    const ordered = dat.entries.categories_ordered!.values.map(String);
    expect([...ordered].sort()).toEqual([...names].sort());
    const rowOrder = (svg: string) => textsOf(svg).filter((x) => names.includes(x));
    const links = (svg: string) =>
      (/<g class="dendrogram">(.*?)<\/g>/s.exec(svg)?.[1] ?? "").split("<path").length - 1;
    expect(rowOrder(onTheFly.svg)).toEqual(ordered);
    expect(links(onTheFly.svg)).toBe(names.length - 1);
    for (const kind of ["matrixplot", "dotplot", "heatmap", "stacked_violin"]) {
      const f = await draw(`sc.pl.${kind}`, { var_names: gs, groupby: "domain", dendrogram: true });
      expect(rowOrder(f.svg), kind).toEqual(ordered);
      expect(links(f.svg), kind).toBe(names.length - 1);
      const plot = s.appState.plots.find((p) => p.id === f.id)!;
      expect(
        plot.references.some((x) => x.endsWith("uns:dendrogram_domain")),
        kind,
      ).toBe(true);
    }
    // the dendrogram's order wins over categories_order, as in scanpy
    const both = await draw("sc.pl.dotplot", {
      var_names: gs,
      groupby: "domain",
      dendrogram: true,
      categories_order: [...names].reverse(),
    });
    expect(rowOrder(both.svg)).toEqual(ordered);
    // the ranking plots add it by default (scanpy's _rank_genes_groups_plot)
    const rank = await draw("sc.pl.rank_genes_groups_matrixplot", { n_genes: 2 });
    expect(links(rank.svg)).toBe(names.length - 1);
    const rankViolins = await draw("sc.pl.rank_genes_groups_stacked_violin", { n_genes: 2 });
    expect(links(rankViolins.svg)).toBe(names.length - 1);
    // stacked_violin: the leaves touch the rows at their centres (right of the violins); with
    // swap_axes the tree stands above the columns, its leaves at the columns' centres
    const leafEnds = (svg: string, axis: 0 | 1) => {
      const pts = [
        ...(/<g class="dendrogram">(.*?)<\/g>/s.exec(svg)?.[1] ?? "").matchAll(/[ML]([\d.-]+) ([\d.-]+)/g),
      ].map((m) => [Number(m[1]), Number(m[2])] as const);
      // the leaf ends are the points nearest the chart: the smallest x (right) or the largest y (top)
      const edge = axis === 0 ? Math.min(...pts.map((p) => p[0])) : Math.max(...pts.map((p) => p[1]));
      const at = pts.filter((p) => Math.abs(p[axis] - edge) < 0.01).map((p) => p[1 - axis]!);
      return [...new Set(at.map((v) => v.toFixed(1)))].map(Number).sort((a, b) => a - b);
    };
    const sv = await draw("sc.pl.stacked_violin", { var_names: gs, groupby: "domain", dendrogram: true });
    const rowYs = [...sv.svg.matchAll(/<text[^>]*\by="([\d.]+)"[^>]*>([^<]*)<\/text>/g)]
      .filter((m) => names.includes(m[2]!))
      .map((m) => Number(m[1]));
    expect(rowYs.length).toBe(names.length);
    const leavesY = leafEnds(sv.svg, 0);
    rowYs.sort((a, b) => a - b);
    expect(leavesY.length).toBe(names.length);
    // a row's label sits at its centre (text baseline "middle"), where its leaf meets the tree
    for (let i = 0; i < names.length; i++) expect(leavesY[i]!).toBeCloseTo(rowYs[i]!, 0);
    const svSwap = await draw("sc.pl.stacked_violin", {
      var_names: gs,
      groupby: "domain",
      dendrogram: true,
      swap_axes: true,
    });
    expect(links(svSwap.svg)).toBe(names.length - 1);
    expect(leafEnds(svSwap.svg, 1).length).toBe(names.length);
  });
});
