/**
 * `tessera plugin build [DIR]`: build a plugin package (type-check, compile, write manifest.json) and
 * print what it holds. The build code (the TypeScript compiler and the schema generator) is imported
 * only here, so no other command pays for loading it.
 */
import { relative } from "node:path";

/** Build the plugin in `dir` (default the working directory) and print a summary. */
export async function pluginBuildCommand(dir = "."): Promise<void> {
  const { buildPlugin } = await import("../../registry/build/plugin-build.js");
  const r = await buildPlugin(dir);
  const where = relative(process.cwd(), r.manifest) || r.manifest;
  process.stdout.write(
    `${r.library.name} ${r.library.version}: ${r.functions.length} operation(s), ${r.compiled.length} source(s) compiled, wrote ${where}\n` +
      r.functions.map((k) => `  ${k}\n`).join(""),
  );
}
