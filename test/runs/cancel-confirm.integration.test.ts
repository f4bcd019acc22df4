import type { Subscription } from 'rxjs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createClient } from '../../src/client.js';
import { createEmulator, type Emulator } from '../../src/emulator/index.js';
import { REQUEST_TIMEOUT_MS } from '../support/request-timeout.js';

// cancel() on a saturated budget: 50 other runs poll on the emulator's service limits (100 requests a
// minute, service.md §1), its clock 20× real time. The read that confirms the abort goes ahead of their
// reads, so cancel() resolves a few read slots (600 ms each at 100 a minute) after the abort landed,
// not after the queue of reads (50 runs: some 30 s). The bound leaves room for a loaded machine.

const SPEED = 20;
const OTHERS = 50;

let emulator: Emulator | undefined;
const subscriptions: Subscription[] = [];
afterEach(async () => {
  for (const subscription of subscriptions.splice(0)) subscription.unsubscribe();
  await emulator?.close();
});

describe('cancel() on a saturated budget', () => {
  it('confirms within a few read slots of the abort landing, ahead of 50 other runs polling', async () => {
    emulator = await createEmulator({ speed: SPEED });
    const em = emulator;
    const client = createClient({ apiKey: em.apiKey, baseUrl: em.url, fetch: em.fetch, scheduler: em.scheduler, timeoutMs: REQUEST_TIMEOUT_MS, logger: { warn: () => undefined } });
    let others = 0;
    for (let index = 0; index < OTHERS; index += 1) {
      subscriptions.push(
        client.run('c-sample-timeout', { variables: { n: index } }, { output: 'final', abortOnUnsubscribe: false }).subscribe({
          next: (event) => {
            if (event.type === 'started') others += 1;
          },
          error: () => undefined,
        }),
      );
    }
    const handle = client.startRun('c-sample-timeout', { variables: { n: 'cancelled' } }, { output: 'final' });
    const executionId = await handle.executionId;
    await vi.waitFor(() => { expect(others).toBe(OTHERS); }, { timeout: 30_000, interval: 20 });
    // Let the budget fill with the runs' reads: a minute of the service's time.
    const saturatedAt = em.scheduler.now() + 60_000;
    await vi.waitFor(() => { expect(em.scheduler.now()).toBeGreaterThan(saturatedAt); }, { timeout: 30_000, interval: 20 });

    const states: { cancelling?: true }[] = [];
    subscriptions.push(handle.state.subscribe((state) => states.push(state)));
    const cancelledAt = em.scheduler.now();
    const result = await handle.cancel();
    const confirmedAt = em.scheduler.now();
    const abort = em.requests.list({ endpoint: 'abort', executionId });
    expect(abort).toHaveLength(1);
    const landedAt = abort[0]!.emulatorTime;
    // The figures: cancel → abort landed → confirmed, in the service's ms.
    console.info(`cancel-confirm: abort landed after ${landedAt - cancelledAt} ms, confirmed ${confirmedAt - landedAt} ms later (${confirmedAt - cancelledAt} ms in all)`);
    expect(result.endedBy).toBe('aborted');
    expect(states.some((state) => state.cancelling === true)).toBe(true);
    expect(confirmedAt - landedAt).toBeLessThan(10 * 600);
  }, 120_000);
});
