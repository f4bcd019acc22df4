import type { Subscription } from 'rxjs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createClient } from '../../src/client.js';
import { createEmulator, type Emulator } from '../../src/emulator/index.js';
import { REQUEST_TIMEOUT_MS } from '../support/request-timeout.js';

// In an earlier version, 60 watches with abortOnUnsubscribe, unsubscribed at once on an account another client has
// just used, left 16 executions running (the background abort gave up while the budget held it). Here
// on the emulator's service limits (100 a minute), its clock and the budget's 20× real time.

const SPEED = 20;
const RUNS = 60;

let emulator: Emulator | undefined;
afterEach(async () => {
  await emulator?.close();
});

describe('a mass abort', () => {
  it('aborts every one of 60 watched executions exactly once, on an account just used, with no 429', async () => {
    emulator = await createEmulator({ speed: SPEED });
    // Another process of the account starts them: 60 of the minute's 100 are gone.
    const other = createClient({ apiKey: emulator.apiKey, baseUrl: emulator.url, fetch: emulator.fetch, budget: false });
    const started = await Promise.all(Array.from({ length: RUNS }, (_, index) => other.executions.start('c-sample-timeout', { variables: { n: index } })));
    const ids = started.map((execution) => execution.executionId);

    const client = createClient({ apiKey: emulator.apiKey, baseUrl: emulator.url, fetch: emulator.fetch, scheduler: emulator.scheduler, timeoutMs: REQUEST_TIMEOUT_MS });
    const subscriptions: Subscription[] = [];
    // One subscription per watch, each attached (its first status read) before all leave at once.
    await Promise.all(
      ids.map(
        (id) =>
          new Promise<void>((attached) => {
            subscriptions.push(client.watch(id, { abortOnUnsubscribe: true, output: 'final' }).subscribe((event) => { if (event.type === 'started') attached(); }));
          }),
      ),
    );
    for (const subscription of subscriptions) subscription.unsubscribe();

    const running = (): string[] => ids.filter((id) => emulator!.executions.get(id)?.status !== 'failed');
    await vi.waitFor(() => { expect(running()).toEqual([]); }, { timeout: 60_000, interval: 50 });
    for (const id of ids) {
      expect(emulator.requests.list({ endpoint: 'abort', executionId: id })).toHaveLength(1);
      expect(emulator.executions.get(id)?.nodes.some((node) => node.errorMessage === 'Workflow aborted by user')).toBe(true);
    }
    expect(emulator.requests.list().filter((request) => request.status === 429)).toEqual([]);
  }, 90_000);
});
