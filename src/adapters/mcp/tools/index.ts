/** Every MCP tool, in the order of agent-mcp.md section 3. */
import type { McpTool } from "../tool.js";
import { getObsSummary, listPlots, listRecipes, searchGenes } from "./catalog.js";
import { browseDataDir, listDatasets, listReaders } from "./data.js";
import { addDisplay, updateDisplay, viewDisplay } from "./displays.js";
import { exportFigure, viewPlot } from "./figures.js";
import { describeFunction, searchFunctions } from "./functions.js";
import { readGuideTool } from "./guides.js";
import { getJob, listJobs } from "./jobs.js";
import { closeSession, createSession, saveCheckpoint } from "./lifecycle.js";
import { runRecipe } from "./recipe.js";
import { annotateRegion, inspectRegionTool, subsetToRegion } from "./regions.js";
import { runFunction } from "./run.js";
import { getSession, listSessions, releaseControl, setActiveSession } from "./sessions.js";
import { addShape, deleteShape, listShapes } from "./shapes.js";
import { getTable } from "./tables.js";

/** The tools the endpoint lists. */
export const ALL_TOOLS: readonly McpTool[] = [
  readGuideTool,
  listSessions,
  getSession,
  createSession,
  setActiveSession,
  releaseControl,
  saveCheckpoint,
  closeSession,
  listDatasets,
  browseDataDir,
  listReaders,
  searchFunctions,
  describeFunction,
  runFunction,
  listJobs,
  getJob,
  listRecipes,
  runRecipe,
  listPlots,
  viewPlot,
  viewDisplay,
  updateDisplay,
  addDisplay,
  inspectRegionTool,
  annotateRegion,
  subsetToRegion,
  listShapes,
  addShape,
  deleteShape,
  getObsSummary,
  getTable,
  searchGenes,
  exportFigure,
];
