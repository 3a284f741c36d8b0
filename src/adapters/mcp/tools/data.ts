/** Tools 9–11: datasets under the data dir, browsing it, and the readers a session can be opened with. */
import { browseFolder, findDatasets } from "../../../sdk/session/datasets.js";
import { functionsEnvelope } from "../../../sdk/session/functions-envelope.js";
import { S, tool } from "../tool.js";

/** Namespaces whose functions create a session's data. */
const READER_NAMESPACES = new Set(["io", "read"]);

/** `list_datasets`: loadable `.zarr` / `.zarr.zip` datasets under the data dir. */
export const listDatasets = tool<Record<string, never>>({
  name: "list_datasets",
  description: "Returns the loadable .zarr and .zarr.zip datasets (checkpoints) under the data dir.",
  inputSchema: { type: "object", additionalProperties: false, properties: {} },
  async run(_a, { service }) {
    const { dataDir, workDir } = service.config;
    return { structured: { datasets: await findDatasets(dataDir, { workDir }) } };
  },
});

/** `browse_data_dir`: one folder of the data dir (paths outside it are refused). */
export const browseDataDir = tool<{ path?: string; include_files: boolean }>({
  name: "browse_data_dir",
  description:
    "Lists the entries of a folder inside the data dir (relative path; default the data dir itself). Datasets are marked; plain files only with include_files.",
  inputSchema: {
    type: "object",
    additionalProperties: false,
    properties: {
      path: S.str("Folder, relative to the data dir.", { maxLength: 4096 }),
      include_files: S.bool("Also list plain files (e.g. .h5ad, .csv) a reader may open.", false),
    },
  },
  async run(a, { service }) {
    const { dataDir, workDir } = service.config;
    return {
      structured: { ...(await browseFolder(dataDir, a.path, { includeFiles: a.include_files, workDir })) },
    };
  },
});

/** `list_readers`: reader keys with their params, required flags and the kind of path they take. */
export const listReaders = tool<Record<string, never>>({
  name: "list_readers",
  description:
    "Returns the readers (namespace io / read) that open a dataset as a session: each key with its params, which are required, and path_kind (file, folder, either) of its path params.",
  inputSchema: { type: "object", additionalProperties: false, properties: {} },
  async run(_a, { service }) {
    const readers = functionsEnvelope(service.registry, service.functions)
      .functions.filter((f) => READER_NAMESPACES.has(f.namespace))
      .map((f) => {
        const schema = f.json_schema as {
          properties?: Record<string, { type?: unknown; description?: string }>;
          required?: string[];
        };
        const required = new Set(schema.required ?? []);
        return {
          key: f.key,
          namespace: f.namespace,
          function: f.function,
          summary: f.summary,
          params: Object.entries(schema.properties ?? {}).map(([name, p]) => ({
            name,
            type: p.type ?? null,
            required: required.has(name),
            path_kind: f.ui_schema[name]?.path_kind ?? null,
            ...(p.description ? { description: p.description } : {}),
          })),
        };
      });
    return { structured: { readers } };
  },
});
