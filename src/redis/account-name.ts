import { InvalidArgumentError } from '../errors/validation-errors.js';

/**
 * An API key (service.md §1.5: `rf_` and 32–33 base62 characters) anywhere in a name: its prefix in
 * any case after a separator (`prod-RF_…`), or a bare body of 32 or more letters and digits.
 */
const API_KEY_LIKE = /(?:^|[^a-z0-9])rf_|[a-z0-9]{32,}/iu;

/**
 * Checks the account's name, which every key of it in Redis carries: letters, digits, ".", ":", "_"
 * or "-", and never an API key — a key would then sit in Redis, in its `KEYS` and `MONITOR` output.
 */
export function checkAccountName(account: unknown): string {
  if (typeof account !== 'string' || !/^[\w.:-]{1,100}$/u.test(account)) throw new InvalidArgumentError('account', 'must be a name of letters, digits, ".", ":", "_" or "-" (at most 100)');
  // The message never quotes the name: it may be the key.
  if (API_KEY_LIKE.test(account)) throw new InvalidArgumentError('account', 'looks like it holds an API key (an "rf_" prefix or 32 letters and digits in a row): name the account instead (the key is never stored)');
  return account;
}

/** The prefix of an account's keys: its `{…}` hash tag keeps them in one cluster slot, as a Lua script needs. */
export function accountTag(account: string): string {
  return `{fs:${account}}`;
}

/** The hash that holds an account's budget record (its ledger): one key, changed by compare-and-set. */
export function ledgerKey(account: string): string {
  return `${accountTag(account)}:ledger`;
}

/** An execution's keys in a run hub: one hash tag, so each script's keys sit in one cluster slot. */
export interface HubKeys {
  readonly lease: string;
  readonly events: string;
  readonly state: string;
}

/** The keys of execution `executionId` in `account`'s run hubs (`createRedisRunHub`). */
export function hubKeys(account: string, executionId: string): HubKeys {
  const tag = `{fs:${account}:hub:${executionId}}`;
  return { lease: `${tag}:lease`, events: `${tag}:events`, state: `${tag}:state` };
}

/**
 * The SCAN pattern of the state keys (see `hubKeys`) of every execution `account`'s hubs follow: the
 * hash of the `RunState` its events add up to. A checked account name holds no glob character.
 */
export function hubStateKeyPattern(account: string): string {
  return `{fs:${account}:hub:*}:state`;
}

/** The hash of idempotency key `key` in `account` (`createRedisIdempotencyStore`): one key per claim, under the account's tag. */
export function idempotencyKeyName(account: string, key: string): string {
  return `${accountTag(account)}:idempotency:${key}`;
}

/**
 * The mark of `account`'s idempotency keys in this Redis (`createRedisIdempotencyStore`): made once, never
 * expiring; another one than a process saw means Redis lost the keys (a restart with nothing saved, a flush).
 */
export function idempotencyEpochKey(account: string): string {
  return `${accountTag(account)}:idempotency-epoch`;
}
