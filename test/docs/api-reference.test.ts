/**
 * The API reference builds without a warning: typedoc over the three public entries (`.`, `./plugin`,
 * `./server`) with `--treatWarningsAsErrors`, which fails on an exported symbol without TSDoc, a type
 * the API refers to but does not export (unless typedoc.json names it internal), a broken `{@link}`
 * and an unknown TSDoc tag. Converted only (`--emit none`): rendering the HTML (`npm run docs:api`,
 * into docs/api-reference/, not committed) proves nothing more.
 */
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { expect, it } from "vitest";

const run = promisify(execFile);
const REPO = fileURLToPath(new URL("../../", import.meta.url));

it("typedoc documents the public entries without a warning", async () => {
  const bin = fileURLToPath(new URL("../../node_modules/typedoc/bin/typedoc", import.meta.url));
  const result = await run(process.execPath, [bin, "--emit", "none", "--treatWarningsAsErrors"], {
    cwd: REPO,
    maxBuffer: 16 * 1024 * 1024,
  }).catch((err: { stdout?: string; stderr?: string }) => ({ failed: true, ...err }));
  // biome-ignore lint/suspicious/noControlCharactersInRegex: typedoc colours its log with ANSI escapes.
  const output = `${result.stdout ?? ""}${result.stderr ?? ""}`.replace(/\x1b\[[0-9;]*m/g, "");
  expect(output).not.toMatch(/\[(warning|error)\]/);
  expect("failed" in result).toBe(false);
}, 240_000);
