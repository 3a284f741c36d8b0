/**
 * Tools 24–26: a region in world (or embedding) coordinates: look at it (`inspect_region`, read-only),
 * label its cells (`annotate_region`, the same job as `POST …/annotate`), or keep only it
 * (`subset_to_region`, the same job as `POST …/subset`: a child session, the parent closed).
 */

import { nRows } from "../../../sdk/data/dataframe.js";
import {
  inspectRegion,
  MAX_INSPECT_GENES,
  type RegionSpace,
  resolveRegion,
} from "../../../sdk/display/region.js";
import { MAX_NAME_LENGTH, MAX_POLYGON_VERTICES, MAX_POLYGONS } from "../../../sdk/input-limits.js";
import { annotate } from "../../../sdk/session/annotate.js";
import { S, type ToolContext, tool } from "../tool.js";
import { awaitJob } from "../wait.js";

const polygons = {
  type: "array",
  minItems: 1,
  maxItems: MAX_POLYGONS,
  description: "Polygons, each a ring of [x, y] vertices (3 or more) in the coordinates of `space`.",
  items: {
    type: "array",
    minItems: 3,
    maxItems: MAX_POLYGON_VERTICES,
    items: { type: "array", minItems: 2, maxItems: 2, items: { type: "number" } },
  },
} as const;
const cellIndices = {
  type: "array",
  minItems: 1,
  maxItems: 10_000_000,
  items: { type: "integer", minimum: 0 },
  description: "Rows of the active table (instead of polygons).",
} as const;
const space = {
  type: "string",
  enum: ["spatial", "embedding"],
  default: "spatial",
  description:
    "spatial: polygons in spatial world coordinates (view_display of a spatial display); embedding: in the component space of the embedding display display_id.",
} as const;
const displayId = S.str(
  "The embedding display whose component space the polygons are in (space embedding).",
  {
    minLength: 1,
    maxLength: 128,
  },
);

/** The region arguments every region tool shares. */
interface RegionArgs {
  session_id?: string;
  polygons?: [number, number][][];
  cell_indices?: number[];
  space: RegionSpace;
  display_id?: string;
}

/** `inspect_region`: a dry run: count, composition by `by`, gene means inside against outside. */
export const inspectRegionTool = tool<RegionArgs & { by?: string; genes?: string[] }>({
  name: "inspect_region",
  description:
    "Read-only dry run of a selection: the number of cells whose centroid is inside the polygons, the composition by the categorical obs column `by` (inside against overall), and each of `genes`' mean expression (and fraction of cells expressing) inside against outside. Use it before annotate_region or subset_to_region.",
  inputSchema: {
    type: "object",
    required: ["polygons"],
    additionalProperties: false,
    properties: {
      session_id: S.session,
      polygons,
      space,
      display_id: displayId,
      by: S.str("A categorical obs column to break the cells down by.", { minLength: 1, maxLength: 500 }),
      genes: {
        type: "array",
        maxItems: MAX_INSPECT_GENES,
        items: { type: "string", minLength: 1, maxLength: 500 },
        description: "Genes (var_names) to compare inside against outside.",
      },
    },
  },
  async run(a, { service, agent }) {
    const s = service.readySession(agent.sessionId(a.session_id), "inspect_region");
    const region = await resolveRegion(s, a);
    return {
      structured: { space: a.space, ...(await inspectRegion(s, region, { by: a.by, genes: a.genes })) },
    };
  },
});

/** How long a region job (an annotation, a subset) is awaited by default. */
const REGION_WAIT_S = 600;

/** The arguments of `annotate_region`. */
interface AnnotateArgs extends RegionArgs {
  region_set: string;
  category: string;
  color?: string;
  wait: boolean;
  timeout_s: number;
}

/** `annotate_region`: label the region's cells into a region set (the web app's region tool). */
export const annotateRegion = tool<AnnotateArgs>({
  name: "annotate_region",
  description:
    "Labels the cells of a region (centroid inside the polygons, or cell_indices) as `category` in the categorical obs column `region_set` (created when absent), colours the category with `color` on every display and points the displays at it — the same as the web app's region tool. Queued as an ordinary job. Needs the edit lock.",
  inputSchema: {
    type: "object",
    required: ["region_set", "category"],
    additionalProperties: false,
    properties: {
      session_id: S.session,
      region_set: S.str("The obs column holding the labels.", { minLength: 1, maxLength: MAX_NAME_LENGTH }),
      category: S.str("The label the cells get.", { minLength: 1, maxLength: MAX_NAME_LENGTH }),
      polygons,
      cell_indices: cellIndices,
      color: S.str("#rrggbb colour of the category.", { pattern: "^#[0-9a-fA-F]{6}$" }),
      space,
      display_id: displayId,
      wait: S.bool("Wait for the labelling job to end.", true),
      timeout_s: S.int("Longest wait in seconds.", REGION_WAIT_S, 1, 86_400),
    },
  },
  async run(a, ctx) {
    const s = ctx.agent.mutable(a.session_id, { work: "annotate_region" });
    const region = await resolveRegion(s, a);
    const selection = region.cellIndices ? { cell_indices: region.cellIndices } : pick(a);
    const ticket = await annotate(s, {
      ...selection,
      region_set: a.region_set,
      category: a.category,
      ...(a.color ? { color: a.color } : {}),
    });
    const base = {
      job_id: ticket.job_id,
      n_cells: region.count,
      region_set: a.region_set,
      category: a.category,
    };
    return { structured: await settle(base, ticket, a, ctx, s.id) };
  },
});

/** The selection a tool was given, as the SDK's request carries it. */
function pick(a: RegionArgs): { polygons?: unknown; cell_indices?: unknown } {
  return a.polygons !== undefined ? { polygons: a.polygons } : { cell_indices: a.cell_indices };
}

/** A job's answer: its status once it ends (or `timed_out`), or at once without `wait`. */
async function settle(
  base: Record<string, unknown>,
  ticket: Parameters<typeof awaitJob>[0],
  a: { wait: boolean; timeout_s: number },
  ctx: ToolContext,
  sessionId: string,
): Promise<Record<string, unknown>> {
  if (!a.wait) return { ...base, status: ticket.status };
  const out = await awaitJob(ticket, a.timeout_s, ctx);
  if (!out) return { ...base, status: ctx.service.job(sessionId, ticket.job_id).status, timed_out: true };
  return { ...base, status: out.status, ...(out.error ? { error: out.error } : {}) };
}

/** The arguments of `subset_to_region`. */
interface SubsetArgs extends RegionArgs {
  invert: boolean;
  wait: boolean;
  timeout_s: number;
}

/** `subset_to_region`: a child session holding the region (or the rest with `invert`); the parent closes. */
export const subsetToRegion = tool<SubsetArgs>({
  name: "subset_to_region",
  description:
    "Creates a child session from a region and closes the parent (every viewer moves with it; jobs queued behind are cancelled). The cells kept are those whose geometry (boundary polygon or spot circle) intersects the polygons — every cell inspect_region counts by centroid, plus border cells whose outline reaches in, so the child may hold a few more — with their boundary shapes and the transcripts inside the polygons; invert keeps the cells whose geometry does not meet them. The agent's lock and active session move to the child. There is no undo: save_checkpoint first if the parent matters. Needs the edit lock.",
  inputSchema: {
    type: "object",
    additionalProperties: false,
    properties: {
      session_id: S.session,
      polygons,
      cell_indices: cellIndices,
      invert: S.bool("Keep the cells outside the region instead.", false),
      space,
      display_id: displayId,
      wait: S.bool("Wait for the child session (bounded by timeout_s).", true),
      timeout_s: S.int("Longest wait in seconds.", REGION_WAIT_S, 1, 86_400),
    },
  },
  async run(a, ctx) {
    const { service, agent } = ctx;
    const parent = agent.mutable(a.session_id, { work: "subset_to_region" });
    // Embedding polygons become the rows they hold (inverted here); spatial ones go to the SDK as drawn.
    const region =
      a.space === "embedding" && a.polygons ? await resolveRegion(parent, { ...a, invert: a.invert }) : null;
    const req = region
      ? { cell_indices: region.cellIndices! }
      : { ...(pick(a) as { polygons?: [number, number][][]; cell_indices?: number[] }), invert: a.invert };
    // The parent leaves (and its lock passes to the child) after the job: watch for that.
    let removed: (() => void) | undefined;
    const gone = new Promise<void>((resolve) => {
      removed = service.bus.subscribe((e) => {
        if (e.event === "session.removed" && (e.data as { session_id: string }).session_id === parent.id)
          resolve();
      }, service.bus.lastId);
    });
    try {
      const ticket = await service.subset(parent.id, req);
      const base = { job_id: ticket.job_id, parent_id: parent.id };
      if (!a.wait) return { structured: { ...base, status: ticket.status } };
      const out = await awaitJob(ticket, a.timeout_s, ctx);
      if (!out)
        return {
          structured: { ...base, status: service.job(parent.id, ticket.job_id).status, timed_out: true },
        };
      const childId = (out.result as { child_id?: string } | null)?.child_id ?? null;
      if (out.status !== "completed" || !childId)
        return { structured: { ...base, status: out.status, error: out.error ?? null } };
      await Promise.race([gone, new Promise((r) => setTimeout(r, 30_000))]);
      if (service.sessions().some((x) => x.id === childId)) agent.attach(childId, false);
      const child = service.session(childId);
      const childTable = child.activeTable ? child.data.tables[child.activeTable] : undefined;
      return {
        structured: {
          ...base,
          status: out.status,
          child_id: childId,
          name: child.name,
          n_obs: childTable ? nRows(childTable.obs) : null,
          active_session_id: agent.activeSession,
          has_control: agent.holds(childId),
        },
      };
    } finally {
      removed?.();
    }
  },
});
