import type { RequestPriority } from '../domain/endpoints.js';
import type { StartMarks } from './duplicate-starts.js';
import { initialVirtualTimes } from './fair-queue.js';
import type { InFlightRequest } from './in-flight.js';
import type { QueuedRequest, VirtualTimes } from './fair-queue.js';
import type { KeyCadences } from './key-cadence.js';
import type { BudgetLimits } from './limits.js';
import { IDLE_PACER } from './pacing.js';
import type { Pacer } from './pacing.js';
import type { SendLog } from './send-log.js';
import type { ServerCap } from './server-cap.js';

/**
 * Everything the scheduler knows, as plain immutable data: `step` maps it and an event to the next.
 *
 * @example
 * ```ts
 * let state = initialSchedulerState(budgetLimits());
 * ```
 */
export interface SchedulerState {
  readonly limits: BudgetLimits;
  /** Waiting requests in arrival order. */
  readonly queue: readonly QueuedRequest[];
  /** How many requests have arrived so far (the next one's `arrival`). */
  readonly arrivals: number;
  readonly clocks: VirtualTimes;
  /** Consecutive sends that overtook a waiting lower-priority request (see `chooseNext`). */
  readonly bypassed: number;
  readonly pacer: Pacer;
  readonly sends: SendLog;
  readonly lastSendAt: number;
  /** Requests let through whose report has not come yet, oldest first. */
  readonly inFlight: readonly InFlightRequest[];
  /** After a 429 nothing is sent before this time. */
  readonly pausedUntil: number;
  readonly minuteCap: ServerCap | undefined;
  readonly dayCap: ServerCap | undefined;
  /** The last `X-RateLimit-Remaining-*` values the service sent, for UIs and logs. */
  readonly server: ServerView;
  /** Per scope, until when the service's last word was "0 remaining" (see `followServer`). */
  readonly zeroUntil: { readonly minute: number; readonly day: number };
  /** Per scope, whether the service's remaining count proved meaningless and is no longer followed. */
  readonly ignoring: { readonly minute: boolean; readonly day: boolean };
  readonly starts: StartMarks;
  readonly cadences: KeyCadences;
}

/**
 * The service's last word on the account's remaining requests (PROTOCOL §2.1).
 *
 * @example
 * ```ts
 * const view: ServerView = { remainingPerMinute: 42, remainingPerDay: 9_000, at: 12_000 };
 * ```
 */
export interface ServerView {
  readonly remainingPerMinute?: number;
  readonly remainingPerDay?: number;
  /** When it said so. */
  readonly at?: number;
}

/**
 * Requests waiting per priority.
 *
 * @example
 * ```ts
 * queueDepths(state.queue).status; // 12
 * ```
 */
export function queueDepths(queue: readonly QueuedRequest[]): Readonly<Record<RequestPriority, number>> {
  const depths = { abort: 0, start: 0, status: 0, output: 0, search: 0 };
  for (const entry of queue) depths[entry.ticket.priority] += 1;
  return depths;
}

/**
 * A budget that has sent nothing yet: the full burst available, no pause, no caps.
 *
 * @example
 * ```ts
 * const state = initialSchedulerState(budgetLimits({ requestsPerMinute: 60 }));
 * ```
 */
export function initialSchedulerState(limits: BudgetLimits): SchedulerState {
  return {
    limits,
    queue: [],
    arrivals: 0,
    clocks: initialVirtualTimes(),
    bypassed: 0,
    pacer: IDLE_PACER,
    sends: [],
    lastSendAt: Number.NEGATIVE_INFINITY,
    inFlight: [],
    pausedUntil: Number.NEGATIVE_INFINITY,
    minuteCap: undefined,
    dayCap: undefined,
    server: {},
    zeroUntil: { minute: Number.NEGATIVE_INFINITY, day: Number.NEGATIVE_INFINITY },
    ignoring: { minute: false, day: false },
    starts: new Map(),
    cadences: new Map(),
  };
}
