/**
 * Four behaviours of the web app in a real browser (Debian chromium) against the real server on
 * 127.0.0.1: the automatic displays a fresh session gets are persisted by the lock holder (so the save
 * dialog keeps `obsm/spatial`, client.md 5.11 and 13.2); a canvas coloured by a column that a later
 * step renamed away shows one notice and the default colouring, however often it redraws (5.5, 5.7);
 * a plot's redraw shows its live log (`job.log`) and then its full log (3.2); the embedding camera
 * frames the new points when the obsm key changes (6.1). Screenshots go to `test-artifacts/ui/`.
 */
import { mkdir, mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildWebApp } from "../../scripts/build-app.js";
import { startTestServer, type TestServer } from "../adapters/http/harness.js";
import { fractionNear, HAVE_CHROMIUM, launchChromium, shoot } from "./browser.js";

const d = HAVE_CHROMIUM ? describe : describe.skip;
const SHOTS = join(process.cwd(), "test-artifacts", "ui");

let ts: TestServer;
let browser: Browser;
let page: Page;
let sid: string;
let clientId: string;

interface State {
  app_state: {
    displays: { id: string; type: string; encoding: Record<string, unknown> }[];
    plots: { id: string; status: string; function: string }[];
  };
}

async function state(): Promise<State> {
  return (await (await ts.api(`/api/sessions/${sid}`)).json()) as State;
}

/** Run a job as the page's client (it holds the lock) and wait for it. */
async function job(body: Record<string, unknown>): Promise<string> {
  const r = await ts.api(`/api/sessions/${sid}/jobs`, { method: "POST", json: body, clientId });
  expect(r.status, await r.clone().text()).toBe(200);
  const { job_id } = (await r.json()) as { job_id: string };
  expect((await ts.waitJob(sid, job_id)).status).toBe("completed");
  return job_id;
}

async function editEncoding(sel: string, patch: Record<string, unknown>): Promise<void> {
  await page.evaluate(
    ([s, p]) => {
      const c = document.querySelector("tessera-app")!.shadowRoot!.querySelector(s as string) as unknown as {
        editEncoding(p: Record<string, unknown>): void;
      };
      c.editEncoding(p as Record<string, unknown>);
    },
    [sel, patch] as const,
  );
}

beforeAll(async () => {
  if (!HAVE_CHROMIUM) return;
  await mkdir(SHOTS, { recursive: true });
  const appDir = join(await mkdtemp(join(tmpdir(), "tessera-fixes-")), "app");
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

d("web app fixes", () => {
  it("persists the automatic spatial display once this browser holds the lock; the save dialog keeps obsm spatial", async () => {
    expect((await state()).app_state.displays).toEqual([]);
    await page.goto(`${ts.url}/?session=${sid}`);
    await page.locator('tessera-spatial-canvas[data-ready="1"]').waitFor({ timeout: 60_000 });
    clientId = (await page.evaluate(() => localStorage.getItem("tessera-client-id")))!;
    await expect
      .poll(async () => (await state()).app_state.displays.map((x) => [x.type, x.encoding.coords]), {
        timeout: 30_000,
      })
      .toEqual([["spatial_canvas", "obsm:spatial"]]);
    // The id is the one the canvas draws (no second display appears).
    const shown = await page.evaluate(
      () =>
        (
          document
            .querySelector("tessera-app")!
            .shadowRoot!.querySelector("tessera-spatial-canvas") as unknown as {
            display: { id: string };
          }
        ).display.id,
    );
    expect((await state()).app_state.displays[0]!.id).toBe(shown);
    await page.locator("[data-testid=open-save]").click();
    await page.locator(".sslots summary").first().click({ timeout: 30_000 });
    const slot = page.locator('[data-slot$=":obsm/spatial"] input[type=checkbox]');
    await slot.waitFor({ timeout: 30_000 });
    expect(await slot.isDisabled()).toBe(true);
    await page.keyboard.press("Escape");
    await page.locator("tessera-save-dialog").waitFor({ state: "detached" });
  });

  it("colours by a column a later step renamed away: one notice, the default colouring, no repeats", async () => {
    const canvas = page.locator("tessera-spatial-canvas");
    await editEncoding("tessera-spatial-canvas", {
      color_by: "obs:cell_type",
      point_size: 6,
      show_minimap: false,
    });
    await page.locator('tessera-spatial-canvas[data-color-by="obs:cell_type"]').waitFor({ timeout: 30_000 });
    await job({
      namespace: "custom",
      function: "rename_obs_column",
      params: { old_name: "cell_type", new_name: "kind" },
    });
    await page.locator('tessera-spatial-canvas[data-missing="obs:cell_type"]').waitFor({ timeout: 30_000 });
    // Many redraws (camera moves, a data event) do not repeat the notice.
    const box = (await canvas.boundingBox())!;
    await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
    for (let i = 0; i < 6; i++) {
      await page.mouse.wheel(0, i % 2 ? 120 : -120);
      await page.waitForTimeout(150);
    }
    await job({ namespace: "custom", function: "noop", params: {} });
    await page.waitForTimeout(1500);
    const notices = page.locator("[data-testid=toast-error]", { hasText: "cell_type" });
    expect(await notices.count()).toBe(1);
    expect(await notices.textContent()).toContain("default colouring");
    // The legend names the unresolved field; every cell is the neutral grey.
    expect(await canvas.locator(".legend").textContent()).toContain("not in the data");
    await expect
      .poll(
        () =>
          canvas.evaluate(
            (el) => (el as HTMLElement).dataset.drawnKey === (el as HTMLElement).dataset.colorKey,
          ),
        { timeout: 30_000 },
      )
      .toBe(true);
    await page.waitForTimeout(300);
    const px = await shoot(canvas, join(SHOTS, "fixes-01-missing-colour.png"));
    expect(fractionNear(px, [[150, 150, 150]], 8)).toBeGreaterThan(0.02);
    await shoot(page.locator("tessera-app"), join(SHOTS, "fixes-02-missing-colour-app.png"));
    await notices.locator("button").click();
    // Colouring by the new name works again.
    await editEncoding("tessera-spatial-canvas", { color_by: "obs:kind" });
    await page.locator('tessera-spatial-canvas[data-color-by="obs:kind"]:not([data-missing])').waitFor({
      timeout: 30_000,
    });
    // A change of the drawn column (STALE, client.md 5.7): the old colours stay, dimmed with an
    // "updating" badge, until the new version is read — never the "Loading colors…" of a first read.
    await page.locator('tessera-spatial-canvas[data-state="FRESH"]').waitFor({ timeout: 30_000 });
    await canvas.evaluate((el) => {
      const seen: string[] = [];
      (window as unknown as { seen: string[] }).seen = seen;
      new MutationObserver(() => seen.push((el as HTMLElement).dataset.state ?? "")).observe(el, {
        attributes: true,
        attributeFilter: ["data-state"],
      });
    });
    const r = await ts.api(`/api/sessions/${sid}/annotate`, {
      method: "POST",
      json: { region_set: "kind", category: "Tumor", cell_indices: [0, 1, 2] },
      clientId,
    });
    expect(r.status, await r.clone().text()).toBe(200);
    await expect
      .poll(() => page.evaluate(() => (window as unknown as { seen: string[] }).seen.join(",")), {
        timeout: 30_000,
      })
      .toMatch(/STALE.*FRESH/);
    expect(await page.evaluate(() => (window as unknown as { seen: string[] }).seen)).not.toContain(
      "LOADING",
    );
    // The 3×5 swatch grid colours the category whose row was clicked (client.md 5.5).
    await canvas.getByRole("button", { name: "Show controls" }).click();
    await canvas.getByRole("button", { name: "Cells" }).click();
    await canvas.locator('.row.cat[data-category="Tumor"] span').click();
    await canvas.locator('[data-swatch="#17becf"]').click();
    await expect
      .poll(
        async () =>
          (
            (await state()).app_state.displays[0]!.encoding.category_colors as Record<
              string,
              Record<string, string>
            >
          )?.["obs:kind"]?.Tumor,
        { timeout: 30_000 },
      )
      .toBe("#17becf");
    await canvas.getByRole("button", { name: "Minimize controls" }).click();
  });

  it("shows a plot redraw's live log, then its full log", async () => {
    await job({ namespace: "pl", function: "test_scatter", params: { delay_ms: 3000, max_points: 50 } });
    const plot = (await state()).app_state.plots.at(-1)!;
    expect(plot.status).toBe("drawn");
    await page.locator("[data-sidebar-tab=plots]").click();
    const row = page.locator(`[data-testid=plot-history] .hrow[data-entry="${plot.id}"]`);
    await row.click();
    const det = page.locator("[data-testid=history-detail]");
    await det.locator("[data-action=redraw]").click();
    await expect
      .poll(() => row.locator(".hbadge").getAttribute("data-status"), { timeout: 30_000 })
      .toBe("running");
    await det.locator("[data-testid=live-log]").waitFor({ timeout: 30_000 });
    await expect
      .poll(() => det.locator("[data-testid=detail-log]").textContent(), { timeout: 30_000 })
      .toContain("drawing test_scatter");
    await shoot(page.locator("tessera-app"), join(SHOTS, "fixes-03-plot-live-log.png"));
    await expect
      .poll(async () => (await state()).app_state.plots.find((p) => p.id === plot.id)?.status, {
        timeout: 60_000,
      })
      .toBe("drawn");
    await det.locator("[data-testid=live-log]").waitFor({ state: "detached", timeout: 30_000 });
    await expect
      .poll(() => det.locator("[data-testid=detail-log]").textContent(), { timeout: 30_000 })
      .toContain("drawing test_scatter 10/10");
    await page.keyboard.press("Escape");
    await page.locator("[data-sidebar-tab=compute]").click();
  });

  it("refits the embedding camera when the obsm key changes", async () => {
    await job({ namespace: "sc.pp", function: "pca", params: { n_comps: 5 } });
    await job({ namespace: "sc.pp", function: "pca", params: { n_comps: 3, key_added: "X_pca_b" } });
    await page.locator("button[data-view=embeddings]").click();
    const canvas = page.locator("tessera-embedding-canvas");
    await page.locator('tessera-embedding-canvas[data-ready="1"]').waitFor({ timeout: 60_000 });
    /** Fraction of the cells projected inside the canvas, and their projected span / the canvas's. */
    const framing = () =>
      canvas.evaluate((el) => {
        const c = el as unknown as {
          positions: Float32Array;
          n: number;
          project(p: number[]): [number, number] | null;
          clientWidth: number;
          clientHeight: number;
        };
        let inside = 0;
        let [x0, x1, y0, y1] = [Infinity, -Infinity, Infinity, -Infinity];
        for (let i = 0; i < c.n; i++) {
          const p = c.project([c.positions[i * 2]!, c.positions[i * 2 + 1]!]);
          if (!p) continue;
          if (p[0] >= 0 && p[0] <= c.clientWidth && p[1] >= 0 && p[1] <= c.clientHeight) inside++;
          x0 = Math.min(x0, p[0]);
          x1 = Math.max(x1, p[0]);
          y0 = Math.min(y0, p[1]);
          y1 = Math.max(y1, p[1]);
        }
        return {
          inside: inside / c.n,
          span: Math.max((x1 - x0) / c.clientWidth, (y1 - y0) / c.clientHeight),
        };
      });
    // Zoom far into a corner: most cells leave the view.
    const box = (await canvas.boundingBox())!;
    await page.mouse.move(box.x + 60, box.y + box.height - 60);
    for (let i = 0; i < 12; i++) {
      await page.mouse.wheel(0, -400);
      await page.waitForTimeout(60);
    }
    await expect.poll(async () => (await framing()).inside, { timeout: 15_000 }).toBeLessThan(0.5);
    await canvas.getByRole("button", { name: "Show controls" }).click();
    await canvas.locator("[data-testid=obsm-key]").selectOption("X_pca_b");
    await expect
      .poll(
        async () => {
          const enc = (await state()).app_state.displays.find((x) => x.type === "embedding_canvas")?.encoding;
          return enc?.obsm_key;
        },
        { timeout: 30_000 },
      )
      .toBe("X_pca_b");
    await expect.poll(async () => (await framing()).inside, { timeout: 30_000 }).toBe(1);
    const f = await framing();
    // Framed with about 10% margin: the cells span most of the canvas.
    expect(f.span).toBeGreaterThan(0.6);
    expect(f.span).toBeLessThanOrEqual(1);
    await shoot(page.locator("tessera-app"), join(SHOTS, "fixes-04-embedding-refit.png"));
  });
});
