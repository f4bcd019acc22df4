import { afterEach, describe, expect, it, vi } from 'vitest';
import { createClient } from '../../src/client.js';
import { createEmulator, createManualClock, driveClock, type Emulator, type ManualClock } from '../../src/emulator/index.js';
import { createRunRelay, type RunRelay } from '../../src/relay/run-relay.js';
import { createRunTokens } from '../../src/relay/run-tokens.js';
import { ABORT_FAILED_LOG } from '../../src/runs/run-lifecycle.js';
import { task } from '../pipeline/harness.js';
import { REQUEST_TIMEOUT_MS } from '../support/request-timeout.js';
import { SECRET } from './harness.js';

/**
 * A viewer cancels through the relay while the service is down (503 on everything), then closes the
 * page: the abort is sent again through the outage as a run's own abort is, and reaches the service
 * once, after it came back. On the emulator's manual clock, driven as virtual time.
 */
const OUTAGE_MS = 120_000;

let emulator: Emulator | undefined;
let relay: RunRelay | undefined;
afterEach(async () => {
  relay?.close();
  await emulator?.close();
});

async function outageWorld(clock: ManualClock, durationMs = 60 * 60_000): Promise<{ em: Emulator; relay: RunRelay; executionId: string; cancel: (signal?: AbortSignal) => Promise<Response>; warnings: { message: string; meta: unknown }[] }> {
  const em = await createEmulator({ clock, listen: false, rateLimit: false, samples: false, workflows: [task('c-long', { durationMs })] });
  emulator = em;
  const warnings: { message: string; meta: unknown }[] = [];
  const client = createClient({
    apiKey: em.apiKey,
    baseUrl: em.url,
    fetch: em.fetch,
    scheduler: em.scheduler,
    budget: false,
    timeoutMs: REQUEST_TIMEOUT_MS,
    outageMs: OUTAGE_MS,
    logger: { warn: (message, meta) => warnings.push({ message, meta }) },
  });
  const tokens = createRunTokens({ secret: SECRET, scheduler: em.scheduler });
  relay = createRunRelay({ client, tokens, scheduler: em.scheduler });
  const served = relay;
  const { executionId } = await client.executions.start('c-long');
  const token = await tokens.sign({ executionId, scope: ['read', 'cancel'], ttlMs: 3_600_000 });
  const cancel = (signal?: AbortSignal): Promise<Response> =>
    served.fetch(new Request(`http://relay.test/executions/${executionId}/cancel`, { method: 'POST', headers: { authorization: `Bearer ${token}` }, ...(signal === undefined ? {} : { signal }) }));
  return { em, relay: served, executionId, cancel, warnings };
}

/**
 * Waits (a real event, bounded) until a request about the execution reached the emulator after the
 * cancel: its token is checked on WebCrypto's threads, which a driven clock does not wait for.
 */
async function reachedTheService(em: Emulator, executionId: string): Promise<void> {
  const after = em.requests.list().at(-1)?.sequence ?? 0;
  await vi.waitFor(() => {
    expect(em.requests.list({ executionId, after })).not.toHaveLength(0);
  }, { timeout: 10_000, interval: 5 });
}

/** A cancel whose abort the service refuses for longer than outageMs, driven until it is answered. */
async function cancelGivenUp(clock: ManualClock, em: Emulator, executionId: string, cancel: () => Promise<Response>): Promise<Response> {
  const began = clock.now();
  let answer: Response | undefined;
  void cancel().then((response) => (answer = response));
  await reachedTheService(em, executionId);
  await driveClock(clock, { until: () => answer !== undefined });
  expect(clock.now() - began).toBeGreaterThanOrEqual(OUTAGE_MS);
  if (answer === undefined) throw new Error('the cancel was not answered');
  return answer;
}

describe('a cancel through the relay during a service outage', () => {
  it('sends the abort through the outage after the viewer left, once however many cancel, and answers the aborted result', async () => {
    const clock = createManualClock();
    const { em, executionId, cancel, warnings } = await outageWorld(clock);
    const outage = em.faults.add({ kind: 'status', status: 503 });
    const viewer = new AbortController();
    let first: Response | undefined;
    let second: Response | undefined;
    void cancel(viewer.signal).then((response) => (first = response));
    await reachedTheService(em, executionId);
    // The viewer closes the page once the abort has failed as often as a plain call tries.
    await driveClock(clock, { until: () => em.requests.list({ endpoint: 'abort', executionId }).length >= 4 });
    viewer.abort();
    void cancel().then((response) => (second = response));
    // A minute of outage: far beyond the plain call's attempts, well within outageMs.
    await driveClock(clock, { toTime: clock.now() + 60_000 });
    expect(first).toBeUndefined();
    expect(em.executions.get(executionId)?.status).toBe('executing');
    const failedAborts = em.requests.list({ endpoint: 'abort', executionId }).length;
    expect(failedAborts).toBeGreaterThan(4);
    const recovered = clock.now();
    outage.remove();

    await driveClock(clock, { until: () => first !== undefined && second !== undefined });
    const landed = em.requests.list({ endpoint: 'abort', executionId, status: 200 });
    expect(landed).toHaveLength(1);
    expect(landed[0]?.emulatorTime).toBeGreaterThanOrEqual(recovered);
    expect(em.executions.get(executionId)?.status).toBe('failed');
    for (const answer of [first, second]) {
      expect(answer?.status).toBe(200);
      expect(await answer?.json()).toMatchObject({ executionId, status: 'failed', endedBy: 'aborted' });
    }
    expect(em.requests.list({ endpoint: 'abort', executionId, status: 200 })).toHaveLength(1);
    expect(warnings.filter((warning) => warning.message === ABORT_FAILED_LOG)).toEqual([]);
  }, 30_000);

  it('gives the abort up only when the outage outlasts outageMs: answers 502 with the cause and logs it as a run does', async () => {
    const clock = createManualClock();
    const { em, executionId, cancel, warnings } = await outageWorld(clock);
    em.faults.add({ kind: 'status', status: 503 });
    const answer = await cancelGivenUp(clock, em, executionId, cancel);
    expect(answer.status).toBe(502);
    expect(await answer.json()).toMatchObject({ error: 'SERVER_ERROR', message: expect.stringContaining('gave up') as unknown });
    expect(warnings.filter((warning) => warning.message === ABORT_FAILED_LOG)).toEqual([{ message: ABORT_FAILED_LOG, meta: expect.objectContaining({ executionId }) as unknown }]);
    expect(em.executions.get(executionId)?.status).toBe('executing');
  }, 30_000);

  it('answers the result, not 502, when the abort was given up but the execution finished meanwhile', async () => {
    const clock = createManualClock();
    // It finishes a minute after the cancel, while the service refuses every abort for longer than outageMs.
    const { em, executionId, cancel, warnings } = await outageWorld(clock, 60_000);
    em.faults.add({ kind: 'status', status: 503, endpoint: 'abort' });
    const answer = await cancelGivenUp(clock, em, executionId, cancel);
    expect(em.executions.get(executionId)?.status).toBe('finish');
    expect(em.requests.list({ endpoint: 'abort', executionId, status: 200 })).toHaveLength(0);
    expect(answer.status).toBe(200);
    expect(await answer.json()).toMatchObject({ executionId, status: 'finish', endedBy: 'finish' });
    // The client still says its abort was given up.
    expect(warnings.filter((warning) => warning.message === ABORT_FAILED_LOG)).toHaveLength(1);
  }, 30_000);
});

describe('a start through the relay whose token cannot be made, during an outage of aborts', () => {
  it('answers at once, and aborts the execution no one can follow once the service takes aborts again', async () => {
    const clock = createManualClock();
    const em = await createEmulator({ clock, listen: false, rateLimit: false, samples: false, workflows: [task('c-long', { durationMs: 60 * 60_000 })] });
    emulator = em;
    const client = createClient({ apiKey: em.apiKey, baseUrl: em.url, fetch: em.fetch, scheduler: em.scheduler, budget: false, timeoutMs: REQUEST_TIMEOUT_MS, outageMs: OUTAGE_MS });
    const signing = createRunTokens({ secret: SECRET, scheduler: em.scheduler });
    relay = createRunRelay({
      client,
      scheduler: em.scheduler,
      start: () => ({ canvasId: 'c-long' }),
      tokens: { sign: () => Promise.reject(new Error('the key store is away')), verify: (token, request) => signing.verify(token, request) },
    });
    const outage = em.faults.add({ kind: 'status', status: 503, endpoint: 'abort' });
    const answer = await relay.fetch(new Request('http://relay.test/runs', { method: 'POST', body: '{}' }));
    expect(answer.status).toBe(502);
    const executionId = em.executions.list()[0]?.executionId ?? '';
    // A minute of outage: more than a plain call's attempts, well within outageMs.
    await driveClock(clock, { toTime: clock.now() + 60_000 });
    expect(em.requests.list({ endpoint: 'abort', executionId }).length).toBeGreaterThan(4);
    expect(em.executions.get(executionId)?.status).toBe('executing');
    outage.remove();
    await driveClock(clock, { until: () => em.executions.get(executionId)?.status === 'failed' });
    expect(em.requests.list({ endpoint: 'abort', executionId, status: 200 })).toHaveLength(1);
    expect(em.requests.list({ endpoint: 'run' })).toHaveLength(1);
  }, 30_000);
});
