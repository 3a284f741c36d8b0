/**
 * The analysis panels in a real browser (Debian chromium) against the real server on 127.0.0.1 with
 * the demo dataset: a shipped recipe run from the gallery (readme, provenance, preflight, the
 * generated parameter form); a recipe file loaded as pending steps and the history exported as a
 * recipe; the Plots view (thumbnails, the lightbox with ←/→ and Esc, downloads, redraw after
 * invalidation); the data inspector (50-row pages, shapes as WKT, points, an image thumbnail,
 * labels, refreshed in place when data versions change); the save dialog (preview, folder browser,
 * sizes, a trimmed selection) whose file, reopened, lacks the trimmed element; the blocking overlay
 * whose Stop cancels a queued save. Screenshots go to `test-artifacts/ui/`.
 */
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildWebApp } from "../../scripts/build-app.js";
import { startTestServer, type TestServer } from "../adapters/http/harness.js";
import { HAVE_CHROMIUM, launchChromium, shoot } from "./browser.js";

const d = HAVE_CHROMIUM ? describe : describe.skip;
const SHOTS = join(process.cwd(), "test-artifacts", "ui");

let ts: TestServer;
let browser: Browser;
let page: Page;
let sid: string;
let clientId: string;

beforeAll(async () => {
  if (!HAVE_CHROMIUM) return;
  await mkdir(SHOTS, { recursive: true });
  const appDir = join(await mkdtemp(join(tmpdir(), "tessera-panels-")), "app");
  await buildWebApp({ outdir: appDir });
  ts = await startTestServer({
    demo: { nCells: 600, nGenes: 30, imageSize: 512, nTranscripts: 400 },
    config: { staticDir: appDir },
  });
  sid = await ts.openDemo();
  browser = await launchChromium();
  page = await browser.newPage({ viewport: { width: 1280, height: 820 }, acceptDownloads: true });
  page.on("pageerror", (e) => console.error("page error:", e.message));
  await page.goto(`${ts.url}/?session=${sid}`);
  await page.locator("[data-testid=run-function]").waitFor({ timeout: 60_000 });
  clientId = (await page.evaluate(() => localStorage.getItem("tessera-client-id")))!;
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await ts?.close();
});

interface State {
  app_state: {
    compute_history: { id: string; namespace: string; function: string; status: string }[];
    plots: { id: string; function: string; status: string; params: Record<string, unknown> }[];
  };
  fields: { obs: { name: string }[] };
}

async function state(id = sid): Promise<State> {
  return (await (await ts.api(`/api/sessions/${id}`)).json()) as State;
}

async function history(): Promise<string[]> {
  return (await state()).app_state.compute_history.map((h) => `${h.namespace}.${h.function}:${h.status}`);
}

/**
 * Dismiss the toasts before a screenshot: after the recipe renames `cell_type`, the spatial canvas
 * (outside these panels) still colours by it and keeps reporting the missing column.
 */
async function clearToasts(): Promise<void> {
  await page.locator(".toast button").evaluateAll((bs) => {
    for (const b of bs) (b as HTMLButtonElement).click();
  });
}

/** Post a job as this browser (it holds the session's lock once it has acted). */
async function job(descriptor: Record<string, unknown>): Promise<string> {
  const r = await ts.api(`/api/sessions/${sid}/jobs`, { method: "POST", json: descriptor, clientId });
  expect(r.status, await r.clone().text()).toBe(200);
  return ((await r.json()) as { job_id: string }).job_id;
}

d("recipes", () => {
  it("runs a shipped recipe from the gallery: readme, provenance, preflight, its generated form", async () => {
    await page.locator("[data-testid=browse-recipes]").click();
    const list = page.locator("[data-testid=recipe-list]");
    await list.locator("[data-recipe=annotate_demo]").click();
    const detail = page.locator("[data-testid=recipe-detail]");
    expect(await detail.locator("[data-testid=recipe-readme]").textContent()).toContain("compartment");
    expect(await detail.locator("[data-testid=recipe-provenance]").textContent()).toContain(
      "author: Tessera",
    );
    // Preflight from the server: every function known, and what the steps write.
    const pre = detail.locator("[data-testid=preflight]");
    await pre.locator("[data-check=ready]").waitFor({ timeout: 15_000 });
    expect(await pre.locator("[data-check=unknown]").count()).toBe(0);
    expect(await pre.locator("[data-check=produced]").textContent()).toContain("compartment");
    // The recipe's params as a generated form: an obs_categorical picker, a text box.
    const form = detail.locator('form[data-function="recipe.annotate_demo"]');
    expect(await form.locator("[data-param=source_column]").evaluate((e) => e.tagName)).toBe("SELECT");
    expect(await form.locator("[data-param=label_column]").inputValue()).toBe("compartment");
    await form.locator("[data-param=label_column]").fill("tissue_part");
    // Preflight follows the edited values.
    await expect
      .poll(() => pre.locator("[data-check=produced]").textContent(), { timeout: 15_000 })
      .toContain("tissue_part");
    await clearToasts();
    await shoot(page.locator(".modal"), join(SHOTS, "recipes-01-gallery.png"));
    await form.locator("[data-action=run]").click();
    await page.locator("tessera-recipes-dialog").waitFor({ state: "detached", timeout: 15_000 });
    await expect
      .poll(history, { timeout: 60_000 })
      .toEqual([
        "custom.rename_obs_column:completed",
        "custom.rename_categories:completed",
        "custom.set_category_colors:completed",
      ]);
    const obs = (await state()).fields.obs.map((o) => o.name);
    expect(obs).toContain("tissue_part");
    expect(obs).not.toContain("cell_type");
  });

  it("loads a recipe file as pending steps, and exports the history as a recipe", async () => {
    const file = {
      schema_version: 1,
      meta: { name: "two_steps", description: "a test recipe" },
      steps: [
        { namespace: "custom", function: "noop", params: {} },
        { namespace: "custom", function: "sleep", params: { ms: 5 } },
      ],
    };
    await page.locator("[data-testid=load-recipe]").setInputFiles({
      name: "two_steps.json",
      mimeType: "application/json",
      buffer: Buffer.from(JSON.stringify(file)),
    });
    await expect
      .poll(async () => (await history()).slice(3))
      .toEqual(["custom.noop:pending", "custom.sleep:pending"]);
    await expect
      .poll(() => page.locator('[data-testid=compute-history] [data-status="pending"]').count())
      .toBe(2);
    await page.locator("[data-testid=run-all-pending]").click();
    await expect
      .poll(async () => (await history()).slice(3), { timeout: 60_000 })
      .toEqual(["custom.noop:completed", "custom.sleep:completed"]);
    // Export: the file the browser downloads is the server's recipe of this history.
    const [download] = await Promise.all([
      page.waitForEvent("download"),
      page.locator("[data-testid=export-recipe]").click(),
    ]);
    const exported = JSON.parse(await readFile((await download.path())!, "utf8")) as {
      steps: { namespace: string; function: string }[];
    };
    const server = (await (await ts.api(`/api/sessions/${sid}/recipe`)).json()) as typeof exported;
    // The same recipe as the server's (its provenance carries the export time, which moves on).
    const { meta: m1, ...rest1 } = exported as unknown as { meta: { name: string } };
    const { meta: m2, ...rest2 } = server as unknown as { meta: { name: string } };
    expect(rest1).toEqual(rest2);
    expect(m1.name).toBe(m2.name);
    expect(exported.steps.map((s) => s.function)).toEqual([
      "rename_obs_column",
      "rename_categories",
      "set_category_colors",
      "noop",
      "sleep",
    ]);
  });
});

d("recipes: a file naming an unknown function", () => {
  it("is refused by the server with the function named, and stages nothing", async () => {
    const before = await history();
    const file = {
      schema_version: 1,
      meta: { name: "bad_one" },
      steps: [
        { namespace: "custom", function: "noop", params: {} },
        { namespace: "custom", function: "no_such_function", params: {} },
      ],
    };
    await page.locator("[data-testid=load-recipe]").setInputFiles({
      name: "bad_one.json",
      mimeType: "application/json",
      buffer: Buffer.from(JSON.stringify(file)),
    });
    await expect
      .poll(() => page.locator("[data-testid=toast-error]").last().textContent(), { timeout: 15_000 })
      .toContain("custom.no_such_function");
    expect(await history()).toEqual(before);
    await page.locator("[data-testid=toast-error] button").last().click();
  });
});

d("plots view", () => {
  it("shows the drawn plots as thumbnails; the lightbox steps with ←/→, closes on Esc, offers downloads", async () => {
    await job({ namespace: "pl", function: "test_scatter", params: { color: "tissue_part" } });
    await job({ namespace: "pl", function: "test_scatter", params: {} });
    await expect
      .poll(async () => (await state()).app_state.plots.map((p) => p.status), { timeout: 60_000 })
      .toEqual(["drawn", "drawn"]);
    await page.locator("button[data-view=plots]").click();
    const tiles = page.locator("[data-testid=plots-view] .ptile img");
    await expect.poll(() => tiles.count(), { timeout: 15_000 }).toBe(2);
    await expect
      .poll(() => tiles.evaluateAll((els) => els.every((e) => (e as HTMLImageElement).naturalWidth > 0)), {
        timeout: 15_000,
      })
      .toBe(true);
    await clearToasts();
    await shoot(page.locator("tessera-app"), join(SHOTS, "plots-01-grid.png"));
    const plots = (await state()).app_state.plots;
    await tiles.first().click();
    const lb = page.locator("[data-testid=lightbox]");
    await lb.waitFor();
    expect(await lb.getAttribute("data-plot")).toBe(plots[0]!.id);
    await expect
      .poll(() =>
        lb.locator("[data-testid=lightbox-figure]").evaluate((e) => (e as HTMLImageElement).naturalWidth),
      )
      .toBeGreaterThan(0);
    await clearToasts();
    await shoot(page.locator("tessera-app"), join(SHOTS, "plots-02-lightbox.png"));
    await page.keyboard.press("ArrowRight");
    await expect.poll(() => lb.getAttribute("data-plot")).toBe(plots[1]!.id);
    await page.keyboard.press("ArrowRight"); // wraps around
    await expect.poll(() => lb.getAttribute("data-plot")).toBe(plots[0]!.id);
    await page.keyboard.press("ArrowLeft");
    await expect.poll(() => lb.getAttribute("data-plot")).toBe(plots[1]!.id);
    // Downloads of the formats the server has; the SVG link answers an SVG.
    const links = await lb
      .locator("a[data-download]")
      .evaluateAll((els) => els.map((e) => [e.getAttribute("data-download"), (e as HTMLAnchorElement).href]));
    expect(links.length).toBeGreaterThan(0);
    for (const [fmt, href] of links) {
      const r = await fetch(href!);
      expect(r.status).toBe(200);
      expect(r.headers.get("content-type")).toContain(fmt === "svg" ? "svg" : fmt!);
    }
    await page.keyboard.press("Escape");
    await lb.waitFor({ state: "detached" });
  });

  it("the sidebar's Plots tab: a plot's detail shows its figure; Expand opens the lightbox", async () => {
    await page.locator("[data-sidebar-tab=plots]").click();
    const rows = page.locator("[data-testid=plot-history] .hrow");
    await expect.poll(() => rows.count()).toBe(2);
    expect(await rows.first().locator(".hbadge").getAttribute("data-status")).toBe("drawn");
    await rows.first().click();
    const det = page.locator("[data-testid=history-detail]");
    await expect
      .poll(
        () =>
          det.locator("[data-testid=detail-figure]").evaluate((e) => (e as HTMLImageElement).naturalWidth),
        {
          timeout: 15_000,
        },
      )
      .toBeGreaterThan(0);
    expect(JSON.parse((await det.locator("[data-testid=detail-params]").textContent())!)).toMatchObject({
      color: "tissue_part",
    });
    await det.locator("[data-action=expand]").click();
    await page.locator("[data-testid=lightbox]").waitFor();
    await page.keyboard.press("Escape");
    await page.locator("[data-testid=lightbox]").waitFor({ state: "detached" });
    await det.waitFor(); // Esc closed the lightbox only
    await page.keyboard.press("Escape");
    await det.waitFor({ state: "detached" });
    await page.locator("[data-sidebar-tab=compute]").click();
  });

  it("a plot invalidated by a change is offered for redraw, and redraws", async () => {
    // Renaming a category of the colour column changes a field the first plot read.
    await job({
      namespace: "custom",
      function: "rename_categories",
      params: { key: "tissue_part", mapping: { "Immune: T cell": "T" } },
    });
    const first = page.locator("[data-testid=plots-view] .ptile").first();
    await expect.poll(() => first.getAttribute("data-status"), { timeout: 60_000 }).toBe("invalidated");
    await clearToasts();
    await shoot(page.locator("tessera-app"), join(SHOTS, "plots-03-invalidated.png"));
    await first.locator("[data-action=redraw]").click();
    await expect.poll(() => first.getAttribute("data-status"), { timeout: 60_000 }).toBe("drawn");
    await expect.poll(() => first.locator("img").count()).toBe(1);
  });
});

d("data inspector", () => {
  it("pages the active table's obs 50 rows at a time", async () => {
    await page.locator("button[data-view=tables]").click();
    const range = page.locator("[data-testid=inspector-range]");
    await expect.poll(() => range.textContent(), { timeout: 15_000 }).toBe("rows 1–50 of 600");
    expect(await page.locator("[data-testid=inspector-table] tbody tr").count()).toBe(50);
    await page.locator("[data-action=next-page]").click();
    await expect.poll(() => range.textContent()).toBe("rows 51–100 of 600");
    await clearToasts();
    await shoot(page.locator("tessera-app"), join(SHOTS, "inspector-01-obs.png"));
  });

  it("refreshes in place when data versions change (same page, the new column appears)", async () => {
    const head = page.locator("[data-testid=inspector-table] thead");
    expect(await head.textContent()).toContain("tissue_part");
    await job({
      namespace: "custom",
      function: "rename_obs_column",
      params: { old_name: "tissue_part", new_name: "zone" },
    });
    await expect.poll(() => head.textContent(), { timeout: 30_000 }).toContain("zone");
    expect(await head.textContent()).not.toContain("tissue_part");
    expect(await page.locator("[data-testid=inspector-range]").textContent()).toBe("rows 51–100 of 600");
  });

  it("shows shapes as WKT, points, an image thumbnail and labels", async () => {
    await page.locator('[data-inspect="shapes:cell_boundaries"]').click();
    await expect
      .poll(() => page.locator("[data-testid=inspector-table] tbody").textContent(), { timeout: 15_000 })
      .toMatch(/POLYGON \(\(/);
    await clearToasts();
    await shoot(page.locator("tessera-app"), join(SHOTS, "inspector-02-shapes.png"));
    await page.locator('[data-inspect="points:transcripts"]').click();
    await expect
      .poll(() => page.locator("[data-testid=inspector-range]").textContent(), { timeout: 15_000 })
      .toBe("rows 1–50 of 400");
    await page.locator('[data-inspect="image:morphology"]').click();
    const thumb = page.locator("[data-testid=inspector-thumbnail]");
    await expect
      .poll(() => thumb.evaluate((e) => (e as HTMLImageElement).naturalWidth), { timeout: 30_000 })
      .toBeGreaterThan(0);
    await clearToasts();
    await shoot(page.locator("tessera-app"), join(SHOTS, "inspector-03-image.png"));
    await page.locator('[data-inspect="labels:cell_labels"]').click();
    expect(await page.locator("[data-testid=inspector-raster]").textContent()).toContain(
      "512 × 512, 256 × 256",
    );
  });
});

d("save dialog and blocking overlay", () => {
  it("saves a trimmed selection; the reopened file lacks the trimmed element", async () => {
    await page.locator("button[data-view=spatial]").click();
    await page.locator("[data-testid=open-save]").click();
    const dlg = page.locator("tessera-save-dialog");
    await dlg.locator('[data-save-item="images:morphology"]').waitFor({ timeout: 30_000 });
    // Sizes and the running total.
    expect(await dlg.locator('[data-save-item="images:morphology"] [data-size]').textContent()).toMatch(
      /MB|GB/,
    );
    const total = dlg.locator("[data-testid=save-total]");
    const all = /^(\d+) of (\d+) items/.exec((await total.textContent())!)!;
    expect(all[1]).toBe(all[2]);
    // The name, a folder picked with the browser, the prefix, and the preview.
    await dlg.locator("[data-testid=save-name]").fill("trimmed demo");
    await dlg.locator("[data-testid=save-browse]").click();
    await dlg.locator("[data-testid=save-browser]").waitFor();
    await dlg.locator("[data-testid=save-browse-choose]").click();
    expect(await dlg.locator("[data-testid=save-folder]").inputValue()).toBe(ts.dataDir);
    await dlg.locator("[data-testid=save-folder]").fill(join(ts.dataDir, "exports"));
    await dlg.locator("[data-testid=save-prefix]").fill("trimmed");
    expect(await dlg.locator("[data-testid=save-preview]").textContent()).toBe(
      `${join(ts.dataDir, "exports")}/trimmed-<content hash>.sdata.zarr.zip`,
    );
    // The image's resolution slider: writing from level 1 costs the coarser levels only.
    const item = dlg.locator('[data-save-item="images:morphology"]');
    const full = (await item.locator("[data-size]").textContent())!;
    expect(await item.locator("[data-level-label]").textContent()).toContain("finest 512 × 512 px");
    await item.locator("input[type=range]").evaluate((el) => {
      (el as HTMLInputElement).value = "0"; // the left end: the coarsest level (1 of 0–1)
      el.dispatchEvent(new Event("input", { bubbles: true }));
    });
    await expect
      .poll(() => item.locator("[data-level-label]").textContent())
      .toContain("finest 256 × 256 px");
    expect(Number.parseFloat((await item.locator("[data-size]").textContent())!)).toBeLessThan(
      Number.parseFloat(full),
    );
    await dlg.locator('[data-save-item="tables:table"] summary').click();
    await clearToasts();
    await shoot(page.locator(".modal"), join(SHOTS, "save-00-levels-and-slots.png"));
    // Drop the image: k of n drops by one.
    await dlg.locator('[data-save-item="images:morphology"] input[type=checkbox]').uncheck();
    await expect
      .poll(() => total.textContent())
      .toMatch(new RegExp(`^${Number(all[1]) - 1} of ${all[2]} items`));
    // The active table's required slots are locked.
    expect(
      await dlg.locator('[data-save-item="tables:table"] input[type=checkbox]').first().isDisabled(),
    ).toBe(true);
    await clearToasts();
    await shoot(page.locator(".modal"), join(SHOTS, "save-01-dialog.png"));
    await clearToasts();
    const [resp] = await Promise.all([
      page.waitForResponse((r) => r.url().endsWith(`/api/sessions/${sid}/save`)),
      dlg.locator("[data-testid=save-submit]").click(),
    ]);
    expect(resp.status()).toBe(200);
    expect(JSON.parse(resp.request().postData()!)).toEqual({
      name: "trimmed demo",
      folder: join(ts.dataDir, "exports"),
      prefix: "trimmed",
      include: { images: [] },
    });
    const { job_id } = (await resp.json()) as { job_id: string };
    const done = (await ts.waitJob(sid, job_id, 120_000)) as { status: string; result?: { path: string } };
    expect(done.status).toBe("completed");
    const j = (await (await ts.api(`/api/sessions/${sid}/jobs/${job_id}`)).json()) as {
      result: { path: string };
    };
    const path = j.result.path;
    expect(path).toMatch(/\/exports\/trimmed-[0-9a-f]+\.sdata\.zarr\.zip$/);
    expect(existsSync(path)).toBe(true);
    await expect.poll(() => page.locator("[data-testid=job-overlay]").count()).toBe(0);
    // Reopen the file: the image is gone, the rest is there; the open session still has it.
    const r = await ts.api("/api/sessions", { method: "POST", json: { source: { kind: "load", path } } });
    expect(r.status, await r.clone().text()).toBe(201);
    const child = ((await r.json()) as { id: string }).id;
    await expect
      .poll(
        async () =>
          ((await (await ts.api(`/api/sessions/${child}`)).json()) as { summary: { status: string } }).summary
            .status,
        {
          timeout: 60_000,
        },
      )
      .toBe("ready");
    const inv = (await (await ts.api(`/api/sessions/${child}/elements`)).json()) as {
      images: { name: string }[];
      labels: { name: string }[];
    };
    expect(inv.images).toEqual([]);
    expect(inv.labels.map((l) => l.name)).toEqual(["cell_labels"]);
    const own = (await (await ts.api(`/api/sessions/${sid}/elements`)).json()) as {
      images: { name: string }[];
    };
    expect(own.images.map((i) => i.name)).toEqual(["morphology"]);
    // In the app: the reopened session's inspector lists no image.
    await page.goto(`${ts.url}/?session=${child}`);
    await page.locator("button[data-view=tables]").click();
    await page.locator("[data-testid=inspector-nav]").waitFor({ timeout: 30_000 });
    await expect.poll(() => page.locator('[data-inspect="labels:cell_labels"]').count()).toBe(1);
    expect(await page.locator('[data-inspect^="image:"]').count()).toBe(0);
    await page.goto(`${ts.url}/?session=${sid}`);
    await page.locator("[data-testid=run-function]").waitFor({ timeout: 60_000 });
  });

  it("blocks the app while a save is queued; Stop cancels it", async () => {
    await job({ namespace: "custom", function: "sleep", params: { ms: 6000 } });
    const r = await ts.api(`/api/sessions/${sid}/save`, {
      method: "POST",
      json: { folder: join(ts.dataDir, "never"), prefix: "never" },
      clientId,
    });
    expect(r.status, await r.clone().text()).toBe(200);
    const { job_id } = (await r.json()) as { job_id: string };
    const overlay = page.locator("[data-testid=job-overlay]");
    await overlay.waitFor({ timeout: 30_000 });
    expect(await overlay.locator("[data-testid=job-overlay-label]").textContent()).toContain("Saving");
    await clearToasts();
    await shoot(page.locator("tessera-app"), join(SHOTS, "overlay-01-save-queued.png"));
    const stop = overlay.locator("[data-testid=job-overlay-stop]");
    expect(await stop.isDisabled()).toBe(false);
    await stop.click();
    await overlay.waitFor({ state: "detached", timeout: 30_000 });
    expect(((await ts.waitJob(sid, job_id)) as { status: string }).status).toBe("cancelled");
    expect(existsSync(join(ts.dataDir, "never"))).toBe(false);
  });
});
