/**
 * The function picker and generated forms in a real browser (Debian chromium) against the real
 * server on 127.0.0.1 with the demo dataset: a bad value (a negative where the schema says minimum
 * 0) comes back as the server's 400 and shows on that field; then `sc.pp.normalize_total` and
 * `sc.pp.log1p` run from their generated forms (posted with the client id header) and their jobs
 * complete in the session's history; Run and Stage are disabled with the reason while another client
 * holds the edit lock; an `obs_value_map` is edited over its column's categories; Stage adds a
 * pending step.
 */
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildWebApp } from "../../scripts/build-app.js";
import { startTestServer, type TestServer } from "../adapters/http/harness.js";
import { HAVE_CHROMIUM, launchChromium } from "./browser.js";

const d = HAVE_CHROMIUM ? describe : describe.skip;

let ts: TestServer;
let browser: Browser;
let page: Page;
let sid: string;
const jobPosts: { body: unknown; clientId: string | undefined }[] = [];

beforeAll(async () => {
  if (!HAVE_CHROMIUM) return;
  const appDir = join(await mkdtemp(join(tmpdir(), "tessera-forms-")), "app");
  await buildWebApp({ outdir: appDir });
  ts = await startTestServer({
    demo: { nCells: 600, nGenes: 30, imageSize: 256, nTranscripts: 50 },
    config: { staticDir: appDir },
  });
  sid = await ts.openDemo();
  browser = await launchChromium();
  page = await browser.newPage({ viewport: { width: 1200, height: 800 } });
  page.on("request", (r) => {
    if (r.method() === "POST" && new URL(r.url()).pathname.endsWith("/jobs"))
      jobPosts.push({ body: r.postDataJSON(), clientId: r.headers()["x-tessera-client-id"] });
  });
  page.on("pageerror", (e) => console.error("page error:", e.message));
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await ts?.close();
});

interface History {
  app_state: { compute_history: { namespace: string; function: string; status: string }[] };
}

async function history(): Promise<string[]> {
  const st = (await (await ts.api(`/api/sessions/${sid}`)).json()) as History;
  return st.app_state.compute_history.map((h) => `${h.namespace}.${h.function}:${h.status}`);
}

async function pick(key: string, search: string): Promise<void> {
  await page.locator("[data-testid=run-function]").click();
  await page.locator("[data-testid=function-search]").fill(search);
  await page.locator(`[data-testid=function-list] [data-function="${key}"]`).click();
  await page.locator(`form[data-function="${key}"]`).waitFor();
}

d("function picker and generated forms", () => {
  it("lists the registry grouped by namespace, with a summary and a documentation link", async () => {
    await page.goto(`${ts.url}/`);
    await page.locator("[data-testid=run-function]").waitFor({ timeout: 60_000 });
    await pick("sc.pp.normalize_total", "normalize");
    const detail = page.locator("[data-testid=function-detail]");
    expect(await detail.textContent()).toContain("Normalise counts per cell");
    expect(await detail.locator("a").getAttribute("href")).toBe(
      "https://scanpy.readthedocs.io/en/stable/api/generated/scanpy.pp.normalize_total.html",
    );
    // Defaults filled from the schema; the layer picker is a select (layer_key), not free text.
    expect(await page.locator("[data-param=max_fraction]").inputValue()).toBe("0.05");
    expect(await page.locator("[data-param=exclude_highly_expressed]").isChecked()).toBe(false);
    expect(await page.locator("[data-param=layer]").evaluate((el) => el.tagName)).toBe("SELECT");
    // The Plots tab lists exactly the registry's plot functions; the Compute tab none of them.
    const reg = (await (await ts.api("/api/functions")).json()) as {
      functions: { key: string; effect_class: string }[];
    };
    const plots = reg.functions.filter((f) => f.effect_class === "plot").map((f) => f.key);
    expect(plots.length).toBeGreaterThan(0);
    const list = page.locator("[data-testid=function-list]");
    const listed = () =>
      list.locator("[data-function]").evaluateAll((els) => els.map((e) => e.getAttribute("data-function")));
    await page.locator("[data-testid=function-search]").fill("");
    await page.locator("[data-tab=plots]").click();
    await expect.poll(async () => (await listed()).sort()).toEqual([...plots].sort());
    await page.locator("[data-tab=compute]").click();
    await expect.poll(async () => (await listed()).filter((k) => plots.includes(k!))).toEqual([]);
    expect((await listed()).length).toBeGreaterThan(0);
    // The parameter documentation is the tooltip.
    expect(await page.locator("[data-field=max_fraction] label").getAttribute("title")).toBe(
      "The fraction of a cell's total above which a gene counts as highly expressed.",
    );
  });

  it("shows the server's 400 on the field it names, and runs nothing", async () => {
    await page.locator("[data-param=max_fraction]").fill("-1");
    await page.locator("[data-action=run]").click();
    const err = page.locator("[data-error-for=max_fraction]");
    await err.waitFor({ timeout: 15_000 });
    expect(await err.textContent()).toContain(">= 0");
    expect(await history()).toEqual([]);
    // The form was really posted (the server judged it) with the browser's client id.
    expect(jobPosts.at(-1)).toMatchObject({
      body: { namespace: "sc.pp", function: "normalize_total", params: { max_fraction: -1 } },
    });
    expect(jobPosts.at(-1)!.clientId).toBeTruthy();
  });

  it("runs normalize_total then log1p from their forms; both jobs complete", async () => {
    await page.locator("[data-param=max_fraction]").fill("0.05");
    await page.locator("[data-action=run]").click();
    await page.locator("tessera-function-picker").waitFor({ state: "detached", timeout: 15_000 });
    await expect.poll(history, { timeout: 60_000 }).toEqual(["sc.pp.normalize_total:completed"]);

    await pick("sc.pp.log1p", "log1p");
    await page.locator("[data-action=run]").click();
    await expect
      .poll(history, { timeout: 60_000 })
      .toEqual(["sc.pp.normalize_total:completed", "sc.pp.log1p:completed"]);
    expect(jobPosts.at(-1)!.body).toMatchObject({ namespace: "sc.pp", function: "log1p" });
    // The sidebar's history shows both steps.
    await expect
      .poll(() => page.locator("aside").textContent(), { timeout: 15_000 })
      .toMatch(/normalize_total[\s\S]*log1p/);
  });

  it("disables Run and Stage with the reason while someone else holds the edit lock", async () => {
    const other = { clientId: "other-browser-42", clientName: "Ada" };
    // Running took the lock for this browser (the server's rule); give it up through the lock badge.
    await page.locator("[data-testid=lock-badge]").click();
    await page.getByRole("button", { name: "Unlock" }).click();
    await expect.poll(() => page.locator("[data-testid=lock-badge]").textContent()).toContain("Unlocked");
    const r = await ts.api(`/api/sessions/${sid}/lock`, { method: "POST", ...other });
    expect(r.status, await r.clone().text()).toBe(200);
    await page.locator("[data-testid=run-function]").click();
    await page.locator("[data-testid=function-search]").fill("log1p");
    await page.locator('[data-testid=function-list] [data-function="sc.pp.log1p"]').click();
    const run = page.locator("[data-action=run]");
    await expect.poll(() => run.isDisabled(), { timeout: 20_000 }).toBe(true);
    expect(await run.getAttribute("title")).toBe("Ada holds the edit lock.");
    expect(await page.locator("[data-action=stage]").isDisabled()).toBe(true);
    // The fields stay readable.
    expect(await page.locator("[data-param=base]").count()).toBe(1);
    await ts.api(`/api/sessions/${sid}/lock`, { method: "DELETE", ...other });
    await expect.poll(() => run.isDisabled(), { timeout: 20_000 }).toBe(false);
    await page.getByRole("button", { name: "Close", exact: true }).click();
    await page.locator("tessera-function-picker").waitFor({ state: "detached" });
  });

  it("edits an obs_value_map row by row over the categories of its sibling column", async () => {
    await pick("custom.rename_categories", "rename");
    expect(await page.locator("[data-testid=function-list]").textContent()).toContain("custom");
    await page.locator("[data-param=key]").selectOption("cell_type");
    const values = (await (await ts.api(`/api/sessions/${sid}/obs/cell_type/values`)).json()) as {
      values: { value: string }[];
    };
    const cats = values.values.map((v) => v.value);
    const rows = page.locator("[data-map=mapping] input[data-category]");
    await expect.poll(() => rows.count(), { timeout: 15_000 }).toBe(cats.length);
    await page.locator(`[data-map=mapping] input[data-category="${cats[0]}"]`).fill("renamed_type");
    await page.locator("[data-action=run]").click();
    await expect
      .poll(async () => (await history()).at(-1), { timeout: 60_000 })
      .toBe("custom.rename_categories:completed");
    expect(jobPosts.at(-1)!.body).toEqual({
      namespace: "custom",
      function: "rename_categories",
      params: { key: "cell_type", mapping: { [cats[0]!]: "renamed_type" } },
    });
    const after = (await (await ts.api(`/api/sessions/${sid}/obs/cell_type/values`)).json()) as {
      values: { value: string }[];
    };
    expect(after.values.map((v) => v.value)).toContain("renamed_type");
    expect(after.values.map((v) => v.value)).not.toContain(cats[0]);
  });

  it("stages a pending step from a form", async () => {
    await pick("sc.pp.log1p", "log1p");
    await page.locator("[data-action=stage]").click();
    await page.locator("tessera-function-picker").waitFor({ state: "detached", timeout: 15_000 });
    await expect.poll(async () => (await history()).at(-1), { timeout: 15_000 }).toBe("sc.pp.log1p:pending");
  });
});
