import { describe, expect, it } from 'vitest';
import type { StartDecision } from '../../src/relay/run-relay.js';
import { allEvents, openWorlds } from './harness.js';

// POST /runs with an idempotency key the start hook decides: a browser that sends its POST again (the
// answer was lost, a double click) is answered the same execution, never a second start.

const world = openWorlds();

/** A hook keyed per user by the request's `Idempotency-Key` header, as the TSDoc's example does. */
async function keyedStart(request: Request): Promise<StartDecision> {
  const key = request.headers.get('idempotency-key');
  const { topic } = (await request.json()) as { topic: string };
  return { canvasId: 'c-sample-variables', variables: { topic }, ...(key === null ? {} : { idempotencyKey: `user-7:${key}` }) };
}

/** Topics differ between keys: the service refuses identical starts within a second (service.md §2.2). */
function post(base: string, key?: string, topic = `tides of ${key ?? 'no key'}`): Promise<Response> {
  return fetch(`${base}/runs`, {
    method: 'POST',
    body: JSON.stringify({ topic }),
    headers: { 'content-type': 'application/json', ...(key === undefined ? {} : { 'idempotency-key': key }) },
  });
}

describe('the run relay: POST /runs with an idempotency key', () => {
  it('answers a repeated POST as the first one (the same execution, a new token), starting it once', async () => {
    const { emulator, base, view } = await world({ start: keyedStart });
    const first = await post(base, 'k-1');
    const again = await post(base, 'k-1');
    expect(first.status).toBe(201);
    expect(again.status).toBe(201);
    const one = (await first.json()) as { executionId: string; token: string };
    const two = (await again.json()) as { executionId: string; token: string };
    expect(two.executionId).toBe(one.executionId);
    expect(emulator.requests.list({ endpoint: 'run' })).toHaveLength(1);
    // The second answer's token follows and cancels the same execution.
    const events = await allEvents(view(two.executionId, two.token));
    expect(events.at(-1)).toMatchObject({ type: 'finished', executionId: one.executionId, result: { status: 'finish' } });
  });

  it('starts once for POSTs sent at the same time with one key, and once per key', async () => {
    const { emulator, base } = await world({ start: keyedStart });
    const answers = await Promise.all([post(base, 'k-2'), post(base, 'k-2'), post(base, 'k-2'), post(base, 'k-3')]);
    const bodies = (await Promise.all(answers.map((answer) => answer.json()))) as { executionId: string }[];
    expect(answers.map((answer) => answer.status)).toEqual([201, 201, 201, 201]);
    expect(new Set(bodies.slice(0, 3).map((body) => body.executionId)).size).toBe(1);
    expect(bodies[3]?.executionId).not.toBe(bodies[0]?.executionId);
    expect(emulator.requests.list({ endpoint: 'run' })).toHaveLength(2);
  });

  it('starts again for every POST without a key', async () => {
    const { emulator, base } = await world({ start: keyedStart });
    expect((await post(base, undefined, 'tides')).status).toBe(201);
    expect((await post(base, undefined, 'currents')).status).toBe(201);
    expect(emulator.requests.list({ endpoint: 'run' })).toHaveLength(2);
  });

  it('refuses with 409 START_IN_DOUBT a key whose start reached the service without an answer, and starts nothing more', async () => {
    const { emulator, base } = await world({ start: keyedStart });
    // The start is handled (its execution exists) and only its answer is lost.
    emulator.faults.add({ kind: 'drop', after: true, endpoint: 'run', times: 1 });
    const lost = await post(base, 'k-4');
    expect(lost.status).toBe(502);
    const again = await post(base, 'k-4');
    expect(again.status).toBe(409);
    expect(await again.json()).toMatchObject({ error: 'START_IN_DOUBT' });
    expect(emulator.requests.list({ endpoint: 'run' })).toHaveLength(1);
    expect(emulator.executions.list()).toHaveLength(1);
  });

  it('lets a browser on another origin send the header (preflight)', async () => {
    const { base } = await world({ start: keyedStart, cors: { origins: ['https://app.example'] } });
    const preflight = await fetch(`${base}/runs`, { method: 'OPTIONS', headers: { origin: 'https://app.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'idempotency-key' } });
    expect(preflight.headers.get('access-control-allow-headers')?.toLowerCase().split(', ')).toContain('idempotency-key');
  });
});
