import { afterAll, beforeAll, expect, it } from 'vitest';
import type { GateTicket } from '../../src/domain/requests.js';
import { clockScheduler, createManualClock, driveClock } from '../../src/emulator/index.js';
import { createRedisBudget } from '../../src/redis/index.js';
import { activeResources, expectBackTo } from '../soak/expect-soak-held.js';
import { startRedisServer, type RedisServer } from './redis-server.js';

/**
 * A start refused while the account's Redis was frozen, asked again at once by its run: it goes once
 * Redis answers again, whatever Redis's answers did to this process's view of the account meanwhile —
 * and once the budget is closed, nothing of it keeps the process alive. On a manual clock: time moves
 * only when the test says, Redis answers over its socket.
 */
const UNAVAILABLE_AFTER_MS = 5_000;

let server: RedisServer;
beforeAll(async () => {
  server = await startRedisServer();
});
afterAll(async () => {
  server.resume();
  await server.close();
});

/** Polls (readiness only, at most 5 s of real time) until `ready` holds: Redis answers over a socket. */
async function until(ready: () => boolean): Promise<void> {
  for (const began = Date.now(); !ready() && Date.now() - began < 5_000; ) await new Promise((resolve) => setTimeout(resolve, 5));
}

type Outcome = 'granted' | 'refused' | undefined;
/** Asks the budget for `ticket`; the outcome shows once it is known. */
function ask(budget: { acquire(ticket: GateTicket): Promise<void> }, ticket: GateTicket): { readonly outcome: () => Outcome } {
  let outcome: Outcome;
  budget.acquire(ticket).then(
    () => {
      outcome = 'granted';
    },
    () => {
      outcome = 'refused';
    },
  );
  return { outcome: () => outcome };
}

it('sends a start that Redis\'s outage refused and its run asked again within the identical-start spacing, once Redis answers; closed, it leaves nothing open', { timeout: 30_000 }, async () => {
  const baseline = activeResources();
  const clock = createManualClock();
  const budget = createRedisBudget({ redis: `redis+unix://${server.socket}`, account: 'start-after-outage', scheduler: clockScheduler(clock), unavailableAfterMs: UNAVAILABLE_AFTER_MS, durations: false });
  const start: GateTicket = { endpoint: 'run', priority: 'start', key: 'c-1\n{"variables":{"soak":"k-974"}}' };

  // The account known: one read granted and answered.
  const first = ask(budget, { endpoint: 'status', priority: 'status', key: 'we-0' });
  await until(() => first.outcome() !== undefined);
  expect(first.outcome()).toBe('granted');
  budget.report({ ticket: { endpoint: 'status', priority: 'status', key: 'we-0' }, httpStatus: 200, rateLimit: {} });

  // Redis frozen (SIGSTOP): a read's call to it hangs, and fails the read once it has waited its time.
  server.pause();
  const read = ask(budget, { endpoint: 'status', priority: 'status', key: 'we-1' });
  await driveClock(clock, { until: () => read.outcome() !== undefined });
  expect(read.outcome()).toBe('refused');

  // A start comes while Redis is away: it is refused once it has waited as long (nothing was sent) …
  const refused = ask(budget, start);
  await driveClock(clock, { until: () => refused.outcome() !== undefined });
  expect(refused.outcome()).toBe('refused');
  const refusedAt = clock.now();
  // … and its run asks again within the service's duplicate window (service.md §2.2): it waits its spacing.
  clock.advance(500);
  const again = ask(budget, start);

  // Redis answers again: the call that hung is answered, and the account's record read anew — which
  // counts neither the refused read nor the refused start (this process's view counted 3 sends).
  expect(budget.snapshot().usedThisMinute).toBe(3);
  server.resume();
  await until(() => budget.snapshot().usedThisMinute < 3);
  expect(budget.snapshot().usedThisMinute).toBeLessThan(3);

  // Past the spacing (1.1 s), the start goes: asked of Redis while the clock stands still.
  await driveClock(clock, { toTime: refusedAt + 1_200 });
  await until(() => again.outcome() !== undefined);
  expect(again.outcome()).toBe('granted');

  budget.report({ ticket: start, httpStatus: 200, rateLimit: {} });
  await budget.close();
  await expectBackTo(baseline);
});
