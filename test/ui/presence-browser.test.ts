/**
 * Presence and the edit lock in real browsers (Debian chromium) against the real server on
 * 127.0.0.1: two browser contexts (two localStorages, so two client ids and two-word names) open the
 * same session; the first takes the lock by attaching, the second is read-only and says why (header,
 * lock badge, the Regions/Annotations/Subset tabs, disabled actions, no drawing); taking a held lock
 * is refused (409); a rename travels to the other viewer; the lock passes on Unlock + Take lock.
 * Also the keyboard: Esc cancels a half-drawn region and a lock-name edit, Enter commits it, and the
 * focused canvas zooms with +/−. Screenshots go to `test-artifacts/ui/`.
 */
import { mkdir, mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildWebApp } from "../../scripts/build-app.js";
import { startTestServer, type TestServer } from "../adapters/http/harness.js";
import { HAVE_CHROMIUM, launchChromium } from "./browser.js";

const d = HAVE_CHROMIUM ? describe : describe.skip;
const SHOTS = join(process.cwd(), "test-artifacts", "ui");

let ts: TestServer;
let browser: Browser;
let ctxA: BrowserContext;
let ctxB: BrowserContext;
let a: Page;
let b: Page;
let sid: string;
const beats: number[] = [];

async function open(ctx: BrowserContext): Promise<Page> {
  const p = await ctx.newPage();
  p.on("pageerror", (e) => console.error("page error:", e.message));
  await p.goto(`${ts.url}/?session=${sid}`);
  await p.locator('tessera-spatial-canvas[data-ready="1"]').waitFor({ timeout: 90_000 });
  return p;
}

const storage = (p: Page, key: string) => p.evaluate((k) => localStorage.getItem(k), key);
const badge = (p: Page) => p.locator("[data-testid=lock-badge]");

beforeAll(async () => {
  if (!HAVE_CHROMIUM) return;
  await mkdir(SHOTS, { recursive: true });
  const appDir = join(await mkdtemp(join(tmpdir(), "tessera-presence-")), "app");
  await buildWebApp({ outdir: appDir });
  ts = await startTestServer({
    demo: { nCells: 500, nGenes: 30, imageSize: 256, nTranscripts: 50 },
    config: { staticDir: appDir },
    plugins: ["tessera", "scanpy"],
  });
  sid = await ts.openDemo();
  browser = await launchChromium();
  ctxA = await browser.newContext({ viewport: { width: 1200, height: 780 } });
  ctxB = await browser.newContext({ viewport: { width: 1200, height: 780 } });
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await ts?.close();
});

d("presence and the edit lock", () => {
  it("gives each browser its own client id and two-word name, kept in localStorage, and beats", async () => {
    a = await open(ctxA);
    a.on("request", (r) => {
      if (r.method() === "POST" && new URL(r.url()).pathname === "/api/presence") beats.push(Date.now());
    });
    await expect.poll(() => badge(a).textContent(), { timeout: 20_000 }).toContain("Locked to you");
    b = await open(ctxB);
    const [idA, idB] = [await storage(a, "tessera-client-id"), await storage(b, "tessera-client-id")];
    expect(idA).toMatch(/^[A-Za-z0-9_-]{8,128}$/);
    expect(idB).toMatch(/^[A-Za-z0-9_-]{8,128}$/);
    expect(idA).not.toBe(idB);
    const nameA = (await storage(a, "tessera-client-name"))!;
    expect(nameA).toMatch(/^[a-z]+ [a-z]+$/);
    // Both viewers are counted on the badge; the server lists both names.
    await expect.poll(() => badge(a).textContent(), { timeout: 20_000 }).toMatch(/· 2/);
    const pv = (await (
      await ts.api("/api/presence", {
        method: "POST",
        json: { client_id: "probe-client-1", name: "probe", session_id: null },
      })
    ).json()) as { sessions: Record<string, { lock: { name: string } | null; viewers: string[] }> };
    expect(pv.sessions[sid]?.viewers).toHaveLength(2);
    expect(pv.sessions[sid]?.lock?.name).toBe(nameA);
  });

  it("makes the second browser read-only and says why", async () => {
    const nameA = (await storage(a, "tessera-client-name"))!;
    await expect.poll(() => badge(b).textContent(), { timeout: 20_000 }).toContain(`Locked: ${nameA}`);
    expect(await b.locator("[data-testid=read-only]").textContent()).toContain(`locked by ${nameA}`);
    await b.locator("[data-sidebar-tab=regions]").click();
    expect(await b.locator("tessera-draw-panel [data-testid=unavailable]").textContent()).toContain(
      `Regions (unavailable — locked by ${nameA})`,
    );
    expect(await b.locator("[data-testid=draw-toggle]").isDisabled()).toBe(true);
    expect(await b.locator("[data-testid=apply-label]").isDisabled()).toBe(true);
    // No drawing: the canvas keeps panning and a click adds no vertex.
    expect(await b.locator("[data-testid=draw-capture]").count()).toBe(0);
    const box = (await b.locator("tessera-spatial-canvas").boundingBox())!;
    await b.mouse.click(box.x + box.width / 2, box.y + box.height / 2);
    expect(
      await b.evaluate(
        () =>
          (document.querySelector("tessera-app") as unknown as { draw: { drawing: unknown } }).draw.drawing,
      ),
    ).toBeNull();
    await b.locator("[data-sidebar-tab=annotations]").click();
    expect(await b.locator("[data-tool=box]").isDisabled()).toBe(true);
    // The Compute tab's Run is gated the same way (the server would answer 423 anyway).
    const r = await ts.api(`/api/sessions/${sid}/annotate`, {
      method: "POST",
      clientId: (await storage(b, "tessera-client-id"))!,
      json: { cell_indices: [0], region_set: "x", category: "y" },
    });
    expect(r.status).toBe(423);
    expect(((await r.json()) as { detail: string }).detail).toBe(`session is locked by ${nameA}`);
    // Taking a held lock is refused: there is no stealing.
    await badge(b).click();
    await b.locator("[data-testid=lock-take]").click();
    await expect.poll(() => b.locator("[data-testid=toast-error]").last().textContent()).toMatch(/lock/i);
    await b.locator("tessera-app").screenshot({ path: join(SHOTS, "presence-read-only.png") });
  });

  it("renames a viewer (Enter commits, Esc cancels) and passes the lock on Unlock + Take lock", async () => {
    const input = b.locator("[data-testid=lock-name]");
    const before = await input.inputValue();
    await input.fill("someone else");
    await input.press("Escape");
    expect(await input.inputValue()).toBe(before);
    await input.fill("Ada Lovelace");
    await input.press("Enter");
    expect(await storage(b, "tessera-client-name")).toBe("Ada Lovelace");
    await badge(a).click();
    await expect
      .poll(() => a.locator("[data-testid=lock-viewers]").textContent(), { timeout: 20_000 })
      .toContain("Ada Lovelace");
    // A gives the lock up; B takes it; now A is the read-only one.
    await a.locator("[data-testid=lock-release]").click();
    await expect.poll(() => badge(b).textContent(), { timeout: 20_000 }).toContain("Unlocked");
    await expect.poll(() => b.locator("tessera-draw-panel [data-testid=unavailable]").count()).toBe(0);
    await badge(b).click();
    await b.locator("[data-testid=lock-take]").click();
    await expect.poll(() => badge(b).textContent(), { timeout: 20_000 }).toContain("Locked to you");
    await expect.poll(() => badge(a).textContent(), { timeout: 20_000 }).toContain("Locked: Ada Lovelace");
    expect(await a.locator("[data-testid=read-only]").textContent()).toContain("locked by Ada Lovelace");
    // A shape added by the holder shows on the other viewer's canvas (its events re-read the shapes).
    const add = await ts.api(`/api/sessions/${sid}/shape-annotations`, {
      method: "POST",
      clientId: (await storage(b, "tessera-client-id"))!,
      json: {
        kind: "box",
        points: [
          [0, 0],
          [50, 40],
        ],
        color: "#ff7f00",
      },
    });
    expect(add.status, await add.clone().text()).toBe(200);
    const shapeId = ((await add.json()) as { shape_id: string }).shape_id;
    await expect
      .poll(() => a.locator(`[data-testid=overlay-spatial] [data-shape="${shapeId}"]`).count(), {
        timeout: 30_000,
      })
      .toBe(1);
    // The heartbeat: a presence POST about every 5 s.
    await expect.poll(() => beats.length, { timeout: 30_000 }).toBeGreaterThanOrEqual(3);
    const gaps = beats.slice(1).map((t, i) => t - beats[i]!);
    expect(Math.max(...gaps)).toBeLessThan(15_000);
  });

  it("keyboard: Esc drops a half-drawn region; the focused canvas zooms with + and −", async () => {
    await b.keyboard.press("Escape");
    await b.locator("[data-sidebar-tab=regions]").click();
    const box = (await b.locator("tessera-spatial-canvas").boundingBox())!;
    await b.mouse.click(box.x + box.width * 0.4, box.y + box.height * 0.4);
    await b.mouse.click(box.x + box.width * 0.6, box.y + box.height * 0.45);
    const drawing = () =>
      b.evaluate(() => {
        const dr = (
          document.querySelector("tessera-app") as unknown as {
            draw: { drawing: { current: unknown[] } | null };
          }
        ).draw.drawing;
        return dr ? dr.current.length : -1;
      });
    expect(await drawing()).toBe(2);
    await b.keyboard.press("Escape");
    expect(await drawing()).toBe(-1);
    // Leave the tools (no tool armed), focus the canvas and zoom with the keyboard.
    await b.locator("[data-sidebar-tab=compute]").click();
    await expect.poll(() => b.locator("[data-testid=draw-capture]").count()).toBe(0);
    const zoom = b.locator("tessera-spatial-canvas [data-testid=zoom]");
    const z0 = Number(await zoom.textContent());
    await b.mouse.click(box.x + box.width * 0.5, box.y + box.height * 0.5);
    await b.keyboard.press("Equal");
    await expect.poll(async () => Number(await zoom.textContent()), { timeout: 10_000 }).toBeGreaterThan(z0);
    const z1 = Number(await zoom.textContent());
    await b.keyboard.press("Minus");
    await expect.poll(async () => Number(await zoom.textContent()), { timeout: 10_000 }).toBeLessThan(z1);
  });
});
