import { describe, expect, it } from 'vitest';
import { createClient } from '../src/client.js';
import { createEmulator } from '../src/emulator/index.js';
import { isInvalidArgumentError } from '../src/errors/validation-errors.js';

const options = { apiKey: 'rf_00000000000000000000000000000000', baseUrl: 'http://127.0.0.1:1/v1' };

describe('createClient', () => {
  it('gives every client a request budget by default, and none with budget: false', () => {
    expect(createClient(options).budget?.snapshot()).toMatchObject({ limitPerMinute: 100, usedThisMinute: 0 });
    expect(createClient({ ...options, budget: false }).budget).toBeUndefined();
  });

  it('refuses a bad budget with a typed error naming the option', () => {
    let error: unknown;
    try {
      createClient({ ...options, budget: { requestsPerMinute: 0 } });
    } catch (caught) {
      error = caught;
    }
    expect(isInvalidArgumentError(error)).toBe(true);
    expect(error).toMatchObject({ argument: 'budget.requestsPerMinute' });
  });

  it('refuses bad polling bounds when it is created, not at the first run', () => {
    expect(() => createClient({ ...options, polling: { minMs: 2000, maxMs: 1000 } })).toThrow(expect.objectContaining({ name: 'InvalidArgumentError', argument: 'polling' }));
    expect(() => createClient({ ...options, polling: { maxMs: Number.POSITIVE_INFINITY } })).toThrow(expect.objectContaining({ argument: 'polling.maxMs' }));
  });

  it('counts every request of its calls in its budget', async () => {
    const emulator = await createEmulator({ listen: false });
    try {
      const client = createClient({ apiKey: emulator.apiKey, baseUrl: emulator.url, fetch: emulator.fetch });
      await client.workflows.search({ keyword: 'report' });
      await client.workflows.get('c-sample-linear');
      expect(client.budget?.snapshot().usedThisMinute).toBe(2);
      expect(emulator.requests.list()).toHaveLength(2);
    } finally {
      await emulator.close();
    }
  });
});
