import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { Observable, of, take, type Subscription } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { describe, expect, it } from 'vitest';
import { createAccountBudget } from '../../src/budget/index.js';
import type { GateReport, GateTicket, RequestGate } from '../../src/domain/requests.js';
import { RateLimitError } from '../../src/errors/api-errors.js';
import { NetworkError, TimeoutError } from '../../src/errors/transport-errors.js';
import { createRedactor } from '../../src/http/key-redaction.js';
import { normalizeOptions } from '../../src/http/options.js';
import { workflowPlanSchema } from '../../src/http/schemas.js';
import { budgeted, createTransport, deadline, retried, unwrapped, type Answer, type Exchanges, type RetryContext } from '../../src/http/transport.js';
import { createClient } from '../../src/client.js';
import { clockScheduler, createEmulator, createManualClock, driveClock } from '../../src/emulator/index.js';

function testScheduler(): TestScheduler {
  return new TestScheduler((actual, expected) => {
    expect(actual).toEqual(expected);
  });
}

/** A few turns of the event loop: the budget grants in a microtask. */
async function turns(count = 10): Promise<void> {
  for (let index = 0; index < count; index++) await new Promise((resolve) => setImmediate(resolve));
}

/** An Observable that never answers, counting its subscriptions and its teardowns. */
function pending<T>(): { readonly source: Observable<T>; readonly counts: { subscribed: number; tornDown: number } } {
  const counts = { subscribed: 0, tornDown: 0 };
  const source = new Observable<T>(() => {
    counts.subscribed += 1;
    return () => {
      counts.tornDown += 1;
    };
  });
  return { source, counts };
}

const ok: Answer = { status: 200, rateLimit: { remainingPerMinute: 41 }, text: '{"success":true,"data":{"tasks":[]}}' };

describe('the deadline stage', () => {
  it('fails with TimeoutError exactly at the timeout, and unsubscribes the stage below then', () => {
    const scheduler = testScheduler();
    scheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
      const below = cold<Answer>('-');
      expectObservable(deadline(below, scheduler, 100, { endpoint: 'status', executionId: 'we-1' })).toBe('100ms #', undefined, new TimeoutError({ endpoint: 'status', executionId: 'we-1', timeoutMs: 100 }));
      expectSubscriptions(below.subscriptions).toBe('^ 99ms !');
    });
  });

  it('passes an answer that comes in time and ends its timer with it; unsubscribed, it ends the timer and the stage below', () => {
    const clock = createManualClock(0);
    const scheduler = clockScheduler(clock);
    const values: Answer[] = [];
    let completed = false;
    deadline(of(ok), scheduler, 100, { endpoint: 'status' }).subscribe({ next: (value) => values.push(value), complete: () => (completed = true) });
    expect(values).toEqual([ok]);
    expect(completed).toBe(true);
    expect(clock.nextTimerAt()).toBeUndefined();

    const { source, counts } = pending<Answer>();
    const subscription = deadline(source, scheduler, 100, { endpoint: 'status' }).subscribe();
    expect(clock.nextTimerAt()).toBe(100);
    subscription.unsubscribe();
    expect(clock.nextTimerAt()).toBeUndefined();
    expect(counts).toEqual({ subscribed: 1, tornDown: 1 });
  });
});

/** Retries quickly, and a rate-limited failure (no gate) waits exactly what its `Retry-After` says. */
const retryContext = (scheduler: RetryContext['scheduler']): RetryContext => ({
  retry: { retries: 2, baseDelayMs: 10, maxDelayMs: 100, maxWaitMs: 60_000, rateLimitWaitMs: 60_000 },
  scheduler,
  logger: undefined,
  gate: undefined,
});
const rateLimited = (retryAfterMs: number): RateLimitError => new RateLimitError({ endpoint: 'status', status: 429, rateLimit: { retryAfterMs } });

describe('the retry stage', () => {
  it('subscribes to a fresh attempt after the delay its decision gives, and ends with the attempt that answers', () => {
    const scheduler = testScheduler();
    scheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
      const attempts = [cold('--#', undefined, rateLimited(50)), cold('--a|')];
      let made = 0;
      const request = retried({ attempt: () => attempts[made++] ?? cold('#') }, 'status', retryContext(scheduler));
      // The first attempt fails at 2; the second is made 50 ms later and answers 2 ms after that.
      expectObservable(request).toBe('54ms a|');
      expectSubscriptions(attempts[0]?.subscriptions ?? []).toBe('^-!');
      expectSubscriptions(attempts[1]?.subscriptions ?? []).toBe('52ms ^--!');
    });
  });

  it('unsubscribed during its pause, clears it: no attempt is made after', () => {
    const scheduler = testScheduler();
    let made = 0;
    scheduler.run(({ cold, expectObservable }) => {
      const failed = cold('--#', undefined, rateLimited(50));
      const request = retried(
        {
          attempt: () => {
            made += 1;
            return failed;
          },
        },
        'status',
        retryContext(scheduler),
      );
      expectObservable(request, '^ 9ms !').toBe('-');
    });
    expect(made).toBe(1);
  });

  it('gives the error of a failure it does not retry to the request, at once', () => {
    const scheduler = testScheduler();
    scheduler.run(({ cold, expectObservable }) => {
      const daySpent = new RateLimitError({ endpoint: 'status', status: 429, rateLimit: { remainingPerDay: 0 } });
      expectObservable(retried({ attempt: () => cold('-#', undefined, daySpent) }, 'status', retryContext(scheduler))).toBe('-#', undefined, daySpent);
    });
  });
});

const waiting: GateTicket = { endpoint: 'status', priority: 'status', key: 'we-2' };

interface RecordingBudget {
  readonly gate: RequestGate;
  readonly reports: GateReport[];
  readonly queued: () => number;
  readonly close: () => Promise<void>;
}

/** A real account budget (time stands still), as a gate that also records what it is told. */
function recordingBudget(burst?: number): RecordingBudget {
  const budget = createAccountBudget({ ...(burst === undefined ? {} : { burst }), scheduler: clockScheduler(createManualClock(0)) });
  const reports: GateReport[] = [];
  const gate: RequestGate = {
    acquire: (ticket, signal) => budget.acquire(ticket, signal),
    wait: (ticket, turn) => {
      const withdraw = budget.wait?.(ticket, turn);
      if (withdraw === undefined) throw new Error('an account budget waits without a Promise');
      return withdraw;
    },
    report: (report) => {
      reports.push(report);
      budget.report(report);
    },
  };
  return { gate, reports, queued: () => budget.snapshot().queued.total, close: () => budget.close() };
}

/** A budget whose burst of one is spent: the next request waits. */
async function spentBudget(): Promise<RecordingBudget> {
  const budget = recordingBudget(1);
  await budget.gate.acquire({ endpoint: 'status', priority: 'status', key: 'we-1' });
  return budget;
}

/** The stages below the budget as `source`, counting how many times they are made. */
function counting(source: Observable<Answer>): { readonly below: Exchanges; readonly made: () => number } {
  let made = 0;
  const below: Exchanges = {
    exchange: () => {
      made += 1;
      return source;
    },
  };
  return { below, made: () => made };
}

describe('the budget stage', () => {
  it('withdraws a wait the gate has not granted when unsubscribed: nothing is made below, sent or reported', async () => {
    const { gate, reports, queued } = await spentBudget();
    const { below, made } = counting(of(ok));
    const subscription = budgeted(below, gate, waiting).subscribe();
    await turns();
    expect(queued()).toBe(1);
    subscription.unsubscribe();
    expect(queued()).toBe(0);
    await turns();
    expect({ made: made(), reports }).toEqual({ made: 0, reports: [] });
  });

  it('reports a granted attempt once: its answer, and nothing more when left afterwards', async () => {
    const { gate, reports } = recordingBudget();
    const answers: Answer[] = [];
    // Taking the answer leaves the stage before the stage below completes: the gate heard it already.
    const subscription = budgeted({ exchange: () => of(ok) }, gate, waiting)
      .pipe(take(1))
      .subscribe((answer) => answers.push(answer));
    await turns();
    subscription.unsubscribe();
    expect(answers).toEqual([ok]);
    expect(reports).toEqual([{ ticket: waiting, httpStatus: 200, rateLimit: ok.rateLimit }]);
  });

  it('reports a granted attempt left on its way once, without a status, and unsubscribes the stage below', async () => {
    const { gate, reports } = recordingBudget();
    const { source, counts } = pending<Answer>();
    const subscription: Subscription = budgeted({ exchange: () => source }, gate, waiting).subscribe();
    await turns();
    expect(counts).toEqual({ subscribed: 1, tornDown: 0 });
    subscription.unsubscribe();
    subscription.unsubscribe();
    expect(counts).toEqual({ subscribed: 1, tornDown: 1 });
    expect(reports).toEqual([{ ticket: waiting, httpStatus: undefined, rateLimit: {} }]);
  });

  it('gives a refusal to the attempt as its error, unsent and unreported', async () => {
    const { gate, reports, close } = await spentBudget();
    const { below, made } = counting(of(ok));
    const errors: unknown[] = [];
    budgeted(below, gate, waiting).subscribe({ error: (error: unknown) => errors.push(error) });
    await turns();
    await close();
    await turns();
    expect(errors).toEqual([expect.objectContaining({ code: 'BUDGET_CLOSED' })]);
    expect({ made: made(), reports }).toEqual({ made: 0, reports: [] });
  });
});

describe('the unwrap stage', () => {
  const refusedConnection = new NetworkError({ endpoint: 'run', cause: new TypeError('fetch failed', { cause: Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }) }) });
  const refusedByService: Answer = { status: 400, rateLimit: {}, text: '{"success":false,"errCode":"E1001","errMsg":"no such canvas"}' };
  const dayIsSpent = new RateLimitError({ endpoint: 'run', status: 429, rateLimit: { remainingPerDay: 0 } });

  it.each([
    ['an answer that refused the start', of(refusedByService), ['sending false', 'error InvalidRequestError']],
    ['a connection never made', new Observable<Answer>((subscriber) => { subscriber.error(refusedConnection); }), ['sending false', 'error NetworkError']],
    ['a refusal by the budget, never sent', new Observable<Answer>((subscriber) => { subscriber.error(dayIsSpent); }), ['error RateLimitError']],
    ['a deadline passed, in doubt', new Observable<Answer>((subscriber) => { subscriber.error(new TimeoutError({ endpoint: 'run', timeoutMs: 5 })); }), ['error TimeoutError']],
  ])('tells a start it started nothing only when it surely did, before its error: %s', (_, below, told) => {
    const heard: string[] = [];
    const spec = { endpoint: 'run' as const, schema: workflowPlanSchema, onSending: (sending: boolean) => {
        heard.push(`sending ${String(sending)}`);
      },
    };
    unwrapped(below, spec, createRedactor('key')).subscribe({
      error: (error: unknown) => {
        heard.push(`error ${(error as Error).name}`);
      },
    });
    expect(heard).toEqual(told);
  });
});

/** A loopback port nothing listens on: a connection to it is refused. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('the stages in order', () => {
  it('a start whose connection was refused: the gate hears the attempt, then the start that nothing started, then the request its error', async () => {
    const heard: string[] = [];
    const gate: RequestGate = {
      acquire: () => Promise.resolve(),
      report: (report) => heard.push(`gate ${String(report.httpStatus)}`),
    };
    const baseUrl = `http://127.0.0.1:${await closedPort()}/v1`;
    const transport = createTransport('key', normalizeOptions({ apiKey: 'key', baseUrl, gate, retry: { retries: 0 } }));
    await new Promise<void>((resolve) => {
      transport
        .request(() => ({ endpoint: 'run', path: 'openapi/workflow/c-1/run', schema: workflowPlanSchema, body: '{}', onSending: (sending) => heard.push(`sending ${String(sending)}`) }))
        .subscribe({
          error: (error: unknown) => {
            heard.push(`error ${(error as Error).name}`);
            resolve();
          },
        });
    });
    expect(heard).toEqual(['sending true', 'gate undefined', 'sending false', 'error NetworkError']);
  });

  it('times a request from its send: a wait in the budget longer than the timeout is no timeout', async () => {
    const clock = createManualClock();
    const emulator = await createEmulator({ clock, listen: false });
    try {
      const client = createClient({ apiKey: emulator.apiKey, baseUrl: emulator.url, fetch: emulator.fetch, scheduler: emulator.scheduler, timeoutMs: 300, retry: { retries: 0 } });
      // The burst of 5 goes at once; the sixth waits a pacing interval (682 ms) in the budget, past its 300 ms.
      const outcomes: string[] = [];
      for (let index = 0; index < 6; index++) {
        client.workflows.get('c-sample-linear').then(
          () => outcomes.push('answered'),
          (error: unknown) => outcomes.push((error as Error).name),
        );
      }
      await driveClock(clock, { until: () => outcomes.length === 6 });
      expect(outcomes).toEqual(Array.from({ length: 6 }, () => 'answered'));
      expect(emulator.requests.list().at(-1)!.emulatorTime - emulator.requests.list()[0]!.emulatorTime).toBeGreaterThan(300);
    } finally {
      await emulator.close();
    }
  });
});
