import { afterEach, describe, expect, it } from 'vitest';
import { createClient } from '../../src/client.js';
import { createEmulator, createManualClock, driveClock, type Emulator } from '../../src/emulator/index.js';

const open: Emulator[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((emulator) => emulator.close()));
});

describe('an account whose limit is lower than the client was told', () => {
  it('takes the service\'s X-RateLimit-Limit-RPM and is never refused', { timeout: 60_000 }, async () => {
    const clock = createManualClock();
    const emulator = await createEmulator({ clock, listen: false, rateLimit: { perMinute: 40 } });
    open.push(emulator);
    // Configured for the service's usual 100 a minute; this account has 40.
    const client = createClient({ apiKey: emulator.apiKey, baseUrl: emulator.url, fetch: emulator.fetch, scheduler: emulator.scheduler });
    let done = 0;
    const searches = Array.from({ length: 150 }, () => client.workflows.search({}).finally(() => (done += 1)));
    await driveClock(clock, { until: () => done === searches.length });
    await Promise.all(searches);
    expect(emulator.requests.list()).toHaveLength(150);
    expect(emulator.requests.list({ status: 429 })).toEqual([]);
    expect(client.budget?.snapshot()).toMatchObject({ limitPerMinute: 40, followingServer: false });
  });
});
