/**
 * The analysis history in a real browser (Debian chromium) against the real server on 127.0.0.1
 * with the demo dataset: the first test — `sc.pp.normalize_total` → `log1p` → `pca` →
 * `neighbors` → `leiden` → `umap` run from their generated forms, then the embedding canvas shows
 * the UMAP coloured by leiden; the detail panel (params, timing, library versions, log); the live log
 * of a running job (`job.log`) and the cancel of a queued one; staging steps, editing a pending
 * step's params, deleting one and running all pending; a re-run with edited params from the
 * prefilled form. Screenshots go to `test-artifacts/ui/`.
 */
import { mkdir, mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildWebApp } from "../../scripts/build-app.js";
import { startTestServer, type TestServer } from "../adapters/http/harness.js";
import { HAVE_CHROMIUM, launchChromium, type Pixels, shoot } from "./browser.js";

const d = HAVE_CHROMIUM ? describe : describe.skip;
const SHOTS = join(process.cwd(), "test-artifacts", "ui");

let ts: TestServer;
let browser: Browser;
let page: Page;
let sid: string;

beforeAll(async () => {
  if (!HAVE_CHROMIUM) return;
  await mkdir(SHOTS, { recursive: true });
  const appDir = join(await mkdtemp(join(tmpdir(), "tessera-history-")), "app");
  await buildWebApp({ outdir: appDir });
  ts = await startTestServer({
    demo: { nCells: 600, nGenes: 30, imageSize: 256, nTranscripts: 50 },
    config: { staticDir: appDir },
  });
  sid = await ts.openDemo();
  browser = await launchChromium();
  page = await browser.newPage({ viewport: { width: 1280, height: 820 } });
  page.on("pageerror", (e) => console.error("page error:", e.message));
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await ts?.close();
});

interface Entry {
  id: string;
  namespace: string;
  function: string;
  status: string;
  params: Record<string, unknown>;
}

async function entries(): Promise<Entry[]> {
  const st = (await (await ts.api(`/api/sessions/${sid}`)).json()) as {
    app_state: { compute_history: Entry[] };
  };
  return st.app_state.compute_history;
}

async function history(): Promise<string[]> {
  return (await entries()).map((h) => `${h.namespace}.${h.function}:${h.status}`);
}

/** Open the function picker from the sidebar and show a function's form. */
async function pick(key: string, search: string): Promise<void> {
  await page.locator("[data-testid=run-function]").click();
  await page.locator("[data-testid=function-search]").fill(search);
  await page.locator(`[data-testid=function-list] [data-function="${key}"]`).click();
  await page.locator(`form[data-function="${key}"]`).waitFor();
}

/** Run a function from its form (optionally filling fields) and wait until its step completes. */
async function runFromForm(key: string, search: string, fill: Record<string, string> = {}): Promise<void> {
  const before = (await entries()).length;
  await pick(key, search);
  for (const [k, v] of Object.entries(fill)) {
    const el = page.locator(`form[data-function="${key}"] [data-param=${k}]`);
    if ((await el.evaluate((e) => e.tagName)) === "SELECT") await el.selectOption(v);
    else await el.fill(v);
  }
  await page.locator("[data-action=run]").click();
  await page.locator("tessera-function-picker").waitFor({ state: "detached", timeout: 30_000 });
  await expect
    .poll(async () => (await history()).slice(before), { timeout: 120_000 })
    .toEqual([`${key}:completed`]);
}

/** Pixels within `tol` of `c` left of column `maxX`. */
function pixelsNear(px: Pixels, c: number[], tol: number, maxX: number): number {
  let n = 0;
  for (let y = 0; y < px.height; y++)
    for (let x = 0; x < Math.min(maxX, px.width); x++) {
      const i = (y * px.width + x) * 3;
      if (
        Math.abs(px.data[i]! - c[0]!) <= tol &&
        Math.abs(px.data[i + 1]! - c[1]!) <= tol &&
        Math.abs(px.data[i + 2]! - c[2]!) <= tol
      )
        n++;
    }
  return n;
}

const row = (fn: string) => page.locator(`[data-testid=compute-history] .hrow[data-function="${fn}"]`);

d("analysis history", () => {
  it("runs normalize_total → log1p → pca → neighbors → leiden → umap from the forms; the UMAP is coloured by leiden", async () => {
    await page.goto(`${ts.url}/`);
    await page.locator("[data-testid=run-function]").waitFor({ timeout: 60_000 });
    await runFromForm("sc.pp.normalize_total", "normalize");
    await runFromForm("sc.pp.log1p", "log1p");
    await runFromForm("sc.pp.pca", "pca", { n_comps: "10" });
    await runFromForm("sc.pp.neighbors", "neighbors", { n_neighbors: "10" });
    await runFromForm("sc.tl.leiden", "leiden");
    await runFromForm("sc.tl.umap", "umap");
    // Every step shows in the sidebar with a completed badge and its finish time.
    for (const fn of ["normalize_total", "log1p", "pca", "neighbors", "leiden", "umap"]) {
      const r = page.locator(`[data-testid=compute-history] .hrow[data-function$=".${fn}"]`);
      await expect.poll(() => r.locator(".hbadge").getAttribute("data-status")).toBe("completed");
      expect(await r.locator(".htime").textContent()).toMatch(/\d\d:\d\d:\d\d/);
    }
    // The embedding view: choose the UMAP and colour by leiden through the canvas controls.
    await page.locator("button[data-view=embeddings]").click();
    const canvas = page.locator("tessera-embedding-canvas");
    await canvas.waitFor({ timeout: 30_000 });
    await canvas.getByRole("button", { name: "Show controls" }).click();
    await canvas.locator("[data-testid=obsm-key]").selectOption("X_umap");
    await canvas.locator("[data-testid=color-by]").selectOption("obs:leiden");
    await page.locator('tessera-embedding-canvas[data-color-by="obs:leiden"][data-ready="1"]').waitFor({
      timeout: 30_000,
    });
    await expect
      .poll(
        () =>
          canvas.evaluate(
            (el) => (el as HTMLElement).dataset.drawnKey === (el as HTMLElement).dataset.colorKey,
          ),
        {
          timeout: 30_000,
        },
      )
      .toBe(true);
    await canvas.getByRole("button", { name: "Minimize controls" }).click();
    // The camera kept the PCA's framing; Fit frames the UMAP.
    await canvas.getByRole("button", { name: "Fit" }).click();
    await page.waitForTimeout(600);
    const px = await shoot(canvas, join(SHOTS, "history-01-umap-leiden.png"));
    // The legend's leiden colours are drawn in the plot (the legend itself, bottom right, left out):
    // at least three clusters are seen, each as dozens of pixels.
    const swatches = await canvas.evaluate((el) =>
      Array.from(el.shadowRoot?.querySelectorAll(".sw") ?? [], (e) => getComputedStyle(e).backgroundColor),
    );
    expect(swatches.length).toBeGreaterThan(2);
    const rgb = swatches.map((c) => c.match(/\d+/g)!.slice(0, 3).map(Number));
    const seen = rgb.filter((c) => pixelsNear(px, c, 10, px.width - 220) >= 30);
    expect(seen.length).toBeGreaterThanOrEqual(3);
    await shoot(page.locator("tessera-app"), join(SHOTS, "history-02-app.png"));
  });

  it("shows a step's detail: params, timing, library versions and log; Esc closes it", async () => {
    await row("sc.pp.pca").click();
    const det = page.locator("[data-testid=history-detail]");
    await det.waitFor();
    expect(JSON.parse((await det.locator("[data-testid=detail-params]").textContent())!)).toMatchObject({
      n_comps: 10,
    });
    expect(await det.locator("[data-testid=detail-duration]").textContent()).toMatch(/\d+(\.\d)? s|\d+:\d\d/);
    expect(await det.locator("[data-testid=detail-versions]").textContent()).toMatch(/\d+\.\d+/);
    // The log of the finished job was fetched (GET …/jobs/{id}/log) and is what the server kept.
    const pca = (await entries()).find((e) => e.function === "pca")!;
    const log = (await (await ts.api(`/api/sessions/${sid}/jobs/${pca.id}/log`)).json()) as { log: string };
    await expect
      .poll(() => det.locator("[data-testid=detail-log]").textContent())
      .toBe(log.log.length ? log.log : "(empty)");
    // The panel pushed the canvas aside: frame the cells again for the screenshot.
    await page.locator("tessera-embedding-canvas").getByRole("button", { name: "Fit" }).click();
    await page.waitForTimeout(600);
    await shoot(page.locator("tessera-app"), join(SHOTS, "history-03-detail.png"));
    await page.keyboard.press("Escape");
    await det.waitFor({ state: "detached" });
  });

  it("streams a running job's log live and cancels a queued one", async () => {
    await page.locator("button[data-view=spatial]").click();
    await pick("custom.sleep", "sleep");
    await page.locator("[data-param=ms]").fill("8000");
    await page.locator("[data-param=message]").fill("sleeping now, live");
    await page.locator("[data-action=run]").click();
    await page.locator("tessera-function-picker").waitFor({ state: "detached" });
    // A second sleep queues behind it.
    await pick("custom.sleep", "sleep");
    await page.locator("[data-param=ms]").fill("10");
    await page.locator("[data-action=run]").click();
    await page.locator("tessera-function-picker").waitFor({ state: "detached" });
    const rows = page.locator('[data-testid=compute-history] .hrow[data-function="custom.sleep"]');
    await expect.poll(() => rows.count()).toBe(2);
    // The running one: a pulsing badge with the elapsed time, and the live log from job.log.
    await expect
      .poll(() => rows.nth(0).locator(".hbadge").getAttribute("data-status"), { timeout: 30_000 })
      .toBe("running");
    await rows.nth(0).click();
    const det = page.locator("[data-testid=history-detail]");
    await det.locator("[data-testid=live-log]").waitFor({ timeout: 30_000 });
    expect(await det.locator("[data-testid=detail-log]").textContent()).toContain("sleeping now, live");
    expect(await rows.nth(0).locator(".hbadge").textContent()).toMatch(/running \d+:\d\d/);
    // The queued one can be cancelled from its detail.
    expect(await rows.nth(1).locator(".hbadge").getAttribute("data-status")).toBe("queued");
    await rows.nth(1).click();
    await page.locator("[data-testid=history-detail] [data-action=cancel-job]").click();
    await expect
      .poll(async () => (await history()).at(-1), { timeout: 30_000 })
      .toBe("custom.sleep:cancelled");
    // A cancelled step changed nothing: it can be deleted from history.
    await page.locator("[data-testid=history-detail] [data-action=delete]").click();
    await expect.poll(() => rows.count(), { timeout: 30_000 }).toBe(1);
    expect((await history()).filter((h) => h.startsWith("custom.sleep"))).toHaveLength(1);
    // The first finishes: the live buffer goes, the full log stays.
    await rows.nth(0).click();
    await expect
      .poll(async () => (await history()).at(-1), { timeout: 60_000 })
      .toBe("custom.sleep:completed");
    await det.locator("[data-testid=live-log]").waitFor({ state: "detached", timeout: 30_000 });
    await expect
      .poll(() => det.locator("[data-testid=detail-log]").textContent())
      .toContain("sleeping now, live");
    await page.keyboard.press("Escape");
  });

  it("stages steps, edits a pending step's params, deletes one, and runs all pending", async () => {
    await pick("custom.sleep", "sleep");
    await page.locator("[data-param=ms]").fill("5");
    await page.locator("[data-action=stage]").click();
    await page.locator("tessera-function-picker").waitFor({ state: "detached" });
    await pick("sc.pp.pca", "pca");
    await page.locator("[data-param=n_comps]").fill("5");
    await page.locator("[data-action=stage]").click();
    await page.locator("tessera-function-picker").waitFor({ state: "detached" });
    await pick("custom.noop", "noop");
    await page.locator("[data-action=stage]").click();
    await page.locator("tessera-function-picker").waitFor({ state: "detached" });
    await expect
      .poll(async () => (await history()).filter((h) => h.endsWith(":pending")))
      .toEqual(["custom.sleep:pending", "sc.pp.pca:pending", "custom.noop:pending"]);
    const pending = page.locator('[data-testid=compute-history] .hrow:has([data-status="pending"])');
    await expect.poll(() => pending.count()).toBe(3);
    expect(await pending.first().locator(".hbadge").textContent()).toBe("draft");
    await expect.poll(() => page.locator("[data-testid=run-all-pending]").textContent()).toContain("(3)");
    // Edit the staged pca: the form is prefilled with its params; Save keeps it pending.
    await pending.nth(1).click();
    await page.locator("[data-testid=history-detail] [data-action=edit-params]").click();
    const form = page.locator('form[data-function="sc.pp.pca"]');
    await form.waitFor();
    expect(await form.locator("[data-param=n_comps]").inputValue()).toBe("5");
    await form.locator("[data-param=n_comps]").fill("7");
    await form.locator("[data-action=stage]").click(); // "Save"
    await form.waitFor({ state: "detached" });
    await expect
      .poll(async () => (await entries()).find((e) => e.function === "pca" && e.status === "pending")?.params)
      .toMatchObject({ n_comps: 7 });
    await expect
      .poll(() => page.locator("[data-testid=history-detail] [data-testid=detail-params]").textContent())
      .toContain('"n_comps": 7');
    await shoot(page.locator("tessera-app"), join(SHOTS, "history-04-pending.png"));
    // Delete the staged noop from its row (hover action).
    const noop = page.locator('[data-testid=compute-history] .hrow[data-function="custom.noop"]');
    await noop.hover();
    await noop.getByRole("button", { name: "Delete from history" }).click();
    await expect
      .poll(async () => (await history()).filter((h) => h.endsWith(":pending")))
      .toEqual(["custom.sleep:pending", "sc.pp.pca:pending"]);
    // Run all pending: both queue and complete, the pca with the edited params.
    await page.locator("[data-testid=run-all-pending]").click();
    await expect
      .poll(async () => (await history()).slice(-2), { timeout: 120_000 })
      .toEqual(["custom.sleep:completed", "sc.pp.pca:completed"]);
    expect((await entries()).at(-1)!.params).toMatchObject({ n_comps: 7 });
    await expect.poll(() => page.locator("[data-testid=run-all-pending]").count()).toBe(0);
  });

  it("re-runs a step with edited params from the prefilled form (a new step; history is not edited)", async () => {
    const n = (await entries()).length;
    await row("sc.pp.neighbors").click();
    await page.locator("[data-testid=history-detail] [data-action=edit-rerun]").click();
    const form = page.locator('form[data-function="sc.pp.neighbors"]');
    await form.waitFor();
    expect(await form.locator("[data-param=n_neighbors]").inputValue()).toBe("10");
    await form.locator("[data-param=n_neighbors]").fill("12");
    await form.locator("[data-action=run]").click();
    await form.waitFor({ state: "detached" });
    await expect
      .poll(async () => (await history()).slice(n), { timeout: 120_000 })
      .toEqual(["sc.pp.neighbors:completed"]);
    const all = await entries();
    expect(all.filter((e) => e.function === "neighbors").map((e) => e.params.n_neighbors)).toEqual([10, 12]);
    await page.keyboard.press("Escape");
  });
});
