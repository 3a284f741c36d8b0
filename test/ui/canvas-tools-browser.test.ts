/**
 * The canvas tools in a real browser (Debian chromium, SwiftShader WebGL) against the real server on
 * 127.0.0.1 with the demo dataset: a region drawn by clicks on the spatial canvas is labelled into a
 * new region set (the obs column exists server-side with the count computed here from the cells'
 * coordinates and the ring the browser drew), and listed with its count; every shape annotation kind
 * is drawn with its tool, edited, moved, and still there (in the API and on the canvas) after a
 * reload; the points-transform dialog saves a new affine; a subset keeps the cells in a drawn region
 * in a child session whose cell count matches. Screenshots go to `test-artifacts/ui/`.
 */
import { mkdir, mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { tableFromIPC } from "apache-arrow";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildWebApp } from "../../scripts/build-app.js";
import { polygonsFromIpc } from "../../src/ui/geoarrow.js";
import { startTestServer, type TestServer } from "../adapters/http/harness.js";
import { HAVE_CHROMIUM, launchChromium } from "./browser.js";

const d = HAVE_CHROMIUM ? describe : describe.skip;
const SHOTS = join(process.cwd(), "test-artifacts", "ui");

let ts: TestServer;
let browser: Browser;
let page: Page;
let sid: string;
let xs: Float32Array;
let ys: Float32Array;

const SPATIAL = {
  id: "tools-spatial",
  type: "spatial_canvas",
  encoding: {
    coords: "obsm:spatial",
    color_by: "obs:cell_type",
    opacity: 1,
    show_minimap: false,
    point_size: 6,
  },
  viewport: { target: [], zoom: 0 },
};

/** Even-odd point-in-polygon, written here so the test does not lean on the code it checks. */
function inside(x: number, y: number, ring: number[][]): boolean {
  let c = false;
  for (let i = 0, j = ring.length - 1; i < ring.length; j = i++) {
    const [xi, yi] = ring[i]!;
    const [xj, yj] = ring[j]!;
    if (yi! > y !== yj! > y && x < ((xj! - xi!) * (y - yi!)) / (yj! - yi!) + xi!) c = !c;
  }
  return c;
}

/** Whether segments p1p2 and q1q2 cross (proper or touching). */
function crosses(p1: number[], p2: number[], q1: number[], q2: number[]): boolean {
  const o = (a: number[], b: number[], c: number[]) =>
    Math.sign((b[0]! - a[0]!) * (c[1]! - a[1]!) - (b[1]! - a[1]!) * (c[0]! - a[0]!));
  return o(p1, p2, q1) !== o(p1, p2, q2) && o(q1, q2, p1) !== o(q1, q2, p2);
}

/** Whether two rings meet: a vertex of one inside the other, or crossing edges. */
function meets(a: number[][], b: number[][]): boolean {
  if (a.some(([x, y]) => inside(x!, y!, b)) || b.some(([x, y]) => inside(x!, y!, a))) return true;
  for (let i = 0; i < a.length; i++)
    for (let j = 0; j < b.length; j++)
      if (crosses(a[i]!, a[(i + 1) % a.length]!, b[j]!, b[(j + 1) % b.length]!)) return true;
  return false;
}

/**
 * The rows a subset by `ring` keeps (client.md 11): a cell whose centre is inside, or whose outline
 * (the cell boundary polygons, in canvas world space from the geoarrow route) meets the ring.
 */
async function subsetRows(id: string, ring: number[][]): Promise<Set<number>> {
  const keep = new Set<number>();
  for (let i = 0; i < xs.length; i++) if (inside(xs[i]!, ys[i]!, ring)) keep.add(i);
  const r = await ts.api(`/api/sessions/${id}/shapes/cell_boundaries/geoarrow`);
  expect(r.status).toBe(200);
  const poly = polygonsFromIpc(new Uint8Array(await r.arrayBuffer()));
  for (let k = 0; k < poly.length; k++) {
    const cell = poly.cellIndex[k]!;
    if (cell < 0 || keep.has(cell)) continue;
    const outline: number[][] = [];
    for (let v = poly.startIndices[k]!; v < poly.startIndices[k + 1]!; v++)
      outline.push([poly.positions[2 * v]!, poly.positions[2 * v + 1]!]);
    if (meets(outline, ring)) keep.add(cell);
  }
  return keep;
}

async function coords(id: string): Promise<[Float32Array, Float32Array]> {
  const r = await ts.api(`/api/sessions/${id}/data/obsm:spatial`);
  expect(r.status).toBe(200);
  const t = tableFromIPC(new Uint8Array(await r.arrayBuffer()));
  return [t.getChild("d0")!.toArray() as Float32Array, t.getChild("d1")!.toArray() as Float32Array];
}

/** Page coordinates of fractions of the spatial canvas's box. */
async function at(fx: number, fy: number): Promise<[number, number]> {
  const b = (await page.locator("tessera-spatial-canvas").boundingBox())!;
  return [b.x + b.width * fx, b.y + b.height * fy];
}

async function click(fx: number, fy: number): Promise<void> {
  const [x, y] = await at(fx, fy);
  await page.mouse.click(x, y);
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

/** The app's draw controller state, read in the page. */
function controller<T>(fn: string): Promise<T> {
  return page.evaluate(
    `(() => { const c = document.querySelector("tessera-app").draw; return (${fn})(c); })()`,
  );
}

interface ApiShape {
  id: string;
  kind: string;
  points: number[][];
  text: string | null;
  color: string;
  fill: string | null;
  stroke_width: number;
  font_size: number;
  rotation?: number;
}

async function shapes(): Promise<ApiShape[]> {
  return ((await (await ts.api(`/api/sessions/${sid}/shape-annotations`)).json()) as { shapes: ApiShape[] })
    .shapes;
}

async function shot(name: string, sel = "tessera-app"): Promise<void> {
  await page.locator(sel).screenshot({ path: join(SHOTS, `${name}.png`) });
}

beforeAll(async () => {
  if (!HAVE_CHROMIUM) return;
  await mkdir(SHOTS, { recursive: true });
  const appDir = join(await mkdtemp(join(tmpdir(), "tessera-tools-")), "app");
  await buildWebApp({ outdir: appDir });
  ts = await startTestServer({
    demo: { nCells: 900, nGenes: 30, imageSize: 256, nTranscripts: 50 },
    config: { staticDir: appDir },
    plugins: ["tessera", "scanpy"],
  });
  sid = await ts.openDemo();
  const r = await ts.api(`/api/sessions/${sid}/displays/${SPATIAL.id}`, { method: "PUT", json: SPATIAL });
  expect(r.status, await r.clone().text()).toBe(200);
  [xs, ys] = await coords(sid);
  browser = await launchChromium();
  page = await browser.newPage({ viewport: { width: 1280, height: 820 } });
  page.on("pageerror", (e) => console.error("page error:", e.message));
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await ts?.close();
});

d("canvas tools", () => {
  it("draws a region on the spatial canvas and labels the cells inside into a new region set", async () => {
    await page.goto(`${ts.url}/?session=${sid}`);
    await page.locator('tessera-spatial-canvas[data-ready="1"]').waitFor({ timeout: 90_000 });
    await page.locator("[data-sidebar-tab=regions]").click();
    await page.locator("[data-testid=region-set]").fill("zones");
    await page.locator("[data-testid=region-category]").fill("north");
    await expect
      .poll(() => page.locator("[data-testid=draw-hint]").textContent())
      .toContain("Annotating zones / north");
    for (const [fx, fy] of [
      [0.3, 0.3],
      [0.7, 0.32],
      [0.66, 0.72],
      [0.35, 0.66],
    ] as const)
      await click(fx, fy);
    await page.locator("[data-testid=finish-region]").click();
    const rings = await controller<number[][][]>("(c) => c.drawing.rings");
    expect(rings).toHaveLength(1);
    expect(rings[0]).toHaveLength(4);
    let expected = 0;
    for (let i = 0; i < xs.length; i++) if (inside(xs[i]!, ys[i]!, rings[0]!)) expected++;
    expect(expected).toBeGreaterThan(20);
    expect(expected).toBeLessThan(xs.length);
    const apply = page.locator("[data-testid=apply-label]");
    await expect.poll(() => apply.textContent()).toContain(`n=${expected}`);
    await shot("regions-drawn");
    await apply.click();
    // The obs column exists on the server with exactly those cells labelled.
    await expect
      .poll(
        async () => {
          const v = await ts.api(`/api/sessions/${sid}/obs/zones/values`);
          if (v.status !== 200) return null;
          return ((await v.json()) as { values: { value: unknown; count: number }[] }).values;
        },
        { timeout: 60_000 },
      )
      .toContainEqual({ value: "north", count: expected });
    // The region set is listed with its count, and the canvas is coloured by it.
    const row = page.locator('[data-region-set=zones] [data-category="north"]');
    await expect.poll(() => row.textContent(), { timeout: 30_000 }).toContain(String(expected));
    await expect
      .poll(() => page.locator("tessera-spatial-canvas").getAttribute("data-color-by"), { timeout: 30_000 })
      .toBe("obs:zones");
    // The next region gets the next preset colour; the drawing is cleared.
    expect(await controller<string>("(c) => c.color")).toBe("#377eb8");
    expect(await controller<unknown>("(c) => c.drawing")).toBeNull();
    await row.click();
    await expect
      .poll(() => controller<string | null>('(c) => c.canvas("spatial").encoding.isolated_category'))
      .toBe("north");
    await shot("regions-labelled");
  });

  it("adds every kind of shape annotation with its tool, edits and moves them, and finds them after a reload", async () => {
    await page.locator("[data-sidebar-tab=annotations]").click();
    const tool = (t: string) => page.locator(`[data-tool=${t}]`).click();
    const count = async (n: number) => {
      await expect.poll(async () => (await shapes()).length, { timeout: 30_000 }).toBe(n);
      await expect.poll(() => controller<string>("(c) => c.tool")).toBe("select");
    };
    await tool("line");
    expect(await page.locator("[data-testid=draw-hint]").textContent()).toContain("Line");
    await dragOn([0.15, 0.15], [0.3, 0.2]);
    await count(1);
    await tool("arrow");
    await dragOn([0.15, 0.3], [0.3, 0.35]);
    await count(2);
    await tool("box");
    await dragOn([0.4, 0.15], [0.55, 0.3]);
    await count(3);
    await tool("ellipse");
    await dragOn([0.62, 0.15], [0.8, 0.3]);
    await count(4);
    await tool("polygon");
    for (const [fx, fy] of [
      [0.2, 0.6],
      [0.32, 0.58],
      [0.34, 0.75],
      [0.22, 0.8],
    ] as const)
      await click(fx, fy);
    await page.locator("[data-testid=close-shape]").click();
    await count(5);
    await tool("text");
    await click(0.6, 0.7);
    await count(6);
    // The text is edited in the shape editor (the new shape is selected); style edits are debounced.
    await page.locator("[data-testid=shape-text]").fill("Tumour front");
    await expect
      .poll(async () => (await shapes()).find((x) => x.kind === "text")?.text, { timeout: 20_000 })
      .toBe("Tumour front");
    const all = await shapes();
    expect(all.map((x) => x.kind).sort()).toEqual(["arrow", "box", "ellipse", "line", "polygon", "text"]);
    expect(all.every((x) => x.color === "#3388ff" && x.stroke_width === 2)).toBe(true);

    // The box: fill it and widen its stroke from the editor.
    const box = all.find((x) => x.kind === "box")!;
    await page.locator(`[data-shape-row="${box.id}"]`).click();
    await page.locator("[data-testid=shape-fill]").check();
    await page.locator("[data-testid=shape-width]").fill("5");
    await expect
      .poll(async () => (await shapes()).find((x) => x.id === box.id), { timeout: 20_000 })
      .toMatchObject({ fill: "#3388ff", stroke_width: 5 });
    // Move it by its body: every corner moves by the same world offset.
    const before = (await shapes()).find((x) => x.id === box.id)!.points;
    await dragOn([0.475, 0.22], [0.475, 0.42]);
    await expect
      .poll(async () => (await shapes()).find((x) => x.id === box.id)!.points[0]![1], { timeout: 20_000 })
      .not.toBeCloseTo(before[0]![1]!, 3);
    const after = (await shapes()).find((x) => x.id === box.id)!.points;
    const dy = after[0]![1]! - before[0]![1]!;
    expect(after[1]![1]! - before[1]![1]!).toBeCloseTo(dy, 6);
    expect(after[0]![0]!).toBeCloseTo(before[0]![0]!, 6);
    // Reshape the line by its end handle: the end lands on the world point under the pointer.
    const line = all.find((x) => x.kind === "line")!;
    await page.locator(`[data-shape-row="${line.id}"]`).click();
    const handle = page.locator('[data-testid=overlay-spatial] [data-handle="1"]');
    const hb = (await handle.boundingBox())!;
    const [tx, ty] = await at(0.3, 0.45);
    await page.mouse.move(hb.x + hb.width / 2, hb.y + hb.height / 2);
    await page.mouse.down();
    await page.mouse.move(tx, ty, { steps: 5 });
    await page.mouse.up();
    const cb = (await page.locator("tessera-spatial-canvas").boundingBox())!;
    const want = await controller<number[]>(
      `(c) => c.canvas("spatial").unproject(${tx - cb.x}, ${ty - cb.y})`,
    );
    await expect
      .poll(async () => (await shapes()).find((x) => x.id === line.id)!.points[1], { timeout: 20_000 })
      .toEqual([expect.closeTo(want[0]!, 1), expect.closeTo(want[1]!, 1)]);
    // Rotate the ellipse by its rotate handle: the angle from its centre to the pointer (world).
    const ell = all.find((x) => x.kind === "ellipse")!;
    await page.locator(`[data-shape-row="${ell.id}"]`).click();
    const rh = (await page.locator('[data-testid=overlay-spatial] [data-handle="rotate"]').boundingBox())!;
    const ctr = [
      (ell.points[0]![0]! + ell.points[1]![0]!) / 2,
      (ell.points[0]![1]! + ell.points[1]![1]!) / 2,
    ];
    const cpx = await controller<number[]>(`(c) => c.canvas("spatial").project(${JSON.stringify(ctr)})`);
    const cb0 = (await page.locator("tessera-spatial-canvas").boundingBox())!;
    const [rx, ry] = [cb0.x + cpx[0]! + 10, cb0.y + cpx[1]! + 80];
    await page.mouse.move(rh.x + rh.width / 2, rh.y + rh.height / 2);
    await page.mouse.down();
    await page.mouse.move(rx, ry, { steps: 6 });
    await page.mouse.up();
    const wr = await controller<number[]>(
      `(c) => c.canvas("spatial").unproject(${rx - cb0.x}, ${ry - cb0.y})`,
    );
    const wantDeg = (Math.atan2(wr[1]! - ctr[1]!, wr[0]! - ctr[0]!) * 180) / Math.PI;
    await expect
      .poll(async () => (await shapes()).find((x) => x.id === ell.id)!.rotation ?? 0, { timeout: 20_000 })
      .toBeCloseTo(wantDeg, 0);
    // And the text by the editor's field.
    const txt = all.find((x) => x.kind === "text")!;
    await page.locator(`[data-shape-row="${txt.id}"]`).click();
    await page.locator("[data-testid=shape-rotation]").fill("-20");
    await page.locator("[data-testid=shape-rotation]").press("Tab");
    await expect
      .poll(async () => (await shapes()).find((x) => x.id === txt.id)!.rotation, { timeout: 20_000 })
      .toBe(-20);
    await shot("annotations-edited");

    // Reload: every shape is listed by the API and drawn on the canvas where its points project.
    await page.reload();
    await page.locator('tessera-spatial-canvas[data-ready="1"]').waitFor({ timeout: 90_000 });
    const overlay = page.locator("[data-testid=overlay-spatial]");
    await expect.poll(() => overlay.getAttribute("data-shapes"), { timeout: 30_000 }).toBe("6");
    const stored = await shapes();
    for (const s of stored) {
      const el = overlay.locator(`[data-shape="${s.id}"]`);
      expect(await el.getAttribute("data-kind")).toBe(s.kind);
      const b = (await el.boundingBox())!;
      expect(b.width * b.height).toBeGreaterThan(10);
      // The first defining point projects inside (or on) the drawn element's box.
      const c0 = (await page.locator("tessera-spatial-canvas").boundingBox())!;
      const p = await controller<number[]>(
        `(c) => c.canvas("spatial").project(${JSON.stringify(s.points[0])})`,
      );
      const [px, py] = [c0.x + p[0]!, c0.y + p[1]!];
      expect(px).toBeGreaterThanOrEqual(b.x - 8);
      expect(px).toBeLessThanOrEqual(b.x + b.width + 8);
      expect(py).toBeGreaterThanOrEqual(b.y - 8);
      expect(py).toBeLessThanOrEqual(b.y + b.height + 8);
    }
    expect(await overlay.locator("text[data-kind=text]").textContent()).toBe("Tumour front");
    // The rotations came back: the text is drawn turned, the ellipse taller than wide on screen.
    expect(await overlay.locator("text[data-kind=text]").getAttribute("transform")).toMatch(/^rotate\(/);
    expect(stored.find((x) => x.kind === "ellipse")!.rotation).toBeCloseTo(wantDeg, 0);
    expect(
      await overlay.locator(`[data-shape="${box.id}"] polygon`).first().getAttribute("stroke-width"),
    ).toBe("5");
    await shot("annotations-reloaded");
    // Delete one from the editor: gone from the API and from the canvas.
    await page.locator("[data-sidebar-tab=annotations]").click();
    const poly = stored.find((x) => x.kind === "polygon")!;
    await page.locator(`[data-shape-row="${poly.id}"]`).click();
    await page.locator("[data-testid=delete-shape]").click();
    await expect
      .poll(async () => (await shapes()).map((x) => x.id), { timeout: 20_000 })
      .not.toContain(poly.id);
    await expect.poll(() => overlay.getAttribute("data-shapes")).toBe("5");
  });

  it("keeps the cells of a drawn region in a child session whose cell count matches", async () => {
    await page.locator("[data-sidebar-tab=subset]").click();
    await expect.poll(() => page.locator("[data-testid=draw-hint]").textContent()).toContain("Subsetting");
    for (const [fx, fy] of [
      [0.42, 0.25],
      [0.78, 0.3],
      [0.72, 0.78],
      [0.45, 0.7],
    ] as const)
      await click(fx, fy);
    await page.locator("[data-testid=finish-region]").click();
    const rings = await controller<number[][][]>("(c) => c.drawing.rings");
    let expected = 0;
    for (let i = 0; i < xs.length; i++) if (inside(xs[i]!, ys[i]!, rings[0]!)) expected++;
    expect(expected).toBeGreaterThan(20);
    const keep = page.locator("[data-testid=subset-keep]");
    await expect.poll(() => keep.textContent()).toContain(`n=${expected}`);
    expect(await page.locator("[data-testid=subset-remove]").textContent()).toContain(`n=${expected}`);
    await shot("subset-drawn");
    // What the server keeps (client.md 11): the cells whose centre is inside (the count shown) and
    // those whose outline meets the region, computed here from the cell boundaries.
    const kept = await subsetRows(sid, rings[0]!);
    expect(kept.size).toBeGreaterThanOrEqual(expected);
    await keep.click();
    // The app follows the child session; the parent is gone.
    const current = () =>
      page.evaluate(
        () => (document.querySelector("tessera-app") as unknown as { currentId: string | null }).currentId,
      );
    await expect
      .poll(
        async () => {
          const c = await current();
          return Boolean(c) && c !== sid;
        },
        { timeout: 90_000 },
      )
      .toBe(true);
    const child = (await current())!;
    const list = (await (await ts.api("/api/sessions")).json()) as {
      sessions: { id: string; parent_id: string | null }[];
    };
    expect(list.sessions.find((x) => x.id === child)?.parent_id).toBe(sid);
    expect(list.sessions.some((x) => x.id === sid)).toBe(false);
    // The child holds exactly those cells (matched by their coordinates).
    const [cx, cy] = await coords(child);
    expect(cx.length).toBe(kept.size);
    const key = (x: number, y: number) => `${x},${y}`;
    const childCells = new Set(Array.from(cx, (x, i) => key(x, cy[i]!)));
    for (const i of kept) expect(childCells.has(key(xs[i]!, ys[i]!))).toBe(true);
    await page.locator('tessera-spatial-canvas[data-ready="1"]').waitFor({ timeout: 60_000 });
    await expect
      .poll(() => page.locator("[data-testid=cells]").textContent(), { timeout: 30_000 })
      .toContain(String(kept.size));
    await shot("subset-child");
    sid = child;
  }, 180_000);

  it("edits the points transform as scale/rotation/translation and as a raw matrix", async () => {
    const cv = page.locator("tessera-spatial-canvas");
    await cv.getByRole("button", { name: "Show controls" }).click();
    await cv.getByRole("button", { name: "View" }).click();
    await cv.locator("[data-testid=edit-points-transform]").click();
    const dlg = page.locator("[data-testid=points-transform-dialog]");
    await dlg.waitFor();
    const orig = (
      (await (await ts.api(`/api/sessions/${sid}/points-transform`)).json()) as { affine: number[] }
    ).affine;
    await expect
      .poll(() => dlg.locator("[data-testid=pt-sx]").inputValue())
      .toBe(String(Math.hypot(orig[0]!, orig[3]!)));
    await dlg.locator("[data-testid=pt-sx]").fill("2");
    await dlg.locator("[data-testid=pt-sx]").press("Tab");
    await dlg.locator("[data-testid=pt-rot]").fill("30");
    await dlg.locator("[data-testid=pt-rot]").press("Tab");
    await dlg.locator("[data-testid=pt-tx]").fill("5");
    await dlg.locator("[data-testid=pt-tx]").press("Tab");
    await shot("points-transform");
    await dlg.locator("[data-testid=pt-save]").click();
    await dlg.waitFor({ state: "detached", timeout: 60_000 });
    const t = Math.PI / 6;
    const sy = (orig[0]! * orig[4]! - orig[1]! * orig[3]!) / Math.hypot(orig[0]!, orig[3]!);
    const got = (
      (await (await ts.api(`/api/sessions/${sid}/points-transform`)).json()) as { affine: number[] }
    ).affine;
    const want = [2 * Math.cos(t), -sy * Math.sin(t), 5, 2 * Math.sin(t), sy * Math.cos(t), orig[5]!];
    for (const [i, v] of got.entries()) expect(v).toBeCloseTo(want[i]!, 6);
    // The raw matrix: one cell changed, the others kept.
    await cv.locator("[data-testid=edit-points-transform]").click();
    await dlg.waitFor();
    await dlg.locator("[data-testid=matrix-tab]").click();
    await dlg.locator("[data-testid=pt-m5]").fill("-12.5");
    await dlg.locator("[data-testid=pt-m5]").press("Tab");
    await dlg.locator("[data-testid=pt-save]").click();
    await dlg.waitFor({ state: "detached", timeout: 60_000 });
    const raw = (
      (await (await ts.api(`/api/sessions/${sid}/points-transform`)).json()) as { affine: number[] }
    ).affine;
    for (const [i, v] of raw.entries()) expect(v).toBeCloseTo(i === 5 ? -12.5 : got[i]!, 9);
  });

  it("labels a region drawn on the embedding canvas, sent as the rows inside (cell_indices)", async () => {
    const clientId = (await page.evaluate(() => localStorage.getItem("tessera-client-id")))!;
    const job = await ts.api(`/api/sessions/${sid}/jobs`, {
      method: "POST",
      clientId,
      json: { namespace: "sc.pp", function: "pca", params: { n_comps: 5 } },
    });
    expect(job.status, await job.clone().text()).toBe(200);
    expect((await ts.waitJob(sid, ((await job.json()) as { job_id: string }).job_id, 120_000)).status).toBe(
      "completed",
    );
    const pca = tableFromIPC(
      new Uint8Array(await (await ts.api(`/api/sessions/${sid}/data/obsm:X_pca`)).arrayBuffer()),
    );
    const [px, py] = [
      pca.getChild("d0")!.toArray() as Float32Array,
      pca.getChild("d1")!.toArray() as Float32Array,
    ];
    const posts: unknown[] = [];
    page.on("request", (r) => {
      if (r.method() === "POST" && new URL(r.url()).pathname.endsWith("/annotate"))
        posts.push(r.postDataJSON());
    });
    await page.locator("[data-view=embeddings]").click();
    const emb = page.locator('tessera-embedding-canvas[data-ready="1"]');
    await emb.waitFor({ timeout: 60_000 });
    await page.locator("[data-sidebar-tab=regions]").click();
    await page.locator("[data-testid=region-set]").fill("pca_zones");
    await page.locator("[data-testid=region-category]").fill("left");
    const eb = (await emb.boundingBox())!;
    for (const [fx, fy] of [
      [0.2, 0.2],
      [0.5, 0.2],
      [0.5, 0.85],
      [0.2, 0.85],
    ] as const)
      await page.mouse.click(eb.x + eb.width * fx, eb.y + eb.height * fy);
    await page.locator("[data-testid=finish-region]").click();
    const ring = (await controller<number[][][]>("(c) => c.drawing.rings"))[0]!;
    expect(await controller<string>("(c) => c.drawing.canvas")).toBe("embedding");
    const rows: number[] = [];
    for (let i = 0; i < px.length; i++) if (inside(px[i]!, py[i]!, ring)) rows.push(i);
    expect(rows.length).toBeGreaterThan(5);
    expect(rows.length).toBeLessThan(px.length);
    const apply = page.locator("[data-testid=apply-label]");
    await expect.poll(() => apply.textContent()).toContain(`n=${rows.length}`);
    // A region drawn on the embedding cannot be outlined as shapes (they live in world space).
    expect(await page.locator("[data-testid=annotate-region]").isDisabled()).toBe(true);
    await shot("regions-embedding");
    await apply.click();
    await expect.poll(() => posts.length, { timeout: 20_000 }).toBe(1);
    expect(posts[0]).toMatchObject({ cell_indices: rows, region_set: "pca_zones", category: "left" });
    await expect
      .poll(
        async () => {
          const v = await ts.api(`/api/sessions/${sid}/obs/pca_zones/values`);
          return v.status === 200 ? ((await v.json()) as { values: unknown[] }).values : null;
        },
        { timeout: 60_000 },
      )
      .toContainEqual({ value: "left", count: rows.length });
  }, 180_000);

  it("selects in screen space on a 3D embedding, and moving the camera discards the ring", async () => {
    const cv = page.locator("tessera-embedding-canvas");
    await cv.getByRole("button", { name: "Show controls" }).click();
    await cv.locator("[data-testid=is-3d]").check();
    await page
      .locator('tessera-embedding-canvas[data-mode="3d"][data-ready="1"]')
      .waitFor({ timeout: 60_000 });
    await cv.getByRole("button", { name: "Minimize controls" }).click();
    await page.waitForTimeout(500);
    const eb = (await cv.boundingBox())!;
    const ring = [
      [0.25, 0.25],
      [0.6, 0.25],
      [0.6, 0.8],
      [0.25, 0.8],
    ].map(([fx, fy]) => [eb.width * fx!, eb.height * fy!]);
    for (const [x, y] of ring) await page.mouse.click(eb.x + x!, eb.y + y!);
    await page.locator("[data-testid=finish-region]").click();
    expect(await controller<boolean>("(c) => c.drawing.screen")).toBe(true);
    // Which cells the camera shows inside the ring: every point projected here, tested with this file's rule.
    const projected = await controller<number[][]>(`(c) => {
      const cv = c.canvas("embedding");
      const p = cv.positions, n = p.length / 3, out = [];
      for (let i = 0; i < n; i++) out.push(cv.project([p[3 * i], p[3 * i + 1], p[3 * i + 2]]) ?? [NaN, NaN]);
      return out;
    }`);
    const rows = projected.flatMap(([x, y], i) => (inside(x!, y!, ring as number[][]) ? [i] : []));
    expect(rows.length).toBeGreaterThan(0);
    await expect
      .poll(() => page.locator("[data-testid=apply-label]").textContent())
      .toContain(`n=${rows.length}`);
    expect(await controller<number[]>("(c) => c.selection().cell_indices")).toEqual(rows);
    await shot("regions-embedding-3d");
    // Moving the camera discards a ring drawn in screen space.
    await page.locator("[data-testid=draw-toggle]").click();
    await page.mouse.move(eb.x + eb.width / 2, eb.y + eb.height / 2);
    await page.mouse.wheel(0, -300);
    await expect.poll(() => controller<unknown>("(c) => c.drawing"), { timeout: 10_000 }).toBeNull();
  }, 120_000);
});
