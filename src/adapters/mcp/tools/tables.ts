/**
 * Tool 31: `get_table`, one bounded page of a dataframe of the session: the frames of `GET …/table`,
 * and dataframes kept in a table's uns (results such as `rank_genes_groups/names`).
 */
import { parseUnsPath, unsFramePage } from "../../../sdk/data/uns-page.js";
import { tableRows } from "../../../sdk/session/reads.js";
import { S, tool } from "../tool.js";

/** Rows a page holds at most for the agent (a page is read into the agent's context: kept small). */
export const GET_TABLE_MAX_LIMIT = 500;

/** `get_table`: rows `offset … offset + limit` of `obs`, `var`, `tables:<t>:obs|var`, `shapes:<n>`, `points:<n>`. */
export const getTable = tool<{ session_id?: string; path: string; offset: number; limit: number }>({
  name: "get_table",
  description:
    "Returns one page of a dataframe: path obs or var (the active table), tables:<name>:obs, tables:<name>:var, shapes:<name>, points:<name>, or a dataframe in uns: uns:<path> (e.g. uns:rank_genes_groups/names, one column per group) or tables:<name>:uns:<path>; offset and limit (default 50, at most 500) choose the rows. The answer holds total_rows, the index, the columns (name, dtype) and the rows (positional with columns).",
  inputSchema: {
    type: "object",
    required: ["path"],
    additionalProperties: false,
    properties: {
      session_id: S.session,
      path: S.str("Which dataframe (obs, var, tables:<name>:obs, shapes:<name> …).", {
        minLength: 1,
        maxLength: 1000,
      }),
      offset: S.int("First row.", 0, 0, Number.MAX_SAFE_INTEGER),
      limit: S.int("Rows in the page.", 50, 1, GET_TABLE_MAX_LIMIT),
    },
  },
  async run(a, { service, agent }) {
    const s = service.readySession(agent.sessionId(a.session_id), "get_table");
    const uns = parseUnsPath(a.path, s.activeTable);
    const page = uns
      ? unsFramePage(s.data, uns.table, uns.key, a.offset, a.limit)
      : tableRows(s, a.path, a.offset, a.limit);
    return { structured: { path: a.path, ...page } };
  },
});
