import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { BudgetLimits } from '../budget/limits.js';
import { accountTag } from './account-name.js';
import { GRANT_SCRIPT, LEAVE_SCRIPT, REPORT_SCRIPT } from './account-scripts.js';

/** How the account's numbers are set: the budget's limits, as `budgetLimits` derives them. */
export type AccountLimits = Pick<
  BudgetLimits,
  'perMinute' | 'usablePerMinute' | 'minuteWindowMs' | 'perDay' | 'usablePerDay' | 'startsPerDay' | 'dayWindowMs' | 'burst' | 'pacingIntervalMs' | 'dayBurst' | 'duplicateStartSpacingMs'
>;

/** The class of a request as the account sees it: a run's status and output reads are one (`read`). */
export type GrantClass = 'abort' | 'start' | 'interactive' | 'read';

/** The account's answer to a grant: send now, wait until `at`, or (a start) refused until `at`. */
export type Grant = { readonly now: number; readonly inMinute: number; readonly inDay: number } & (
  | { readonly verdict: 'granted' }
  | { readonly verdict: 'wait'; readonly at: number }
  | { readonly verdict: 'refused'; readonly at: number }
);

/** What one answer said of the account, for `report`. */
export interface AccountReport {
  readonly httpStatus: number | undefined;
  readonly remainingPerMinute?: number | undefined;
  readonly remainingPerDay?: number | undefined;
  readonly limitPerMinute?: number | undefined;
  readonly limitPerDay?: number | undefined;
  readonly startKey?: string | undefined;
}

interface ScriptCommands {
  flowstreamGrant(...args: (string | number)[]): Promise<[number, number, number, string, number, number]>;
  flowstreamReport(...args: (string | number)[]): Promise<[number, string]>;
  flowstreamLeave(...args: (string | number)[]): Promise<[number, string]>;
}

const KEY_COUNT = 8;

/** The account's keys, all in one cluster hash slot (the `{…}` tag); the start's mark comes last, per call. */
function accountKeys(account: string): readonly string[] {
  const tag = accountTag(account);
  return ['state', 'sends', 'leases', 'demand', 'ptat', 'rates', 'otat'].map((name) => `${tag}:${name}`);
}

/**
 * The key of an identical start's mark (service.md §2.2): a digest of the canvas and the exact body,
 * never the body itself — its variables may hold e-mails and tokens. Without a start, a key never written.
 */
function markKey(account: string, startKey: string | undefined): string {
  if (startKey === undefined) return `${accountTag(account)}:start:-`;
  return `${accountTag(account)}:start:${createHash('sha256').update(`${account}\n${startKey}`).digest('base64url')}`;
}

/**
 * One process's handle on an account's state in Redis: the three scripts, with the account's keys and
 * this process's id. Every call is one round trip; Redis runs each script atomically.
 */
export class RedisAccountStore {
  readonly #redis: Redis & ScriptCommands;
  readonly #keys: readonly string[];
  readonly #account: string;
  readonly #process: string;
  readonly #limits: AccountLimits;
  readonly #timeScale: number;
  readonly #leaseMs: number;
  /** The account state's epoch this process knows: another one means Redis lost the state. */
  #epoch = '';

  constructor(redis: Redis, options: { readonly account: string; readonly process: string; readonly limits: AccountLimits; readonly timeScale: number; readonly leaseMs: number }) {
    const commands = redis as Redis & Partial<ScriptCommands>;
    if (commands.flowstreamGrant === undefined) {
      redis.defineCommand('flowstreamGrant', { numberOfKeys: KEY_COUNT, lua: GRANT_SCRIPT });
      redis.defineCommand('flowstreamReport', { numberOfKeys: KEY_COUNT, lua: REPORT_SCRIPT });
      redis.defineCommand('flowstreamLeave', { numberOfKeys: KEY_COUNT, lua: LEAVE_SCRIPT });
    }
    this.#redis = redis as Redis & ScriptCommands;
    this.#keys = accountKeys(options.account);
    this.#account = options.account;
    this.#process = options.process;
    this.#limits = options.limits;
    this.#timeScale = options.timeScale;
    this.#leaseMs = options.leaseMs;
  }

  /** May this process send one request of `kind` now? `demand`: its runs waiting to read. */
  async grant(kind: GrantClass, demand: number, startKey?: string): Promise<Grant> {
    const limits = this.#limits;
    const [verdict, at, now, epoch, inMinute, inDay] = await this.#redis.flowstreamGrant(
      ...this.#keys,
      markKey(this.#account, startKey),
      this.#timeScale,
      this.#process,
      kind,
      demand,
      startKey === undefined ? '' : '1',
      this.#leaseMs,
      limits.perMinute,
      limits.usablePerMinute,
      limits.minuteWindowMs,
      limits.perDay,
      limits.usablePerDay,
      limits.startsPerDay,
      limits.dayWindowMs,
      limits.burst,
      limits.pacingIntervalMs,
      limits.dayBurst,
      limits.duplicateStartSpacingMs,
      this.#epoch,
      limits.minuteWindowMs,
    );
    this.#epoch = epoch;
    if (verdict === 1) return { verdict: 'granted', now, inMinute, inDay };
    return { verdict: verdict === 0 ? 'wait' : 'refused', at, now, inMinute, inDay };
  }

  /** Tells the account what an answer said (a 429 pauses every process; headers cap them). */
  async report(report: AccountReport): Promise<number> {
    const field = (value: number | undefined): string | number => value ?? '';
    const [now, epoch] = await this.#redis.flowstreamReport(
      ...this.#keys,
      markKey(this.#account, report.startKey),
      this.#timeScale,
      this.#process,
      field(report.httpStatus),
      field(report.remainingPerMinute),
      field(report.remainingPerDay),
      field(report.limitPerMinute),
      field(report.limitPerDay),
      this.#limits.minuteWindowMs,
      this.#limits.dayWindowMs,
      report.startKey === undefined ? '' : '1',
      this.#limits.duplicateStartSpacingMs,
      this.#limits.minuteWindowMs,
      this.#epoch,
    );
    this.#epoch = epoch;
    return now;
  }

  /** This process has no reads waiting: its share of the pace goes to the others at once. */
  async leave(): Promise<void> {
    const [, epoch] = await this.#redis.flowstreamLeave(...this.#keys, markKey(this.#account, undefined), this.#timeScale, this.#process, this.#epoch, this.#limits.minuteWindowMs);
    this.#epoch = epoch;
  }
}
