/**
 * Shape annotation styles (client.md 10.2–10.3) in a real browser (Debian chromium, SwiftShader WebGL)
 * against the real server on 127.0.0.1 with the demo dataset: every kind drawn with its tool and given
 * non-default style fields in the editor (dash, arrow heads and size, fill colour and alpha, stroke and
 * fill z) is stored with them (read back from the API) and drawn with them after a reload; the pixels
 * show a fill's blended colour over the cells (z ≥ 0) and beneath them (z < 0), arrow heads beyond a
 * line's width, dash gaps; a bad style value is refused with the field's message; the serverless
 * viewer draws the annotations of a saved checkpoint. Screenshots go to `test-artifacts/ui/`.
 */
import { mkdir, mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { tableFromIPC } from "apache-arrow";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildWebApp } from "../../scripts/build-app.js";
import { startTestServer, type TestServer } from "../adapters/http/harness.js";
import { HAVE_CHROMIUM, launchChromium, type Pixels, publishCheckpoint, shoot } from "./browser.js";

const d = HAVE_CHROMIUM ? describe : describe.skip;
const SHOTS = join(process.cwd(), "test-artifacts", "ui");

let ts: TestServer;
let browser: Browser;
let page: Page;
let appDir: string;
let sid: string;

/** The dark canvas background (`#0d0e11`). */
const BG = [13, 14, 17];

const display = (showPoints: boolean, pointSize = 6) => ({
  id: "styles-spatial",
  type: "spatial_canvas",
  encoding: {
    coords: "obsm:spatial",
    color_by: "obs:cell_type",
    opacity: 1,
    show_minimap: false,
    point_size: pointSize,
    show_points: showPoints,
  },
  viewport: { target: [], zoom: 0 },
});

interface ApiShape {
  id: string;
  kind: string;
  points: number[][];
  color: string;
  fill: string | null;
  stroke_width: number;
  dash: string;
  arrow_start: boolean;
  arrow_end: boolean;
  arrow_size: number;
  stroke_z: number;
  fill_alpha: number;
  fill_z: number;
  [k: string]: unknown;
}

async function shapes(id = sid): Promise<ApiShape[]> {
  return ((await (await ts.api(`/api/sessions/${id}/shape-annotations`)).json()) as { shapes: ApiShape[] })
    .shapes;
}

/** The browser's client id (it holds the edit lock of the session it opened). */
let clientId: string | undefined;

/** Create a shape through the API (as the browser's client) and wait for its job; its id. */
async function addShape(id: string, body: Record<string, unknown>): Promise<string> {
  const r = await ts.api(`/api/sessions/${id}/shape-annotations`, { method: "POST", json: body, clientId });
  expect(r.status, await r.clone().text()).toBe(200);
  const { job_id, shape_id } = (await r.json()) as { job_id: string; shape_id: string };
  expect((await ts.waitJob(id, job_id)).status).toBe("completed");
  return shape_id;
}

async function putShape(id: string, shape: ApiShape): Promise<void> {
  const r = await ts.api(`/api/sessions/${id}/shape-annotations/${shape.id}`, {
    method: "PUT",
    json: shape,
    clientId,
  });
  expect(r.status, await r.clone().text()).toBe(200);
  const { job_id } = (await r.json()) as { job_id: string };
  expect((await ts.waitJob(id, job_id)).status).toBe("completed");
}

/** The app's draw controller, read in the page `p`. */
function controller<T>(fn: string, p = page): Promise<T> {
  return p.evaluate(`(() => { const c = document.querySelector("tessera-app").draw; return (${fn})(c); })()`);
}

/** Page coordinates of fractions of the spatial canvas's box. */
async function at(fx: number, fy: number): Promise<[number, number]> {
  const b = (await page.locator("tessera-spatial-canvas").boundingBox())!;
  return [b.x + b.width * fx, b.y + b.height * fy];
}

async function dragOn(f0: [number, number], f1: [number, number]): Promise<void> {
  const [x0, y0] = await at(...f0);
  const [x1, y1] = await at(...f1);
  await page.mouse.move(x0, y0);
  await page.mouse.down();
  await page.mouse.move((x0 + x1) / 2, (y0 + y1) / 2, { steps: 4 });
  await page.mouse.move(x1, y1, { steps: 4 });
  await page.mouse.up();
}

/** Screen position (canvas-local CSS px) of a world point on the spatial canvas of page `p`. */
function proj(pt: number[], p = page): Promise<number[]> {
  return controller<number[]>(`(c) => c.canvas("spatial").project(${JSON.stringify(pt)})`, p);
}

/** Screenshot a canvas-local box of the spatial canvas of page `p` and decode it. */
async function grab(x: number, y: number, w: number, h: number, name: string, p = page): Promise<Pixels> {
  const b = (await p.locator("tessera-spatial-canvas").boundingBox())!;
  const { default: sharp } = await import("sharp");
  const png = await p.screenshot({
    path: join(SHOTS, `${name}.png`),
    clip: { x: b.x + x, y: b.y + y, width: w, height: h },
  });
  const { data, info } = await sharp(png).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  return { width: info.width, height: info.height, data: new Uint8Array(data) };
}

const px = (p: Pixels, i: number) => [p.data[3 * i]!, p.data[3 * i + 1]!, p.data[3 * i + 2]!];
const near = (a: number[], b: number[], tol: number) => a.every((v, k) => Math.abs(v - b[k]!) <= tol);
const blend = (under: number[], over: number[], alpha: number) =>
  under.map((v, k) => v * (1 - alpha) + over[k]! * alpha);

/** How many pixels of `p` are within `tol` of `color`. */
function count(p: Pixels, color: number[], tol = 40): number {
  let n = 0;
  for (let i = 0; i < p.width * p.height; i++) if (near(px(p, i), color, tol)) n++;
  return n;
}

/** Wait until the overlay has drawn `n` shapes and two animation frames have passed. */
async function settled(n: number, p = page): Promise<void> {
  await expect
    .poll(() => p.locator("[data-testid=overlay-spatial]").getAttribute("data-shapes"), { timeout: 30_000 })
    .toBe(String(n));
  await p.evaluate(
    () => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(() => setTimeout(r, 150)))),
  );
}

beforeAll(async () => {
  if (!HAVE_CHROMIUM) return;
  await mkdir(SHOTS, { recursive: true });
  appDir = join(await mkdtemp(join(tmpdir(), "tessera-styles-")), "app");
  await buildWebApp({ outdir: appDir });
  ts = await startTestServer({
    demo: { nCells: 900, nGenes: 30, imageSize: 256, nTranscripts: 50 },
    config: { staticDir: appDir },
    plugins: ["tessera", "scanpy"],
  });
  sid = await ts.openDemo();
  const r = await ts.api(`/api/sessions/${sid}/displays/styles-spatial`, {
    method: "PUT",
    json: display(true),
  });
  expect(r.status, await r.clone().text()).toBe(200);
  browser = await launchChromium();
  page = await browser.newPage({ viewport: { width: 1280, height: 820 } });
  page.on("pageerror", (e) => console.error("page error:", e.message));
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await ts?.close();
});

d("shape annotation styles", () => {
  it("gives each kind non-default style fields in the editor; they are stored and drawn after a reload", async () => {
    await page.goto(`${ts.url}/?session=${sid}`);
    await page.locator('tessera-spatial-canvas[data-ready="1"]').waitFor({ timeout: 90_000 });
    clientId = (await page.evaluate(() => localStorage.getItem("tessera-client-id"))) ?? undefined;
    expect(clientId).toBeTruthy();
    await page.locator("[data-sidebar-tab=annotations]").click();
    const tool = (t: string) => page.locator(`[data-tool=${t}]`).click();
    const made = async (n: number) => {
      await expect.poll(async () => (await shapes()).length, { timeout: 30_000 }).toBe(n);
      await expect.poll(() => controller<string>("(c) => c.tool"), { timeout: 20_000 }).toBe("select");
    };
    const z = async (testid: string, v: number) => {
      await page.locator(`[data-testid=${testid}]`).fill(String(v));
      await page.locator(`[data-testid=${testid}]`).press("Tab");
    };
    const stored = async (kind: string, want: Record<string, unknown>) =>
      expect
        .poll(async () => (await shapes()).find((s) => s.kind === kind), { timeout: 20_000 })
        .toMatchObject(want);

    // A line: dashed, heads at both ends (it becomes an arrow), bigger heads, magenta.
    await tool("line");
    await dragOn([0.12, 0.12], [0.3, 0.14]);
    await made(1);
    await page.locator("[data-testid=shape-dash]").selectOption("dashed");
    await page.locator("[data-testid=shape-arrow-start]").check();
    await page.locator("[data-testid=shape-arrow]").check();
    await page.locator("[data-testid=shape-arrow-size]").fill("24");
    await page.locator("[data-testid=shape-color]").fill("#ff00ff");
    await stored("arrow", {
      dash: "dashed",
      arrow_start: true,
      arrow_end: true,
      arrow_size: 24,
      color: "#ff00ff",
    });
    // An arrow: its head moved to the start, dotted, its stroke beneath the cells.
    await tool("arrow");
    await dragOn([0.12, 0.25], [0.3, 0.28]);
    await made(2);
    await page.locator("[data-testid=shape-arrow]").uncheck();
    await page.locator("[data-testid=shape-arrow-start]").check();
    await page.locator("[data-testid=shape-dash]").selectOption("dotted");
    await z("shape-stroke-z", -1);
    await expect
      .poll(async () => (await shapes()).filter((s) => s.dash === "dotted")[0], { timeout: 20_000 })
      .toMatchObject({ kind: "arrow", arrow_start: true, arrow_end: false, stroke_z: -1 });
    // A box: filled red at alpha 0.5 beneath the cells, dotted outline.
    await tool("box");
    await dragOn([0.4, 0.12], [0.55, 0.3]);
    await made(3);
    await page.locator("[data-testid=shape-fill]").check();
    await page.locator("[data-testid=shape-fill-color]").fill("#ff0000");
    await page.locator("[data-testid=shape-fill-alpha]").fill("0.5");
    await z("shape-fill-z", -2);
    await page.locator("[data-testid=shape-dash]").selectOption("dotted");
    await stored("box", { fill: "#ff0000", fill_alpha: 0.5, fill_z: -2, dash: "dotted" });
    // An ellipse: filled at alpha 0.8 on top of everything, dashed.
    await tool("ellipse");
    await dragOn([0.62, 0.12], [0.8, 0.3]);
    await made(4);
    await page.locator("[data-testid=shape-fill]").check();
    await page.locator("[data-testid=shape-fill-alpha]").fill("0.8");
    await z("shape-fill-z", 5);
    await z("shape-stroke-z", 6);
    await page.locator("[data-testid=shape-dash]").selectOption("dashed");
    await stored("ellipse", { fill: "#3388ff", fill_alpha: 0.8, fill_z: 5, stroke_z: 6, dash: "dashed" });
    // A polygon: filled, its stroke beneath the cells.
    await tool("polygon");
    for (const [fx, fy] of [
      [0.2, 0.6],
      [0.32, 0.58],
      [0.34, 0.75],
    ] as const) {
      const [x, y] = await at(fx, fy);
      await page.mouse.click(x, y);
    }
    await page.locator("[data-testid=close-shape]").click();
    await made(5);
    await page.locator("[data-testid=shape-fill]").check();
    await page.locator("[data-testid=shape-fill-alpha]").fill("0.4");
    await z("shape-stroke-z", -3);
    await stored("polygon", { fill_alpha: 0.4, stroke_z: -3 });
    // A text, painted above the ellipse.
    await tool("text");
    const [tx, ty] = await at(0.6, 0.7);
    await page.mouse.click(tx, ty);
    await made(6);
    await z("shape-stroke-z", 9);
    await stored("text", { stroke_z: 9 });
    // Its size is stored in world units: 16 px at the zoom it was placed at (client.md 10.3).
    const scale = await controller<number>('(c) => c.canvas("spatial").scale');
    const text = (await shapes()).find((s) => s.kind === "text")!;
    expect((text.font_size as number) * scale).toBeCloseTo(16, 3);
    await page.locator("tessera-app").screenshot({ path: join(SHOTS, "annotations-styles-editor.png") });

    // Reload: the API holds every field, and the overlay draws them.
    const before = await shapes();
    await page.reload();
    await page.locator('tessera-spatial-canvas[data-ready="1"]').waitFor({ timeout: 90_000 });
    await settled(6);
    expect(await shapes()).toEqual(before);
    const overlay = page.locator("[data-testid=overlay-spatial]");
    const byKind = (k: string) => before.find((s) => s.kind === k && (k !== "arrow" || s.dash === "dashed"))!;
    const line = overlay.locator(`[data-shape="${byKind("arrow").id}"]`);
    expect(await line.locator("polyline").first().getAttribute("stroke-dasharray")).toBe("8.0 6.0");
    expect(await line.locator(".arrow-head").count()).toBe(2);
    // Parts beneath the cells are only pointer targets in the SVG (the deck paints them).
    const dotted = before.find((s) => s.dash === "dotted" && s.kind === "arrow")!;
    expect(await overlay.locator(`[data-shape="${dotted.id}"]`).getAttribute("data-under")).toBe("1");
    expect(await overlay.locator(`[data-shape-fill="${byKind("box").id}"]`).getAttribute("fill")).toBe(
      "transparent",
    );
    const ell = overlay.locator(`[data-shape-fill="${byKind("ellipse").id}"]`);
    expect(await ell.getAttribute("fill-opacity")).toBe("0.8");
    // Paint order: the ellipse's fill (z 5) after the box's outline (z 1), the text (z 9) last.
    const order = await overlay.evaluate((svg) =>
      Array.from(svg.querySelectorAll("[data-shape], [data-shape-fill]")).map(
        (e) => e.getAttribute("data-shape") ?? `fill:${e.getAttribute("data-shape-fill")}`,
      ),
    );
    expect(order.indexOf(`fill:${byKind("ellipse").id}`)).toBeGreaterThan(order.indexOf(byKind("box").id));
    expect(order.at(-1)).toBe(byKind("text").id);
    await page.locator("tessera-app").screenshot({ path: join(SHOTS, "annotations-styles-reloaded.png") });
    // The text is drawn at 16 px at this zoom, and grows with the tissue when zooming in.
    const fontPx = async () =>
      Number(await overlay.locator("text[data-kind=text]").getAttribute("font-size"));
    const s0 = await controller<number>('(c) => c.canvas("spatial").scale');
    expect(await fontPx()).toBeCloseTo((byKind("text").font_size as number) * s0, 1);
    await page.locator('tessera-spatial-canvas [title="Zoom in"]').click();
    await expect
      .poll(() => controller<number>('(c) => c.canvas("spatial").scale'), { timeout: 20_000 })
      .toBeGreaterThan(s0 * 1.2);
    const s1 = await controller<number>('(c) => c.canvas("spatial").scale');
    await expect.poll(fontPx, { timeout: 20_000 }).toBeCloseTo((byKind("text").font_size as number) * s1, 1);
    await page.locator('tessera-spatial-canvas [title="Fit to data"]').click();
    // The editor of the line shows the fields it was given.
    await page.locator("[data-sidebar-tab=annotations]").click();
    await page.locator(`[data-shape-row="${byKind("arrow").id}"]`).click();
    expect(await page.locator("[data-testid=shape-dash]").inputValue()).toBe("dashed");
    expect(await page.locator("[data-testid=shape-arrow-start]").isChecked()).toBe(true);
    expect(await page.locator("[data-testid=shape-arrow-size]").inputValue()).toBe("24");
    await page.locator("tessera-app").screenshot({ path: join(SHOTS, "annotations-styles-line-editor.png") });
  }, 240_000);

  it("shows a fill's blended colour over the cells, beneath them, and arrow heads and dashes in pixels", async () => {
    const id = await ts.openDemo("pixels");
    // Small cells, so the background shows between them.
    const r = await ts.api(`/api/sessions/${id}/displays/styles-spatial`, {
      method: "PUT",
      json: display(true, 3),
      clientId,
    });
    expect(r.status).toBe(200);
    await page.goto(`${ts.url}/?session=${id}`);
    await page.locator('tessera-spatial-canvas[data-ready="1"]').waitFor({ timeout: 90_000 });
    // A box in the middle of the tissue, first without a fill.
    const cv = (await page.locator("tessera-spatial-canvas").boundingBox())!;
    const un = (fx: number, fy: number) =>
      controller<number[]>(`(c) => c.canvas("spatial").unproject(${cv.width * fx}, ${cv.height * fy})`);
    const a = await un(0.42, 0.4);
    const b = await un(0.56, 0.56);
    const boxId = await addShape(id, { kind: "box", points: [a, b], color: "#ffffff" });
    await page.reload();
    await page.locator('tessera-spatial-canvas[data-ready="1"]').waitFor({ timeout: 90_000 });
    await settled(1);
    const [x0, y0] = await proj(a);
    const [x1, y1] = await proj(b);
    const inner = [
      Math.min(x0!, x1!) + 10,
      Math.min(y0!, y1!) + 10,
      Math.abs(x1! - x0!) - 20,
      Math.abs(y1! - y0!) - 20,
    ];
    const clear = await grab(inner[0]!, inner[1]!, inner[2]!, inner[3]!, "styles-box-clear");
    const isBg = (c: number[]) => near(c, BG, 6);
    let bgPixels = 0;
    for (let i = 0; i < clear.width * clear.height; i++) if (isBg(px(clear, i))) bgPixels++;
    const n = clear.width * clear.height;
    expect(bgPixels / n).toBeGreaterThan(0.05);
    expect(bgPixels / n).toBeLessThan(0.95);

    // Over the cells (fill_z 0): every pixel is the blend of what was there and the fill.
    const box = (await shapes(id)).find((s) => s.id === boxId)!;
    await putShape(id, { ...box, fill: "#ff0000", fill_alpha: 0.5, fill_z: 0 });
    await settled(1);
    await expect
      .poll(
        async () => {
          const over = await grab(inner[0]!, inner[1]!, inner[2]!, inner[3]!, "styles-box-fill-over");
          let ok = 0;
          for (let i = 0; i < n; i++) if (near(px(over, i), blend(px(clear, i), [255, 0, 0], 0.5), 8)) ok++;
          return ok / n;
        },
        { timeout: 30_000 },
      )
      .toBeGreaterThan(0.97);

    // Beneath the cells (fill_z −1): the background is blended, the cells keep their colour.
    await putShape(id, { ...box, fill: "#ff0000", fill_alpha: 0.5, fill_z: -1 });
    await settled(1);
    await expect
      .poll(
        async () => {
          const under = await grab(inner[0]!, inner[1]!, inner[2]!, inner[3]!, "styles-box-fill-under");
          let bgBlended = 0;
          let cellsKept = 0;
          let cells = 0;
          for (let i = 0; i < n; i++) {
            const c = px(clear, i);
            if (isBg(c)) {
              if (near(px(under, i), blend(BG, [255, 0, 0], 0.5), 10)) bgBlended++;
            } else if (!near(c, BG, 40)) {
              cells++;
              if (near(px(under, i), c, 10)) cellsKept++;
            }
          }
          return [bgBlended / bgPixels > 0.9, cellsKept / cells > 0.85];
        },
        { timeout: 30_000 },
      )
      .toEqual([true, true]);

    // Arrow heads: magenta pixels off the line's band at its end and at its start, none without heads.
    const l0 = await un(0.15, 0.8);
    const l1 = await un(0.4, 0.8);
    const lineId = await addShape(id, {
      kind: "line",
      points: [l0, l1],
      color: "#ff00ff",
      stroke_width: 2,
      stroke_z: 2,
    });
    await page.reload();
    await page.locator('tessera-spatial-canvas[data-ready="1"]').waitFor({ timeout: 90_000 });
    await settled(2);
    const [sx0, sy] = await proj(l0);
    const [sx1] = await proj(l1);
    // The strips 4–12 px above and below the line, along its last and first 30 px.
    const wings = async (name: string) => {
      const end = [
        await grab(sx1! - 30, sy! - 12, 30, 8, `${name}-end-above`),
        await grab(sx1! - 30, sy! + 4, 30, 8, `${name}-end-below`),
      ];
      const start = [
        await grab(sx0!, sy! - 12, 30, 8, `${name}-start-above`),
        await grab(sx0!, sy! + 4, 30, 8, `${name}-start-below`),
      ];
      const magenta = [255, 0, 255];
      return {
        end: end.map((p) => count(p, magenta)),
        start: start.map((p) => count(p, magenta)),
      };
    };
    const bare = await wings("styles-line-bare");
    expect([...bare.end, ...bare.start].every((c) => c === 0)).toBe(true);
    const line = (await shapes(id)).find((s) => s.id === lineId)!;
    await putShape(id, { ...line, kind: "arrow", arrow_start: true, arrow_end: true, arrow_size: 30 });
    await settled(2);
    await expect
      .poll(
        async () => {
          const w = await wings("styles-line-arrows");
          return [...w.end, ...w.start].every((c) => c > 20);
        },
        { timeout: 30_000 },
      )
      .toBe(true);

    // Dashes: along a solid line every pixel is magenta; dashed, about 4/7 of them (dash 4w, gap 3w).
    // The share of pixel columns along the line (a strip 6 px tall) that hold magenta.
    const along = async (name: string) => {
      const strip = await grab(sx0! + 40, sy! - 3, 120, 6, name);
      let cols = 0;
      for (let x = 0; x < strip.width; x++) {
        let hit = false;
        for (let y = 0; y < strip.height; y++)
          if (near(px(strip, y * strip.width + x), [255, 0, 255], 60)) hit = true;
        if (hit) cols++;
      }
      return cols / strip.width;
    };
    await putShape(id, { ...line, stroke_width: 2 });
    await settled(2);
    await expect.poll(() => along("styles-line-solid"), { timeout: 30_000 }).toBeGreaterThan(0.9);
    await putShape(id, { ...line, stroke_width: 2, dash: "dashed" });
    await settled(2);
    await expect
      .poll(
        async () => {
          const f = await along("styles-line-dashed");
          return f > 0.4 && f < 0.75;
        },
        { timeout: 30_000 },
      )
      .toBe(true);
    await page.locator("tessera-app").screenshot({ path: join(SHOTS, "annotations-styles-pixels.png") });
  }, 240_000);

  it("refuses a bad style value with the field's message, in the API and in the app", async () => {
    const [first] = await shapes();
    const r = await ts.api(`/api/sessions/${sid}/shape-annotations/${first!.id}`, {
      method: "PUT",
      json: { ...first, fill_alpha: 2 },
      clientId,
    });
    expect(r.status).toBe(400);
    expect(((await r.json()) as { detail: string }).detail).toBe("fill_alpha must be a number in [0, 1]");
    await page.goto(`${ts.url}/?session=${sid}`);
    await page.locator('tessera-spatial-canvas[data-ready="1"]').waitFor({ timeout: 90_000 });
    await settled(6);
    // An edit the server refuses reaches the user with the server's words.
    await controller(`(c) => c.updateShape(${JSON.stringify(first!.id)}, { dash: "wavy" }, true)`);
    await expect
      .poll(() => page.locator("[data-testid=toast-error]").last().textContent(), { timeout: 20_000 })
      .toContain('dash must be one of solid, dashed, dotted, got "wavy"');
    // Nothing was stored, and the canvas went back to the stored shape.
    expect((await shapes()).find((s) => s.id === first!.id)).toEqual(first);
  }, 240_000);

  it("the serverless viewer draws the annotations of a saved checkpoint", async () => {
    const id = await ts.openDemo("to-save");
    const r = await ts.api(`/api/sessions/${id}/displays/styles-spatial`, {
      method: "PUT",
      json: display(false),
      clientId,
    });
    expect(r.status).toBe(200);
    // A filled box and a dashed arrow, placed by the cells' extent (world coordinates).
    const t = tableFromIPC(
      new Uint8Array(await (await ts.api(`/api/sessions/${id}/data/obsm:spatial`)).arrayBuffer()),
    );
    const xs = Array.from(t.getChild("d0")!.toArray() as Float32Array);
    const ys = Array.from(t.getChild("d1")!.toArray() as Float32Array);
    const [mx, my] = [Math.min(...xs), Math.min(...ys)];
    const [w, h] = [Math.max(...xs) - mx, Math.max(...ys) - my];
    const at = (fx: number, fy: number) => [mx + w * fx, my + h * fy];
    const boxPts = [at(0.25, 0.25), at(0.45, 0.45)];
    const tip = at(0.6, 0.8);
    await addShape(id, { kind: "box", points: boxPts, color: "#ffffff", fill: "#00ff00", fill_alpha: 0.5 });
    await addShape(id, {
      kind: "arrow",
      points: [at(0.2, 0.8), tip],
      color: "#ff00ff",
      dash: "dashed",
      arrow_size: 20,
    });
    const { site, file } = await publishCheckpoint(ts, id, { appDir, prefix: "styled", clientId });
    const p = await browser.newPage({ viewport: { width: 1000, height: 700 } });
    try {
      p.on("pageerror", (e) => console.error("page error:", e.message));
      await p.goto(`${site.base}/index.html?checkpoint=${file}`);
      await p.locator('tessera-spatial-canvas[data-ready="1"]').waitFor({ timeout: 90_000 });
      await settled(2, p);
      const overlay = p.locator("[data-testid=overlay-spatial]");
      expect(await overlay.locator("[data-shape-fill]").count()).toBe(1);
      // Inside the box: the background blended half with green.
      const [x0, y0] = await proj(boxPts[0]!, p);
      const [x1, y1] = await proj(boxPts[1]!, p);
      const inside = await grab(
        Math.min(x0!, x1!) + 8,
        Math.min(y0!, y1!) + 8,
        Math.abs(x1! - x0!) - 16,
        Math.abs(y1! - y0!) - 16,
        "styles-serverless-box",
        p,
      );
      expect(count(inside, blend(BG, [0, 255, 0], 0.5), 8) / (inside.width * inside.height)).toBeGreaterThan(
        0.95,
      );
      // The arrow: magenta drawn, with its head's wings off the line near its end.
      const [ax, ay] = await proj(tip, p);
      const head = await grab(ax! - 20, ay! - 10, 20, 6, "styles-serverless-head", p);
      expect(count(head, [255, 0, 255])).toBeGreaterThan(10);
      await shoot(p.locator("tessera-spatial-canvas"), join(SHOTS, "annotations-serverless.png"));
      // Read-only: no shape takes the pointer.
      expect(await controller<string | null>("(c) => c.readOnlyReason", p)).toBe("serverless viewer");
    } finally {
      await p.close();
      await site.close();
    }
  }, 240_000);
});
