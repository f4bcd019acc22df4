import type { RunEvent } from '../runs/events.js';

/** One event of an execution with its place in the execution's sequence. */
export interface LoggedEvent {
  readonly seq: number;
  readonly event: RunEvent;
}

/**
 * The sequence number of the event at `index` of the relay's one follow of an execution: 1, 2, 3 …
 * The one place that decides it, so the numbering can follow another source (a per-read sequence).
 */
export function seqAt(index: number): number {
  return index + 1;
}

/**
 * The events of one execution in the order they came, each with its sequence number: a viewer
 * resuming after a number gets exactly the events it missed, no gap and no repeat — as long as the
 * log still holds them (see {@link EventLog.holds}).
 *
 * It keeps at least the last `keep` events and at most twice as many: once it holds `2 × keep`, the
 * older half goes (in one step, so an append costs O(1) amortised), and a viewer from before what is
 * left is brought to the state by a snapshot instead.
 */
export class EventLog {
  #entries: LoggedEvent[] = [];
  readonly #keep: number;
  /** The sequence number of the last event let go, 0 while none was. */
  #dropped = 0;

  constructor(keep = Number.POSITIVE_INFINITY) {
    this.#keep = Math.max(1, keep);
  }

  /**
   * Adds `event` at the end and returns it with its sequence number: `seq` when given (the place a hub
   * gave it, the same in every process following the execution) and past the last, else the next one.
   */
  append(event: RunEvent, seq?: number): LoggedEvent {
    const next = Math.max(seqAt(this.#entries.length), this.lastSeq + 1);
    const entry = { seq: seq !== undefined && seq > this.lastSeq ? seq : next, event };
    this.#entries.push(entry);
    if (this.#entries.length >= 2 * this.#keep) {
      const from = this.#entries.length - this.#keep;
      this.#dropped = this.#entries[from - 1]?.seq ?? this.#dropped;
      this.#entries = this.#entries.slice(from);
    }
    return entry;
  }

  /** Whether every event after sequence number `seq` is still here (`after(seq)` misses none). */
  holds(seq: number): boolean {
    return seq >= this.#dropped;
  }

  /** How many events the log holds now. */
  get size(): number {
    return this.#entries.length;
  }

  /** The events after sequence number `seq` that the log holds (all of them for 0), in order. */
  after(seq: number): readonly LoggedEvent[] {
    // Sequence numbers rise with the index: the first entry past `seq` is found by bisection.
    let low = 0;
    let high = this.#entries.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if ((this.#entries[middle]?.seq ?? Number.POSITIVE_INFINITY) <= seq) low = middle + 1;
      else high = middle;
    }
    return this.#entries.slice(low);
  }

  /** The sequence number of the last event, 0 while there is none. */
  get lastSeq(): number {
    return this.last?.seq ?? 0;
  }

  /** The last event, if any. */
  get last(): LoggedEvent | undefined {
    return this.#entries.at(-1);
  }
}
