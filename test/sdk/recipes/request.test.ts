import { describe, expect, it } from "vitest";
import { BadRequestError } from "../../../src/sdk/errors.js";
import { parseRecipeRequest } from "../../../src/sdk/recipes/request.js";

const step = { namespace: "custom", function: "noop", params: {} };

describe("parseRecipeRequest", () => {
  it("takes a full recipe with mode and values beside it", () => {
    const r = parseRecipeRequest({
      schema_version: 1,
      meta: { name: "r", description: "d" },
      params: [{ name: "p", schema: { type: "integer", default: 1 } }],
      steps: [{ ...step, params: { x: { $param: "p" } } }],
      mode: "stage",
      values: { p: 2 },
    });
    expect(r.mode).toBe("stage");
    expect(r.values).toEqual({ p: 2 });
    expect(r.recipe.meta).toEqual({ name: "r", description: "d" });
    expect(r.recipe.steps).toHaveLength(1);
  });

  it("defaults mode to run and values to {}, schema_version to 1; a flat catalog entry stands for meta", () => {
    const r = parseRecipeRequest({ name: "cat", description: "from the catalog", steps: [step] });
    expect(r).toMatchObject({
      mode: "run",
      values: {},
      recipe: { schema_version: 1, meta: { name: "cat" } },
    });
  });

  it("says what is wrong with a BadRequestError", () => {
    const bad: [unknown, RegExp][] = [
      [null, /JSON object/],
      [{ steps: [step] }, /meta must be an object/],
      [{ name: "x", meta: { name: "y" }, steps: [step] }, /in meta, not beside it/],
      [{ name: "x", steps: [step], mode: "now" }, /mode/],
      [{ name: "x", steps: [step], values: 3 }, /values/],
      [{ name: "x", steps: [step], other: 1 }, /unknown field "other"/],
      [{ name: "x", steps: "all" }, /steps must be an array/],
      [{ name: "x", schema_version: 3, steps: [step] }, /schema_version must be 1/],
    ];
    for (const [body, msg] of bad) {
      expect(() => parseRecipeRequest(body), JSON.stringify(body)).toThrow(BadRequestError);
      expect(() => parseRecipeRequest(body), JSON.stringify(body)).toThrow(msg);
    }
  });
});
