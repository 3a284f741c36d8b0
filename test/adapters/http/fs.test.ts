import { mkdir, mkdtemp, realpath, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "./harness.js";

let t: TestServer;
let root: string;
let outside: string;

interface Entry {
  name: string;
  path: string;
  kind: "dir" | "dataset" | "file";
}
interface Browse {
  path: string;
  parent: string | null;
  entries: Entry[];
}

beforeAll(async () => {
  t = await startTestServer();
  root = await realpath(t.dataDir);
  outside = await mkdtemp(join(tmpdir(), "tessera-outside-"));
  await writeFile(join(outside, "secret.h5ad"), "x");
  await mkdir(join(outside, "far.zarr"));
  // Layout: nested datasets, a zarr store without the suffix, a .zarr folder with content (not descended
  // into), a hidden folder, plain files, symlinks inside and outside, the working dir (.work).
  await mkdir(join(root, "project", "run1", "sample.zarr", "tables", "nested.zarr"), { recursive: true });
  await writeFile(join(root, "project", "run1", "sample.zarr", "zarr.json"), "{}");
  await writeFile(join(root, "project", "run1", "cells.h5ad"), "x");
  await writeFile(join(root, "project", "run1", "notes.txt"), "x");
  await mkdir(join(root, "project", "store"), { recursive: true });
  await writeFile(join(root, "project", "store", ".zgroup"), "{}");
  await writeFile(join(root, "project", "image.ome.tif"), "x");
  await mkdir(join(root, ".hidden", "h.zarr"), { recursive: true });
  await mkdir(join(root, "deep", "a", "b", "c", "d", "e", "f", "g", "too_deep.zarr"), { recursive: true });
  await mkdir(join(root, ".work", "w.zarr"), { recursive: true });
  await symlink(outside, join(root, "escape"));
  await symlink(join(outside, "secret.h5ad"), join(root, "escape.h5ad"));
  await symlink(join(root, "project"), join(root, "alias"));
  await symlink(join(root, "nowhere"), join(root, "dangling"));
});
afterAll(async () => {
  await t?.close();
  await rm(outside, { recursive: true, force: true });
});

const browse = async (query: string): Promise<{ status: number; body: Browse & { detail?: string } }> => {
  const r = await t.api(`/api/fs/browse${query}`);
  return { status: r.status, body: (await r.json()) as Browse & { detail?: string } };
};

describe("GET /api/fs/datasets", () => {
  it("lists the loadable datasets under the data dir, relative names and absolute paths", async () => {
    const r = await t.api("/api/fs/datasets");
    expect(r.status).toBe(200);
    const { datasets } = (await r.json()) as { datasets: { name: string; path: string }[] };
    expect(datasets.map((d) => d.name)).toEqual([
      basename(t.demo),
      "project/image.ome.tif",
      "project/run1/cells.h5ad",
      "project/run1/sample.zarr",
      "project/store",
    ]);
    for (const d of datasets) expect(d.path).toBe(join(root, ...d.name.split("/")));
    // Not listed: inside a dataset, hidden folders, the working dir, beyond the depth bound, symlinks
    // leading outside, the same folder twice through a symlink.
    const names = datasets.map((d) => d.name).join(" ");
    for (const no of ["nested", "h.zarr", "w.zarr", "too_deep", "secret", "far.zarr", "alias", "notes"])
      expect(names).not.toContain(no);
  });

  it("takes no query parameters (400)", async () => {
    expect((await t.api("/api/fs/datasets?depth=99")).status).toBe(400);
  });

  it("a dataset listed loads as a session", async () => {
    const { datasets } = (await (await t.api("/api/fs/datasets")).json()) as {
      datasets: { name: string; path: string }[];
    };
    const demo = datasets.find((d) => d.name === basename(t.demo))!;
    const r = await t.api("/api/sessions", {
      method: "POST",
      json: { source: { kind: "load", path: demo.path } },
    });
    expect(r.status).toBe(201);
    const { id } = (await r.json()) as { id: string };
    await t.server.service.session(id).ready;
    expect(t.server.service.session(id).status).toBe("ready");
    await t.api(`/api/sessions/${id}`, { method: "DELETE" });
  });
});

describe("GET /api/fs/browse", () => {
  it("lists the data dir by default: folders, then datasets; parent null; no files, hidden or work dir", async () => {
    const { status, body } = await browse("");
    expect(status).toBe(200);
    expect(body.path).toBe(root);
    expect(body.parent).toBeNull();
    expect(body.entries).toEqual([
      { name: "alias", path: join(root, "project"), kind: "dir" },
      { name: "deep", path: join(root, "deep"), kind: "dir" },
      { name: "project", path: join(root, "project"), kind: "dir" },
      { name: basename(t.demo), path: t.demo.replace(t.dataDir, root), kind: "dataset" },
    ]);
  });

  it("lists files only with include_files=true", async () => {
    const { status, body } = await browse("?path=project/run1&include_files=true");
    expect(status).toBe(200);
    expect(body.path).toBe(join(root, "project", "run1"));
    expect(body.parent).toBe(join(root, "project"));
    expect(body.entries).toEqual([
      { name: "cells.h5ad", path: join(root, "project", "run1", "cells.h5ad"), kind: "dataset" },
      { name: "sample.zarr", path: join(root, "project", "run1", "sample.zarr"), kind: "dataset" },
      { name: "notes.txt", path: join(root, "project", "run1", "notes.txt"), kind: "file" },
    ]);
    const without = await browse("?path=project/run1&include_files=false");
    expect(without.body.entries.map((e) => e.kind)).toEqual(["dataset", "dataset"]);
    const one = await browse(`?path=${encodeURIComponent(join(root, "project"))}&include_files=1`);
    expect(one.body.entries).toEqual([
      { name: "run1", path: join(root, "project", "run1"), kind: "dir" },
      { name: "image.ome.tif", path: join(root, "project", "image.ome.tif"), kind: "dataset" },
      { name: "store", path: join(root, "project", "store"), kind: "dataset" },
    ]);
  });

  it("the parent chain ends at the data dir; '.' and the data dir itself are the root", async () => {
    for (const q of ["?path=.", `?path=${encodeURIComponent(root)}`, "?path=project/.."]) {
      const { status, body } = await browse(q);
      expect(status, q).toBe(200);
      expect(body.parent, q).toBeNull();
    }
  });

  it("refuses every path outside the data dir with 400", async () => {
    const attacks = [
      "..",
      "../..",
      "project/../../",
      "/",
      "/etc",
      outside,
      "escape",
      "escape/far.zarr",
      `${root}/../`,
      "..%2F..%2Fetc",
      "project%2F..%2F..%2F..%2Fetc",
      "%2Fetc",
    ];
    for (const a of attacks) {
      // Encoded once more so the server sees the raw value (`..%2F` arrives as `../`).
      const q = a.includes("%") ? a : encodeURIComponent(a);
      const { status, body } = await browse(`?path=${q}`);
      expect(status, `${a}: ${body.detail}`).toBe(400);
      expect(body.detail).toMatch(/outside the data dir/);
    }
  });

  it("refuses files (400), a missing folder (404), the working dir (400) and bad query values (400)", async () => {
    const file = await browse("?path=project/run1/notes.txt");
    expect(file.status).toBe(400);
    expect(file.body.detail).toMatch(/not a folder/);
    const missing = await browse("?path=nope");
    expect(missing.status).toBe(404);
    expect(missing.body.detail).toMatch(/no such folder/);
    const work = await browse("?path=.work");
    expect(work.status).toBe(400);
    expect((await browse("?include_files=maybe")).status).toBe(400);
    const extra = await browse("?path=project&depth=3");
    expect(extra.status).toBe(400);
    expect(extra.body.detail).toMatch(/unknown field "depth"/);
    expect((await browse("?path=%00")).status).toBe(400);
  });
});
