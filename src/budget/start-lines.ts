import type { QueuedRequest } from './class-queue.js';

/** The identical starts of one key, in arrival order: `items[head]` onward, less those that left. */
interface Line {
  items: QueuedRequest[];
  head: number;
  readonly left: Set<number>;
}

/**
 * Identical starts waiting, one line per key (service.md §2.2: they must reach the service more than
 * 1 s apart, see `startReadyAt` in account-rules.ts). Only the first of a line can be chosen, and only while its key
 * is free; the others wait here, counted in the queue but out of its heaps, so a burst of identical
 * starts costs O(1) per start instead of a scan of every one at every step.
 */
export class StartLines {
  readonly #lines = new Map<string, Line>();

  /** Puts `entry` at the end of its key's line; true when it is first in line. */
  join(key: string, entry: QueuedRequest): boolean {
    const line = this.#lines.get(key);
    if (line === undefined) {
      this.#lines.set(key, { items: [entry], head: 0, left: new Set() });
      return true;
    }
    line.items.push(entry);
    return this.first(key) === entry;
  }

  /** The first in the key's line. */
  first(key: string): QueuedRequest | undefined {
    const line = this.#lines.get(key);
    if (line === undefined) return undefined;
    for (;;) {
      const entry = line.items[line.head];
      if (entry === undefined || !line.left.delete(entry.id)) return entry;
      line.head += 1;
    }
  }

  /** Takes `entry` out of its line (it was sent, or it left); returns the new first when it was first. */
  leave(key: string, entry: QueuedRequest): QueuedRequest | undefined {
    const line = this.#lines.get(key);
    if (line === undefined) return undefined;
    if (this.first(key) !== entry) {
      line.left.add(entry.id);
      return undefined;
    }
    line.head += 1;
    // Keep the array from growing without end under a steady stream of identical starts.
    if (line.head > 32 && line.head * 2 > line.items.length) {
      line.items = line.items.slice(line.head);
      line.head = 0;
    }
    const next = this.first(key);
    if (next === undefined) this.#lines.delete(key);
    return next;
  }
}
