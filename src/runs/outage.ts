import { isServerError } from '../errors/api-errors.js';
import { isFlowstreamError } from '../errors/flowstream-error.js';
import { isNetworkError, isTimeoutError } from '../errors/transport-errors.js';
import { isResponseValidationError } from '../errors/validation-errors.js';

/*
 * How a run follows its execution through an outage of the service or of the request budget: which
 * failures are an outage, how long it reads again and how often, and when it gives up. Pure: the
 * shells (poll-execution.ts for reads, execution-source.ts for a background abort) wait and call.
 */

/** An outage a run is reading through: since when, on the run's scheduler, and how many reads failed. */
export interface Outage {
  /** When the outage's first read failed. */
  readonly since: number;
  /** Reads (or aborts) failed in it so far, the first included. */
  readonly attempts: number;
  /** The last failure, in short (`describeOutage`). */
  readonly error: string;
}

/** Try again after `delayMs`, or give up: the failure is no outage, or the outage outlasted `outageMs`. */
export type OutageStep = { readonly kind: 'retry'; readonly outage: Outage; readonly delayMs: number } | { readonly kind: 'give-up'; readonly outage: Outage | undefined };

/** The first wait after a failed read; each next one doubles, up to `OUTAGE_MAX_DELAY_MS`. */
export const OUTAGE_BASE_DELAY_MS = 1_000;
/**
 * The longest wait between two reads of an outage: a run notices the service is back within half a
 * minute, and a fleet of runs reading through an outage stays far below the budget's pace.
 */
export const OUTAGE_MAX_DELAY_MS = 30_000;

/** A budget that cannot reach its shared store (a Redis budget past `unavailableAfterMs`): nothing was sent. */
const BUDGET_UNAVAILABLE = 'BUDGET_UNAVAILABLE';

/**
 * Whether a failed read is an outage the run waits out: no answer (the connection refused or dropped,
 * a timeout), the service failing (5xx, `E0000`, service.md §1.2), an answer cut off (not JSON), or the
 * request budget unable to reach its store. Anything else (401, 403, 404, a schema mismatch, a spent
 * day) fails the same way again: the run errors at once.
 */
export function isOutage(error: unknown): boolean {
  if (isNetworkError(error) || isTimeoutError(error) || isServerError(error)) return true;
  if (isResponseValidationError(error)) return error.reason === 'not-json';
  return isBudgetUnavailable(error);
}

/** The request budget could not reach its shared store: the request was never sent. */
export function isBudgetUnavailable(error: unknown): boolean {
  return isFlowstreamError(error) && error.code === BUDGET_UNAVAILABLE;
}

/** A failure as a run's state shows it while reconnecting: short, and never the API key (only the kind and the status). */
export function describeOutage(error: unknown): string {
  if (isServerError(error)) return error.status === 200 ? `service error ${error.errCode ?? ''}`.trim() : `HTTP ${error.status}`;
  if (isTimeoutError(error)) return 'timed out';
  if (isNetworkError(error)) return 'network error';
  if (isResponseValidationError(error)) return 'answer cut off';
  if (isFlowstreamError(error) && error.code === BUDGET_UNAVAILABLE) return 'request budget unavailable';
  return 'request failed';
}

/** Exponential backoff with equal jitter (half fixed, half random) from `OUTAGE_BASE_DELAY_MS` to `OUTAGE_MAX_DELAY_MS`. */
export function outageBackoff(attempts: number, random: number): number {
  const step = Math.min(OUTAGE_MAX_DELAY_MS, OUTAGE_BASE_DELAY_MS * 2 ** Math.min(attempts - 1, 30));
  return Math.round(step / 2 + (random * step) / 2);
}

/**
 * What to do after a read failed with `error` at `now`: an outage is read through with backoff until
 * `outageMs` after its first failure — the last wait is cut to end at that moment, so the last read is
 * made then — and a failure after it gives up. A failure that is no outage gives up at once.
 */
export function afterFailure(outage: Outage | undefined, error: unknown, now: number, random: number, outageMs: number): OutageStep {
  if (!isOutage(error)) return { kind: 'give-up', outage };
  const next: Outage = { since: outage?.since ?? now, attempts: (outage?.attempts ?? 0) + 1, error: describeOutage(error) };
  const left = next.since + outageMs - now;
  if (left <= 0) return { kind: 'give-up', outage: next };
  return { kind: 'retry', outage: next, delayMs: Math.min(outageBackoff(next.attempts, random), left) };
}

/**
 * The error a run ends with after reading through an outage for too long: the last failure, keeping
 * its class (a `NetworkError` stays one), its message saying how long the run tried.
 */
export function outlasted(error: unknown, outage: Outage, now: number): unknown {
  if (!(error instanceof Error) || !Object.isExtensible(error)) return error;
  const seconds = Math.round((now - outage.since) / 1_000);
  error.message = `${error.message} (tried again through the outage for ${seconds} s, ${outage.attempts} failed attempts, then gave up)`;
  return error;
}
