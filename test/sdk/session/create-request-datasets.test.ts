import { mkdir, mkdtemp, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BadRequestError, NotFoundError, PathError, StateError } from "../../../src/sdk/errors.js";
import {
  checkCreateSessionRequest,
  parseCreateSessionRequest,
} from "../../../src/sdk/session/create-request.js";
import { browseFolder, findDatasets } from "../../../src/sdk/session/datasets.js";
import { requireReady } from "../../../src/sdk/session/readiness.js";

let dir: string;
beforeAll(async () => {
  dir = await realpath(await mkdtemp(join(tmpdir(), "tessera-ds-")));
  await mkdir(join(dir, "a", "b", "c.zarr"), { recursive: true });
  await writeFile(join(dir, "x.zarr.zip"), "");
  await writeFile(join(dir, "a", "y.h5ad"), "");
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("parseCreateSessionRequest", () => {
  it("accepts both source kinds and copies params", () => {
    const params = { path: "p" };
    const r = parseCreateSessionRequest({
      name: "n",
      load_id: "l",
      source: { kind: "read", namespace: "io", function: "f", params },
    });
    expect(r).toEqual({
      name: "n",
      load_id: "l",
      source: { kind: "read", namespace: "io", function: "f", params },
    });
    expect((r.source as { params: object }).params).not.toBe(params);
    expect(
      parseCreateSessionRequest({ source: { kind: "read", namespace: "read", function: "f" } }).source,
    ).toEqual({ kind: "read", namespace: "read", function: "f", params: {} });
    expect(parseCreateSessionRequest({ source: { kind: "load", path: "x" } })).toEqual({
      source: { kind: "load", path: "x" },
    });
  });
  it("refuses anything else with a BadRequestError", () => {
    for (const body of [
      null,
      [],
      {},
      { source: { kind: "load", path: "x" }, nme: "typo" },
      { source: { kind: "load", path: "x", namespace: "read" } },
      { source: { kind: "read", namespace: "sc.pp", function: "f" } },
      { source: { kind: "read", namespace: "read", function: "" } },
      { source: { kind: "read", namespace: "read", function: "f", params: null } },
      { source: { kind: "load", path: "x" }, name: "x".repeat(501) },
    ])
      expect(() => parseCreateSessionRequest(body), JSON.stringify(body)).toThrow(BadRequestError);
  });
});

describe("checkCreateSessionRequest", () => {
  const functions = {
    get: (key: string) =>
      key === "read.r"
        ? ({ effect_class: "read" } as never)
        : key === "read.c"
          ? ({ effect_class: "compute" } as never)
          : undefined,
  };
  it("needs a known reader, and an existing load path under the data dir", async () => {
    await checkCreateSessionRequest(
      { source: { kind: "read", namespace: "read", function: "r", params: {} } },
      dir,
      functions,
    );
    await expect(
      checkCreateSessionRequest(
        { source: { kind: "read", namespace: "read", function: "x", params: {} } },
        dir,
        functions,
      ),
    ).rejects.toThrow(/unknown reader function read.x/);
    await expect(
      checkCreateSessionRequest(
        { source: { kind: "read", namespace: "read", function: "c", params: {} } },
        dir,
        functions,
      ),
    ).rejects.toThrow(/not a reader/);
    await checkCreateSessionRequest({ source: { kind: "load", path: "x.zarr.zip" } }, dir, functions);
    await expect(
      checkCreateSessionRequest({ source: { kind: "load", path: "nope" } }, dir, functions),
    ).rejects.toThrow(/no such file/);
    await expect(
      checkCreateSessionRequest({ source: { kind: "load", path: "/etc/hostname" } }, dir, functions),
    ).rejects.toThrow(PathError);
  });
});

describe("findDatasets and browseFolder", () => {
  it("bounds the depth of discovery", async () => {
    expect((await findDatasets(dir)).map((d) => d.name)).toEqual(["a/b/c.zarr", "a/y.h5ad", "x.zarr.zip"]);
    expect((await findDatasets(dir, { maxDepth: 1 })).map((d) => d.name)).toEqual(["a/y.h5ad", "x.zarr.zip"]);
    expect((await findDatasets(dir, { maxDatasets: 1 })).length).toBe(1);
  });
  it("browses inside the data dir only", async () => {
    const r = await browseFolder(dir, "a", { includeFiles: true });
    expect(r).toEqual({
      path: join(dir, "a"),
      parent: dir,
      entries: [
        { name: "b", path: join(dir, "a", "b"), kind: "dir" },
        { name: "y.h5ad", path: join(dir, "a", "y.h5ad"), kind: "dataset" },
      ],
    });
    await expect(browseFolder(dir, "..")).rejects.toThrow(PathError);
    await expect(browseFolder(dir, "zz")).rejects.toThrow(NotFoundError);
  });
});

describe("requireReady", () => {
  const s = (status: "loading" | "ready" | "errored") => ({
    id: "s",
    status,
    summary: () => ({ error: "boom" }),
  });
  it("passes a ready session and refuses the others with 409", () => {
    requireReady(s("ready"), "x");
    expect(() => requireReady(s("loading"), "obs values")).toThrow(/still loading; obs values/);
    expect(() => requireReady(s("errored"), "tables")).toThrow(/failed to load \(boom\)/);
    expect(() => requireReady(s("loading"), "x")).toThrow(StateError);
  });
});
