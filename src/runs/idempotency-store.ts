import { asyncScheduler, type SchedulerLike } from 'rxjs';
import { InvalidArgumentError } from '../errors/validation-errors.js';
import { timerDelay } from '../http/options.js';

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
export type ClaimDecision =
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
