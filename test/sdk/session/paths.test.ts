import { mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PathError } from "../../../src/sdk/errors.js";
import { containParams, containPath } from "../../../src/sdk/session/paths.js";

let root: string;
let dataDir: string;
let outside: string;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "tessera-paths-"));
  dataDir = join(root, "data");
  outside = join(root, "outside");
  await mkdir(join(dataDir, "visium"), { recursive: true });
  await mkdir(outside, { recursive: true });
  await writeFile(join(dataDir, "visium", "counts.h5"), "x");
  await writeFile(join(outside, "secret.h5ad"), "x");
  await symlink(outside, join(dataDir, "escape"));
  await symlink(join(dataDir, "visium"), join(dataDir, "inner-link"));
});
afterAll(() => rm(root, { recursive: true, force: true }));

async function refused(p: Promise<unknown>, param: string): Promise<PathError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(PathError);
  expect((err as PathError).status).toBe(400);
  expect((err as PathError).param).toBe(param);
  expect((err as PathError).message).toContain(param);
  return err as PathError;
}

describe("containPath", () => {
  it("accepts relative and absolute paths under the data dir, existing or not", async () => {
    expect(await containPath(dataDir, "visium/counts.h5", "path")).toBe(join(dataDir, "visium", "counts.h5"));
    expect(await containPath(dataDir, join(dataDir, "new", "out.zip"), "path")).toBe(
      join(dataDir, "new", "out.zip"),
    );
    expect(await containPath(dataDir, ".", "path")).toBe(dataDir);
    // A symlink that stays inside is fine and resolves to its target.
    expect(await containPath(dataDir, "inner-link/counts.h5", "path")).toBe(
      join(dataDir, "visium", "counts.h5"),
    );
  });

  it("refuses .., absolute paths outside, and symlinks out of the data dir", async () => {
    await refused(containPath(dataDir, "../outside/secret.h5ad", "path"), "path");
    await refused(containPath(dataDir, "visium/../../outside", "path"), "path");
    await refused(containPath(dataDir, join(outside, "secret.h5ad"), "path"), "path");
    await refused(containPath(dataDir, "/etc/passwd", "path"), "path");
    const e = await refused(containPath(dataDir, "escape/secret.h5ad", "path"), "path");
    expect(e.message).toContain("resolves to");
    // A not-yet-existing file below an escaping symlink is still outside.
    await refused(containPath(dataDir, "escape/new/file.zip", "path"), "path");
    // The data dir's sibling with a common prefix is not inside it.
    await refused(containPath(dataDir, `${dataDir}-evil/x`, "path"), "path");
  });

  it("refuses non-strings and empty strings", async () => {
    await refused(containPath(dataDir, "", "path"), "path");
    await refused(containPath(dataDir, 42, "path"), "path");
    await refused(containPath(dataDir, "a\0b", "path"), "path");
  });
});

describe("containParams", () => {
  it("checks every path-like param and returns them absolute", async () => {
    const out = await containParams(dataDir, {
      path: "visium",
      counts_file: "counts.h5",
      n_top: 3,
      label: "../x",
    });
    expect(out).toEqual({
      path: join(dataDir, "visium"),
      counts_file: join(dataDir, "visium", "counts.h5"),
      n_top: 3,
      label: "../x",
    });
  });

  it("refuses the fixed path names outside the data dir", async () => {
    for (const name of ["path", "input", "image_path", "alignment_file"]) {
      await refused(containParams(dataDir, { [name]: "../outside/secret.h5ad" }), `params.${name}`);
    }
  });

  it("refuses a relative file that escapes once joined onto the primary path", async () => {
    await refused(
      containParams(dataDir, { path: "visium", counts_file: "../../outside/secret.h5ad" }),
      "params.counts_file",
    );
    // Joined onto the folder of a primary file.
    const ok = await containParams(dataDir, { path: "visium/counts.h5", meta_file: "counts.h5" });
    expect(ok.meta_file).toBe(join(dataDir, "visium", "counts.h5"));
    await refused(
      containParams(dataDir, { path: "visium/counts.h5", meta_file: "../../outside/x" }),
      "params.meta_file",
    );
  });

  it("uses the registry's path_kind and bound_to", async () => {
    const schema = {
      ui_schema: {
        folder: { path_kind: "folder" as const, bound_to: null },
        spots: { path_kind: "file" as const, bound_to: "folder" },
        key: { path_kind: null, bound_to: null },
      },
    };
    const out = await containParams(
      dataDir,
      { folder: "visium", spots: "counts.h5", key: "../not-a-path" },
      schema,
    );
    expect(out.spots).toBe(join(dataDir, "visium", "counts.h5"));
    expect(out.key).toBe("../not-a-path");
    await refused(containParams(dataDir, { folder: "escape" }, schema), "params.folder");
    await refused(
      containParams(dataDir, { folder: "visium", spots: "../../outside/secret.h5ad" }, schema),
      "params.spots",
    );
  });

  it("checks every string inside object and array path params as a complete path", async () => {
    const schema = { ui_schema: { files: { path_kind: "file" as const, bound_to: null } } };
    const out = await containParams(dataDir, { files: ["visium/counts.h5", { extra: "visium" }] }, schema);
    expect(out.files).toEqual([join(dataDir, "visium", "counts.h5"), { extra: join(dataDir, "visium") }]);
    await refused(
      containParams(dataDir, { files: ["visium/counts.h5", join(outside, "secret.h5ad")] }, schema),
      "params.files[1]",
    );
    await refused(
      containParams(dataDir, { files: { a: { b: "escape/secret.h5ad" } } }, schema),
      "params.files.a.b",
    );
    await refused(containParams(dataDir, { path: ["visium", "../outside"] }), "params.path[1]");
  });
});
