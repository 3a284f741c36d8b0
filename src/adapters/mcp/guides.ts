/**
 * The four guides (agent-mcp.md section 6): markdown files in the package's `docs/guides/`, read when
 * asked (small files; the package ships `docs/`).
 */
import { readFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { PACKAGE_RECIPES_DIR } from "../../sdk/session/config.js";

/** The guide topics, in the order the tool lists them. */
export const GUIDE_TOPICS = [
  "tessera",
  "spatial-biology",
  "analysis-playbooks",
  "vision-and-selection",
] as const;
/** One guide topic. */
export type GuideTopic = (typeof GUIDE_TOPICS)[number];

/** The package's guides folder (beside its `recipes/`, found from this module in src/ or dist/). */
export const GUIDES_DIR = join(dirname(PACKAGE_RECIPES_DIR), "docs", "guides");

/** The markdown text of one guide. */
export async function readGuide(topic: GuideTopic): Promise<string> {
  return readFile(join(GUIDES_DIR, `${topic}.md`), "utf8");
}
