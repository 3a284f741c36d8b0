import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { installedLicenses, licenseOf } from "../../../src/sdk/about/licenses.js";

describe("licenseOf", () => {
  it("reads SPDX strings, legacy {type} objects and legacy licenses arrays", () => {
    expect(licenseOf({ license: "MIT" })).toBe("MIT");
    expect(licenseOf({ license: { type: "BSD-3-Clause" } })).toBe("BSD-3-Clause");
    expect(licenseOf({ licenses: [{ type: "MIT" }, { type: "Apache-2.0" }] })).toBe("(MIT OR Apache-2.0)");
    expect(licenseOf({ licenses: [{ type: "ISC" }] })).toBe("ISC");
    expect(licenseOf({})).toBe("UNKNOWN");
  });
});

describe("installedLicenses", () => {
  it("walks runtime dependencies transitively with Node's resolution (nested copies too), skipping dev ones", async () => {
    const root = await mkdtemp(join(tmpdir(), "tessera-lic-"));
    const pkg = async (dir: string, json: object) => {
      await mkdir(dir, { recursive: true });
      await writeFile(join(dir, "package.json"), JSON.stringify(json));
    };
    try {
      await pkg(root, {
        name: "app",
        dependencies: { a: "1" },
        optionalDependencies: { missing: "1" },
        devDependencies: { dev: "1" },
      });
      await pkg(join(root, "node_modules/a"), {
        name: "a",
        version: "1.0.0",
        license: "MIT",
        dependencies: { b: "1", c: "2" },
      });
      await pkg(join(root, "node_modules/b"), { name: "b", version: "1.0.0", licenses: [{ type: "ISC" }] });
      await pkg(join(root, "node_modules/c"), { name: "c", version: "1.0.0", license: "Apache-2.0" });
      // a wants c@2: npm nests it under a.
      await pkg(join(root, "node_modules/a/node_modules/c"), {
        name: "c",
        version: "2.0.0",
        license: "BSD-2-Clause",
      });
      await pkg(join(root, "node_modules/dev"), { name: "dev", version: "9.9.9", license: "MIT" });
      expect(await installedLicenses(root)).toEqual([
        { name: "a", version: "1.0.0", license: "MIT" },
        { name: "b", version: "1.0.0", license: "ISC" },
        { name: "c", version: "2.0.0", license: "BSD-2-Clause" },
      ]);
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });
});

describe("a package without a license field", () => {
  it("takes the licence its LICENSE file names on its first line, else UNKNOWN", async () => {
    const root = await mkdtemp(join(tmpdir(), "tessera-lic-file-"));
    try {
      await writeFile(
        join(root, "package.json"),
        JSON.stringify({ name: "app", dependencies: { "with-file": "1", "odd-file": "1" } }),
      );
      for (const [name, text] of [
        ["with-file", "MIT License\n\nCopyright (c) 2017 Someone\n"],
        ["odd-file", "All rights reserved by the author.\n"],
      ] as const) {
        const dir = join(root, "node_modules", name);
        await mkdir(dir, { recursive: true });
        await writeFile(join(dir, "package.json"), JSON.stringify({ name, version: "1.0.0" }));
        await writeFile(join(dir, "LICENSE"), text);
      }
      const list = await installedLicenses(root);
      expect(list.find((p) => p.name === "with-file")?.license).toBe("MIT");
      expect(list.find((p) => p.name === "odd-file")?.license).toBe("UNKNOWN");
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });
});
