/**
 * The containment corpus (issue 22, part 4): every route, CLI command and SDK entry that takes a path
 * is asked for places outside the data dir — traversal, encodings, absolute paths, URLs, NUL bytes,
 * over-long names, symlinks, a link loop, FIFOs — and datasets inside the data dir carry links that
 * lead out: symlinked files and folders, a symlinked zarr chunk and element folder, HDF5 external
 * links (absolute and relative), zip entries named to climb out. Nothing outside is read or written,
 * every refusal says why, and nothing blocks.
 */
import { execFile } from "node:child_process";
import {
  cp,
  lstat,
  mkdir,
  mkdtemp,
  readFile,
  realpath,
  rename,
  rm,
  stat,
  symlink,
  writeFile,
} from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { main } from "../../../src/adapters/cli/main.js";
import { PathError } from "../../../src/sdk/errors.js";
import { readH5ad } from "../../../src/sdk/io/anndata/read-h5ad.js";
import { LinkOutsideError } from "../../../src/sdk/io/confine.js";
import { openData } from "../../../src/sdk/io/open.js";
import { writeSpatialData } from "../../../src/sdk/io/spatialdata/write.js";
import { FileRangeReader } from "../../../src/sdk/io/store/file-range-reader.js";
import { FsStore } from "../../../src/sdk/io/store/fs-store.js";
import { ZipStore } from "../../../src/sdk/io/store/zip-store.js";
import { consolidateV3 } from "../../../src/sdk/io/zarr/consolidated.js";
import { containPath } from "../../../src/sdk/session/paths.js";
import { writeH5ad, writeH5Dataset } from "../../helpers/h5ad.js";
import { folderEntries, writeZip } from "../../helpers/zip.js";
import { richDemo } from "../../sdk/data/rich-demo.js";
import { startTestServer, type TestServer } from "./harness.js";

const ANNDATA_ZARR = fileURLToPath(
  new URL("../../data/anndata-sparse-obsm/sparse-obsm.zarr", import.meta.url),
);
const MAIN = fileURLToPath(new URL("../../../src/adapters/cli/main.ts", import.meta.url));
const execFileP = promisify(execFile);

let t: TestServer;
let D: string; // the data dir (real path)
let O: string; // a folder outside it, holding secrets
let sid: string;
let gene: string;
const SECRET = "top secret: never served";

beforeAll(async () => {
  t = await startTestServer();
  D = await realpath(t.dataDir);
  O = await realpath(await mkdtemp(join(tmpdir(), "tessera-outside-")));
  sid = await t.openDemo();

  // Outside: files a link inside may try to reach.
  await writeFile(join(O, "secret.txt"), SECRET);
  await writeH5ad(join(O, "secret.h5ad"), { nObs: 2, nVars: 3, X: { dense: new Float32Array(6).fill(7) } });
  await writeH5Dataset(join(O, "secret.h5"), "/X", new Float32Array(6).fill(7), [2, 3]);
  await cp(ANNDATA_ZARR, join(O, "secret.zarr"), { recursive: true });
  await writeFile(join(O, "chunk"), SECRET);

  // Inside: links that lead out, and some that stay in.
  await symlink(join(O, "secret.h5ad"), join(D, "link-file.h5ad"));
  await symlink(join(O, "secret.zarr"), join(D, "link-dir.zarr"));
  await symlink(join(O, "secret.h5ad"), join(D, "link-out.sdata.zarr.zip"));
  await mkdir(join(D, "sub"));
  await symlink(D, join(D, "sub", "up"));
  await symlink(join(D, "loop"), join(D, "loop"));
  await writeH5ad(join(D, "ext-abs.h5ad"), {
    nObs: 2,
    nVars: 3,
    X: { external: { file: join(O, "secret.h5"), path: "/X" } },
  });
  const rel = join("..", basename(O), "secret.h5");
  await writeH5ad(join(D, "ext-rel.h5ad"), { nObs: 2, nVars: 3, X: { external: { file: rel, path: "/X" } } });
  await writeH5Dataset(join(D, "inner.h5"), "/X", new Float32Array([1, 2, 3, 4, 5, 6]), [2, 3]);
  await writeH5ad(join(D, "ext-in.h5ad"), {
    nObs: 2,
    nVars: 3,
    X: { external: { file: "inner.h5", path: "/X" } },
  });
  await writeH5ad(join(D, "ext-obsm.h5ad"), {
    nObs: 2,
    nVars: 3,
    X: { dense: new Float32Array(6) },
    extra: [{ path: "/obsm/X_secret", external: { file: join(O, "secret.h5"), path: "/X" } }],
  });
  // An AnnData zarr whose X chunk is a symlink out, and one whose chunk links inside.
  await cp(ANNDATA_ZARR, join(D, "chunk-link.zarr"), { recursive: true });
  await rm(join(D, "chunk-link.zarr", "X", "c", "0", "0"));
  await symlink(join(O, "chunk"), join(D, "chunk-link.zarr", "X", "c", "0", "0"));
  await cp(ANNDATA_ZARR, join(D, "chunk-in.zarr"), { recursive: true });
  await rename(join(D, "chunk-in.zarr", "X", "c", "0", "0"), join(D, "moved-chunk"));
  await symlink(join(D, "moved-chunk"), join(D, "chunk-in.zarr", "X", "c", "0", "0"));
  gene = (await openData(join(D, "chunk-in.zarr"))).sdata.tables.table!.var.index.values[0]!;
  // A SpatialData folder whose element folder is a symlink out.
  const sd = join(D, "sd-elem.zarr");
  const store = new FsStore(sd);
  await writeSpatialData(richDemo(), store);
  await consolidateV3(store);
  await rename(join(sd, "shapes", "cell_boundaries"), join(O, "cell_boundaries"));
  await symlink(join(O, "cell_boundaries"), join(sd, "shapes", "cell_boundaries"));
  // FIFOs: a file, a zip, a chunk.
  await execFileP("mkfifo", [join(D, "fifo.h5ad"), join(D, "fifo.zarr.zip")]);
  await cp(ANNDATA_ZARR, join(D, "fifo-chunk.zarr"), { recursive: true });
  await rm(join(D, "fifo-chunk.zarr", "X", "c", "0", "0"));
  await execFileP("mkfifo", [join(D, "fifo-chunk.zarr", "X", "c", "0", "0")]);
  // A zip whose extra entries are named to climb out (zip-slip) beside a valid AnnData store.
  await writeZip(join(D, "zipslip.zarr.zip"), [
    ...(await folderEntries(ANNDATA_ZARR)),
    { name: "../../evil.txt", data: new TextEncoder().encode("evil") },
    { name: "/abs-evil.txt", data: new TextEncoder().encode("evil") },
    { name: "X/../../evil2.txt", data: new TextEncoder().encode("evil") },
    { name: "obs\\..\\..\\evil3.txt", data: new TextEncoder().encode("evil") },
  ]);
});

afterAll(async () => {
  await t?.close();
  if (O) await rm(O, { recursive: true, force: true });
});

/** The `{detail}` of a 4xx answer. */
async function detail4xx(r: Response, label: string): Promise<string> {
  expect(r.status, label).toBeGreaterThanOrEqual(400);
  expect(r.status, label).toBeLessThan(500);
  const body = (await r.json()) as { detail?: unknown };
  expect(typeof body.detail, label).toBe("string");
  return body.detail as string;
}

/** Paths that lead outside the data dir, by how. */
function escapes(): [string, string][] {
  const ob = basename(O);
  return [
    ["parent", `../${ob}/secret.h5ad`],
    ["absolute", join(O, "secret.h5ad")],
    ["absolute folder", O],
    ["through a subfolder", `sub/../../${ob}/secret.h5ad`],
    ["dot-slash parent", `./../${ob}/secret.h5ad`],
    ["deep parent", `a/b/../../../${ob}/secret.h5ad`],
    ["absolute with ..", `${D}/../${ob}/secret.h5ad`],
    ["/etc/passwd", "/etc/passwd"],
    ["//etc/passwd", "//etc/passwd"],
    ["/etc", "/etc"],
    ["root", "/"],
    ["..", ".."],
    ["../", "../"],
    ["file URL", "file:///etc/passwd"],
    ["file URL in the data dir", `file://${D}/demo.sdata.zarr.zip`],
    ["http URL", "http://127.0.0.1:9/x.zarr.zip"],
    ["NUL byte", "x\u0000/../../etc/passwd"],
    ["a name over 255 bytes", "a".repeat(300)],
    ["a path over 4096 characters", "x/".repeat(2100)],
    ["a symlinked file", "link-file.h5ad"],
    ["a symlinked folder", "link-dir.zarr"],
    ["a symlinked folder's content", "link-dir.zarr/X"],
    ["a link through a link back in", "sub/up/link-file.h5ad"],
    ["a link loop", "loop"],
  ];
}

/** Paths inside that name nothing readable: encodings that are just names, a FIFO. */
function unreadable(): [string, string][] {
  return [
    ["percent-encoded dots (a plain name)", "%2e%2e/%2e%2e/etc/passwd"],
    ["percent-encoded slashes (a plain name)", "..%2F..%2Fetc%2Fpasswd"],
    ["backslashes (a plain name)", "..\\..\\etc\\passwd"],
    ["fullwidth dots (a plain name)", "．．/．．/etc/passwd"],
    ["a tilde (a plain name)", "~/.ssh/id_rsa"],
    ["a FIFO named .h5ad", "fifo.h5ad"],
    ["a FIFO named .zarr.zip", "fifo.zarr.zip"],
  ];
}

describe("routes refuse paths outside the data dir", () => {
  const readBody = (path: string) => ({
    source: { kind: "read", namespace: "read", function: "read_data", params: { path } },
  });

  it("POST /api/sessions (load and a reader's params): 400 for every escape and every unreadable path", async () => {
    for (const [how, path] of [...escapes(), ...unreadable()]) {
      const load = await t.api("/api/sessions", { method: "POST", json: { source: { kind: "load", path } } });
      const d1 = await detail4xx(load, `load ${how}`);
      expect(load.status, how).toBe(400);
      const read = await t.api("/api/sessions", { method: "POST", json: readBody(path) });
      const d2 = await detail4xx(read, `read ${how}`);
      expect(read.status, how).toBe(400);
      for (const d of [d1, d2]) expect(d, how).not.toContain(SECRET);
    }
    // The FIFO answers at once: nothing opened it.
    const t0 = Date.now();
    await t.api("/api/sessions", { method: "POST", json: { source: { kind: "load", path: "fifo.h5ad" } } });
    expect(Date.now() - t0).toBeLessThan(2000);
    expect(t.server.service.list().length).toBe(1);
  });

  it("the messages say which rule: outside the data dir, a URL, too long, a link loop, not a regular file", async () => {
    const say = async (path: string) =>
      detail4xx(
        await t.api("/api/sessions", { method: "POST", json: { source: { kind: "load", path } } }),
        path,
      );
    expect(await say("link-file.h5ad")).toMatch(/resolves to .*secret\.h5ad.* is outside the data dir/);
    expect(await say("/etc/passwd")).toMatch(/outside the data dir/);
    expect(await say("file:///etc/passwd")).toMatch(/is a URL/);
    expect(await say("a".repeat(300))).toMatch(/300 bytes \(at most 255\)/);
    expect(await say("loop")).toMatch(/too many levels of symbolic links/);
    expect(await say("fifo.h5ad")).toMatch(/not a regular file or folder/);
    expect(await say("x\u0000y")).toMatch(/NUL/);
  });

  it("GET /api/fs/browse: 400 for every escape; names never listed through a link out", async () => {
    for (const [how, path] of escapes()) {
      const r = await t.api(`/api/fs/browse?path=${encodeURIComponent(path)}`);
      await detail4xx(r, `browse ${how}`);
    }
    const top = (await (await t.api("/api/fs/browse?include_files=1")).json()) as {
      entries: { name: string }[];
    };
    const names = top.entries.map((e) => e.name);
    expect(names).not.toContain("link-file.h5ad");
    expect(names).not.toContain("link-dir.zarr");
    expect(names).toContain("ext-abs.h5ad");
    const ds = (await (await t.api("/api/fs/datasets")).json()) as { datasets: { path: string }[] };
    for (const d of ds.datasets) expect(d.path.startsWith(D), d.path).toBe(true);
  });

  it("POST /save (path and folder) and POST /points-transform (path): 400 for every escape", async () => {
    for (const [how, path] of escapes()) {
      const save = await t.api(`/api/sessions/${sid}/save`, { method: "POST", json: { path } });
      await detail4xx(save, `save path ${how}`);
      const folder = await t.api(`/api/sessions/${sid}/save`, { method: "POST", json: { folder: path } });
      await detail4xx(folder, `save folder ${how}`);
      const pt = await t.api(`/api/sessions/${sid}/points-transform`, {
        method: "POST",
        json: { affine: [1, 0, 0, 0, 1, 0], path },
      });
      await detail4xx(pt, `points-transform ${how}`);
    }
  });

  it("staging, editing a pending step and a posted recipe check a reader's paths at once, not at run", async () => {
    const ok = await t.api(`/api/sessions/${sid}/jobs/stage`, {
      method: "POST",
      json: { namespace: "read", function: "read_data", params: { path: basename(t.demo) } },
    });
    expect(ok.status).toBe(200);
    const { step_id } = (await ok.json()) as { step_id: string };
    for (const [how, path] of [...escapes(), ...unreadable()]) {
      const stage = await t.api(`/api/sessions/${sid}/jobs/stage`, {
        method: "POST",
        json: { namespace: "read", function: "read_data", params: { path } },
      });
      expect(stage.status, `stage ${how}`).toBe(400);
      const put = await t.api(`/api/sessions/${sid}/pending/${step_id}`, {
        method: "PUT",
        json: { params: { path } },
      });
      expect(put.status, `PUT pending ${how}`).toBe(400);
      const recipe = await t.api(`/api/sessions/${sid}/recipe/run`, {
        method: "POST",
        json: {
          meta: { name: "r" },
          mode: "stage",
          steps: [{ namespace: "read", function: "read_data", params: { path } }],
        },
      });
      expect(recipe.status, `recipe ${how}`).toBe(400);
    }
    // The step kept its contained path.
    const state = (await (await t.api(`/api/sessions/${sid}`)).json()) as {
      app_state: { compute_history: { id: string; params: { path: string } }[] };
    };
    expect(state.app_state.compute_history.find((e) => e.id === step_id)?.params.path).toBe(basename(t.demo));
  });

  it("GET /api/checkpoints/{name}: encoded traversal and a link out are refused", async () => {
    for (const name of [
      "..%2Fdemo.sdata.zarr.zip",
      "%2e%2e%2Fx.zarr.zip",
      "link-out.sdata.zarr.zip",
      "sub%2Fup%2Fdemo.sdata.zarr.zip",
    ]) {
      const r = await t.api(`/api/checkpoints/${name}`);
      await detail4xx(r, name);
    }
  });
});

describe("links inside datasets of the data dir", () => {
  async function load(path: string): Promise<{ id: string; status: string; error: string | null }> {
    const r = await t.api("/api/sessions", { method: "POST", json: { source: { kind: "load", path } } });
    expect(r.status, path).toBe(201);
    const { id } = (await r.json()) as { id: string };
    const s = t.server.service.session(id);
    await s.ready;
    const sum = s.summary();
    return { id, status: sum.status, error: sum.error };
  }

  it("an h5ad whose X is an HDF5 external link out (absolute or relative) fails to load, naming the link", async () => {
    for (const f of ["ext-abs.h5ad", "ext-rel.h5ad"]) {
      const s = await load(f);
      expect(s.status, f).toBe("errored");
      expect(s.error, f).toMatch(
        /\/X is an HDF5 external link to .*secret\.h5:\/X, which resolves to .* outside .*data dir/,
      );
      await t.server.service.deleteSession(s.id);
    }
  });

  it("an external link that stays inside reads; one in obsm leading out fails the load, naming it", async () => {
    const inside = await load("ext-in.h5ad");
    expect(inside.status).toBe("ready");
    const x = await t.api(`/api/sessions/${inside.id}/data/${encodeURIComponent("X:gene1")}`);
    expect(x.status).toBe(200);
    const values = (await import("apache-arrow")).tableFromIPC(new Uint8Array(await x.arrayBuffer()));
    expect([...values.getChild("value")!.toArray()]).toEqual([2, 5]);
    const obsm = await load("ext-obsm.h5ad");
    expect(obsm.status).toBe("errored");
    expect(obsm.error).toMatch(
      /\/obsm\/X_secret is an HDF5 external link to .*secret\.h5:\/X, which resolves to .* outside/,
    );
    for (const id of [inside.id, obsm.id]) await t.server.service.deleteSession(id);
  });

  it("a zarr chunk that is a symlink out is a 422 naming the chunk, never its bytes or zeros; one inside reads", async () => {
    const s = await load("chunk-link.zarr");
    expect(s.status).toBe("ready");
    const r = await t.api(`/api/sessions/${s.id}/data/${encodeURIComponent(`X:${gene}`)}`);
    expect(r.status).toBe(422);
    const d = await detail4xx(r, "chunk link");
    expect(d).toMatch(/X\/c\/0\/0 is a link to .*chunk, outside/);
    expect(d).not.toContain(SECRET);
    const ok = await load("chunk-in.zarr");
    expect((await t.api(`/api/sessions/${ok.id}/data/${encodeURIComponent(`X:${gene}`)}`)).status).toBe(200);
    for (const id of [s.id, ok.id]) await t.server.service.deleteSession(id);
  });

  it("a chunk that is a FIFO is refused at once (the event loop and the thread pool stay free)", async () => {
    const s = await load("fifo-chunk.zarr");
    const t0 = Date.now();
    const r = await t.api(`/api/sessions/${s.id}/data/${encodeURIComponent(`X:${gene}`)}`);
    expect(await detail4xx(r, "fifo chunk")).toMatch(/not a regular file/);
    expect(Date.now() - t0).toBeLessThan(2000);
    expect((await t.api("/api/healthz")).status).toBe(200);
    await t.server.service.deleteSession(s.id);
  });

  it("a SpatialData element folder linked out is never read, served or written (points-transform)", async () => {
    const outsideMeta = join(O, "cell_boundaries", "zarr.json");
    const before = await readFile(outsideMeta, "utf8");
    const mtime = (await stat(outsideMeta)).mtimeMs;
    const s = await load("sd-elem.zarr");
    if (s.status === "ready") {
      const shapes = await t.api(`/api/sessions/${s.id}/shapes/cell_boundaries/geoarrow`);
      expect(shapes.status).toBeGreaterThanOrEqual(400);
      expect(shapes.status).toBeLessThan(500);
      const pt = await t.api(`/api/sessions/${s.id}/points-transform`, {
        method: "POST",
        json: { affine: [2, 0, 0, 0, 2, 0], path: "sd-elem.zarr" },
      });
      if (pt.status === 200) {
        const { job_id } = (await pt.json()) as { job_id: string };
        const done = await t.waitJob(s.id, job_id);
        expect(done.status).toBe("failed");
      } else await detail4xx(pt, "points-transform");
      await t.server.service.deleteSession(s.id);
    } else {
      expect(s.error).toMatch(/cell_boundaries.* is a link to .* outside/);
    }
    expect(await readFile(outsideMeta, "utf8")).toBe(before);
    expect((await stat(outsideMeta)).mtimeMs).toBe(mtime);
    expect(await lstat(join(O, "cell_boundaries", "zarr.json.tessera-tmp")).catch(() => null)).toBeNull();
  });

  it("zip entries named to climb out are left out of the store, and a save writes none of them", async () => {
    const zs = await ZipStore.open(new FileRangeReader(join(D, "zipslip.zarr.zip")));
    expect(zs.skipped.map((s) => s.name).sort()).toEqual(
      ["../../evil.txt", "/abs-evil.txt", "X/../../evil2.txt", "obs\\..\\..\\evil3.txt"].sort(),
    );
    expect([...zs.entries.keys()].some((k) => k.includes(".."))).toBe(false);
    const s = await load("zipslip.zarr.zip");
    expect(s.status).toBe("ready");
    const saved = await t.api(`/api/sessions/${s.id}/save`, {
      method: "POST",
      json: { path: "zipslip-out.sdata.zarr.zip" },
    });
    expect(saved.status).toBe(200);
    const { job_id } = (await saved.json()) as { job_id: string };
    expect((await t.waitJob(s.id, job_id)).status).toBe("completed");
    const out = await ZipStore.open(new FileRangeReader(join(D, "zipslip-out.sdata.zarr.zip")));
    expect(out.skipped).toEqual([]);
    expect(out.directory.entries.some((e) => e.name.includes("evil"))).toBe(false);
    for (const p of [join(D, "..", "evil.txt"), "/abs-evil.txt", join(D, "..", "evil2.txt")])
      expect(await lstat(p).catch(() => null), p).toBeNull();
    await t.server.service.deleteSession(s.id);
  });
});

describe("SDK entries", () => {
  it("containPath refuses every escape with a PathError", async () => {
    for (const [how, path] of escapes()) {
      await expect(
        (async () => {
          const real = await containPath(D, path, "path");
          // A contained path that exists must not be a link out.
          if (real.startsWith(O)) throw new Error("escaped");
        })(),
        how,
      ).rejects.toBeInstanceOf(PathError);
    }
  });

  it("openData and readH5ad refuse HDF5 external links out, FIFOs, and chunk links out", async () => {
    await expect(openData(join(D, "ext-abs.h5ad"))).rejects.toThrow(/external link .* outside/);
    await expect(readH5ad(join(D, "ext-rel.h5ad"))).rejects.toThrow(/external link .* outside/);
    await expect(openData(join(D, "fifo.h5ad"))).rejects.toThrow(/not a regular file/);
    await expect(openData(join(D, "fifo.zarr.zip"))).rejects.toThrow(/not a regular file/);
    const r = await openData(join(D, "chunk-link.zarr"));
    await expect(
      r.sdata.tables.table!.X!.kind === "lazy" ? r.sdata.tables.table!.X!.load() : Promise.resolve(),
    ).rejects.toBeInstanceOf(LinkOutsideError);
    expect(await readH5ad(join(D, "ext-in.h5ad")).then((x) => x.table.X?.kind)).toBeTruthy();
  });

  it("FsStore reads a link only inside, and a write replaces a link instead of writing through it", async () => {
    const store = new FsStore(join(D, "chunk-link.zarr"));
    await expect(store.get("/X/c/0/0")).rejects.toThrow(/is a link to .*chunk, outside/);
    await expect(store.getRange("/X/c/0/0", { offset: 0, length: 4 })).rejects.toBeInstanceOf(
      LinkOutsideError,
    );
    const w = join(D, "writes");
    await mkdir(w);
    await symlink(join(O, "secret.txt"), join(w, "target"));
    await new FsStore(w).set("/target", new TextEncoder().encode("new"));
    expect(await readFile(join(O, "secret.txt"), "utf8")).toBe(SECRET);
    expect((await lstat(join(w, "target"))).isSymbolicLink()).toBe(false);
    await symlink(O, join(w, "dir-out"));
    await expect(new FsStore(w).set("/dir-out/planted", new Uint8Array([1]))).rejects.toThrow(/outside/);
    expect(await lstat(join(O, "planted")).catch(() => null)).toBeNull();
  });
});

describe("CLI commands", () => {
  async function cli(...args: string[]): Promise<{ code: number; stderr: string }> {
    const err: string[] = [];
    const write = process.stderr.write.bind(process.stderr);
    const out = process.stdout.write.bind(process.stdout);
    process.stderr.write = ((s: string) => {
      err.push(String(s));
      return true;
    }) as typeof process.stderr.write;
    process.stdout.write = (() => true) as typeof process.stdout.write;
    try {
      return { code: await main(args), stderr: err.join("") };
    } finally {
      process.stderr.write = write;
      process.stdout.write = out;
    }
  }

  it("inspect, convert and run fail (exit 1) on links out and FIFOs, saying why", async () => {
    const a = await cli("inspect", join(D, "ext-abs.h5ad"));
    expect(a.code).toBe(1);
    expect(a.stderr).toMatch(/external link .* outside/);
    const f = await cli("inspect", join(D, "fifo.h5ad"));
    expect(f.code).toBe(1);
    expect(f.stderr).toMatch(/not a regular file/);
    const c = await cli("inspect", join(D, "chunk-link.zarr"), "--field", `X:${gene}`);
    expect(c.code).toBe(1);
    expect(c.stderr).toMatch(/is a link to .* outside/);
    const conv = await cli("convert", join(D, "ext-rel.h5ad"), join(D, "conv.sdata.zarr.zip"));
    expect(conv.code).toBe(1);
    const r = await cli(
      "run",
      "preprocess_qc",
      "--input",
      join(O, "secret.h5ad"),
      "--output",
      join(D, "run-out.sdata.zarr.zip"),
      "--data-dir",
      D,
    );
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/outside the data dir/);
  });

  it("the real process exits non-zero on an external link out (it used to abort and exit 0)", async () => {
    const res = await execFileP(process.execPath, [
      "--import",
      "tsx",
      MAIN,
      "inspect",
      join(D, "ext-abs.h5ad"),
    ]).then(
      () => ({ code: 0, stderr: "" }),
      (e: { code: number; stderr: string }) => ({ code: e.code, stderr: e.stderr }),
    );
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/external link/);
    expect(res.stderr).not.toMatch(/Aborted/);
  });
});
