/**
 * `GET /api/functions`: the registry's envelope, plus the built-in readers a session can run when no
 * plugin registers their key (today `read.read_data`), so a client lists every function it may submit.
 */
import type { PublicEntry, Registry } from "../../registry/registry.js";
import { BUILTIN_LIBRARY, READ_DATA_ENTRY } from "./builtin-readers.js";
import type { SessionFunctions } from "./functions.js";

/** The envelope `{functions, library_versions}` of the spec's function registry. */
export interface FunctionsEnvelope {
  functions: PublicEntry[];
  library_versions: Record<string, string>;
}

/** Every function a session can run, as the API lists them (see the module comment). */
export function functionsEnvelope(registry: Registry, functions: SessionFunctions): FunctionsEnvelope {
  const env = registry.envelope();
  for (const e of [READ_DATA_ENTRY]) {
    if (!functions.isBuiltin(e.key)) continue;
    const { module: _m, export: _e, library: _l, ...pub } = e;
    env.functions.push({ ...pub, partially_supported: false, unsupported_params: [] } as PublicEntry);
    env.library_versions[BUILTIN_LIBRARY.name] ??= BUILTIN_LIBRARY.version;
  }
  return env;
}
