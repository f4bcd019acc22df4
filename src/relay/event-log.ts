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
 * resuming after a number gets exactly the events it missed, no gap and no repeat.
 */
export class EventLog {
  readonly #entries: LoggedEvent[] = [];

  /**
   * Adds `event` at the end and returns it with its sequence number: `seq` when given (the place a hub
   * gave it, the same in every process following the execution) and past the last, else the next one.
   */
  append(event: RunEvent, seq?: number): LoggedEvent {
    const next = Math.max(seqAt(this.#entries.length), this.lastSeq + 1);
    const entry = { seq: seq !== undefined && seq > this.lastSeq ? seq : next, event };
    this.#entries.push(entry);
    return entry;
  }

  /** The events after sequence number `seq` (all of them for 0), in order. */
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
