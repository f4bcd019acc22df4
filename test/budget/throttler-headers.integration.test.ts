import { afterEach, describe, expect, it } from 'vitest';
import { createClient } from '../../src/client.js';
import { createEmulator, createManualClock, driveClock, type Emulator } from '../../src/emulator/index.js';

const open: Emulator[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((emulator) => emulator.close()));
});

describe('the per-IP throttler\'s unsuffixed X-RateLimit-* headers (service.md §2.1)', () => {
  it('are not read: only -RPM and -Daily set the budget\'s limits, its view of the service and its pauses', async () => {
    const clock = createManualClock();
    const emulator = await createEmulator({ clock, listen: false });
    open.push(emulator);
    // What the client was answered, unsuffixed, to show it did meet the throttler's headers.
    const unsuffixed: (string | null)[] = [];
    const observed: typeof fetch = async (input, init) => {
      const response = await emulator.fetch(input, init);
      unsuffixed.push(response.headers.get('x-ratelimit-remaining'));
      return response;
    };
    const client = createClient({ apiKey: emulator.apiKey, baseUrl: emulator.url, fetch: observed, scheduler: emulator.scheduler });

    // A fresh window: Remaining 49 (of a Limit of 50, lower than the account's 100 a minute).
    await client.workflows.search({});
    expect(unsuffixed).toEqual(['49']);
    expect(client.budget?.snapshot()).toMatchObject({ limitPerMinute: 100, limitPerDay: 10_000, server: { remainingPerMinute: 99, remainingPerDay: 9_999 }, followingServer: false });

    // Another caller on the same IP uses up the search route's second, without a key: the account
    // does not count those, the throttler does. The client's next searches read Remaining 0.
    for (let i = 0; i < 49; i += 1) await emulator.fetch(`${emulator.url}/openapi/workflows`);
    let done = 0;
    const searches = Array.from({ length: 3 }, () => client.workflows.search({}).finally(() => (done += 1)));
    await driveClock(clock, { until: () => done === searches.length });
    await Promise.all(searches);
    expect(unsuffixed).toEqual(['49', '0', '0', '0']);
    // Sent at once: a Remaining of 0 paused nothing.
    const sent = emulator.requests.list({ status: 200 }).map((request) => request.emulatorTime);
    expect(sent).toEqual([sent[0], sent[0], sent[0], sent[0]]);
    expect(emulator.requests.list({ status: 429 })).toEqual([]);
    const after = client.budget?.snapshot();
    expect(after).toMatchObject({ limitPerMinute: 100, limitPerDay: 10_000, server: { remainingPerMinute: 96, remainingPerDay: 9_996 }, followingServer: false });
    expect(after?.pausedUntil).toBeUndefined();
  });
});
