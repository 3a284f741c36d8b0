/**
 * Embed mode's postMessage protocol, version 1 (client.md 18). Viewer → host messages are
 * `{source: "tessera-embed", version: 1, type, …}`; host → viewer `{source: "tessera-host",
 * version: 1, type, …}`; anything else is ignored. Posted with targetOrigin `*`.
 */
import type { DisplaySpec } from "../../sdk/io/checkpoint/app-state.js";

/** `{kind, encoding, viewport | null}`: a display without its id. */
export interface DisplayPayload {
  kind: "spatial_canvas" | "embedding_canvas";
  encoding: Record<string, unknown>;
  viewport: Record<string, unknown> | null;
}

/** The inventory sent with `ready`. */
export interface EmbedInventory {
  displays: ({ id: string; name: string } & DisplayPayload)[];
  obsColumns: { name: string; kind: string }[];
  images: { element: string; channelNames: string[]; isRgb: boolean; contrastRange: [number, number][] }[];
  obsmKeys: { key: string; nComponents: number }[];
}

/** What the viewer does for the host. */
export interface EmbedHandlers {
  applyDisplay(d: DisplayPayload): void;
  selectDisplay(id: string): DisplayPayload | null;
  searchVars(query: string, limit: number): Promise<string[]>;
}

const DEBOUNCE_MS = 400;
const REFRESH_TIMEOUT_MS = 15_000;

/** The payload of a display. */
export function payloadOf(d: DisplaySpec): DisplayPayload {
  const vp = d.viewport as Record<string, unknown> | undefined;
  const hasTarget = Array.isArray(vp?.target) && (vp?.target as unknown[]).length >= 2;
  return { kind: d.type, encoding: { ...d.encoding }, viewport: hasTarget ? { ...vp } : null };
}

/** The viewer's side of the protocol. */
export class EmbedBridge {
  private timer: ReturnType<typeof setTimeout> | null = null;
  private applied = new Set<string>();
  private pendingRefresh: Promise<string | null> | null = null;
  private refreshResolvers = new Map<string, (url: string | null) => void>();
  private seq = 0;

  constructor(
    private readonly handlers: EmbedHandlers,
    private readonly target: Window = window.parent,
  ) {
    window.addEventListener("message", (ev) => void this.onMessage(ev));
  }

  post(type: string, fields: Record<string, unknown> = {}): void {
    this.target.postMessage({ source: "tessera-embed", version: 1, type, ...fields }, "*");
  }

  ready(inventory: EmbedInventory): void {
    this.post("ready", { inventory });
  }

  error(message: string): void {
    this.post("error", { message });
  }

  /** A display the host applied: its next change notification is not echoed back. */
  markApplied(d: DisplayPayload): void {
    this.applied.add(JSON.stringify([d.kind, d.encoding]));
  }

  /** The user changed the display (debounced; never echoed for a change the host applied). */
  displayChanged(d: DisplayPayload): void {
    const key = JSON.stringify([d.kind, d.encoding]);
    if (this.applied.has(key)) {
      this.applied.delete(key);
      if (this.timer) clearTimeout(this.timer);
      return;
    }
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => this.post("display-changed", { display: d }), DEBOUNCE_MS);
  }

  /**
   * Ask the host for a re-signed checkpoint URL (one request shared by concurrent callers); null
   * when the host gives none or does not answer within 15 s.
   */
  refreshCheckpointUrl(): Promise<string | null> {
    if (this.pendingRefresh) return this.pendingRefresh;
    const requestId = `r${++this.seq}`;
    this.pendingRefresh = new Promise<string | null>((resolve) => {
      const t = setTimeout(() => {
        this.refreshResolvers.delete(requestId);
        resolve(null);
      }, REFRESH_TIMEOUT_MS);
      this.refreshResolvers.set(requestId, (url) => {
        clearTimeout(t);
        resolve(url);
      });
      this.post("refresh-checkpoint-url", { requestId });
    }).finally(() => {
      this.pendingRefresh = null;
    });
    return this.pendingRefresh;
  }

  private async onMessage(ev: MessageEvent): Promise<void> {
    const m = ev.data as { source?: string; version?: number; type?: string; [k: string]: unknown } | null;
    if (!m || typeof m !== "object" || m.source !== "tessera-host" || m.version !== 1) return;
    try {
      switch (m.type) {
        case "apply-display": {
          const d = m.display as DisplayPayload;
          if (!d || (d.kind !== "spatial_canvas" && d.kind !== "embedding_canvas"))
            throw new Error("apply-display: bad display");
          this.markApplied(d);
          this.handlers.applyDisplay(d);
          break;
        }
        case "select-display": {
          const d = this.handlers.selectDisplay(String(m.displayId));
          if (d) this.post("display-changed", { display: d });
          else this.error(`no display "${String(m.displayId)}"`);
          break;
        }
        case "search-vars": {
          const names = await this.handlers.searchVars(String(m.query ?? ""), Number(m.limit ?? 20) || 20);
          this.post("search-vars-result", { requestId: m.requestId, names });
          break;
        }
        case "checkpoint-url": {
          const r = this.refreshResolvers.get(String(m.requestId));
          if (r) {
            this.refreshResolvers.delete(String(m.requestId));
            r(typeof m.url === "string" ? m.url : null);
          }
          break;
        }
        default:
          break;
      }
    } catch (e) {
      this.error((e as Error).message);
    }
  }
}

/**
 * A `fetch` for range reads that, on 401/403, asks the host for a new URL once (shared by
 * concurrent reads) and retries each read once with it.
 */
export function refreshingFetch(bridge: EmbedBridge, initialUrl: string): typeof fetch {
  let current = initialUrl;
  return async (input, init) => {
    const asked = typeof input === "string" ? input : input instanceof URL ? input.href : input.url;
    const url = asked === initialUrl ? current : asked;
    const r = await fetch(url, init);
    if (r.status !== 401 && r.status !== 403) return r;
    const fresh = await bridge.refreshCheckpointUrl();
    if (!fresh) return r;
    current = fresh;
    return fetch(fresh, init);
  };
}
