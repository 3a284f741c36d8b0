/**
 * The `tessera` command line: parses arguments, calls the SDK, prints. No behaviour lives here.
 *
 *   tessera inspect PATH [--json] [--field FIELDPATH] [--table NAME]
 *   tessera convert IN OUT.sdata.zarr.zip
 *   tessera start            (serve the web app and the API; --help on every command prints its usage)
 *   tessera run RECIPE --input PATH --output OUT.sdata.zarr.zip [--param k=v]…
 *   tessera functions [--json] [--coverage]
 *   tessera viewer export OUT_DIR [CHECKPOINT…]
 *   tessera plugin build [DIR]
 */
import { parseArgs } from "node:util";
import { DEFAULT_PLUGINS } from "../../registry/registry.js";
import { convertCommand } from "./convert.js";
import { functionsCommand } from "./functions.js";
import { inspectCommand } from "./inspect.js";
import { pluginBuildCommand } from "./plugin.js";
import { runCommand } from "./run.js";
import { startCommand } from "./start.js";
import { viewerExportCommand } from "./viewer.js";

/** Each command's usage, as `tessera COMMAND --help` prints it (and `tessera --help` prints them all). */
const COMMAND_USAGE: Readonly<Record<string, string>> = {
  inspect: `  tessera inspect PATH [--json] [--field FIELDPATH] [--table NAME]
      print the element inventory of any readable input (SpatialData/AnnData zarr or .zarr.zip,
      .h5ad, OME-Zarr, OME-TIFF, a Tessera checkpoint, or an http(s) URL of one);
      --json prints it as one JSON object; --field prints one field's values as CSV
`,
  convert: `  tessera convert IN OUT.sdata.zarr.zip
      write any readable input as a Tessera checkpoint
`,
  run: `  tessera run RECIPE --input PATH --output OUT.sdata.zarr.zip [--param name=value]… [--data-dir DIR] [--plugins a,b]
      run a recipe (a shipped recipe's name or a recipe JSON file) on an input, headless, and save the
      result; progress on stderr; exits 1 when a step fails
`,
  start: `  tessera start
      serve the web app and the HTTP API on TESSERA_HOST:TESSERA_PORT (default 127.0.0.1:8000) with
      the sessions of the last run, or the dataset of the data dir (the demo when it is empty), open
`,
  functions: `  tessera functions [--json] [--coverage] [--plugins a,b]
      list the operations of the plugins in --plugins or TESSERA_PLUGINS (default: ${DEFAULT_PLUGINS.join(",")};
      a list naming none of them adds to them, -name drops one; an entry is a built-in name, a folder or
      an npm package name); --json
      prints the GET /api/functions envelope; --coverage lists the param names no widget rule matched
`,
  viewer: `  tessera viewer export OUT_DIR [CHECKPOINT…]
      write a serverless viewer into OUT_DIR: the web app, the checkpoints (default: those of the
      data dir) and index.json; any static server with HTTP Range serves it
`,
  plugin: `  tessera plugin build [DIR]
      build the plugin package in DIR (default .): type-check its TypeScript, compile it to .js beside
      the sources and write manifest.json (its operations' JSON Schemas); errors are listed by file and line
`,
};

const USAGE = `usage:\n${Object.values(COMMAND_USAGE).join("")}`;

/** `--help`/`-h` among a command's arguments (before any `--` end of options). */
function wantsHelp(args: readonly string[]): boolean {
  for (const a of args) {
    if (a === "--") return false;
    if (a === "--help" || a === "-h") return true;
  }
  return false;
}

/** Run the CLI with `argv` (without node and script); resolves to the exit code. */
export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  // `tessera start --help` must print help, not start a server: help is answered before anything runs.
  if (command && Object.hasOwn(COMMAND_USAGE, command) && wantsHelp(rest)) {
    process.stdout.write(`usage:\n${COMMAND_USAGE[command]}`);
    return 0;
  }
  try {
    switch (command) {
      case "inspect": {
        const { values, positionals } = parseArgs({
          args: rest,
          allowPositionals: true,
          options: { json: { type: "boolean" }, field: { type: "string" }, table: { type: "string" } },
        });
        if (positionals.length !== 1) throw new UsageError("inspect takes exactly one PATH");
        if (values.json && values.field)
          throw new UsageError(
            "--json and --field cannot be combined (--field prints CSV; --json the inventory)",
          );
        await inspectCommand(positionals[0]!, values);
        return 0;
      }
      case "convert": {
        const { positionals } = parseArgs({ args: rest, allowPositionals: true, options: {} });
        if (positionals.length !== 2) throw new UsageError("convert takes IN and OUT");
        await convertCommand(positionals[0]!, positionals[1]!);
        return 0;
      }
      case "run": {
        const { values, positionals } = parseArgs({
          args: rest,
          allowPositionals: true,
          options: {
            input: { type: "string" },
            output: { type: "string" },
            param: { type: "string", multiple: true },
            "data-dir": { type: "string" },
            plugins: { type: "string" },
          },
        });
        if (positionals.length !== 1) throw new UsageError("run takes exactly one RECIPE");
        if (!values.input || !values.output) throw new UsageError("run needs --input and --output");
        return await runCommand({
          recipe: positionals[0]!,
          input: values.input,
          output: values.output,
          params: values.param ?? [],
          ...(values["data-dir"] ? { dataDir: values["data-dir"] } : {}),
          ...(values.plugins
            ? {
                plugins: values.plugins
                  .split(",")
                  .map((x) => x.trim())
                  .filter(Boolean),
              }
            : {}),
        });
      }
      case "start": {
        parseArgs({ args: rest, options: {} });
        await startCommand();
        return 0;
      }
      case "functions": {
        const { values } = parseArgs({
          args: rest,
          options: { json: { type: "boolean" }, coverage: { type: "boolean" }, plugins: { type: "string" } },
        });
        await functionsCommand(values);
        return 0;
      }
      case "viewer": {
        const { positionals } = parseArgs({ args: rest, allowPositionals: true, options: {} });
        if (positionals[0] !== "export" || positionals.length < 2)
          throw new UsageError("viewer takes: export OUT_DIR [CHECKPOINT…]");
        await viewerExportCommand(positionals[1]!, positionals.slice(2));
        return 0;
      }
      case "plugin": {
        const { positionals } = parseArgs({ args: rest, allowPositionals: true, options: {} });
        if (positionals[0] !== "build" || positionals.length > 2)
          throw new UsageError("plugin takes: build [DIR]");
        await pluginBuildCommand(positionals[1]);
        return 0;
      }
      case undefined:
      case "help":
      case "--help":
      case "-h":
        process.stdout.write(USAGE);
        return command === undefined ? 2 : 0;
      default:
        throw new UsageError(`unknown command "${command}"`);
    }
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`tessera: ${err.message}\n\n${USAGE}`);
      return 2;
    }
    const message = err instanceof Error ? err.message : String(err);
    process.stderr.write(`tessera ${command}: ${message}\n`);
    if (process.env.TESSERA_DEBUG && err instanceof Error) process.stderr.write(`${err.stack}\n`);
    return 1;
  }
}

/** A mistake in the command line itself (exit code 2, usage printed). */
class UsageError extends Error {}

// Run when executed as the program (not when imported by a test).
const invoked = process.argv[1] ?? "";
if (/(?:^|[\\/])(?:cli\.js|main\.ts|tessera(?:\.js)?)$/.test(invoked)) {
  // The exit code is 1 until main answers: a command that never finishes (a library that aborted and
  // left a promise unsettled) must not exit 0, and a failure stays one whatever else sets
  // process.exitCode meanwhile (WebAssembly runtimes do).
  let exitCode = 1;
  let finished = false;
  process.on("beforeExit", () => {
    if (!finished) process.stderr.write("tessera: stopped before the command finished\n");
  });
  process.on("exit", () => {
    // Only ever towards failure: a crash after a successful start keeps its own code.
    if (exitCode !== 0) process.exitCode = exitCode;
  });
  main(process.argv.slice(2)).then(
    (code) => {
      finished = true;
      exitCode = code;
      process.exitCode = code;
    },
    (err) => {
      finished = true;
      process.stderr.write(`tessera: ${String(err)}\n`);
      exitCode = 1;
      process.exitCode = 1;
    },
  );
}
