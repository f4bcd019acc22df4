import { afterEach, describe, expect, it } from 'vitest';
import { createClient } from '../../src/client.js';
import { createEmulator, type Emulator } from '../../src/emulator/index.js';
import { ABORT_FAILED_LOG } from '../../src/runs/run-lifecycle.js';

let emulator: Emulator | undefined;
afterEach(async () => {
  await emulator?.close();
});

describe('client.abortThroughOutage', () => {
  it('aborts once and resolves; refuses a wrong id at once, with nothing sent and nothing logged', async () => {
    const em = await createEmulator({ speed: 50, rateLimit: false });
    emulator = em;
    const warnings: string[] = [];
    const client = createClient({ apiKey: em.apiKey, baseUrl: em.url, fetch: em.fetch, logger: { warn: (message) => warnings.push(message) } });
    for (const id of [42, '', ' we-1', null]) {
      await expect(client.abortThroughOutage(id as never)).rejects.toMatchObject({ name: 'InvalidArgumentError', argument: 'executionId' });
    }
    expect(em.requests.list({ endpoint: 'abort' })).toEqual([]);
    expect(warnings).toEqual([]);

    const { executionId } = await client.executions.start('c-sample-linear');
    await expect(client.abortThroughOutage(executionId)).resolves.toBeUndefined();
    expect(em.requests.list({ endpoint: 'abort', executionId })).toHaveLength(1);
    expect(em.executions.get(executionId)?.status).toBe('failed');
    expect(warnings.filter((warning) => warning === ABORT_FAILED_LOG)).toEqual([]);
  });
});
