import type { GateReport, GateTicket } from '../domain/requests.js';
import { markStart, pruneStartMarks, startReadyAt } from './duplicate-starts.js';
import { advanceVirtualTime, chooseNext, fairTag } from './fair-queue.js';
import type { QueuedRequest } from './fair-queue.js';
import { followServer } from './follow-server.js';
import { pruneCadences, recordPoll } from './key-cadence.js';
import { pacerAfterSend, pacerReadyAt } from './pacing.js';
import type { SchedulerState } from './scheduler-state.js';
import { logReadyAt, logSend, pruneSendLog } from './send-log.js';
import { capAbortReadyAt, capAfterSend, capReadyAt } from './server-cap.js';

/**
 * What can happen to the budget. `id`s are the shell's handles on waiting requests.
 *
 * @example
 * ```ts
 * const event: SchedulerEvent = { type: 'enqueue', id: 1, ticket: { endpoint: 'status', priority: 'status', key: 'we-1' } };
 * ```
 */
export type SchedulerEvent =
  | { readonly type: 'enqueue'; readonly id: number; readonly ticket: GateTicket }
  | { readonly type: 'cancel'; readonly id: number }
  | { readonly type: 'report'; readonly report: GateReport }
  /** The timer the previous step asked for has fired. */
  | { readonly type: 'wake' };

/**
 * The outcome of one step: the next state, the requests to let through now (in order), and when to
 * step again if nothing else happens (`undefined`: only an event can change anything, so no timer).
 *
 * @example
 * ```ts
 * const { state: next, released, wakeAt } = step(state, { type: 'wake' }, now);
 * ```
 */
export interface SchedulerStep {
  readonly state: SchedulerState;
  readonly released: readonly number[];
  readonly wakeAt: number | undefined;
}

/**
 * The budget's pure state machine: applies `event` at time `now`, then lets through every waiting
 * request that may go now, highest priority first (see `chooseNext`).
 *
 * @example
 * ```ts
 * let state = initialSchedulerState(budgetLimits());
 * const result = step(state, { type: 'enqueue', id: 1, ticket }, 0);
 * result.released; // [1]: under the limit a request goes at once
 * ```
 */
export function step(state: SchedulerState, event: SchedulerEvent, now: number): SchedulerStep {
  return drain(apply(prune(state, now), event, now), now);
}

function apply(state: SchedulerState, event: SchedulerEvent, now: number): SchedulerState {
  switch (event.type) {
    case 'enqueue': {
      const tag = fairTag(state.queue, state.clocks, event.ticket);
      const entry: QueuedRequest = { id: event.id, ticket: event.ticket, enqueuedAt: now, arrival: state.arrivals, tag };
      return { ...state, queue: [...state.queue, entry], arrivals: state.arrivals + 1 };
    }
    case 'cancel':
      // Cancellation as data: the entry leaves the queue and frees nothing else.
      return { ...state, queue: state.queue.filter((entry) => entry.id !== event.id) };
    case 'report':
      return followServer(state, event.report, now);
    case 'wake':
      return state;
    default:
      return unreachable(event);
  }
}

function drain(initial: SchedulerState, now: number): SchedulerStep {
  let state = initial;
  const released: number[] = [];
  for (;;) {
    const readyAt = budgetReadyAt(state, now);
    const abortsReadyAt = abortReadyAt(state, now);
    const eligible: QueuedRequest[] = [];
    let wakeAt = Number.POSITIVE_INFINITY;
    for (const entry of state.queue) {
      const entryReadyAt =
        entry.ticket.priority === 'abort' ? abortsReadyAt : Math.max(readyAt, startReadyAt(state.starts, entry.ticket, state.limits.duplicateStartSpacingMs));
      if (entryReadyAt <= now) eligible.push(entry);
      else wakeAt = Math.min(wakeAt, entryReadyAt);
    }
    const [first, ...rest] = eligible;
    if (first === undefined) return { state, released, wakeAt: Number.isFinite(wakeAt) ? wakeAt : undefined };
    const { chosen, bypassed } = chooseNext([first, ...rest], state.bypassed, state.limits.starvationLimit);
    state = send({ ...state, bypassed }, chosen, now);
    released.push(chosen.id);
  }
}

/**
 * When the budget as a whole lets the next request go: every limit must agree. A single request may
 * wait longer (an identical start, see `startReadyAt`).
 *
 * @example
 * ```ts
 * budgetReadyAt(state, now) <= now; // a request could go right now
 * ```
 */
export function budgetReadyAt(state: SchedulerState, now: number): number {
  const { limits } = state;
  return Math.max(
    pacerReadyAt(state.pacer, limits),
    state.pausedUntil,
    capReadyAt(state.minuteCap, now),
    capReadyAt(state.dayCap, now),
    // The pacer bounds every minute-long window of paced sends; aborts are not paced (`abortReadyAt`),
    // so every window is also bounded by counting, and so is the day (PROTOCOL §2.1).
    logReadyAt(state.sends, limits.usablePerMinute, limits.minuteWindowMs),
    logReadyAt(state.sends, limits.usablePerDay, limits.dayWindowMs),
  );
}

/**
 * When an abort may go. An execution left running spends the account's credits, so an abort takes the
 * fastest rate the service's count allows rather than the pacer's smooth one: no more than the
 * service's own limit in any of our windows (the safety margin is the reserve aborts may use), not
 * before a 429's pause ends, and ahead of a server cap's spread while that count is above zero
 * (`capAbortReadyAt`). So a mass abort drains at up to the full limit per window instead of one per
 * pacing interval.
 *
 * @example
 * ```ts
 * abortReadyAt(state, now) <= budgetReadyAt(state, now); // an abort never waits longer than a poll
 * ```
 */
export function abortReadyAt(state: SchedulerState, now: number): number {
  const { limits } = state;
  return Math.max(
    state.pausedUntil,
    capAbortReadyAt(state.minuteCap, now),
    capAbortReadyAt(state.dayCap, now),
    logReadyAt(state.sends, limits.perMinute, limits.minuteWindowMs),
    logReadyAt(state.sends, limits.perDay, limits.dayWindowMs),
  );
}

function send(state: SchedulerState, entry: QueuedRequest, now: number): SchedulerState {
  return {
    ...state,
    queue: state.queue.filter((queued) => queued !== entry),
    clocks: advanceVirtualTime(state.clocks, entry),
    pacer: pacerAfterSend(state.pacer, now, state.limits),
    sends: logSend(state.sends, now),
    lastSendAt: now,
    inFlight: [...state.inFlight, { ticket: entry.ticket, sentAt: now }],
    minuteCap: capAfterSend(state.minuteCap, now),
    dayCap: capAfterSend(state.dayCap, now),
    starts: markStart(state.starts, entry.ticket, now, 'sent'),
    cadences: recordPoll(state.cadences, entry, now),
  };
}

function prune(state: SchedulerState, now: number): SchedulerState {
  const { limits } = state;
  return {
    ...state,
    sends: pruneSendLog(state.sends, now, limits.dayWindowMs),
    minuteCap: state.minuteCap !== undefined && now >= state.minuteCap.until ? undefined : state.minuteCap,
    dayCap: state.dayCap !== undefined && now >= state.dayCap.until ? undefined : state.dayCap,
    starts: pruneStartMarks(state.starts, now, limits.duplicateStartSpacingMs),
    cadences: pruneCadences(state.cadences, [...state.queue, ...state.inFlight], now, limits.minuteWindowMs),
  };
}

function unreachable(value: never): never {
  throw new Error(`Unexpected scheduler event: ${JSON.stringify(value)}`);
}
