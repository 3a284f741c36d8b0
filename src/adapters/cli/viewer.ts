/**
 * `tessera viewer export OUT_DIR [CHECKPOINT…]`: a serverless deployment in a folder (client.md
 * 17.2): the built web app (relative asset URLs), the checkpoints, and an `index.json`
 * (`{title, checkpoints: [{path, label}]}`) any static server that answers HTTP Range can serve.
 * Without CHECKPOINT arguments, the checkpoints of the data dir are exported.
 */
import { copyFile, cp, mkdir, readdir, stat, writeFile } from "node:fs/promises";
import { basename, join, resolve } from "node:path";
import { openCheckpoint } from "../../sdk/io/checkpoint/read.js";
import { readConfig } from "../../sdk/session/config.js";
import { webAppDir } from "../http/routes/app-static.js";

/** What `exportViewer` wrote. */
export interface ViewerExport {
  outDir: string;
  checkpoints: { path: string; label: string }[];
}

/** Write the app, the checkpoints and `index.json` into `outDir`. */
export async function exportViewer(
  outDir: string,
  checkpoints: readonly string[],
  opts: { appDir?: string; title?: string } = {},
): Promise<ViewerExport> {
  const app = opts.appDir ?? webAppDir(readConfig().staticDir);
  if (!app) throw new Error("the web app is not built: run `npm run build` first");
  const out = resolve(outDir);
  await mkdir(out, { recursive: true });
  await cp(app, out, { recursive: true });
  const entries: { path: string; label: string }[] = [];
  const used = new Set<string>();
  for (const file of checkpoints) {
    // A checkpoint the viewer cannot open is refused here, not in the reader's browser.
    const c = await openCheckpoint(resolve(file));
    let name = basename(file);
    for (let i = 2; used.has(name); i++) name = `${i}-${basename(file)}`;
    used.add(name);
    await copyFile(resolve(file), join(out, name));
    entries.push({ path: name, label: c.sidecar.name || name });
  }
  await writeFile(
    join(out, "index.json"),
    `${JSON.stringify({ title: opts.title ?? "Tessera", checkpoints: entries }, null, 2)}\n`,
  );
  return { outDir: out, checkpoints: entries };
}

/** The CLI command. */
export async function viewerExportCommand(outDir: string, files: string[]): Promise<void> {
  let list = files;
  if (!list.length) {
    const dir = readConfig().dataDir;
    list = (await readdir(dir)).filter((n) => n.endsWith(".sdata.zarr.zip")).map((n) => join(dir, n));
    if (!list.length) throw new Error(`no checkpoints given and none in the data dir ${dir}`);
  }
  const r = await exportViewer(outDir, list);
  let bytes = 0;
  for (const c of r.checkpoints) bytes += (await stat(join(r.outDir, c.path))).size;
  process.stdout.write(
    `wrote ${r.outDir}: the web app, index.json and ${r.checkpoints.length} checkpoint(s) (${(bytes / 1e6).toFixed(1)} MB)\n` +
      `serve the folder with any static server that answers Range requests (e.g. \`npx http-server ${outDir}\`) and open index.html\n`,
  );
}
