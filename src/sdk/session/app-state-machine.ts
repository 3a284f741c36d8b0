/**
 * The app state as a state machine: pure functions from one `AppState` to the next, with the
 * transitions of the specification's "States and transitions" table for history entries and plots.
 * Nothing here runs a job or emits an event; the session does both around these steps, so the
 * rules can be tested (and reused by a client) on plain JSON.
 */

import { NotFoundError, StateError } from "../errors.js";
import type {
  AppState,
  DisplaySpec,
  HistEntry,
  HistStatus,
  PlotEntry,
  PlotStatus,
} from "../io/checkpoint/app-state.js";
import { referencesTouched } from "./versions.js";

/** The unit of execution: which function, with which params. */
export interface Descriptor {
  namespace: string;
  function: string;
  params: Record<string, unknown>;
}

/** Allowed next states of a history entry. */
const HIST_NEXT: Record<HistStatus, readonly HistStatus[]> = {
  pending: ["queued"],
  queued: ["running", "cancelled"],
  running: ["completed", "failed"],
  completed: [],
  failed: [],
  cancelled: [],
};

/** Allowed next states of a plot (`drawn`/`invalidated`/`failed` go back to `queued` on redraw). */
const PLOT_NEXT: Record<PlotStatus, readonly PlotStatus[]> = {
  pending: ["queued"],
  queued: ["running"],
  running: ["drawn", "failed"],
  drawn: ["invalidated", "queued"],
  invalidated: ["queued"],
  failed: ["queued"],
};

/** An entry of either list, tagged with the list it is in. */
export type AnyEntry = { list: "history"; entry: HistEntry } | { list: "plots"; entry: PlotEntry };

/**
 * Whether a descriptor is a plot: its function's effect class is `plot` (a `custom.*_plot` companion, a
 * plugin's plot), or, when the effect class is not at hand, its namespace is `pl` or scanpy's `sc.pl`.
 * Every plot is recorded as `pl` (service-spec PlotEntry).
 */
export function isPlotDescriptor(d: Pick<Descriptor, "namespace">, effectClass?: string): boolean {
  return effectClass === "plot" || d.namespace === "pl" || d.namespace === "sc.pl";
}

/** Find a history entry or a plot by id. */
export function findEntry(state: AppState, id: string): AnyEntry | undefined {
  const h = state.compute_history.find((e) => e.id === id);
  if (h) return { list: "history", entry: h };
  const p = state.plots.find((e) => e.id === id);
  return p ? { list: "plots", entry: p } : undefined;
}

/** Find an entry or throw a NotFoundError. */
export function requireEntry(state: AppState, id: string): AnyEntry {
  const e = findEntry(state, id);
  if (!e) throw new NotFoundError(`no history entry or plot "${id}"`);
  return e;
}

/**
 * A new history entry or plot for `descriptor`, in state `status` (`pending` or `queued`); `effectClass`
 * (the function's, from the registry) makes any plot function a plot entry, whatever its namespace.
 */
export function addEntry(
  state: AppState,
  id: string,
  descriptor: Descriptor,
  status: "pending" | "queued",
  libraryVersions: Record<string, string>,
  effectClass?: string,
): AppState {
  if (findEntry(state, id)) throw new StateError(`entry "${id}" already exists`);
  if (isPlotDescriptor(descriptor, effectClass)) {
    const plot: PlotEntry = {
      id,
      namespace: "pl",
      function: descriptor.function,
      params: { ...descriptor.params },
      status,
      references: [],
      library_versions: { ...libraryVersions },
    };
    return { ...state, plots: [...state.plots, plot] };
  }
  const entry: HistEntry = {
    id,
    namespace: descriptor.namespace,
    function: descriptor.function,
    params: { ...descriptor.params },
    status,
    library_versions: { ...libraryVersions },
    started_at: null,
    finished_at: null,
    structural_diff: {},
  };
  return { ...state, compute_history: [...state.compute_history, entry] };
}

/** Fields a transition may set besides the status. */
export interface TransitionPatch {
  started_at?: string | null;
  finished_at?: string | null;
  structural_diff?: Record<string, string[]>;
  log?: string;
  error?: string | null;
  references?: string[];
  params?: Record<string, unknown>;
  library_versions?: Record<string, string>;
}

/**
 * Move entry `id` to `to`, applying `patch`. Throws a StateError for a transition the spec does not
 * allow (a completed entry cannot run again; only a queued entry can be cancelled).
 */
export function transition(
  state: AppState,
  id: string,
  to: HistStatus | PlotStatus,
  patch: TransitionPatch = {},
): AppState {
  const found = requireEntry(state, id);
  if (found.list === "history") {
    const from = found.entry.status;
    if (!HIST_NEXT[from].includes(to as HistStatus))
      throw new StateError(`history entry "${id}" is ${from}; it cannot become ${to}`);
    const { references: _r, ...rest } = patch;
    const next: HistEntry = { ...found.entry, ...rest, status: to as HistStatus };
    return { ...state, compute_history: state.compute_history.map((e) => (e.id === id ? next : e)) };
  }
  const from = found.entry.status;
  if (!PLOT_NEXT[from].includes(to as PlotStatus))
    throw new StateError(`plot "${id}" is ${from}; it cannot become ${to}`);
  const next: PlotEntry = {
    ...found.entry,
    status: to as PlotStatus,
    ...(patch.references ? { references: [...patch.references] } : {}),
    ...(patch.params ? { params: { ...patch.params } } : {}),
    ...(patch.library_versions ? { library_versions: { ...patch.library_versions } } : {}),
  };
  return { ...state, plots: state.plots.map((e) => (e.id === id ? next : e)) };
}

/** Replace the params of a pending step (history entry or plot). */
export function updatePendingParams(state: AppState, id: string, params: Record<string, unknown>): AppState {
  const found = requireEntry(state, id);
  if (found.entry.status !== "pending")
    throw new StateError(`"${id}" is ${found.entry.status}; only pending steps can be edited`);
  if (found.list === "history") {
    return {
      ...state,
      compute_history: state.compute_history.map((e) => (e.id === id ? { ...e, params: { ...params } } : e)),
    };
  }
  return { ...state, plots: state.plots.map((e) => (e.id === id ? { ...e, params: { ...params } } : e)) };
}

/** Statuses whose entries may be deleted from history: nothing of theirs reached the data. */
const DISCARDABLE = new Set(["pending", "failed", "cancelled"]);

/**
 * Delete a pending, failed or cancelled entry (client.md 3.1). Queued and running entries are still
 * to happen; completed steps and drawn plots are the record of what changed the data, so they stay.
 */
export function discardEntry(state: AppState, id: string): AppState {
  const found = requireEntry(state, id);
  if (!DISCARDABLE.has(found.entry.status)) {
    throw new StateError(
      `"${id}" is ${found.entry.status}; only pending, failed or cancelled steps can be deleted`,
    );
  }
  return found.list === "history"
    ? { ...state, compute_history: state.compute_history.filter((e) => e.id !== id) }
    : { ...state, plots: state.plots.filter((e) => e.id !== id) };
}

/** Remove a plot entirely (a queued plot that was cancelled). */
export function removePlot(state: AppState, id: string): AppState {
  return { ...state, plots: state.plots.filter((e) => e.id !== id) };
}

/** Ids of pending steps, in the order they were staged (history first, then plots, each in order). */
export function pendingIds(state: AppState): string[] {
  return [...state.compute_history, ...state.plots].filter((e) => e.status === "pending").map((e) => e.id);
}

/**
 * Mark `drawn` plots whose references overlap a touched field as `invalidated`. Returns the new state
 * and the ids that changed (empty when none did, with the same state object).
 */
export function invalidatePlots(
  state: AppState,
  touched: readonly string[],
  activeTable: string | null,
): { state: AppState; ids: string[] } {
  const ids = state.plots
    .filter((p) => p.status === "drawn" && referencesTouched(p.references, touched, activeTable))
    .map((p) => p.id);
  if (!ids.length) return { state, ids };
  return {
    state: {
      ...state,
      plots: state.plots.map((p) => (ids.includes(p.id) ? { ...p, status: "invalidated" as const } : p)),
    },
    ids,
  };
}

/** Set (add or replace) a display. */
export function putDisplay(state: AppState, display: DisplaySpec): AppState {
  const exists = state.displays.some((d) => d.id === display.id);
  return {
    ...state,
    displays: exists
      ? state.displays.map((d) => (d.id === display.id ? display : d))
      : [...state.displays, display],
  };
}

/** The descriptor of an entry. */
export function entryDescriptor(e: HistEntry | PlotEntry): Descriptor {
  return { namespace: e.namespace, function: e.function, params: { ...e.params } };
}

/**
 * The app state as loaded from a checkpoint, made consistent for a fresh session: work that was
 * in flight when it was saved (queued, running) cannot resume, so it is marked cancelled (history) or
 * failed (plots); pending steps stay pending.
 */
export function settleLoadedState(state: AppState): AppState {
  return {
    ...state,
    compute_history: state.compute_history.map((e) =>
      e.status === "queued" || e.status === "running" ? { ...e, status: "cancelled" } : e,
    ),
    plots: state.plots.map((p) =>
      p.status === "queued" || p.status === "running" ? { ...p, status: "failed" } : p,
    ),
  };
}
