/**
 * The web app in a real browser (Debian chromium, SwiftShader WebGL) against the real server on
 * 127.0.0.1 serving the built app at `/`: the app loads, a session opens, cells draw, colouring by a
 * category and by a gene changes pixel colours as expected, the embedding canvas draws, a job's
 * events refresh only the field that changed, an image tile shows; then the serverless viewer opens
 * a checkpoint from a plain static server, and embed mode answers `ready` and applies
 * `apply-display`. Screenshots of each view are kept in a temp folder (printed).
 */
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildWebApp } from "../../scripts/build-app.js";
import { main } from "../../src/adapters/cli/main.js";
import {
  CATEGORICAL_PALETTE,
  categoryColors,
  parseHexColor,
  VIRIDIS_LUT,
} from "../../src/sdk/display/encoding.js";
import { startTestServer, type TestServer } from "../adapters/http/harness.js";
import {
  fractionNear,
  fractionNot,
  HAVE_CHROMIUM,
  launchChromium,
  type Pixels,
  shoot,
  staticServer,
} from "./browser.js";

const BG = [13, 14, 17];
const d = HAVE_CHROMIUM ? describe : describe.skip;
if (!HAVE_CHROMIUM)
  console.warn(
    "skipping the web app's browser tests: /usr/bin/chromium is missing (apt-get install chromium)",
  );

let appDir: string;
let shots: string;
let ts: TestServer;
let browser: Browser;
let page: Page;
let sid: string;
const dataRequests: string[] = [];

async function put(display: Record<string, unknown>): Promise<void> {
  const r = await ts.api(`/api/sessions/${sid}/displays/${display.id}`, { method: "PUT", json: display });
  expect(r.status, await r.clone().text()).toBe(200);
}

const SPATIAL = {
  id: "test-spatial",
  type: "spatial_canvas",
  encoding: { coords: "obsm:spatial", color_by: null, opacity: 1, show_minimap: false, point_size: 6 },
  viewport: { target: [], zoom: 0 },
};

beforeAll(async () => {
  if (!HAVE_CHROMIUM) return;
  shots = await mkdtemp(join(tmpdir(), "tessera-app-shots-"));
  appDir = join(shots, "app");
  await buildWebApp({ outdir: appDir });
  ts = await startTestServer({
    demo: { nCells: 1500, nGenes: 40, imageSize: 512, nTranscripts: 200 },
    config: { staticDir: appDir },
  });
  sid = await ts.openDemo();
  await put(SPATIAL);
  browser = await launchChromium();
  page = await browser.newPage({ viewport: { width: 1100, height: 760 } });
  page.on("request", (r) => {
    const u = new URL(r.url());
    if (u.pathname.includes("/data/")) dataRequests.push(decodeURIComponent(u.pathname.split("/data/")[1]!));
  });
  page.on("pageerror", (e) => console.error("page error:", e.message));
  console.log(`screenshots: ${shots}`);
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await ts?.close();
});

async function canvasPixels(name: string, sel = "tessera-spatial-canvas"): Promise<Pixels> {
  // Wait for a frame drawn with the current colours (the canvas records what its last frame showed).
  const loc = page.locator(sel);
  await expect
    .poll(
      () =>
        loc.evaluate((el) => (el as HTMLElement).dataset.drawnKey === (el as HTMLElement).dataset.colorKey),
      {
        timeout: 30_000,
      },
    )
    .toBe(true);
  await page.waitForTimeout(300);
  return shoot(loc, join(shots, `${name}.png`));
}

function blended(hex: string): number[] {
  return parseHexColor(hex)!;
}

d("the web app (live)", () => {
  it("serves the app at /, shows the session and draws the cells", async () => {
    const r = await fetch(`${ts.url}/`);
    expect(r.status).toBe(200);
    expect(await r.text()).toContain("<tessera-app>");
    await page.goto(`${ts.url}/`);
    await page.locator('tessera-spatial-canvas[data-ready="1"]').waitFor({ timeout: 60_000 });
    await expect.poll(() => page.locator("[data-testid=session-switcher]").textContent()).toContain("demo");
    const px = await canvasPixels("01-spatial-neutral");
    expect(fractionNot(px, BG)).toBeGreaterThan(0.05);
    // No colour field: every cell is the neutral grey.
    expect(fractionNear(px, [[150, 150, 150]], 8)).toBeGreaterThan(0.05);
    await shoot(page.locator("tessera-app"), join(shots, "00-app.png"));
  });

  it("colours by a category through the controls: the palette colours appear", async () => {
    const canvas = page.locator("tessera-spatial-canvas");
    await canvas.getByRole("button", { name: "Show controls" }).click();
    await canvas.getByRole("button", { name: "Cells" }).click();
    await canvas.locator("[data-testid=color-by]").selectOption("obs:cell_type");
    await page.locator('tessera-spatial-canvas[data-color-by="obs:cell_type"]').waitFor();
    const values = (await (await ts.api(`/api/sessions/${sid}/obs/cell_type/values`)).json()) as {
      values: { value: string }[];
    };
    const cats = values.values.map((v) => v.value);
    const colors = categoryColors(cats)!.map(blended);
    const px = await canvasPixels("02-spatial-cell-type");
    expect(fractionNear(px, colors, 6)).toBeGreaterThan(0.05);
    expect(fractionNear(px, [[150, 150, 150]], 4)).toBeLessThan(0.01);
    // The display was persisted (debounced PUT) with the colour field.
    await expect
      .poll(async () => {
        const st = (await (await ts.api(`/api/sessions/${sid}`)).json()) as {
          app_state: { displays: { id: string; encoding: { color_by: string } }[] };
        };
        return st.app_state.displays.find((x) => x.id === "test-spatial")?.encoding.color_by;
      })
      .toBe("obs:cell_type");
    void CATEGORICAL_PALETTE;
    await canvas.getByRole("button", { name: "Minimize controls" }).click();
    await page.waitForTimeout(300);
    await shoot(page.locator("tessera-app"), join(shots, "02b-app-cell-type.png"));
    await canvas.getByRole("button", { name: "Show controls" }).click();
    await canvas.getByRole("button", { name: "Cells" }).click();
  });

  it("colours by a gene found by the server's search: viridis colours appear", async () => {
    const canvas = page.locator("tessera-spatial-canvas");
    const names = (await (await ts.api(`/api/sessions/${sid}/var-names?limit=5`)).json()) as {
      names: string[];
    };
    const gene = names.names[0]!;
    await canvas.locator("[data-testid=gene-search]").fill(gene.slice(0, 3));
    await canvas.locator(".genes li", { hasText: gene }).first().click();
    await page.locator(`tessera-spatial-canvas[data-color-by="X:${gene}"]`).waitFor();
    const lut: number[][] = [];
    for (let i = 0; i < 256; i++)
      lut.push([VIRIDIS_LUT[i * 3]!, VIRIDIS_LUT[i * 3 + 1]!, VIRIDIS_LUT[i * 3 + 2]!]);
    const px = await canvasPixels("03-spatial-gene");
    expect(fractionNear(px, lut, 4)).toBeGreaterThan(0.05);
    const cats = categoryColors(["a", "b", "c", "d", "e", "f"])!.slice(0, 3).map(blended);
    expect(fractionNear(px, cats, 3)).toBeLessThan(0.01);
  });

  it("after a job, the event stream refreshes only the field that changed", async () => {
    const canvas = page.locator("tessera-spatial-canvas");
    await canvas.locator("[data-testid=color-by]").selectOption("obs:cell_type");
    await page.locator('tessera-spatial-canvas[data-color-by="obs:cell_type"]').waitFor();
    await page.waitForTimeout(800);
    dataRequests.length = 0;
    const clientId = await page.evaluate(() => localStorage.getItem("tessera-client-id"));
    const r = await ts.api(`/api/sessions/${sid}/annotate`, {
      method: "POST",
      json: {
        cell_indices: Array.from({ length: 200 }, (_, i) => i),
        region_set: "region_a",
        category: "A",
        color: "#ff00ff",
      },
      clientId: clientId!,
    });
    expect(r.status, await r.clone().text()).toBe(200);
    await page.locator('tessera-spatial-canvas[data-color-by="obs:region_a"]').waitFor({ timeout: 30_000 });
    const px = await canvasPixels("04-spatial-annotated");
    expect(fractionNear(px, [[255, 0, 255]], 6)).toBeGreaterThan(0.001);
    expect(dataRequests).toContain("obs:region_a");
    expect(dataRequests).not.toContain("obsm:spatial");
    expect(dataRequests).not.toContain("obs:cell_type");
  });

  it("draws an image tile from the raw raster store", async () => {
    await page.evaluate(() => {
      const c = document
        .querySelector("tessera-app")!
        .shadowRoot!.querySelector("tessera-spatial-canvas") as unknown as {
        display: { encoding: Record<string, unknown> };
        editEncoding(p: Record<string, unknown>): void;
      };
      c.editEncoding({ image_layer: "morphology", show_points: false, show_image: true });
    });
    await expect
      .poll(() => page.locator("tessera-spatial-canvas").getAttribute("data-image-tiles"), {
        timeout: 30_000,
      })
      .not.toBeNull();
    const px = await canvasPixels("05-spatial-image");
    expect(fractionNot(px, BG, 20)).toBeGreaterThan(0.1);
    await page.evaluate(() => {
      const c = document
        .querySelector("tessera-app")!
        .shadowRoot!.querySelector("tessera-spatial-canvas") as unknown as {
        editEncoding(p: Record<string, unknown>): void;
      };
      c.editEncoding({ image_layer: null, show_points: true });
    });
  });

  it("draws the cell boundaries from GeoArrow (the element is under the polygon cap)", async () => {
    await page.evaluate(() => {
      const c = document
        .querySelector("tessera-app")!
        .shadowRoot!.querySelector("tessera-spatial-canvas") as unknown as {
        editEncoding(p: Record<string, unknown>): void;
      };
      c.editEncoding({ render_mode: "points+shapes", boundary_style: "outline", show_points: false });
    });
    await expect
      .poll(() => page.locator("tessera-spatial-canvas").getAttribute("data-boundaries"), { timeout: 30_000 })
      .not.toBe("0");
    expect(dataRequests.length).toBeGreaterThan(0);
    const px = await canvasPixels("05b-spatial-boundaries");
    expect(fractionNot(px, BG)).toBeGreaterThan(0.02);
    await page.evaluate(() => {
      const c = document
        .querySelector("tessera-app")!
        .shadowRoot!.querySelector("tessera-spatial-canvas") as unknown as {
        editEncoding(p: Record<string, unknown>): void;
      };
      c.editEncoding({ render_mode: "points", show_points: true });
    });
  });

  it("the embedding canvas draws once an embedding exists", async () => {
    const clientId = await page.evaluate(() => localStorage.getItem("tessera-client-id"));
    const r = await ts.api(`/api/sessions/${sid}/jobs`, {
      method: "POST",
      json: { namespace: "sc.pp", function: "pca", params: { n_comps: 5 } },
      clientId: clientId!,
    });
    expect(r.status, await r.clone().text()).toBe(200);
    const { job_id } = (await r.json()) as { job_id: string };
    expect((await ts.waitJob(sid, job_id)).status).toBe("completed");
    await page.locator("button[data-view=embeddings]").click();
    await page.locator('tessera-embedding-canvas[data-ready="1"]').waitFor({ timeout: 30_000 });
    const px = await canvasPixels("06-embedding", "tessera-embedding-canvas");
    expect(fractionNot(px, BG)).toBeGreaterThan(0.01);
    await shoot(page.locator("tessera-app"), join(shots, "07-app-embedding.png"));
  });
});

d("the web app (live): new session", () => {
  it("opens a dataset of the data folder from the New session dialog, follows its load and draws it", async () => {
    const before = ts.server.service.sessions().length;
    await page.locator("header").getByRole("button", { name: "New session" }).click();
    const entry = page.locator("[data-testid=datasets] div", { hasText: basename(ts.demo) });
    await entry.waitFor();
    await entry.click();
    await expect.poll(() => ts.server.service.sessions().length, { timeout: 30_000 }).toBe(before + 1);
    const fresh = ts.server.service.sessions().at(-1)!;
    await expect.poll(() => new URL(page.url()).searchParams.get("session")).toBe(fresh.id);
    await page.locator("button[data-view=spatial]").click();
    await page.locator('tessera-spatial-canvas[data-ready="1"]').waitFor({ timeout: 60_000 });
    await expect.poll(() => page.locator("[data-testid=session-switcher]").textContent()).toContain("ready");
    const px = await canvasPixels("10-new-session");
    expect(fractionNot(px, BG)).toBeGreaterThan(0.02);
  });
});

d("the serverless viewer and embed mode", () => {
  let site: Awaited<ReturnType<typeof staticServer>>;
  let root: string;
  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), "tessera-site-"));
    // The deployment is what `tessera viewer export` writes.
    const prev = process.env.TESSERA_STATIC_DIR;
    process.env.TESSERA_STATIC_DIR = appDir;
    const code = await main(["viewer", "export", root, ts.demo]);
    if (prev === undefined) delete process.env.TESSERA_STATIC_DIR;
    else process.env.TESSERA_STATIC_DIR = prev;
    expect(code).toBe(0);
    const index = JSON.parse(await readFile(join(root, "index.json"), "utf8")) as {
      checkpoints: { path: string }[];
    };
    expect(index.checkpoints).toEqual([{ path: basename(ts.demo), label: "demo" }]);
    const { writeFile } = await import("node:fs/promises");
    await writeFile(
      join(root, "host.html"),
      `<!doctype html><body style="margin:0"><iframe id="f" src="index.html?checkpoint=${basename(ts.demo)}&embed=1" style="width:900px;height:640px;border:0"></iframe>
<script>window.msgs=[];addEventListener("message",(e)=>window.msgs.push(e.data));</script></body>`,
    );
    site = await staticServer(root);
  });
  afterAll(async () => {
    await site?.close();
    if (root) await rm(root, { recursive: true, force: true });
  });

  it("opens the exported checkpoint from a plain static server over Range, read-only", async () => {
    const p = await browser.newPage({ viewport: { width: 1000, height: 700 } });
    try {
      p.on("pageerror", (e) => console.log("pageerror:", e.message));
      // No ?checkpoint: no API answers, so the app reads index.json; one entry opens directly.
      await p.goto(`${site.base}/`);
      await p.locator('tessera-spatial-canvas[data-ready="1"]').waitFor({ timeout: 60_000 });
      await p.waitForTimeout(400);
      const px = await shoot(p.locator("tessera-spatial-canvas"), join(shots, "08-serverless.png"));
      expect(fractionNot(px, BG)).toBeGreaterThan(0.02);
      expect(await p.locator("header").textContent()).toContain("read-only");
      expect(new URL(p.url()).searchParams.get("checkpoint")).toContain(basename(ts.demo));
      const zip = site.log.filter((x) => x.url.endsWith(".zip"));
      expect(zip.length).toBeGreaterThan(0);
      expect(zip.every((x) => x.status === 206)).toBe(true);
    } finally {
      await p.close();
    }
  });

  it("draws an image tile and the cell boundaries read from the checkpoint over Range", async () => {
    const p = await browser.newPage({ viewport: { width: 1000, height: 700 } });
    try {
      p.on("pageerror", (e) => console.log("pageerror:", e.message));
      await p.goto(`${site.base}/index.html?checkpoint=${basename(ts.demo)}`);
      const canvas = p.locator('tessera-spatial-canvas[data-ready="1"]');
      await canvas.waitFor({ timeout: 60_000 });
      const edit = (enc: Record<string, unknown>) =>
        p.evaluate((e) => {
          const c = document
            .querySelector("tessera-app")!
            .shadowRoot!.querySelector("tessera-spatial-canvas") as unknown as {
            editEncoding(p: Record<string, unknown>): void;
          };
          c.editEncoding(e);
        }, enc);
      const before = site.log.length;
      await edit({ image_layer: "morphology", show_points: false, show_image: true, render_mode: "points" });
      await expect
        .poll(() => p.locator("tessera-spatial-canvas").getAttribute("data-image-tiles"), { timeout: 60_000 })
        .not.toBeNull();
      await p.waitForTimeout(800);
      const img = await shoot(p.locator("tessera-spatial-canvas"), join(shots, "11-serverless-image.png"));
      expect(fractionNot(img, BG, 20)).toBeGreaterThan(0.1);
      // The image's chunks came out of the zip in ranges, not as a whole download.
      const reads = site.log.slice(before).filter((x) => x.url.endsWith(".zip"));
      expect(reads.length).toBeGreaterThan(0);
      expect(reads.every((x) => x.status === 206)).toBe(true);

      await edit({ show_image: false, render_mode: "points+shapes", boundary_style: "outline" });
      await expect
        .poll(
          async () => (await p.locator("tessera-spatial-canvas").getAttribute("data-boundaries")) ?? "0",
          {
            timeout: 60_000,
          },
        )
        .not.toBe("0");
      await p.waitForTimeout(800);
      const lines = await shoot(
        p.locator("tessera-spatial-canvas"),
        join(shots, "12-serverless-boundaries.png"),
      );
      // Only the outlines are drawn (no points, no image).
      expect(fractionNot(lines, BG)).toBeGreaterThan(0.02);
      expect(fractionNot(lines, BG)).toBeLessThan(fractionNot(img, BG, 20));
    } finally {
      await p.close();
    }
  });

  it("embed mode answers ready with the inventory and applies apply-display", async () => {
    const p = await browser.newPage({ viewport: { width: 920, height: 660 } });
    try {
      await p.goto(`${site.base}/host.html`);
      await p.waitForFunction(
        () => (window as unknown as { msgs: { type: string }[] }).msgs.some((m) => m.type === "ready"),
        null,
        {
          timeout: 60_000,
        },
      );
      const ready = (await p.evaluate(() =>
        (window as unknown as { msgs: { type: string }[] }).msgs.find((m) => m.type === "ready"),
      )) as unknown as {
        source: string;
        version: number;
        inventory: {
          displays: unknown[];
          obsColumns: { name: string }[];
          images: { element: string; channelNames: string[]; isRgb: boolean; contrastRange: number[][] }[];
        };
      };
      expect(ready.source).toBe("tessera-embed");
      expect(ready.version).toBe(1);
      expect(ready.inventory.displays.length).toBeGreaterThan(0);
      expect(ready.inventory.obsColumns.map((c) => c.name)).toContain("cell_type");
      const morph = ready.inventory.images.find((i) => i.element === "morphology");
      expect(morph?.channelNames).toHaveLength(4);
      expect(morph?.isRgb).toBe(false);
      expect(morph?.contrastRange).toHaveLength(4);
      const frame = p.frameLocator("#f");
      await frame.locator('tessera-spatial-canvas[data-ready="1"]').waitFor({ timeout: 60_000 });
      await p.evaluate(() => {
        const f = document.getElementById("f") as HTMLIFrameElement;
        f.contentWindow!.postMessage(
          {
            source: "tessera-host",
            version: 1,
            type: "apply-display",
            display: {
              kind: "spatial_canvas",
              encoding: { coords: "obsm:spatial", color_by: "obs:cell_type", opacity: 1, point_size: 6 },
              viewport: null,
            },
          },
          "*",
        );
        f.contentWindow!.postMessage(
          { source: "tessera-host", version: 1, type: "search-vars", requestId: "q1", query: "a", limit: 3 },
          "*",
        );
        f.contentWindow!.postMessage({ source: "other", version: 1, type: "apply-display" }, "*");
      });
      await frame
        .locator('tessera-spatial-canvas[data-color-by="obs:cell_type"]')
        .waitFor({ timeout: 30_000 });
      await p.waitForTimeout(600);
      const px = await shoot(p.locator("#f"), join(shots, "09-embed.png"));
      expect(fractionNot(px, BG)).toBeGreaterThan(0.02);
      const msgs = (await p.evaluate(() => (window as unknown as { msgs: unknown[] }).msgs)) as {
        type: string;
        requestId?: string;
        names?: string[];
      }[];
      const res = msgs.find((m) => m.type === "search-vars-result");
      expect(res?.requestId).toBe("q1");
      expect(res?.names?.length).toBeGreaterThan(0);
      // An applied display is not echoed back as display-changed.
      expect(msgs.filter((m) => m.type === "display-changed")).toEqual([]);
      // Embed mode shows no header.
      expect(await frame.locator("header").count()).toBe(0);
    } finally {
      await p.close();
    }
  });
});
