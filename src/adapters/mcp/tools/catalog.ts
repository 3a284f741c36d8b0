/** Tools 17, 19, 32: the recipe catalog, a session's plots, and gene search in var_names. */
import { NotFoundError } from "../../../sdk/errors.js";
import { summarizeColumn } from "../obs-summary.js";
import { S, tool } from "../tool.js";

/** `list_recipes`: the bundled recipe catalog. */
export const listRecipes = tool<Record<string, never>>({
  name: "list_recipes",
  description: "Returns the bundled recipe catalog: each recipe's name, description, steps and params.",
  inputSchema: { type: "object", additionalProperties: false, properties: {} },
  async run(_a, { service }) {
    return {
      structured: {
        recipes: service.recipes.recipes.map(({ recipe: r }) => ({
          name: r.meta.name,
          description: r.meta.description,
          steps: r.steps,
          params: r.params ?? [],
        })),
      },
    };
  },
});

/** `list_plots`: a session's plots, each with whether its figure is available. */
export const listPlots = tool<{ session_id?: string }>({
  name: "list_plots",
  description:
    "Returns a session's plots, each with figure_available (whether its drawn figure can be shown).",
  inputSchema: { type: "object", additionalProperties: false, properties: { session_id: S.session } },
  async run(a, { service, agent }) {
    const st = service.session(agent.sessionId(a.session_id)).state();
    return {
      structured: {
        plots: st.app_state.plots.map((p) => ({ ...p, figure_available: p.id in st.figures })),
      },
    };
  },
});

/** `search_genes`: var_names of the active table matching a query, prefix matches first. */
export const searchGenes = tool<{ session_id?: string; query: string; limit: number }>({
  name: "search_genes",
  description:
    "Searches the active table's var_names (case-insensitive), prefix matches first, then other substring matches.",
  inputSchema: {
    type: "object",
    required: ["query"],
    additionalProperties: false,
    properties: {
      session_id: S.session,
      query: S.str("Text to look for in gene names.", { minLength: 1, maxLength: 200 }),
      limit: S.int("Most genes returned.", 50, 1, 5000),
    },
  },
  async run(a, { service, agent }) {
    const s = service.readySession(agent.sessionId(a.session_id), "searching genes");
    const table = s.activeTable ? s.data.tables[s.activeTable] : undefined;
    const names = (table?.var.index.values ?? []) as ArrayLike<unknown>;
    const q = a.query.toLowerCase();
    const prefix: string[] = [];
    const inner: string[] = [];
    for (let i = 0; i < names.length; i++) {
      const n = String(names[i]);
      const at = n.toLowerCase().indexOf(q);
      if (at === 0) prefix.push(n);
      else if (at > 0) inner.push(n);
    }
    const all = [...prefix.sort(), ...inner.sort()];
    return { structured: { table: s.activeTable, total: all.length, genes: all.slice(0, a.limit) } };
  },
});

/** `get_obs_summary`: value counts or numeric statistics of one obs column of the active table. */
export const getObsSummary = tool<{ session_id?: string; column: string }>({
  name: "get_obs_summary",
  description:
    "Summarises one obs column of the active table: value counts (top 60) for a categorical/string/boolean column; min, max, mean, median and n_nan for a numeric one.",
  inputSchema: {
    type: "object",
    required: ["column"],
    additionalProperties: false,
    properties: { session_id: S.session, column: S.str("The obs column.", { minLength: 1, maxLength: 500 }) },
  },
  async run(a, { service, agent }) {
    const s = service.readySession(agent.sessionId(a.session_id), "summarising an obs column");
    const table = s.activeTable ? s.data.tables[s.activeTable] : undefined;
    const col = table?.obs.columns[a.column];
    if (!table || !col || !Object.hasOwn(table.obs.columns, a.column))
      throw new NotFoundError(
        `the active table has no obs column "${a.column}" (get_session lists the fields)`,
      );
    return { structured: { column: a.column, table: s.activeTable, ...summarizeColumn(col) } };
  },
});
