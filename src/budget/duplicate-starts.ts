import type { GateTicket } from '../domain/requests.js';

/**
 * Identical starts (same canvas and exact body, the ticket's key) we sent recently. The service
 * marks a start when it arrives and refuses an identical one within 1 s with 409 (PROTOCOL §2.2). An
 * arrival lies between our send and the answer, so the next identical start waits for the previous
 * one's answer (or failure) and then the spacing: its own arrival is then surely more than 1 s later.
 *
 * @example
 * ```ts
 * const marks: StartMarks = new Map([['c-1 {}', { inFlight: 1, lastAt: 0 }]]);
 * ```
 */
export type StartMarks = ReadonlyMap<string, StartMark>;

/**
 * One identical-start key: how many of its attempts are on their way, and when the last was sent or answered.
 *
 * @example
 * ```ts
 * const mark: StartMark = { inFlight: 0, lastAt: 1_000 };
 * ```
 */
export interface StartMark {
  readonly inFlight: number;
  readonly lastAt: number;
}

/**
 * When `ticket` may be sent as far as duplicate starts go: at once for anything but a keyed start,
 * never (`Infinity`: wait for the answer) while an identical start is on its way.
 *
 * @example
 * ```ts
 * startReadyAt(marks, ticket, 1_100); // lastAt + 1_100
 * ```
 */
export function startReadyAt(marks: StartMarks, ticket: GateTicket, spacingMs: number): number {
  const mark = ticket.priority === 'start' && ticket.key !== undefined ? marks.get(ticket.key) : undefined;
  if (mark === undefined) return Number.NEGATIVE_INFINITY;
  return mark.inFlight > 0 ? Number.POSITIVE_INFINITY : mark.lastAt + spacingMs;
}

/**
 * The marks after `ticket` was sent (`sent`) or answered (`answered`) at `now`.
 *
 * @example
 * ```ts
 * marks = markStart(marks, ticket, now, 'sent');
 * ```
 */
export function markStart(marks: StartMarks, ticket: GateTicket, now: number, event: 'sent' | 'answered'): StartMarks {
  if (ticket.priority !== 'start' || ticket.key === undefined) return marks;
  const mark = marks.get(ticket.key) ?? { inFlight: 0, lastAt: now };
  const inFlight = event === 'sent' ? mark.inFlight + 1 : Math.max(0, mark.inFlight - 1);
  return new Map(marks).set(ticket.key, { inFlight, lastAt: Math.max(mark.lastAt, now) });
}

/**
 * Forgets keys whose spacing has passed with nothing on its way.
 *
 * @example
 * ```ts
 * marks = pruneStartMarks(marks, now, 1_100);
 * ```
 */
export function pruneStartMarks(marks: StartMarks, now: number, spacingMs: number): StartMarks {
  let pruned: Map<string, StartMark> | undefined;
  for (const [key, mark] of marks) {
    if (mark.inFlight === 0 && mark.lastAt + spacingMs <= now) {
      pruned ??= new Map(marks);
      pruned.delete(key);
    }
  }
  return pruned ?? marks;
}
