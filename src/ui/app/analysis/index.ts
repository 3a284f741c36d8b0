/**
 * The analysis panels of the web app (issue 18, analysis side), registered as custom elements:
 * the sidebar with the Compute and Plots history and its detail panel, the recipe gallery, the save
 * dialog, the Plots view with its lightbox, the data inspector, and the blocking job overlay.
 */
import "./analysis-sidebar.js";
import "./data-inspector.js";
import "./job-overlay.js";
import "./plots-view.js";

export type { SidebarTab } from "./analysis-sidebar.js";
export { APP_EVENT, type AppHost } from "./host.js";
