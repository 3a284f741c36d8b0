/** A reader op's job context as the SDK readers' progress/log callbacks. */

import type { ReaderReport, VendorResult } from "../../sdk/io/vendors/common.js";
import { rememberRecipes } from "../../sdk/io/vendors/image-recipe.js";
import type { OpContext } from "../../sdk/jobs/operation.js";

/** Progress and log of a reader, streamed as the job's events. */
export function reportTo(ctx: OpContext): ReaderReport {
  return { progress: (f, m) => ctx.progress(f, m), log: (t) => ctx.log(t), signal: ctx.signal };
}

/**
 * Log a reader's warnings and hand back its object (noting how its images were opened, for a run in a
 * job worker that reopens them on the main thread).
 */
export function finish(r: VendorResult, ctx: OpContext): VendorResult["sdata"] {
  for (const w of r.warnings) ctx.log(`warning: ${w}`);
  rememberRecipes(r.sdata, r.images);
  return r.sdata;
}
