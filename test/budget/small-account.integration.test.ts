import type { Subscription } from 'rxjs';
import { afterEach, describe, expect, it } from 'vitest';
import { createClient } from '../../src/client.js';
import { createEmulator, createManualClock, driveClock, type Emulator } from '../../src/emulator/index.js';

const MINUTE_MS = 60_000;
const RUNS = 10;
const MEASURED_MS = 6 * MINUTE_MS;

const open: Emulator[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((emulator) => emulator.close()));
});

/** What each of the service's windows held: fixed windows of a minute, each from the first request after the last one ended (service.md §2.1). */
function perServiceWindow(times: readonly number[]): { readonly start: number; readonly held: number }[] {
  const windows: { start: number; held: number }[] = [];
  for (const at of [...times].sort((a, b) => a - b)) {
    const current = windows.at(-1);
    if (current === undefined || at >= current.start + MINUTE_MS) windows.push({ start: at, held: 1 });
    else current.held += 1;
  }
  return windows;
}

describe('a small account while its runs wait', () => {
  it.each([7, 20])('uses %i a minute at 85% of its limit or more in every window of the service, and is never refused', async (perMinute) => {
    const clock = createManualClock();
    const emulator = await createEmulator({ clock, listen: false, rateLimit: { perMinute } });
    open.push(emulator);
    const client = createClient({ apiKey: emulator.apiKey, baseUrl: emulator.url, fetch: emulator.fetch, scheduler: emulator.scheduler, budget: { requestsPerMinute: perMinute } });
    const from = emulator.scheduler.now();
    // Runs of 40 minutes: every one of them always has a read waiting.
    const subscriptions: Subscription[] = Array.from({ length: RUNS }, (_, n) => client.run('c-sample-timeout', { variables: { n } }).subscribe({ error: () => undefined }));
    try {
      await driveClock(clock, { toTime: from + MEASURED_MS });
      const windows = perServiceWindow(emulator.requests.list().map((request) => request.emulatorTime));
      // Every window that ended within the measured span (the last one may be cut short by its end).
      const whole = windows.filter((window) => window.start + MINUTE_MS <= from + MEASURED_MS);
      console.info(`${String(perMinute)} a minute: the service's windows held ${whole.map((window) => window.held).join(', ')}`);
      expect(whole.length).toBeGreaterThanOrEqual(5);
      for (const window of whole) expect(window.held, `the window from ${String(window.start - from)} ms`).toBeGreaterThanOrEqual(0.85 * perMinute);
      expect(Math.max(...windows.map((window) => window.held))).toBeLessThanOrEqual(perMinute);
      expect(emulator.requests.list({ status: 429 })).toEqual([]);
    } finally {
      for (const subscription of subscriptions) subscription.unsubscribe();
    }
  });
});
