/**
 * The serverless viewer's read-only gate and local affordances in a real browser (Debian chromium):
 * a checkpoint saved from a live session (a compute step, a drawn plot, an embedding under a key the
 * automatic displays do not pick) is exported as a static deployment and served by a plain
 * Range-capable server on 127.0.0.1. Checked (client.md 17.1, 17.5, 9.2, 6.3): the sidebar starts
 * collapsed and holds only the compute history and Regions, with no mutating control; an entry shows
 * its params and timing; the Plots view shows the checkpoint's figure; a drawn region labels exactly
 * the cells inside into a browser-local column the canvas colours by; cells in a region can be hidden
 * and shown; an embedding view can be created; a reload loses the local column; no request goes to an
 * API. Screenshots go to `test-artifacts/ui/`.
 */
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildWebApp } from "../../scripts/build-app.js";
import { main } from "../../src/adapters/cli/main.js";
import { startTestServer, type TestServer } from "../adapters/http/harness.js";
import { fractionNear, fractionNot, HAVE_CHROMIUM, launchChromium, shoot, staticServer } from "./browser.js";

const d = HAVE_CHROMIUM ? describe : describe.skip;
const SHOTS = join(process.cwd(), "test-artifacts", "ui");
const BG = [13, 14, 17];

let ts: TestServer;
let browser: Browser;
let page: Page;
let site: Awaited<ReturnType<typeof staticServer>>;
let root: string;
let file: string;

function inside(x: number, y: number, ring: number[][]): boolean {
  let c = false;
  for (let i = 0, j = ring.length - 1; i < ring.length; j = i++) {
    const [xi, yi] = ring[i]!;
    const [xj, yj] = ring[j]!;
    if (yi! > y !== yj! > y && x < ((xj! - xi!) * (y - yi!)) / (yj! - yi!) + xi!) c = !c;
  }
  return c;
}

async function job(sid: string, body: Record<string, unknown>): Promise<void> {
  const r = await ts.api(`/api/sessions/${sid}/jobs`, { method: "POST", json: body });
  expect(r.status, await r.clone().text()).toBe(200);
  const { job_id } = (await r.json()) as { job_id: string };
  expect((await ts.waitJob(sid, job_id)).status).toBe("completed");
}

/** Evaluate `fn` (source text) on the app element. */
function onApp<T>(fn: string): Promise<T> {
  return page.evaluate(`(() => { const a = document.querySelector("tessera-app"); return (${fn})(a); })()`);
}

/** Click at a fraction of the spatial canvas. */
async function clickCanvas(fx: number, fy: number): Promise<void> {
  const b = (await page.locator("tessera-spatial-canvas").boundingBox())!;
  await page.mouse.click(b.x + b.width * fx, b.y + b.height * fy);
}

/** Draw a ring on the spatial canvas; answers it in world coordinates. */
async function drawRing(fr: [number, number][]): Promise<number[][]> {
  for (const [fx, fy] of fr) await clickCanvas(fx, fy);
  await page.locator("[data-testid=finish-region]").click();
  return onApp<number[][]>("(a) => a.draw.drawing.rings[0]");
}

/** The rows of the spatial canvas's cells inside `ring` (the test's own point-in-polygon). */
async function rowsInside(ring: number[][]): Promise<number[]> {
  const pos = await page.evaluate(() => {
    const c = document
      .querySelector("tessera-app")!
      .shadowRoot!.querySelector("tessera-spatial-canvas") as unknown as {
      positions: Float32Array;
      n: number;
    };
    return { pos: Array.from(c.positions), n: c.n };
  });
  const stride = pos.pos.length / pos.n;
  const rows: number[] = [];
  for (let i = 0; i < pos.n; i++)
    if (inside(pos.pos[i * stride]!, pos.pos[i * stride + 1]!, ring)) rows.push(i);
  return rows;
}

async function canvasShot(name: string) {
  const c = page.locator("tessera-spatial-canvas");
  await expect
    .poll(
      () => c.evaluate((el) => (el as HTMLElement).dataset.drawnKey === (el as HTMLElement).dataset.colorKey),
      {
        timeout: 30_000,
      },
    )
    .toBe(true);
  await page.waitForTimeout(300);
  return shoot(c, join(SHOTS, `${name}.png`));
}

beforeAll(async () => {
  if (!HAVE_CHROMIUM) return;
  await mkdir(SHOTS, { recursive: true });
  const tmp = await mkdtemp(join(tmpdir(), "tessera-serverless-"));
  const appDir = join(tmp, "app");
  await buildWebApp({ outdir: appDir });
  ts = await startTestServer({
    demo: { nCells: 700, nGenes: 30, imageSize: 256, nTranscripts: 50 },
    config: { staticDir: appDir },
  });
  const sid = await ts.openDemo();
  // History: an embedding under a key the automatic displays do not pick, and a drawn plot.
  await job(sid, { namespace: "sc.pp", function: "pca", params: { n_comps: 3, key_added: "X_custom" } });
  await job(sid, { namespace: "pl", function: "test_scatter", params: { max_points: 300 } });
  const spatial = {
    id: "sp",
    type: "spatial_canvas",
    encoding: { coords: "obsm:spatial", color_by: null, opacity: 1, point_size: 6, show_minimap: false },
    viewport: { target: [], zoom: 0 },
  };
  let r = await ts.api(`/api/sessions/${sid}/displays/sp`, { method: "PUT", json: spatial });
  expect(r.status).toBe(200);
  r = await ts.api(`/api/sessions/${sid}/save`, {
    method: "POST",
    json: { path: join(dirname(ts.demo), "served.sdata.zarr.zip") },
  });
  expect(r.status, await r.clone().text()).toBe(200);
  const saved = (await r.json()) as { job_id: string; path: string };
  expect((await ts.waitJob(sid, saved.job_id)).status).toBe("completed");
  root = join(tmp, "site");
  const prev = process.env.TESSERA_STATIC_DIR;
  process.env.TESSERA_STATIC_DIR = appDir;
  const code = await main(["viewer", "export", root, saved.path]);
  if (prev === undefined) delete process.env.TESSERA_STATIC_DIR;
  else process.env.TESSERA_STATIC_DIR = prev;
  expect(code).toBe(0);
  file = basename(saved.path);
  site = await staticServer(root);
  browser = await launchChromium();
  page = await browser.newPage({ viewport: { width: 1280, height: 820 } });
  page.on("pageerror", (e) => console.error("page error:", e.message));
}, 240_000);

afterAll(async () => {
  await browser?.close();
  await site?.close();
  await ts?.close();
  if (root) await rm(root, { recursive: true, force: true });
});

d("serverless viewer: read-only gate and local affordances", () => {
  it("opens with the sidebar collapsed; the sidebar holds the compute history and Regions, nothing that mutates", async () => {
    await page.goto(`${site.base}/index.html?checkpoint=${file}`);
    await page.locator('tessera-spatial-canvas[data-ready="1"]').waitFor({ timeout: 90_000 });
    expect(await page.locator("tessera-analysis-sidebar").count()).toBe(0);
    await page.locator("header button[title='Toggle sidebar']").click();
    const tabs = await page
      .locator("[data-sidebar-tab]")
      .evaluateAll((els) => els.map((e) => e.getAttribute("data-sidebar-tab")));
    expect(tabs).toEqual(["compute", "regions"]);
    for (const id of [
      "run-function",
      "browse-recipes",
      "load-recipe",
      "export-recipe",
      "open-save",
      "run-all-pending",
    ])
      expect(await page.locator(`[data-testid=${id}]`).count(), id).toBe(0);
    const row = page.locator('[data-testid=compute-history] .hrow[data-function="sc.pp.pca"]');
    await row.click();
    const det = page.locator("[data-testid=history-detail]");
    expect(JSON.parse((await det.locator("[data-testid=detail-params]").textContent())!)).toMatchObject({
      n_comps: 3,
      key_added: "X_custom",
    });
    expect(await det.locator("[data-testid=detail-duration]").textContent()).toMatch(/\d/);
    // Re-run and its kin are disabled by the read-only gate, with the reason.
    for (const a of await det.locator("[data-action]").all()) {
      expect(await a.isDisabled()).toBe(true);
      expect(await a.getAttribute("title")).toContain("read-only");
    }
    await shoot(page.locator("tessera-app"), join(SHOTS, "serverless-01-history.png"));
    await page.keyboard.press("Escape");
  });

  it("shows the checkpoint's figure in the Plots view", async () => {
    await page.locator("button[data-view=plots]").click();
    const img = page.locator("[data-testid=plots-view] .ptile img");
    await expect.poll(() => img.count(), { timeout: 30_000 }).toBe(1);
    await expect
      .poll(() => img.evaluate((e) => (e as HTMLImageElement).naturalWidth), { timeout: 30_000 })
      .toBeGreaterThan(0);
    // Redraw is the server's: the viewer offers none.
    expect(await page.locator("[data-testid=plots-view] [data-action=redraw]").count()).toBe(0);
    await shoot(page.locator("tessera-app"), join(SHOTS, "serverless-02-plots.png"));
    await img.click();
    await expect
      .poll(
        () =>
          page.locator("[data-testid=lightbox-figure]").evaluate((e) => (e as HTMLImageElement).naturalWidth),
        {
          timeout: 30_000,
        },
      )
      .toBeGreaterThan(0);
    await page.keyboard.press("Escape");
    await page.locator("button[data-view=spatial]").click();
    await page.locator('tessera-spatial-canvas[data-ready="1"]').waitFor({ timeout: 60_000 });
  });

  it("labels the cells in a drawn region into a browser-local column the canvas colours by", async () => {
    const before = site.log.length;
    await page.locator("[data-sidebar-tab=regions]").click();
    expect(await page.locator("[data-testid=unavailable]").count()).toBe(0);
    await page.locator("[data-testid=region-set]").fill("zone");
    await page.locator("[data-testid=region-category]").fill("inner");
    const ring = await drawRing([
      [0.35, 0.3],
      [0.65, 0.3],
      [0.65, 0.7],
      [0.35, 0.7],
    ]);
    const rows = await rowsInside(ring);
    expect(rows.length).toBeGreaterThan(20);
    const apply = page.locator("[data-testid=apply-label]");
    await expect.poll(() => apply.textContent()).toContain(`n=${rows.length}`);
    await apply.click();
    await page.locator('tessera-spatial-canvas[data-color-by="obs:zone"]').waitFor({ timeout: 30_000 });
    // Exactly the cells inside carry the label; the others are unassigned.
    const codes = await onApp<number[]>(`(a) => Array.from(a.source.local.field("obs:zone").codes)`);
    const labelled = codes.flatMap((c, i) => (c === 0 ? [i] : []));
    expect(labelled).toEqual(rows);
    expect(codes.filter((c) => c === -1)).toHaveLength(codes.length - rows.length);
    // The legend and the region sets list count them; the colour is the chosen one (red preset).
    const canvas = page.locator("tessera-spatial-canvas");
    expect(await canvas.locator(".legend").textContent()).toContain(`inner${rows.length}`);
    expect(await page.locator('[data-region-set="zone"] [data-testid=n-cells]').textContent()).toBe(
      String(rows.length),
    );
    const px = await canvasShot("serverless-03-local-label");
    expect(fractionNear(px, [[0xe4, 0x1a, 0x1c]], 10)).toBeGreaterThan(0.01);
    // It is a column to colour by, like the checkpoint's own.
    await canvas.getByRole("button", { name: "Show controls" }).click();
    await canvas.getByRole("button", { name: "Cells" }).click();
    const options = await canvas.locator("[data-testid=color-by] option").allTextContents();
    expect(options).toContain("zone (categorical)");
    await canvas.getByRole("button", { name: "Minimize controls" }).click();
    await shoot(page.locator("tessera-app"), join(SHOTS, "serverless-04-local-label-app.png"));
    // A second region into the same set: overlaps go to the last one applied.
    await page.locator("[data-testid=region-category]").fill("outer");
    const ring2 = await drawRing([
      [0.5, 0.5],
      [0.8, 0.5],
      [0.8, 0.85],
      [0.5, 0.85],
    ]);
    const rows2 = await rowsInside(ring2);
    await expect.poll(() => apply.textContent()).toContain(`n=${rows2.length}`);
    await apply.click();
    await expect
      .poll(() =>
        page.locator('[data-region-set="zone"] [data-category="outer"] [data-testid=n-cells]').textContent(),
      )
      .toBe(String(rows2.length));
    const codes2 = await onApp<number[]>(`(a) => Array.from(a.source.local.field("obs:zone").codes)`);
    const in2 = new Set(rows2);
    for (let i = 0; i < codes2.length; i++)
      expect(codes2[i], `row ${i}`).toBe(in2.has(i) ? 1 : rows.includes(i) ? 0 : -1);
    // Nothing was asked of an API: only the static files.
    expect(site.log.slice(before).filter((x) => x.url.includes("/api/"))).toEqual([]);
  });

  it("hides the cells in a region and shows them again", async () => {
    const full = await canvasShot("serverless-05-before-hide");
    const ring = await drawRing([
      [0.1, 0.15],
      [0.8, 0.15],
      [0.8, 0.5],
      [0.1, 0.5],
    ]);
    const rows = await rowsInside(ring);
    expect(rows.length).toBeGreaterThan(20);
    await page.locator("[data-testid=hide-cells]").click();
    await expect
      .poll(() => page.locator("[data-testid=show-cells]").textContent())
      .toContain(`${rows.length} hidden`);
    const hidden = await canvasShot("serverless-06-hidden");
    expect(fractionNot(hidden, BG)).toBeLessThan(fractionNot(full, BG) * 0.9);
    await page.locator("[data-testid=show-cells]").click();
    await expect.poll(() => page.locator("[data-testid=show-cells]").isDisabled()).toBe(true);
    const back = await canvasShot("serverless-07-shown");
    expect(Math.abs(fractionNot(back, BG) - fractionNot(full, BG))).toBeLessThan(0.01);
  });

  it("creates an embedding view locally; a reload loses the local column", async () => {
    await page.locator("button[data-view=embeddings]").click();
    const create = page.getByRole("button", { name: /Create embedding view/ });
    await create.waitFor({ timeout: 30_000 });
    expect(await create.textContent()).toContain("X_custom");
    // The form: the embedding and a colour (client.md 6.3).
    await page.locator("[data-testid=new-embedding-color]").selectOption("obs:cell_type");
    await create.click();
    await page.locator('tessera-embedding-canvas[data-ready="1"][data-color-by="obs:cell_type"]').waitFor({
      timeout: 60_000,
    });
    await shoot(page.locator("tessera-app"), join(SHOTS, "serverless-08-embedding-created.png"));
    await page.reload();
    // The link kept the view (embeddings); the spatial one is a click away.
    await page.locator("button[data-view=spatial]").click({ timeout: 90_000 });
    await page.locator('tessera-spatial-canvas[data-ready="1"]').waitFor({ timeout: 90_000 });
    const canvas = page.locator("tessera-spatial-canvas");
    await canvas.getByRole("button", { name: "Show controls" }).click();
    await canvas.getByRole("button", { name: "Cells" }).click();
    const options = await canvas.locator("[data-testid=color-by] option").allTextContents();
    expect(options.some((o) => o.startsWith("zone"))).toBe(false);
    // The link left the local column's colouring out: the saved colouring shows, nothing is missing.
    expect(await canvas.getAttribute("data-missing")).toBeNull();
    expect(await canvas.getAttribute("data-color-by")).toBe("");
  });
});
