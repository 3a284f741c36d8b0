/**
 * EventBus: the one in-process event stream. Events get monotonic ids from 1 and are kept in a
 * ring bounded both in count and in bytes (the JSON size of each event), so a client that reconnects
 * (SSE `Last-Event-ID`) or polls (`?after=<id>`) gets what it missed as long as the ring still holds
 * it, and a burst of large events (jobs with 0.5 MiB names) cannot hold memory without limit.
 *
 * Delivery is synchronous and in id order for every subscriber: an event emitted from inside a
 * subscriber is queued and delivered after the current one has reached everybody, so no subscriber
 * ever sees ids out of order. A subscriber that throws is reported and skipped; the others still get
 * the event.
 */
import type { EventData, TesseraEvent } from "./types.js";

/** A subscriber callback. */
export type EventListener = (e: TesseraEvent) => void;

/** Options of an EventBus. */
export interface EventBusOptions {
  /** Events kept for replay and polling (default 10 000). */
  readonly capacity?: number;
  /**
   * Bytes of event JSON kept for replay (default 16 MiB): the oldest events are dropped past it. The newest
   * event is always kept, whatever its size.
   */
  readonly maxBytes?: number;
  /** Called when a subscriber throws (default: `console.error`). */
  readonly onListenerError?: (error: unknown, event: TesseraEvent) => void;
}

/** What polling returns: the newest id and the events after the cursor that the ring still holds. */
export interface EventPage {
  readonly last_id: number;
  readonly events: TesseraEvent[];
}

/** The event bus (see the module comment). */
export class EventBus {
  /** Ring capacity. */
  readonly capacity: number;
  /** Bytes of event JSON the ring may hold. */
  readonly maxBytes: number;
  private readonly ring: (TesseraEvent | undefined)[];
  /** JSON size of the event in each ring slot. */
  private readonly sizes: Float64Array;
  private last = 0;
  /** Id of the oldest event held (`last + 1` when none). */
  private first = 1;
  private bytes = 0;
  /** Live subscribers with the id of the last event each was given (no duplicates, no reordering). */
  private readonly listeners = new Map<EventListener, { seen: number }>();
  private readonly pending: TesseraEvent[] = [];
  private dispatching = false;
  private readonly onListenerError: (error: unknown, event: TesseraEvent) => void;

  constructor(opts: EventBusOptions = {}) {
    const capacity = opts.capacity ?? 10_000;
    if (!Number.isInteger(capacity) || capacity < 1) {
      throw new Error(`EventBus: capacity must be a positive integer, got ${capacity}`);
    }
    const maxBytes = opts.maxBytes ?? 16 * 1024 * 1024;
    if (!(maxBytes > 0)) throw new Error(`EventBus: maxBytes must be positive, got ${maxBytes}`);
    this.capacity = capacity;
    this.maxBytes = maxBytes;
    this.ring = new Array(capacity);
    this.sizes = new Float64Array(capacity);
    this.onListenerError =
      opts.onListenerError ??
      ((error, event) =>
        console.error(`EventBus: a subscriber threw on ${event.event} #${event.id}:`, error));
  }

  /** Id of the newest event (0 before the first). */
  get lastId(): number {
    return this.last;
  }

  /** Id of the oldest event the ring still holds (`lastId + 1` when empty). */
  get oldestId(): number {
    return this.first;
  }

  /** Bytes of event JSON the ring holds now. */
  get heldBytes(): number {
    return this.bytes;
  }

  /**
   * Record an event and deliver it to every subscriber. A known event name's payload is type-checked
   * against `EventMap`; other names take any object.
   */
  emit<K extends string>(event: K, data: EventData<K>): TesseraEvent<EventData<K>> {
    const e: TesseraEvent<EventData<K>> = { id: ++this.last, event, data };
    const slot = (e.id - 1) % this.capacity;
    if (e.id - this.first >= this.capacity) this.evictOldest(); // the slot is the oldest's
    this.ring[slot] = e;
    this.sizes[slot] = JSON.stringify(e).length;
    this.bytes += this.sizes[slot]!;
    while (this.bytes > this.maxBytes && this.first < e.id) this.evictOldest();
    this.pending.push(e);
    this.drain();
    return e;
  }

  /**
   * Events after `afterId` that the ring still holds (oldest first), with the newest id. Without
   * `afterId`, a baseline: the newest id and no events. A cursor beyond `lastId` (from before a
   * restart) also gets the baseline, so the client resynchronises on its next poll.
   */
  since(afterId?: number): EventPage {
    if (afterId === undefined || afterId === null || !Number.isFinite(afterId) || afterId >= this.last) {
      return { last_id: this.last, events: [] };
    }
    const from = Math.max(Math.floor(afterId) + 1, this.oldestId);
    const events: TesseraEvent[] = [];
    for (let id = from; id <= this.last; id++) events.push(this.ring[(id - 1) % this.capacity]!);
    return { last_id: this.last, events };
  }

  /**
   * Subscribe: with `afterId`, first replay what the ring holds after it, then deliver live events.
   * Returns the unsubscribe function. Replay happens before `subscribe` returns.
   */
  subscribe(fn: EventListener, afterId?: number): () => void {
    const state = { seen: this.last };
    if (afterId !== undefined) {
      // Replay until caught up: the subscriber itself may emit while replaying.
      state.seen = Math.min(Math.max(0, afterId), this.last);
      while (state.seen < this.last) {
        const page = this.since(state.seen).events;
        if (page.length === 0) state.seen = this.last;
        for (const e of page) this.deliver(fn, state, e);
      }
    }
    // A fresh function per subscription, so subscribing the same callback twice is two subscriptions.
    const key: EventListener = (e) => fn(e);
    this.listeners.set(key, state);
    return () => {
      this.listeners.delete(key);
    };
  }

  private evictOldest(): void {
    const slot = (this.first - 1) % this.capacity;
    this.bytes -= this.sizes[slot]!;
    this.sizes[slot] = 0;
    this.ring[slot] = undefined;
    this.first++;
  }

  /** Number of live subscribers. */
  get subscriberCount(): number {
    return this.listeners.size;
  }

  private drain(): void {
    // Re-entrant emits (from a subscriber) only queue; the outermost call delivers in order.
    if (this.dispatching) return;
    this.dispatching = true;
    try {
      for (let e = this.pending.shift(); e; e = this.pending.shift()) {
        for (const [fn, state] of [...this.listeners]) if (this.listeners.has(fn)) this.deliver(fn, state, e);
      }
    } finally {
      this.dispatching = false;
    }
  }

  private deliver(fn: EventListener, state: { seen: number }, e: TesseraEvent): void {
    if (e.id <= state.seen) return;
    state.seen = e.id;
    try {
      fn(e);
    } catch (error) {
      try {
        this.onListenerError(error, e);
      } catch {
        // A failing error reporter must not break delivery either.
      }
    }
  }
}
