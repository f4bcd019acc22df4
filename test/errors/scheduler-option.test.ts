import { describe, expect, it } from 'vitest';
import { createAccountBudget } from '../../src/budget/account-budget.js';
import { createClient } from '../../src/client.js';
import { downloadFile } from '../../src/http/index.js';
import { createRedisBudget } from '../../src/redis/index.js';
import { createRunTokens } from '../../src/relay/run-tokens.js';
import { connectRun } from '../../src/runs/connect-run.js';

// Nothing listens on port 1: every case is refused before anything is sent or connected.
const baseUrl = 'http://127.0.0.1:1/v1';
const apiKey = 'rf_00000000000000000000000000000000';

describe('a scheduler option that is not a scheduler', () => {
  it.each<[string, (scheduler: never) => unknown]>([
    ['createClient', (scheduler) => createClient({ apiKey, baseUrl, scheduler })],
    ['createAccountBudget', (scheduler) => createAccountBudget({ scheduler })],
    ['createRedisBudget', (scheduler) => createRedisBudget({ redis: 'redis://127.0.0.1:1', account: 'acct-scheduler', scheduler })],
    ['createRunTokens', (scheduler) => createRunTokens({ secret: 'a secret of thirty-two bytes or more', scheduler })],
    ['connectRun', (scheduler) => connectRun('http://127.0.0.1:1/executions/we-1/events', { token: 't', scheduler })],
    ['downloadFile', (scheduler) => downloadFile('http://127.0.0.1:1/file.txt', { scheduler })],
  ])('is refused by %s with InvalidArgumentError naming it, at the call', async (_name, call) => {
    for (const scheduler of [{}, null, 42, { now: () => 0 }]) {
      let thrown: unknown;
      try {
        await call(scheduler as never);
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toMatchObject({ name: 'InvalidArgumentError', argument: 'scheduler' });
    }
  });
});
