import { describe, expect, it, vi } from 'vitest';
import { ofType } from '../src/index.js';
import { EMPTY, type SchedulerLike } from 'rxjs';
import { createAccountBudget } from '../src/budget/index.js';
import { createClient } from '../src/client.js';
import { clockScheduler, createEmulator, createManualClock } from '../src/emulator/index.js';
import { isInvalidArgumentError } from '../src/errors/validation-errors.js';
import { isTimeoutError } from '../src/errors/transport-errors.js';

const options = { apiKey: 'rf_00000000000000000000000000000000', baseUrl: 'http://127.0.0.1:1/v1' };

/** A fetch that counts its calls and answers each with `data` (an empty search page) only when released. */
function heldFetch(data: unknown = []): { readonly fetch: typeof globalThis.fetch; calls: () => number; releaseAll: () => void } {
  const held: (() => void)[] = [];
  let calls = 0;
  const fetch = async (): Promise<Response> => {
    calls += 1;
    await new Promise<void>((resolve) => held.push(resolve));
    return Response.json({ success: true, data });
  };
  const releaseAll = (): void => {
    for (const release of held.splice(0)) release();
  };
  return { fetch, calls: () => calls, releaseAll };
}

/** A scheduler whose time moves only when told to, firing the timers that fall due (the emulator's manual clock). */
function manualTime(): { readonly scheduler: SchedulerLike; advance: (ms: number) => void } {
  const clock = createManualClock(0);
  return { scheduler: clockScheduler(clock), advance: (ms) => { clock.advance(ms); } };
}

/** One turn of the event loop: every promise chain that can move without a timer or an answer has moved. */
const settled = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

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

  it.each<[string, () => unknown, string]>([
    // From JavaScript nothing checks the names: a misspelt limit would leave the account's 100 a minute unsaid.
    ['a misspelt budget option', () => createClient({ ...options, budget: { requestPerMinute: 5 } as never }), 'budget.requestPerMinute'],
    ['a budget that is true', () => createClient({ ...options, budget: true as never }), 'budget'],
    ['a budget that is a string', () => createClient({ ...options, budget: 'off' as never }), 'budget'],
    ['a misspelt polling bound', () => createClient({ ...options, polling: { min: 5 } as never }), 'polling.min'],
    ['a misspelt createAccountBudget option', () => createAccountBudget({ requestsPerMin: 5 } as never), 'budget.requestsPerMin'],
    ['null createAccountBudget options', () => createAccountBudget(null as never), 'options'],
    // The link to an account shared by several processes is createRedisBudget's to make, not an option.
    ['a shared account given to createAccountBudget', () => createAccountBudget({ shared: {} } as never), 'budget.shared'],
    ['null options', () => createClient(null as never), 'options'],
    ['no options', () => (createClient as (options?: unknown) => unknown)(), 'options'],
    ['null events options', () => createClient(options).events(EMPTY, null as never), 'options'],
  ])('refuses %s with InvalidArgumentError naming it', (_name, make, argument) => {
    expect(make).toThrow(expect.objectContaining({ name: 'InvalidArgumentError', argument }));
  });

  it('refuses a telemetry hook that is not one when it is created, not at the first request', () => {
    expect(() => createClient({ ...options, telemetry: {} as never })).toThrow(expect.objectContaining({ name: 'InvalidArgumentError', argument: 'telemetry' }));
    expect(() => createClient({ ...options, telemetry: { request: () => ({ end: () => undefined }) } as never })).toThrow(expect.objectContaining({ argument: 'telemetry' }));
  });

  it('refuses bad polling bounds when it is created, not at the first run', () => {
    expect(() => createClient({ ...options, polling: { minMs: 2000, maxMs: 1000 } })).toThrow(expect.objectContaining({ name: 'InvalidArgumentError', argument: 'polling' }));
    expect(() => createClient({ ...options, polling: { maxMs: Number.POSITIVE_INFINITY } })).toThrow(expect.objectContaining({ argument: 'polling.maxMs' }));
  });

  it('sends every request at once with budget: false, where a budget holds those beyond its burst', async () => {
    const sendAll = async (budget: false | { burst: number }): Promise<number> => {
      const server = heldFetch();
      // The budget's time stands still: only its burst can go, however slow the machine.
      const client = createClient({ ...options, fetch: server.fetch, retry: false, budget, scheduler: manualTime().scheduler });
      const stop = new AbortController();
      const searches = Array.from({ length: 10 }, () => client.workflows.search({}, { signal: stop.signal }).catch(() => undefined));
      await settled();
      const sent = server.calls();
      stop.abort();
      server.releaseAll();
      await Promise.all(searches);
      return sent;
    };
    expect(await sendAll({ burst: 3 })).toBe(3);
    expect(await sendAll(false)).toBe(10);
  });

  it('drops a run start from the budget queue the moment the run is unsubscribed, and sends nothing for it', async () => {
    const server = heldFetch();
    const clock = manualTime();
    const client = createClient({ ...options, fetch: server.fetch, retry: false, budget: { burst: 1 }, scheduler: clock.scheduler });
    // The one request of the burst is on its way and held there: the next one must wait its turn.
    const search = client.workflows.search({});
    await settled();
    const subscription = client.run('c-queued').pipe(ofType('started')).subscribe();
    await settled();
    expect(client.budget?.snapshot().queued.total).toBe(1);
    subscription.unsubscribe();
    expect(client.budget?.snapshot().queued.total).toBe(0);
    server.releaseAll();
    await search;
    // Long past the budget's next turn: a start still queued would have gone by now.
    clock.advance(60_000);
    await settled();
    expect(server.calls()).toBe(1);
  });

  it('withdraws a start waiting to be sent again after a 429 when its signal aborts, and says nothing is on its way', async () => {
    let calls = 0;
    const fetch = (): Promise<Response> => {
      calls += 1;
      return Promise.resolve(Response.json({ statusCode: 429, message: 'Rate limit exceeded: 100 requests per minute', error: 'Too Many Requests' }, { status: 429 }));
    };
    const client = createClient({ ...options, fetch, budget: false, retry: { rateLimitWaitMs: 30_000, maxWaitMs: 60_000 } });
    const cancel = new AbortController();
    const sending: boolean[] = [];
    const start = client.executions.start('c-refused', {}, { signal: cancel.signal, onSending: (now) => sending.push(now) });
    await settled();
    expect(calls).toBe(1);
    expect(sending).toEqual([true, false]);
    cancel.abort(new Error('withdrawn'));
    await expect(start).rejects.toThrow('withdrawn');
    expect(calls).toBe(1);
  });

  it('says a start is on its way from the moment it leaves until its answer', async () => {
    const server = heldFetch({ executionId: 'we-000000000000000000000001', status: 'running' });
    const client = createClient({ ...options, fetch: server.fetch, retry: false });
    const sending: boolean[] = [];
    const start = client.executions.start('c-sent', {}, { onSending: (now) => sending.push(now) });
    await settled();
    expect(server.calls()).toBe(1);
    expect(sending).toEqual([true]);
    server.releaseAll();
    await expect(start).resolves.toMatchObject({ executionId: 'we-000000000000000000000001' });
    expect(sending).toEqual([true]);
  });

  it('never says a start is no longer on its way when its request timed out without an answer: it may have started', async () => {
    const server = heldFetch({ executionId: 'we-000000000000000000000001', status: 'running' });
    const clock = manualTime();
    const client = createClient({ ...options, fetch: server.fetch, budget: false, timeoutMs: { run: 1_000 }, scheduler: clock.scheduler });
    const sending: boolean[] = [];
    const start = client.executions.start('c-lost', {}, { onSending: (now) => sending.push(now) });
    await settled();
    clock.advance(1_000);
    await expect(start).rejects.toSatisfy(isTimeoutError);
    expect(server.calls()).toBe(1);
    expect(sending).toEqual([true]);
  });

  it('iterates a run with for await, and leaving the loop early aborts the execution once', async () => {
    const emulator = await createEmulator({ listen: false, speed: 100, rateLimit: false });
    try {
      const client = createClient({ apiKey: emulator.apiKey, baseUrl: emulator.url, fetch: emulator.fetch, budget: false, polling: { minMs: 5, maxMs: 20 } });
      const types: string[] = [];
      for await (const event of client.events(client.run('c-sample-linear'))) types.push(event.type);
      expect(types[0]).toBe('started');
      expect(types.at(-1)).toBe('finished');
      expect(emulator.requests.list({ endpoint: 'abort' })).toEqual([]);

      for await (const event of client.events(client.run('c-sample-linear'))) if (event.type === 'started') break;
      await vi.waitFor(() => {
        expect(emulator.requests.list({ endpoint: 'abort' })).toHaveLength(1);
      });
    } finally {
      await emulator.close();
    }
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
