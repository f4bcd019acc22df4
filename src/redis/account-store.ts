import { createHash, randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import pRetry from 'p-retry';
import { afterReport, newAccountRecord } from '../budget/account-rules.js';
import { checkedEpoch, left, requested } from '../budget/process-rules.js';
import type { AccountConfig, AccountRecord, Verdict } from '../budget/account-rules.js';
import type { FairClass } from '../budget/fair-queue.js';
import type { AccountChange, AccountLedger } from '../budget/ledger.js';
import type { RateLimitInfo } from '../domain/requests.js';
import { FlowstreamError } from '../errors/flowstream-error.js';
import { ledgerKey } from './account-name.js';

/**
 * Reads the record, its version and Redis `TIME` in one round trip.
 * KEYS: the record's hash. Returns { version, json ('' when absent), seconds, microseconds }.
 */
const READ_SCRIPT = `
local fields = redis.call('HMGET', KEYS[1], 'v', 'r', 't')
local time = redis.call('TIME')
return { fields[1] or '0', fields[2] or '', fields[3] or '', time[1], time[2] }
`;

/**
 * Writes the record if nobody wrote it since it was read (compare-and-set on its version), with the
 * Redis time of the write and the record's expiry; when another process wrote first, returns what the
 * read script would, so that the change is made again without another round trip.
 * KEYS: the record's hash. ARGV: the version read, the record's JSON, Redis time (ms), expiry (ms).
 * Returns { 1 } when written, else { 0, version, json, written at, seconds, microseconds }.
 */
const WRITE_SCRIPT = `
local version = redis.call('HGET', KEYS[1], 'v') or '0'
if version ~= ARGV[1] then
  local fields = redis.call('HMGET', KEYS[1], 'r', 't')
  local time = redis.call('TIME')
  return { 0, version, fields[1] or '', fields[2] or '', time[1], time[2] }
end
redis.call('HSET', KEYS[1], 'v', tostring(tonumber(ARGV[1]) + 1), 'r', ARGV[2], 't', ARGV[3])
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return { 1 }
`;

/** The record as a script read it: its version, JSON ('' when absent), Redis time of its last write, and Redis `TIME`. */
type Stored = readonly [version: string, json: string, writtenAt: string, seconds: string, microseconds: string];

interface ScriptCommands {
  flowstreamLedgerRead(key: string): Promise<Stored>;
  flowstreamLedgerWrite(key: string, version: string, json: string, redisMs: number, expireMs: number): Promise<[1] | [0, ...Stored]>;
}

/**
 * How long an account's record outlives its last change, in real time: longer than the day's window,
 * whose count it holds.
 */
const RECORD_TTL_MS = 2 * 86_400_000;

/** How far (real ms) a process's clock may run ahead of Redis's between two changes before it is taken for a step. */
const CLOCK_TOLERANCE_MS = 2_000;

/**
 * Options of the Redis ledger: the account, this process's rule-book config, and how its clock relates
 * to Redis's (`timeScale`: the account's clock runs this many times as fast as Redis `TIME`; unknown
 * for a virtual clock, which then goes unchecked).
 */
export interface RedisLedgerOptions {
  readonly account: string;
  readonly config: AccountConfig;
  readonly timeScale?: number | undefined;
  /**
   * This process's clock. When given, each attempt of a change is judged at its time once the record
   * has been read (never before the `now` it was asked at): a change that waited for Redis or met
   * conflicts is not counted at the time it was asked, which can be long before its request leaves.
   */
  readonly clock?: (() => number) | undefined;
  /** Told once when a process's clock ran ahead of the account's by more than Redis's time allows. */
  readonly onClockStep?: ((aheadMs: number) => void) | undefined;
}

/**
 * The account's ledger in Redis: its record as JSON in one hash (`{fs:<account>}:ledger`), changed by
 * compare-and-set — read the record and its version, apply the rule book's change in this process,
 * write it back with a tiny Lua script that only writes when the version is still the one read, and
 * start again on a conflict. The rules are the TypeScript rule book's, never rewritten in Lua.
 *
 * One clock: a change happens at the client scheduler's time, never earlier than the record's own
 * (the account's clock never steps back, whichever process's clock is behind). Redis `TIME` guards
 * against a clock that steps forward: when `timeScale` is known (given, or 1 on real time), a process
 * whose time is ahead of the record's by more than Redis's time since the last write allows (× the
 * scale, plus a tolerance) changes the account at the time Redis allows instead, so one wrong clock
 * cannot make the account's windows pass early.
 */
export class RedisLedger implements AccountLedger {
  readonly #redis: Redis & ScriptCommands;
  readonly #key: string;
  readonly #options: RedisLedgerOptions;
  /** The record's epoch this process knows: another one means Redis lost the account. */
  #epoch: string | undefined;
  #stepTold = false;
  /** Compare-and-set attempts that met a conflict, for measurements. */
  conflicts = 0;

  constructor(redis: Redis, options: RedisLedgerOptions) {
    const commands = redis as Redis & Partial<ScriptCommands>;
    if (commands.flowstreamLedgerRead === undefined) {
      redis.defineCommand('flowstreamLedgerRead', { numberOfKeys: 1, lua: READ_SCRIPT });
      redis.defineCommand('flowstreamLedgerWrite', { numberOfKeys: 1, lua: WRITE_SCRIPT });
    }
    this.#redis = redis as Redis & ScriptCommands;
    this.#key = ledgerKey(options.account);
    this.#options = options;
  }

  /**
   * One change of the record, made again at once each time another process wrote first (the write
   * that found the conflict brings the record back: one round trip a conflict; p-retry drives the
   * loop, no wait), at most `MAX_CONFLICTS` times in a row; past that it fails `BUDGET_UNAVAILABLE`,
   * which the budget takes as Redis not answering (it asks again later). Any other failure (Redis away)
   * is not retried here.
   */
  transact<T>(now: number, change: AccountChange<T>): Promise<T> {
    let stored: Stored | undefined;
    const attempt = async (): Promise<T> => {
      stored ??= await this.#redis.flowstreamLedgerRead(this.#key);
      const [version, json, writtenAt, seconds, micros] = stored;
      const redisMs = Number(seconds) * 1_000 + Math.floor(Number(micros) / 1_000);
      const record = json === '' ? undefined : (JSON.parse(json) as AccountRecord);
      const asked = this.#options.clock === undefined ? now : Math.max(now, this.#options.clock());
      const [next, result] = this.#changed(asked, change, record ?? newAccountRecord(`${redisMs}-${randomUUID()}`), record === undefined ? undefined : Number(writtenAt), redisMs);
      const written = await this.#redis.flowstreamLedgerWrite(this.#key, version, JSON.stringify(next), redisMs, RECORD_TTL_MS);
      if (written[0] === 1) {
        this.#epoch = next.epoch;
        return result;
      }
      this.conflicts += 1;
      stored = written.slice(1) as unknown as Stored;
      throw new LedgerConflict();
    };
    return pRetry(attempt, { retries: MAX_CONFLICTS, minTimeout: 0, maxTimeout: 0, shouldRetry: ({ error }) => error instanceof LedgerConflict }).catch((error: unknown) => {
      if (!(error instanceof LedgerConflict)) throw error;
      throw new FlowstreamError(`The account's record in Redis was changed by another process ${MAX_CONFLICTS + 1} times in a row: nothing was decided`, 'BUDGET_UNAVAILABLE');
    });
  }

  /** `change` applied to `record` at this process's time, guarded by Redis's (`writtenAt`: when the record was last written, Redis ms). */
  #changed<T>(now: number, change: AccountChange<T>, record: AccountRecord, writtenAt: number | undefined, redisMs: number): [AccountRecord, T] {
    const at = Math.max(record.at, this.#guarded(now, record, writtenAt, redisMs));
    const [changed, result] = change(checkedEpoch(record, this.#epoch, at, this.#options.config), at);
    return [changed.at >= at ? changed : { ...changed, at }, result];
  }

  /** `now`, or the latest time Redis's clock allows when this process's clock has stepped ahead. */
  #guarded(now: number, record: AccountRecord, writtenAt: number | undefined, redisMs: number): number {
    const scale = this.#options.timeScale;
    if (scale === undefined || writtenAt === undefined || !Number.isFinite(writtenAt)) return now;
    const allowed = record.at + (Math.max(0, redisMs - writtenAt) + CLOCK_TOLERANCE_MS) * scale;
    if (now <= allowed) return now;
    if (!this.#stepTold) {
      this.#stepTold = true;
      this.#options.onClockStep?.(now - allowed);
    }
    return allowed;
  }
}

/** Conflicts in a row after which a change gives up: 8 processes contending meet about 4 per change. */
const MAX_CONFLICTS = 64;

/** Another process wrote the record between this one's read and write. */
class LedgerConflict extends Error {}

/** The class of a request as the account sees it: a run's status and output reads are one (`read`). */
export type GrantClass = 'abort' | 'start' | 'interactive' | 'read';

/** The account's answer to a grant, with the time it was judged at (the account's clock) and the record after it. */
export type Grant = { readonly now: number; readonly record: AccountRecord } & Verdict;

/** What one answer said of the account, for `report`. */
export interface AccountReport {
  readonly httpStatus: number | undefined;
  readonly rateLimit?: RateLimitInfo | undefined;
  /** When its request was sent, on the client's clock (`undefined`: not known). */
  readonly sentAt?: number | undefined;
  /** This process's requests still on their way. */
  readonly inFlight?: number | undefined;
  readonly startKey?: string | undefined;
}

/**
 * One process's handle on an account in Redis: the rule book's steps (`requested`, `afterReport`,
 * `left`) through the Redis ledger, on the client's clock. An identical start's key is kept only as a
 * digest of the account, canvas and body — its variables may hold e-mails and tokens.
 */
export class RedisAccountStore {
  readonly ledger: RedisLedger;
  readonly #config: AccountConfig;
  readonly #account: string;
  readonly #clock: () => number;

  constructor(redis: Redis, options: { readonly account: string; readonly config: AccountConfig; readonly clock: () => number; readonly timeScale?: number | undefined; readonly onClockStep?: (aheadMs: number) => void }) {
    this.#config = options.config;
    this.#account = options.account;
    this.#clock = options.clock;
    this.ledger = new RedisLedger(redis, { account: options.account, config: options.config, clock: options.clock, timeScale: options.timeScale, onClockStep: options.onClockStep });
  }

  /** May this process send one request of `kind` now? `demand`: its runs waiting to read; for a start or abort, its starts and aborts waiting (`requested`). */
  grant(kind: GrantClass, demand: number, startKey?: string): Promise<Grant> {
    const klass: FairClass = kind === 'read' ? 'reads' : kind;
    const digest = this.#digest(startKey);
    return this.ledger.transact(this.#clock(), (record, at) => {
      const { record: next, verdict } = requested(record, { klass, startKey: digest, demand }, at, this.#config);
      return [next, { ...verdict, now: at, record: next }];
    });
  }

  /** Tells the account what an answer said (a 429 pauses every process; headers cap them). */
  report(report: AccountReport): Promise<AccountRecord> {
    const answer = { sentAt: report.sentAt, inFlight: report.inFlight ?? 0, httpStatus: report.httpStatus, rateLimit: report.rateLimit ?? {}, startKey: this.#digest(report.startKey) };
    return this.ledger.transact(this.#clock(), (record, at) => {
      const next = afterReport(record, answer, at, this.#config);
      return [next, next];
    });
  }

  /** This process has no reads waiting, or leaves: its share of the pace goes to the others at once. */
  leave(): Promise<AccountRecord> {
    return this.ledger.transact(this.#clock(), (record) => {
      const next = left(record, this.#config);
      return [next, next];
    });
  }

  /** The key of an identical start's mark in the record: a digest of the account, canvas and body. */
  markKey(startKey: string): string {
    return createHash('sha256').update(`${this.#account}\n${startKey}`).digest('base64url');
  }

  #digest(startKey: string | undefined): string | undefined {
    return startKey === undefined ? undefined : this.markKey(startKey);
  }
}
