/**
 * `tessera functions`: print the registry of the configured plugins (`TESSERA_PLUGINS`), as a table
 * or, with `--json`, in the envelope of `GET /api/functions`; `--coverage` prints the param terms no
 * widget rule matched.
 */
import { Registry } from "../../registry/registry.js";

/** Options of `functions`. */
export interface FunctionsOptions {
  json?: boolean;
  coverage?: boolean;
  /** Plugins as `TESSERA_PLUGINS` lists them (comma-separated), instead of the variable. */
  plugins?: string;
}

/** The registry as a readable table: one function per line, its params (`*` = required), then the libraries. */
export function formatFunctions(envelope: ReturnType<Registry["envelope"]>): string {
  const rows = envelope.functions.map((f) => {
    const schema = f.json_schema as { properties?: Record<string, unknown>; required?: string[] };
    const required = new Set(schema.required ?? []);
    const params = Object.keys(schema.properties ?? {}).map((p) => (required.has(p) ? `${p}*` : p));
    const locked = f.unsupported_params.map((p) => `(${p})`);
    return [f.key, f.effect_class, [...params, ...locked].join(", ") || "-", f.summary];
  });
  const header = ["FUNCTION", "EFFECT", "PARAMS", "SUMMARY"];
  const widths = [0, 1].map((i) => Math.max(header[i]!.length, ...rows.map((r) => r[i]!.length)));
  const line = (r: string[]) =>
    `${r[0]!.padEnd(widths[0]!)}  ${r[1]!.padEnd(widths[1]!)}  ${r[3]}\n${" ".repeat(widths[0]! + 2)}params: ${r[2]}\n`;
  const libs = Object.entries(envelope.library_versions)
    .map(([k, v]) => `${k} ${v}`)
    .join(", ");
  return `${header[0]!.padEnd(widths[0]!)}  ${header[1]!.padEnd(widths[1]!)}  ${header[3]}\n${rows.map(line).join("")}\n${rows.length} functions (params: * required, (x) locked to its default); libraries: ${libs}\n`;
}

/** Load the registry and print it. */
export async function functionsCommand(opts: FunctionsOptions = {}): Promise<void> {
  const registry = await Registry.load(
    opts.plugins !== undefined ? { plugins: opts.plugins.split(",") } : {},
  );
  if (opts.coverage) {
    const report = registry.coverage();
    if (opts.json) process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
    else
      for (const t of report.terms)
        process.stdout.write(`${String(t.functions).padStart(4)}  ${t.term}  (${t.examples.join(", ")})\n`);
    return;
  }
  const envelope = registry.envelope();
  process.stdout.write(opts.json ? `${JSON.stringify(envelope, null, 2)}\n` : formatFunctions(envelope));
}
