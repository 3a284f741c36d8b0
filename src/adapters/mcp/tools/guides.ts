/** Tool 1: `read_guide`. */
import { GUIDE_TOPICS, type GuideTopic, readGuide } from "../guides.js";
import { tool } from "../tool.js";

/** `read_guide`: the text of one guide. */
export const readGuideTool = tool<{ topic: GuideTopic }>({
  name: "read_guide",
  description:
    "Returns one of Tessera's guides: tessera (data model, sessions, jobs, displays, lock etiquette), spatial-biology, analysis-playbooks, vision-and-selection (view_display's coordinates, selecting regions).",
  inputSchema: {
    type: "object",
    required: ["topic"],
    additionalProperties: false,
    properties: { topic: { type: "string", enum: [...GUIDE_TOPICS], description: "The guide to read." } },
  },
  async run(a) {
    return { structured: { topic: a.topic, text: await readGuide(a.topic) } };
  },
});
