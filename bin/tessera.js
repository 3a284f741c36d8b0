#!/usr/bin/env node
// Launcher for the `tessera` command: runs the built CLI (npm install builds it through `prepare`).
import { existsSync } from "node:fs";
import { fileURLToPath, pathToFileURL } from "node:url";

const built = fileURLToPath(new URL("../dist/cli.js", import.meta.url));
if (!existsSync(built)) {
  console.error("tessera: dist/cli.js is missing; run `npm install` (or `npm run build`) in the repository first.");
  process.exit(1);
}
await import(pathToFileURL(built).href);
