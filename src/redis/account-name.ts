import { InvalidArgumentError } from '../errors/validation-errors.js';

/**
 * Checks the account's name, which every key of it in Redis carries: letters, digits, ".", ":", "_"
 * or "-", and never an API key — a key would then sit in Redis, in its `KEYS` and `MONITOR` output.
 */
export function checkAccountName(account: unknown): string {
  if (typeof account !== 'string' || !/^[\w.:-]{1,100}$/u.test(account)) throw new InvalidArgumentError('account', 'must be a name of letters, digits, ".", ":", "_" or "-" (at most 100)');
  if (/^rf_/u.test(account)) throw new InvalidArgumentError('account', 'looks like an API key: name the account instead (the key is never stored)');
  return account;
}

/** The prefix of an account's keys: its `{…}` hash tag keeps them in one cluster slot, as a Lua script needs. */
export function accountTag(account: string): string {
  return `{fs:${account}}`;
}
