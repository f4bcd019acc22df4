import { asyncScheduler, Observable, type SchedulerLike, type Subscription } from 'rxjs';
import type { Logger } from '../domain/model.js';
import { isApiError, isServerError } from '../errors/api-errors.js';
import { StartInDoubtError } from '../errors/start-in-doubt-error.js';
import { InvalidArgumentError, timerDelay } from '../errors/validation-errors.js';
import type { RunEvent } from './events.js';
import { isBudgetUnavailable, reducerShell, type Step } from './poll.js';
import { lazy, type StartProgress } from './run-lifecycle.js';

/*
 * Idempotent starts (`RunOptions.idempotencyKey`): the store of keys (`IdempotencyStore`, its rule
 * `decideClaim`, the in-memory store), what becomes of a claimed key (a pure reducer) and the run that
 * claims its key before it starts or follows (`idempotentRun`).
 */

// --- the store of keys ---------------------------------------------------------------------------
/**
 * What a claim of an idempotency key answers (see {@link IdempotencyStore.claim}):
 * - `start`: the key was free and is now the caller's: it starts the execution, then `record`s it
 *   (or `release`s the key when nothing started, or `abandon`s it when it cannot tell);
 * - `follow`: an execution was started with the key: the caller follows it;
 * - `in-doubt`: a start was claimed with the key and its answer was never recorded — its owner died
 *   between sending it and recording the answer, or gave up not knowing — so the execution may exist.
 *
 * @example
 * ```ts
 * const claim = await store.claim('invoice-7', 86_400_000);
 * if (claim.kind === 'follow') console.log('already running:', claim.executionId);
 * ```
 */
export type IdempotencyClaim =
  | { readonly kind: 'start'; readonly token: string }
  | { readonly kind: 'follow'; readonly executionId: string }
  | { readonly kind: 'in-doubt'; readonly claimedAt: number };

/**
 * Options of one {@link IdempotencyStore.claim}.
 *
 * @example
 * ```ts
 * await store.claim('invoice-7', 60_000, { signal: AbortSignal.timeout(5_000) });
 * ```
 */
export interface ClaimOptions {
  /** Stops waiting for another caller's start: the claim rejects with the signal's reason. */
  readonly signal?: AbortSignal;
}

/**
 * Where a client keeps its idempotency keys (`RunOptions.idempotencyKey`): which key started which
 * execution. `createMemoryIdempotencyStore()` keeps them in one process (a client's default);
 * `createRedisIdempotencyStore()` of `flowstream/redis` shares them across a fleet. Every store keeps
 * the same rules (see `decideClaim`): a key is claimed by one caller at a time, and a claim whose start
 * may have reached the service is never handed out again while the key lives.
 *
 * @example
 * ```ts
 * const client = createClient({ apiKey, baseUrl, idempotency: createMemoryIdempotencyStore() });
 * ```
 */
export interface IdempotencyStore {
  /**
   * Claims `key` for `ttlMs` from now. While another caller's start with the key has not answered
   * (and its owner is alive), waits for it: then `follow` once it recorded its execution, `start` when
   * it released the key, `in-doubt` when it abandoned it.
   */
  claim(key: string, ttlMs: number, options?: ClaimOptions): Promise<IdempotencyClaim>;
  /** The claimed start answered with `executionId`: callers of the key follow it from now on. */
  record(key: string, token: string, executionId: string): Promise<void>;
  /** The claimed start surely started nothing (never sent, or refused by the service): the key is free again. */
  release(key: string, token: string): Promise<void>;
  /** The claimed start may have reached the service, and its answer is lost: the key is in doubt until it expires. */
  abandon(key: string, token: string): Promise<void>;
}

/**
 * A stored claim as `decideClaim` weighs it: when it was made and expires, the execution it
 * recorded, whether it was abandoned, and whether its owner still holds it (alive, its start not
 * answered yet).
 */
export interface StoredClaim {
  readonly claimedAt: number;
  readonly expiresAt: number;
  readonly executionId?: string | undefined;
  readonly abandoned: boolean;
  readonly held: boolean;
}

/** What a claim of a key does, given what is stored under it (see {@link decideClaim}). */
type ClaimDecision =
  | { readonly kind: 'start' }
  | { readonly kind: 'wait' }
  | { readonly kind: 'follow'; readonly executionId: string }
  | { readonly kind: 'in-doubt'; readonly claimedAt: number };

/**
 * The rule of every idempotency store, at time `now`. A key with nothing stored, or whose claim
 * expired once settled, is free (`start`). A claim whose start is still on its way with a live owner
 * is waited on, even past its expiry: its answer is about to come. A recorded execution is followed;
 * a claim abandoned, or whose owner vanished without an answer, is in doubt until it expires.
 */
export function decideClaim(stored: StoredClaim | undefined, now: number): ClaimDecision {
  if (stored === undefined) return { kind: 'start' };
  const pending = stored.executionId === undefined && !stored.abandoned && stored.held;
  if (pending) return { kind: 'wait' };
  if (stored.expiresAt <= now) return { kind: 'start' };
  if (stored.executionId !== undefined) return { kind: 'follow', executionId: stored.executionId };
  return { kind: 'in-doubt', claimedAt: stored.claimedAt };
}

/** The longest idempotency key accepted. */
const MAX_KEY_LENGTH = 256;

/** An idempotency key as given: a non-empty string of at most 256 characters. */
export function idempotencyKey(given: unknown): string {
  if (typeof given !== 'string' || given.length === 0 || given.length > MAX_KEY_LENGTH) {
    throw new InvalidArgumentError('idempotencyKey', `must be a non-empty string of at most ${MAX_KEY_LENGTH} characters`);
  }
  return given;
}

/** How long a key lives from its claim: a timer's delay. */
export function idempotencyTtlMs(given: unknown): number {
  return timerDelay('idempotencyTtlMs', given);
}

/** The client's `idempotency` option: a store, checked as the client is made rather than at a run's first claim. */
export function idempotencyStoreOption(given: unknown): IdempotencyStore {
  const store = (typeof given === 'object' && given !== null ? given : {}) as Partial<Record<keyof IdempotencyStore, unknown>>;
  const missing = (['claim', 'record', 'release', 'abandon'] as const).filter((method) => typeof store[method] !== 'function');
  if (missing.length > 0) throw new InvalidArgumentError('idempotency', `must be an idempotency store (createMemoryIdempotencyStore(), createRedisIdempotencyStore()): no ${missing.join(', ')} method`);
  return given as IdempotencyStore;
}

/**
 * Options of {@link createMemoryIdempotencyStore}.
 *
 * @example
 * ```ts
 * const options: MemoryIdempotencyStoreOptions = { scheduler: emulator.scheduler };
 * ```
 */
export interface MemoryIdempotencyStoreOptions {
  /** The clock of the keys' expiry: the client's scheduler. Default real time. */
  readonly scheduler?: SchedulerLike;
}

interface MemoryClaim {
  readonly token: string;
  readonly claimedAt: number;
  readonly expiresAt: number;
  executionId?: string;
  abandoned: boolean;
  /** Claims waiting for this one's answer: told once it is settled. */
  readonly waiting: Set<() => void>;
}

/**
 * An {@link IdempotencyStore} in this process's memory: the default of every client (each client has
 * its own; give one to several clients of an account to share it). Its owners live in this process, so
 * a claim whose start has not answered is waited on, never in doubt; a start that may have reached the
 * service and failed without an answer leaves the key in doubt until it expires. Expired keys are
 * dropped as new ones are claimed.
 *
 * @example
 * ```ts
 * const idempotency = createMemoryIdempotencyStore();
 * const client = createClient({ apiKey, baseUrl, idempotency });
 * ```
 */
export function createMemoryIdempotencyStore(options: MemoryIdempotencyStoreOptions = {}): IdempotencyStore {
  const scheduler = options.scheduler ?? asyncScheduler;
  const claims = new Map<string, MemoryClaim>();
  // Each claim's fencing token: within one process a count is unique (no secure context needed in a browser).
  let claimed = 0;
  const stored = (claim: MemoryClaim | undefined): StoredClaim | undefined =>
    claim === undefined ? undefined : { ...claim, held: claim.executionId === undefined && !claim.abandoned };
  /** Drops expired settled claims from the oldest on: claims are kept in the order they were made. */
  const sweep = (now: number): void => {
    for (const [key, claim] of claims) {
      if (decideClaim(stored(claim), now).kind !== 'start') return;
      claims.delete(key);
    }
  };
  /** Settles `key`'s claim if `token` still holds it, and wakes the claims waiting on it. */
  const settle = (key: string, token: string, change: (claim: MemoryClaim) => void): Promise<void> => {
    const claim = claims.get(key);
    if (claim?.token !== token || claim.executionId !== undefined || claim.abandoned) return Promise.resolve();
    change(claim);
    for (const wake of claim.waiting) wake();
    claim.waiting.clear();
    return Promise.resolve();
  };
  return {
    claim: (key, ttlMs, claimOptions = {}) =>
      new Promise<IdempotencyClaim>((resolve, reject) => {
        // Thrown here, a bad key or TTL rejects the claim.
        idempotencyKey(key);
        idempotencyTtlMs(ttlMs);
        const { signal } = claimOptions;
        const attempt = (): void => {
          if (signal?.aborted === true) {
            reject(signal.reason as Error);
            return;
          }
          const now = scheduler.now();
          sweep(now);
          const claim = claims.get(key);
          const decision = decideClaim(stored(claim), now);
          switch (decision.kind) {
            case 'start': {
              const token = String((claimed += 1));
              claims.delete(key);
              claims.set(key, { token, claimedAt: now, expiresAt: now + ttlMs, abandoned: false, waiting: new Set() });
              resolve({ kind: 'start', token });
              return;
            }
            case 'wait': {
              const waiting = claim?.waiting;
              const onAbort = (): void => {
                waiting?.delete(wake);
                reject(signal?.reason as Error);
              };
              const wake = (): void => {
                signal?.removeEventListener('abort', onAbort);
                attempt();
              };
              waiting?.add(wake);
              signal?.addEventListener('abort', onAbort, { once: true });
              return;
            }
            case 'follow':
            case 'in-doubt':
              resolve(decision);
              return;
            default:
              decision satisfies never;
          }
        };
        attempt();
      }),
    record: (key, token, executionId) =>
      settle(key, token, (claim) => {
        claim.executionId = executionId;
      }),
    release: (key, token) =>
      settle(key, token, () => {
        claims.delete(key);
      }),
    abandon: (key, token) =>
      settle(key, token, (claim) => {
        claim.abandoned = true;
      }),
  };
}

// --- what becomes of a claimed key: a pure reducer -----------------------------------------------

/**
 * How one call of a claimed start failed: `unsent` — the request budget could not reach its store and
 * nothing of the start left (the run may make the call again, poll.ts); `nothing-started` — nothing
 * of it left, or the service answered with an error that starts nothing (4xx, a business error:
 * service.md §1.2); `unknown` — no answer, or a server fault: the start may have reached the service (§2.2).
 */
type StartFailure = 'unsent' | 'nothing-started' | 'unknown';

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
interface ClaimedStart {
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
  /** Settles the key claimed with `token`: a failure to is logged, and the key expires in its time. */
  const settle = (token: string, settlement: ClaimSettlement): void => {
    const settled = settlement.type === 'record' ? store.record(key, token, settlement.executionId) : store[settlement.type](key, token);
    settled.catch((error: unknown) => {
      logger?.warn(`flowstream: could not ${settlement.type} an idempotency key`, { key, error: error instanceof Error ? error.message : String(error) });
    });
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
          if (claim.kind === 'start') settle(claim.token, { type: 'release' });
          return;
        }
        switch (claim.kind) {
          case 'start': {
            const dispatch = reducerShell(reduceClaimedStart, UNSETTLED_START, (settlement: ClaimSettlement) => {
              settle(claim.token, settlement);
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
    const call = lazy(start).subscribe({
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
