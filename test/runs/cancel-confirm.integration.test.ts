import type { Subscription } from 'rxjs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createClient } from '../../src/client.js';
import { createEmulator, createManualClock, driveClock, type Emulator } from '../../src/emulator/index.js';
import { mulberry32 } from '../../src/emulator/engine/seeded-random.js';
import type { RunResult } from '../../src/domain/model.js';
import type { RunState } from '../../src/runs/run-state.js';

// cancel() on a saturated budget: 50 other runs poll on the emulator's service limits (100 requests a
// minute, service.md §1), on a manual clock driven as virtual time. The read that confirms the abort goes
// ahead of their reads, so cancel() resolves a few read slots (600 ms each at 100 a minute) after the
// abort landed, not after the queue of reads (50 runs: some 30 s).

const OTHERS = 50;
/** service.md §2.1: 100 requests a minute, one every 600 ms. */
const READ_SLOT_MS = 600;

let emulator: Emulator | undefined;
const subscriptions: Subscription[] = [];
afterEach(async () => {
  vi.restoreAllMocks();
  for (const subscription of subscriptions.splice(0)) subscription.unsubscribe();
  await emulator?.close();
});

describe('cancel() on a saturated budget', () => {
  it('shows cancelling at once, and confirms within a few read slots of the abort landing, its reads ahead of 50 other runs polling', { timeout: 60_000 }, async () => {
    // The client's jitter, seeded: the same reads every time.
    vi.spyOn(Math, 'random').mockImplementation(mulberry32(11));
    const clock = createManualClock();
    emulator = await createEmulator({ clock, listen: false });
    const em = emulator;
    const client = createClient({ apiKey: em.apiKey, baseUrl: em.url, fetch: em.fetch, scheduler: em.scheduler, logger: { warn: () => undefined } });
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
    let executionId: string | undefined;
    void handle.executionId.then((id) => (executionId = id));
    await driveClock(clock, { until: () => others === OTHERS && executionId !== undefined });
    // Let the budget fill with the runs' reads: a minute of the service's time.
    await driveClock(clock, { toTime: clock.now() + 60_000 });

    const states: RunState[] = [];
    subscriptions.push(handle.state.subscribe((state) => states.push(state)));
    const cancelledAt = clock.now();
    let result: RunResult | undefined;
    let confirmedAt: number | undefined;
    void handle.cancel().then((value) => {
      result = value;
      confirmedAt = clock.now();
    });
    // At once: no time has passed, nothing has been answered.
    expect(states.at(-1)?.cancelling).toBe(true);
    await driveClock(clock, { until: () => result !== undefined });
    // Cancelling until the result, which ends it.
    const fromCancel = states.slice(states.findIndex((state) => state.cancelling === true));
    expect(fromCancel.every((state) => state.cancelling === true || state.result !== undefined)).toBe(true);

    const abort = em.requests.list({ endpoint: 'abort', executionId: executionId! });
    expect(abort).toHaveLength(1);
    const landedAt = abort[0]!.emulatorTime;
    // Saturated: the minute before the abort, the runs' reads took (nearly) every slot.
    const readsBefore = em.requests.list({ endpoint: ['status', 'output'] }).filter((read) => read.emulatorTime > landedAt - 60_000 && read.sequence < abort[0]!.sequence);
    expect(readsBefore.length).toBeGreaterThanOrEqual(80);
    // How many of the other runs' reads went between the abort and the first read of the cancelled run.
    const reads = em.requests.list({ endpoint: ['status', 'output'], after: abort[0]!.sequence });
    const othersFirst = reads.findIndex((read) => read.executionId === executionId);
    expect(othersFirst).toBeGreaterThanOrEqual(0);
    // The figures: cancel → abort landed → confirmed, in the service's ms.
    console.info(`cancel-confirm: abort landed after ${landedAt - cancelledAt} ms, confirmed ${confirmedAt! - landedAt} ms later (${confirmedAt! - cancelledAt} ms in all); ${othersFirst} other runs' reads went between`);
    expect(result?.endedBy).toBe('aborted');
    expect(othersFirst).toBeLessThanOrEqual(3);
    expect(confirmedAt! - landedAt).toBeLessThan(5 * READ_SLOT_MS);
  });
});
