/**
 * The cell glyph (`point_marker`, client.md 5.3 / 5.8) in a real browser (Debian chromium, SwiftShader
 * WebGL) against the real server on 127.0.0.1 with the demo dataset. The camera is put on the most
 * isolated cell with a big point; the pixels expected inside or outside each glyph are computed from
 * the canvas's world → screen transform and the figures' geometry (square of half side r, flat-topped
 * hexagon of circumradius r): a square's corner is coloured for the square and background for the
 * circle and hexagon; above the hexagon's flat top (inside the disc) is background for the hexagon
 * only. The glyph is chosen in the settings panel, persisted (read back from the API) and honoured
 * after a reload, and by the serverless viewer and embed mode of a saved checkpoint. Screenshots go to `test-artifacts/ui/`.
 */
import { mkdir, mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildWebApp } from "../../scripts/build-app.js";
import { startTestServer, type TestServer } from "../adapters/http/harness.js";
import { HAVE_CHROMIUM, launchChromium, type Pixels, publishCheckpoint } from "./browser.js";

const d = HAVE_CHROMIUM ? describe : describe.skip;
const SHOTS = join(process.cwd(), "test-artifacts", "ui");
const DISPLAY = "glyph-spatial";

let ts: TestServer;
let browser: Browser;
let page: Page;
let appDir: string;
let sid: string;
/** The browser's client id (it holds the session's edit lock). */
let clientId: string | undefined;
/** The isolated cell the camera is on (world units). */
let cell: [number, number];

/** The dark canvas background (`#0d0e11`). */
const BG = [13, 14, 17];
/** The point radius on screen, CSS px. */
const R = 40;

const display = (extra: Record<string, unknown>, viewport = { target: [] as number[], zoom: 0 }) => ({
  id: DISPLAY,
  type: "spatial_canvas",
  encoding: { coords: "obsm:spatial", opacity: 1, show_minimap: false, show_image: false, ...extra },
  viewport,
});

async function putDisplay(spec: unknown, clientId?: string): Promise<void> {
  const r = await ts.api(`/api/sessions/${sid}/displays/${DISPLAY}`, { method: "PUT", json: spec, clientId });
  expect(r.status, await r.clone().text()).toBe(200);
}

async function storedMarker(): Promise<unknown> {
  const st = (await (await ts.api(`/api/sessions/${sid}`)).json()) as {
    app_state: { displays: { id: string; encoding: { point_marker?: string } }[] };
  };
  return st.app_state.displays.find((x) => x.id === DISPLAY)?.encoding.point_marker;
}

/** The spatial canvas element's data read in the page. */
function inCanvas<T>(fn: string, p = page): Promise<T> {
  return p.evaluate(
    `(() => { const c = document.querySelector("tessera-app").draw.canvas("spatial"); return (${fn})(c); })()`,
  );
}

/** Screenshot a canvas-local box of the spatial canvas and decode it. */
async function grab(name: string, p = page): Promise<Pixels> {
  const b = (await p.locator("tessera-spatial-canvas").boundingBox())!;
  const { default: sharp } = await import("sharp");
  const png = await p.screenshot({ path: join(SHOTS, `${name}.png`), clip: b });
  const { data, info } = await sharp(png).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  return { width: info.width, height: info.height, data: new Uint8Array(data) };
}

/** The pixel whose box holds canvas-local point (x, y). */
function pixel(p: Pixels, x: number, y: number): number[] {
  const i = Math.floor(y) * p.width + Math.floor(x);
  return [p.data[3 * i]!, p.data[3 * i + 1]!, p.data[3 * i + 2]!];
}
const isBg = (c: number[]) => c.every((v, k) => Math.abs(v - BG[k]!) <= 12);

/** Wait until the canvas is ready with `marker` and two animation frames have passed. */
async function settled(p = page): Promise<void> {
  await p.locator('tessera-spatial-canvas[data-ready="1"]').waitFor({ timeout: 90_000 });
  await p.evaluate(
    () => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(() => setTimeout(r, 300)))),
  );
}

beforeAll(async () => {
  if (!HAVE_CHROMIUM) return;
  await mkdir(SHOTS, { recursive: true });
  appDir = join(await mkdtemp(join(tmpdir(), "tessera-glyph-")), "app");
  await buildWebApp({ outdir: appDir });
  ts = await startTestServer({
    demo: { nCells: 300, nGenes: 30, imageSize: 256, nTranscripts: 20 },
    config: { staticDir: appDir },
    plugins: ["tessera"],
  });
  sid = await ts.openDemo();
  await putDisplay(display({ point_size: 4 }));
  browser = await launchChromium();
  page = await browser.newPage({ viewport: { width: 1280, height: 820 } });
  page.on("pageerror", (e) => console.error("page error:", e.message));
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await ts?.close();
});

d("cell marker glyph", () => {
  it("draws circle, square and hexagon with the figures' geometry; chosen in the panel, saved, reloaded", async () => {
    await page.goto(`${ts.url}/?session=${sid}`);
    await settled();
    clientId = (await page.evaluate(() => localStorage.getItem("tessera-client-id"))) ?? undefined;
    // The most isolated cell and its nearest-neighbour distance (world units).
    const [cx, cy, nn] = await inCanvas<number[]>(`(c) => {
      const p = c.positions, n = p.length / 2;
      let best = -1, bestD = -1;
      for (let i = 0; i < n; i++) {
        let m = Infinity;
        for (let j = 0; j < n; j++) if (j !== i) m = Math.min(m, Math.hypot(p[2*i] - p[2*j], p[2*i+1] - p[2*j+1]));
        if (m > bestD) { bestD = m; best = i; }
      }
      return [p[2*best], p[2*best+1], bestD];
    }`);
    expect(nn).toBeGreaterThan(0);
    cell = [cx!, cy!];
    // Radius a quarter of the gap (neighbours' squares reach 1.41 r: none within 2.5 r of the centre),
    // zoomed so that radius is R px on screen.
    const pointSize = nn / 2;
    const zoom = Math.log2(R / (pointSize / 2));
    await putDisplay(
      display({ point_size: pointSize, point_marker: "circle" }, { target: [cx, cy], zoom }),
      clientId,
    );
    await page.reload();
    await settled();
    const scale = await inCanvas<number>("(c) => c.scale");
    expect(((pointSize / 2) * scale) / R).toBeCloseTo(1, 2);
    const [sx, sy] = (await inCanvas<number[]>(`(c) => c.project([${cx}, ${cy}])`))!;

    // Sample points relative to the centre, in units of r: a square's corner (outside the disc and the
    // hexagon), above the hexagon's flat top at √3/2 r (inside the disc and the square), near the
    // hexagon's vertex on the x axis (inside all three), the centre.
    const at = (p: Pixels, fx: number, fy: number) => pixel(p, sx + fx * R, sy + fy * R);
    const look = async (name: string) => {
      const p = await grab(`marker-glyph-${name}`);
      return {
        centre: at(p, 0, 0),
        corner: at(p, 0.85, 0.85),
        corner2: at(p, -0.85, -0.85),
        aboveFlat: at(p, 0, -0.93),
        belowFlat: at(p, 0, 0.93),
        nearVertex: at(p, 0.88, 0),
        outside: at(p, 1.3, 0),
      };
    };

    const circle = await look("circle");
    expect(isBg(circle.centre), `centre ${circle.centre}`).toBe(false);
    expect(isBg(circle.corner), `circle corner ${circle.corner}`).toBe(true);
    expect(isBg(circle.aboveFlat), `circle top ${circle.aboveFlat}`).toBe(false);
    expect(isBg(circle.nearVertex)).toBe(false);
    expect(isBg(circle.outside)).toBe(true);

    // Square, chosen in the settings panel next to the point size; persisted through PUT /displays.
    const canvas = page.locator("tessera-spatial-canvas");
    const choose = async (glyph: string) => {
      await canvas.getByRole("button", { name: "Show controls" }).click();
      await canvas.getByRole("button", { name: "Cells" }).click();
      await canvas.locator("[data-testid=point-marker]").selectOption(glyph);
      await canvas.getByRole("button", { name: "Minimize controls" }).click();
    };
    const select = page.locator("[data-testid=point-marker]");
    await choose("square");
    await expect.poll(storedMarker, { timeout: 20_000 }).toBe("square");
    await settled();
    const square = await look("square");
    expect(isBg(square.centre)).toBe(false);
    expect(isBg(square.corner), `square corner ${square.corner}`).toBe(false);
    expect(isBg(square.corner2), `square corner ${square.corner2}`).toBe(false);
    expect(isBg(square.aboveFlat)).toBe(false);
    expect(isBg(square.outside), `square outside ${square.outside}`).toBe(true);
    expect(square.corner).toEqual(square.centre);

    await choose("hexagon");
    await expect.poll(storedMarker, { timeout: 20_000 }).toBe("hexagon");
    await settled();
    const hex = await look("hexagon");
    expect(isBg(hex.centre)).toBe(false);
    expect(isBg(hex.nearVertex), `hexagon vertex ${hex.nearVertex}`).toBe(false);
    expect(isBg(hex.aboveFlat), `hexagon above top ${hex.aboveFlat}`).toBe(true);
    expect(isBg(hex.belowFlat), `hexagon below bottom ${hex.belowFlat}`).toBe(true);
    expect(isBg(hex.corner), `hexagon corner ${hex.corner}`).toBe(true);

    // A saved glyph is honoured on load.
    await page.reload();
    await settled();
    await canvas.getByRole("button", { name: "Show controls" }).click();
    await canvas.getByRole("button", { name: "Cells" }).click();
    expect(await select.inputValue()).toBe("hexagon");
    await canvas.getByRole("button", { name: "Minimize controls" }).click();
    const again = await look("hexagon-reloaded");
    expect(isBg(again.aboveFlat)).toBe(true);
    expect(isBg(again.nearVertex)).toBe(false);
  }, 300_000);

  it("the serverless viewer and embed mode honour a saved point_marker", async () => {
    expect(await storedMarker()).toBe("hexagon");
    const { site, file } = await publishCheckpoint(ts, sid, { appDir, prefix: "glyph", clientId });
    const p = await browser.newPage({ viewport: { width: 1000, height: 700 } });
    try {
      p.on("pageerror", (e) => console.error("page error:", e.message));
      for (const [name, query] of [
        ["serverless", ""],
        ["embed", "&embed=1"],
      ] as const) {
        await p.goto(`${site.base}/index.html?checkpoint=${file}${query}`);
        await settled(p);
        const r = await inCanvas<number>("(c) => c.scale", p);
        const [sx, sy] = (await inCanvas<number[]>(`(c) => c.project([${cell[0]}, ${cell[1]}])`, p))!;
        const radius = ((await inCanvas<number>("(c) => c.encoding.point_size", p)) / 2) * r;
        expect(radius).toBeGreaterThan(20);
        const px = await grab(`marker-glyph-${name}`, p);
        const at = (fx: number, fy: number) => pixel(px, sx! + fx * radius, sy! + fy * radius);
        expect(isBg(at(0, 0)), `${name} centre`).toBe(false);
        expect(isBg(at(0.88, 0)), `${name} near the vertex`).toBe(false);
        expect(isBg(at(0, -0.93)), `${name} above the flat top`).toBe(true);
        expect(isBg(at(0.85, 0.85)), `${name} square corner`).toBe(true);
      }
    } finally {
      await p.close();
      await site.close();
    }
  }, 300_000);
});
