/** Tool 18: `run_recipe`, run or stage a bundled recipe by name. */
import { NotFoundError } from "../../../sdk/errors.js";
import { S, tool } from "../tool.js";
import { awaitJob } from "../wait.js";

/** The arguments of `run_recipe`. */
interface RecipeArgs {
  session_id?: string;
  recipe: string;
  param_values: Record<string, unknown>;
  mode: "run" | "stage";
  wait: boolean;
  timeout_s: number;
}

/** `run_recipe`: every step checked first (a bad recipe changes nothing), then queued or staged. */
export const runRecipe = tool<RecipeArgs>({
  name: "run_recipe",
  description:
    "Runs (mode run: queues every step) or stages (mode stage: pending steps a human can review) a bundled recipe by name (list_recipes), with param_values for its params. Every step is checked before anything is queued. With wait (default) it returns each step's status once all end or timeout_s passes. Needs the edit lock.",
  inputSchema: {
    type: "object",
    required: ["recipe"],
    additionalProperties: false,
    properties: {
      session_id: S.session,
      recipe: S.str("The recipe's name (list_recipes).", { minLength: 1, maxLength: 200 }),
      param_values: { type: "object", default: {}, description: "Values of the recipe's params." },
      mode: { type: "string", enum: ["run", "stage"], default: "run" },
      wait: S.bool("Wait for every step to end (bounded by timeout_s).", true),
      timeout_s: S.int("Longest wait in seconds for the whole recipe.", 1800, 1, 86_400),
    },
  },
  async run(a, ctx) {
    const found = ctx.service.recipes.recipes.find(({ recipe: r }) => r.meta.name === a.recipe);
    if (!found) throw new NotFoundError(`no recipe "${a.recipe}" (list_recipes lists them)`);
    const session = ctx.agent.mutable(a.session_id, { work: `recipe ${a.recipe}` });
    const run = await session.runRecipe(found.recipe, { values: a.param_values, mode: a.mode });
    if (a.mode === "stage") return { structured: { mode: "stage", step_ids: run.staged } };
    const deadline = Date.now() + a.timeout_s * 1000;
    const steps: { job_id: string; status: string; error?: string }[] = [];
    let timedOut = false;
    const n = run.tickets.length;
    for (const [i, t] of run.tickets.entries()) {
      const left = (deadline - Date.now()) / 1000;
      const out = a.wait && !timedOut && left > 0 ? await awaitJob(t, left, ctx, [i / n, (i + 1) / n]) : null;
      if (out) void ctx.progress((i + 1) / n, `step ${i + 1} of ${n} ${out.status}`);
      if (a.wait && !out) timedOut = true;
      const status = out?.status ?? ctx.service.job(session.id, t.job_id).status;
      steps.push({ job_id: t.job_id, status, ...(out?.error ? { error: out.error } : {}) });
    }
    return { structured: { mode: "run", steps, ...(timedOut ? { timed_out: true } : {}) } };
  },
});
