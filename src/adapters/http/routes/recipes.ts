/**
 * Routes: recipes (spec "Recipes"): the catalog, a session's steps as a recipe, preflight (a read:
 * never lock-gated) and running or staging a posted recipe (lock-gated; all or nothing).
 */
import { parseRecipeRequest } from "../../../sdk/recipes/request.js";
import type { RouteModule } from "../deps.js";
import { mutableSession, readSession } from "../request.js";

/** Registers the recipes routes. */
export const recipesRoutes: RouteModule = (app, { service }) => {
  // The catalog entry of the spec, plus `provenance`, `params` and `readme`, so a client can post it back to run it.
  app.get("/api/recipes", async () => ({
    recipes: service.recipes.recipes.map(({ recipe: r }) => ({
      name: r.meta.name,
      description: r.meta.description,
      provenance: r.meta.provenance ?? null,
      steps: r.steps,
      params: r.params ?? [],
      readme: r.readme ?? "",
    })),
  }));

  app.get("/api/sessions/:id/recipe", async (req) =>
    readSession(service, (req.params as { id: string }).id).exportRecipe(),
  );

  app.post("/api/sessions/:id/recipe/preflight", async (req) => {
    const session = readSession(service, (req.params as { id: string }).id);
    const { recipe, values } = parseRecipeRequest(req.body);
    return session.preflight(recipe, values);
  });

  app.post("/api/sessions/:id/recipe/run", async (req) => {
    const session = mutableSession(service, req, (req.params as { id: string }).id);
    const { recipe, values, mode } = parseRecipeRequest(req.body);
    const run = await session.runRecipe(recipe, { values, mode });
    return mode === "stage"
      ? { staged: run.staged.length, step_ids: run.staged }
      : { queued: run.tickets.length, job_ids: run.tickets.map((t) => t.job_id) };
  });
};
