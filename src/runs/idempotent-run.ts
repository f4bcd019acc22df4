import { defer, Observable, type Subscription } from 'rxjs';
import type { Logger } from '../domain/model.js';
import { isApiError, isServerError } from '../errors/api-errors.js';
import { StartInDoubtError } from '../errors/start-in-doubt-error.js';
import type { RunEvent } from './events.js';
import type { StartProgress } from './run-lifecycle.js';
import { InvalidArgumentError } from '../errors/validation-errors.js';
import { type IdempotencyClaim, idempotencyKey, idempotencyTtlMs, type IdempotencyStore } from './idempotency-store.js';
import { isBudgetUnavailable, reducerShell, type Step } from './poll.js';

// --- what becomes of a claimed key: a pure reducer -----------------------------------------------

/**
 * How one call of a claimed start failed: `unsent` — the request budget could not reach its store and
 * nothing of the start left (the run may make the call again, outage.ts); `nothing-started` — nothing
 * of it left, or the service answered with an error that starts nothing (4xx, a business error:
 * service.md §1.2); `unknown` — no answer, or a server fault: the start may have reached the service (§2.2).
 */
export type StartFailure = 'unsent' | 'nothing-started' | 'unknown';

/** What a claimed start hears: each call of the start, its progress and its end, and the run's end. */
export type ClaimedStartEvent =
  | { readonly type: 'call' }
  | { readonly type: 'sending' }
  | { readonly type: 'started'; readonly executionId: string }
  | { readonly type: 'failed'; readonly failure: StartFailure }
  | { readonly type: 'dropped' }
  | { readonly type: 'run-ended' };

/** What the key becomes, once: recorded with its execution, released (nothing started) or abandoned (in doubt). */
export type ClaimSettlement = { readonly type: 'record'; readonly executionId: string } | { readonly type: 'release' } | { readonly type: 'abandon' };

/** Where a claimed start stands: whether a request of it ever left, how many calls are open, whether the run ended. */
export interface ClaimedStart {
  readonly sent: boolean;
  readonly calls: number;
  readonly runEnded: boolean;
  readonly settled: boolean;
}

export const UNSETTLED_START: ClaimedStart = { sent: false, calls: 0, runEnded: false, settled: false };

/**
 * The rules of a claimed key, over the start's calls (a run makes its start again after a refusal that
 * sent nothing, so there may be several) and the run's end. The key is settled once: recorded when an
 * execution answered; released only when nothing of the start can have reached the service (no
 * request ever left, or the service refused it); otherwise abandoned, in doubt. While a call is open
 * the run's end waits for it: a run left while its start is on its way still gets the answer (to abort
 * it), and the execution is recorded.
 */
export function reduceClaimedStart(state: ClaimedStart, event: ClaimedStartEvent): Step<ClaimedStart, ClaimSettlement> {
  if (state.settled) return { state, commands: [] };
  const settle = (settlement: ClaimSettlement, next: Partial<ClaimedStart> = {}): Step<ClaimedStart, ClaimSettlement> => ({ state: { ...state, ...next, settled: true }, commands: [settlement] });
  const unanswered = (): ClaimSettlement => (state.sent ? { type: 'abandon' } : { type: 'release' });
  switch (event.type) {
    case 'call':
      return { state: { ...state, calls: state.calls + 1 }, commands: [] };
    case 'sending':
      return { state: { ...state, sent: true }, commands: [] };
    case 'started':
      return settle({ type: 'record', executionId: event.executionId }, { calls: state.calls - 1 });
    case 'failed': {
      const calls = state.calls - 1;
      switch (event.failure) {
        case 'nothing-started':
          return settle({ type: 'release' }, { calls });
        case 'unknown':
          return settle(unanswered(), { calls });
        case 'unsent':
          // Made again, or the run ends with it: the run's end settles the key then.
          if (state.runEnded && calls === 0) return settle(unanswered(), { calls });
          return { state: { ...state, calls }, commands: [] };
        default:
          return event.failure satisfies never;
      }
    }
    case 'dropped':
      return settle(unanswered(), { calls: state.calls - 1 });
    case 'run-ended':
      if (state.calls > 0) return { state: { ...state, runEnded: true }, commands: [] };
      return settle(unanswered(), { runEnded: true });
    default:
      return event satisfies never;
  }
}

/**
 * How a call of a start failed, for {@link reduceClaimedStart}; `sent`: a request of this call left
 * (a call is made again only when none did, so no earlier call can have sent one).
 */
export function startFailure(error: unknown, sent: boolean): StartFailure {
  if (!sent) return isBudgetUnavailable(error) ? 'unsent' : 'nothing-started';
  return isApiError(error) && !isServerError(error) ? 'nothing-started' : 'unknown';
}

// --- the shell -----------------------------------------------------------------------------------

/** How long an idempotency key lives from its first claim unless the run says (`RunOptions.idempotencyTtlMs`): a day. */
export const DEFAULT_IDEMPOTENCY_TTL_MS = 24 * 60 * 60_000;

/**
 * A run's idempotency from its key and options, checked (`InvalidArgumentError` for a key or lifetime
 * that cannot be meant). Made only for a run given a key: `store` is asked for then.
 */
export function runIdempotency(
  key: string,
  options: { readonly idempotencyTtlMs?: number; readonly signal?: AbortSignal | undefined },
  store: () => IdempotencyStore,
  logger: Logger | undefined,
): RunIdempotency {
  return { store: store(), key: idempotencyKey(key), ttlMs: idempotencyTtlMs(options.idempotencyTtlMs ?? DEFAULT_IDEMPOTENCY_TTL_MS), signal: options.signal, logger };
}

/** The idempotency of one run: its store, key and lifetime (`RunOptions.idempotencyKey`, `idempotencyTtlMs`). */
export interface RunIdempotency {
  readonly store: IdempotencyStore;
  readonly key: string;
  readonly ttlMs: number;
  /** The run's `signal`: aborting it stops waiting for another caller's start. */
  readonly signal?: AbortSignal | undefined;
  readonly logger?: Logger | undefined;
}

/**
 * A run with an idempotency key: per subscription the key is claimed first, then the run either
 * starts the execution itself (`own`, given the start wrapped so that its outcome settles the key),
 * follows the one started with the key (`follow`), or errors with `StartInDoubtError`. A subscriber
 * that leaves before the claim answered gives a claimed key back at once.
 */
export function idempotentRun(
  idempotency: RunIdempotency,
  start: () => Observable<StartProgress>,
  own: (start: () => Observable<StartProgress>) => Observable<RunEvent>,
  follow: (executionId: string) => Observable<RunEvent>,
): Observable<RunEvent> {
  const { store, key, ttlMs, signal, logger } = idempotency;
  const settleFailed = (what: string) => (error: unknown) => {
    logger?.warn(`flowstream: could not ${what} an idempotency key`, { key, error: error instanceof Error ? error.message : String(error) });
  };
  return new Observable<RunEvent>((subscriber) => {
    const waiting = new AbortController();
    const onAbort = (): void => {
      waiting.abort(signal?.reason);
    };
    if (signal?.aborted === true) onAbort();
    else signal?.addEventListener('abort', onAbort, { once: true });
    let run: Subscription | undefined;
    let left = false;
    // A store of the user's may throw rather than reject.
    new Promise<IdempotencyClaim>((resolve) => {
      resolve(store.claim(key, ttlMs, { signal: waiting.signal }));
    }).then(
      (answer: unknown) => {
        signal?.removeEventListener('abort', onAbort);
        // A store of the user's may answer anything: the run errors rather than never ending.
        const claim = checkedClaim(answer);
        if (claim instanceof Error) {
          if (!left) subscriber.error(claim);
          return;
        }
        if (left) {
          if (claim.kind === 'start') store.release(key, claim.token).catch(settleFailed('release'));
          return;
        }
        switch (claim.kind) {
          case 'start': {
            const { token } = claim;
            const dispatch = reducerShell(reduceClaimedStart, UNSETTLED_START, (settlement: ClaimSettlement) => {
              switch (settlement.type) {
                case 'record':
                  store.record(key, token, settlement.executionId).catch(settleFailed('record'));
                  return;
                case 'release':
                  store.release(key, token).catch(settleFailed('release'));
                  return;
                case 'abandon':
                  store.abandon(key, token).catch(settleFailed('abandon'));
                  return;
                default:
                  settlement satisfies never;
              }
            });
            run = own(() => claimedCall(start, dispatch)).subscribe(subscriber);
            run.add(() => {
              dispatch({ type: 'run-ended' });
            });
            return;
          }
          case 'follow':
            run = follow(claim.executionId).subscribe(subscriber);
            return;
          case 'in-doubt':
            subscriber.error(new StartInDoubtError(key, claim.claimedAt));
            return;
          default:
            claim satisfies never;
        }
      },
      (error: unknown) => {
        signal?.removeEventListener('abort', onAbort);
        if (!left) subscriber.error(error);
      },
    );
    return () => {
      left = true;
      signal?.removeEventListener('abort', onAbort);
      waiting.abort();
      run?.unsubscribe();
    };
  });
}

/** A store's answer to a claim as {@link IdempotencyClaim} says it is, or the error of one that is not. */
function checkedClaim(answer: unknown): IdempotencyClaim | InvalidArgumentError {
  const claim = (typeof answer === 'object' && answer !== null ? answer : {}) as Partial<Record<'kind' | 'token' | 'executionId' | 'claimedAt', unknown>>;
  if (claim.kind === 'start' && typeof claim.token === 'string') return { kind: 'start', token: claim.token };
  if (claim.kind === 'follow' && typeof claim.executionId === 'string' && claim.executionId !== '') return { kind: 'follow', executionId: claim.executionId };
  // A StartInDoubtError shows when the claim was made: a date.
  if (claim.kind === 'in-doubt' && typeof claim.claimedAt === 'number' && !Number.isNaN(new Date(claim.claimedAt).getTime())) return { kind: 'in-doubt', claimedAt: claim.claimedAt };
  let shown: string | undefined;
  try {
    shown = JSON.stringify(answer);
  } catch {
    shown = undefined;
  }
  return new InvalidArgumentError('idempotency', `the store answered a claim with ${shown ?? typeof answer}, which is none of { kind: 'start', token }, { kind: 'follow', executionId }, { kind: 'in-doubt', claimedAt }`);
}

/** One call of a claimed start, telling the claim its progress and how it ended. */
function claimedCall(start: () => Observable<StartProgress>, dispatch: (event: ClaimedStartEvent) => void): Observable<StartProgress> {
  return new Observable<StartProgress>((subscriber) => {
    let sent = false;
    let answered = false;
    dispatch({ type: 'call' });
    const call = defer(start).subscribe({
      next: (progress) => {
        if (progress.type === 'sending' && progress.sending) {
          sent = true;
          dispatch({ type: 'sending' });
        }
        if (progress.type === 'started') {
          answered = true;
          dispatch({ type: 'started', executionId: progress.execution.executionId });
        }
        subscriber.next(progress);
      },
      error: (error: unknown) => {
        answered = true;
        dispatch({ type: 'failed', failure: startFailure(error, sent) });
        subscriber.error(error);
      },
      complete: () => {
        subscriber.complete();
      },
    });
    return () => {
      call.unsubscribe();
      if (!answered) dispatch({ type: 'dropped' });
    };
  });
}
