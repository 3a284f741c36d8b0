/**
 * A least-recently-used map bounded by the bytes of its values (raw raster chunks, decoded chunks,
 * encoded WebP tiles). A budget of 0 disables it: nothing is kept.
 */

/** An LRU map whose entries each count `size` bytes against `budget`. */
export class ByteLru<V> {
  private readonly map = new Map<string, { value: V; size: number }>();
  private total = 0;

  constructor(
    /** Most bytes held at once. */
    readonly budget: number,
  ) {}

  /** Bytes held now. */
  get bytes(): number {
    return this.total;
  }

  /** Entries held now. */
  get size(): number {
    return this.map.size;
  }

  /** The value of `key` (marked most recently used), or undefined. */
  get(key: string): V | undefined {
    const e = this.map.get(key);
    if (!e) return undefined;
    this.map.delete(key);
    this.map.set(key, e);
    return e.value;
  }

  /** Keep `value` under `key`, dropping the least recently used entries beyond the budget. */
  set(key: string, value: V, size: number): void {
    const old = this.map.get(key);
    if (old) {
      this.total -= old.size;
      this.map.delete(key);
    }
    if (size > this.budget) return;
    this.map.set(key, { value, size });
    this.total += size;
    for (const [k, e] of this.map) {
      if (this.total <= this.budget) break;
      this.map.delete(k);
      this.total -= e.size;
    }
  }

  /** Drop every entry whose key starts with `prefix`. */
  dropPrefix(prefix: string): void {
    for (const [k, e] of this.map) {
      if (!k.startsWith(prefix)) continue;
      this.map.delete(k);
      this.total -= e.size;
    }
  }
}

/** A counting semaphore: at most `limit` holders at once, the others wait in order. */
export class Semaphore {
  private active = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(readonly limit: number) {}

  /** Run `fn` once a slot is free. */
  async run<T>(fn: () => Promise<T>): Promise<T> {
    if (this.active >= this.limit) await new Promise<void>((r) => this.waiting.push(r));
    else this.active++;
    try {
      return await fn();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.active--;
    }
  }
}
