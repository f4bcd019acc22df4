import { afterEach, describe, expect, it } from 'vitest';
import type { Subscription } from 'rxjs';
import type { GateReport, GateTicket, RequestGate } from '../../src/domain/requests.js';
import { isTimeoutError } from '../../src/errors/transport-errors.js';
import { normalizeOptions, type HttpOptions } from '../../src/http/options.js';
import { workflowPlanSchema } from '../../src/http/schemas.js';
import { createTransport, type RequestSpec, type Transport } from '../../src/http/transport.js';
import { clockScheduler, createEmulator, createManualClock, type Emulator, type ManualClock } from '../../src/emulator/index.js';

/** One turn of the event loop for each of `turns`: an in-process request takes a few to move. */
async function turns(count = 10): Promise<void> {
  for (let index = 0; index < count; index++) await new Promise((resolve) => setImmediate(resolve));
}

const detail = (): RequestSpec<unknown> => ({ endpoint: 'detail', path: 'openapi/workflows/c-sample-linear', schema: workflowPlanSchema });

/** A gate that records what it is asked and told, and grants when `grant` says. */
function recordingGate(grant: 'at-once' | 'never'): RequestGate & { readonly tickets: GateTicket[]; readonly signals: AbortSignal[]; readonly reports: GateReport[] } {
  const tickets: GateTicket[] = [];
  const signals: AbortSignal[] = [];
  const reports: GateReport[] = [];
  return {
    tickets,
    signals,
    reports,
    acquire: (ticket, signal) => {
      tickets.push(ticket);
      if (signal !== undefined) signals.push(signal);
      return grant === 'at-once' ? Promise.resolve() : new Promise<void>(() => undefined);
    },
    report: (report) => {
      reports.push(report);
    },
  };
}

let emulator: Emulator | undefined;
afterEach(async () => {
  await emulator?.close();
  emulator = undefined;
});

/**
 * The emulator on one manual clock, the transport on another: the client's timers (deadline, retry
 * waits) are then exactly those pending on `client`.
 */
async function world(options: Partial<HttpOptions> = {}): Promise<{ transport: Transport; service: Emulator; client: ManualClock }> {
  const service = await createEmulator({ clock: createManualClock(), listen: false, rateLimit: false });
  emulator = service;
  const client = createManualClock();
  const transport = createTransport(service.apiKey, normalizeOptions({ apiKey: service.apiKey, baseUrl: service.url, fetch: service.fetch, scheduler: clockScheduler(client), ...options }));
  return { transport, service, client };
}

describe('the request path as one Observable: a call is one subscription', () => {
  it('unsubscribing while it waits in the budget withdraws it: the wait ends, nothing is sent or reported', async () => {
    const gate = recordingGate('never');
    const { transport, service, client } = await world({ gate });
    const subscription = transport.request(detail).subscribe();
    await turns();
    expect(gate.signals.map((signal) => signal.aborted)).toEqual([false]);
    subscription.unsubscribe();
    expect(gate.signals.map((signal) => signal.aborted)).toEqual([true]);
    await turns();
    expect(service.requests.list()).toEqual([]);
    expect(gate.reports).toEqual([]);
    expect(client.nextTimerAt()).toBeUndefined();
  });

  it('unsubscribing on the wire aborts the exchange, tells the budget once with no status and clears the deadline', async () => {
    const gate = recordingGate('at-once');
    const sent: Request[] = [];
    const { transport, service, client } = await world({
      gate,
      fetch: (input, init) => {
        if (input instanceof Request) sent.push(input);
        return emulator!.fetch(input, init);
      },
    });
    service.faults.add({ kind: 'latency', ms: 10_000, endpoint: 'detail' });
    const subscription: Subscription = transport.request(detail).subscribe();
    await turns();
    expect(sent.map((request) => request.signal.aborted)).toEqual([false]);
    expect(client.nextTimerAt()).toBe(client.now() + 30_000); // the deadline, on the client's clock
    subscription.unsubscribe();
    expect(sent.map((request) => request.signal.aborted)).toEqual([true]);
    expect(gate.reports).toEqual([{ ticket: { endpoint: 'detail', priority: 'interactive' }, httpStatus: undefined, rateLimit: {} }]);
    expect(client.nextTimerAt()).toBeUndefined();
  });

  it('waits between attempts on the client’s clock, and unsubscribing in the wait sends nothing more', async () => {
    const gate = recordingGate('at-once');
    const { transport, service, client } = await world({ gate, retry: { retries: 3, baseDelayMs: 10_000, maxDelayMs: 10_000 } });
    service.faults.add({ kind: 'status', status: 503, endpoint: 'detail', times: 1 });
    const errors: unknown[] = [];
    const subscription = transport.request(detail).subscribe({ error: (error: unknown) => errors.push(error) });
    await turns();
    expect(gate.reports.map((report) => report.httpStatus)).toEqual([503]);
    const retryAt = client.nextTimerAt();
    // Equal jitter: half the 10 s step fixed, half random.
    expect(retryAt).toBeGreaterThanOrEqual(client.now() + 5_000);
    expect(retryAt).toBeLessThanOrEqual(client.now() + 10_000);
    subscription.unsubscribe();
    expect(client.nextTimerAt()).toBeUndefined();
    client.advance(60_000);
    await turns();
    expect(service.requests.list({ endpoint: 'detail' })).toHaveLength(1);
    expect(gate.tickets).toHaveLength(1);
    expect(errors).toEqual([]);
  });

  it('ends an answer that does not come within the deadline with TimeoutError, on the client’s clock', async () => {
    const gate = recordingGate('at-once');
    const { transport, service, client } = await world({ gate, retry: false, timeoutMs: { detail: 2_000 } });
    service.faults.add({ kind: 'latency', ms: 10_000, endpoint: 'detail' });
    const errors: unknown[] = [];
    transport.request(detail).subscribe({ error: (error: unknown) => errors.push(error) });
    await turns();
    client.advance(1_999);
    expect(errors).toEqual([]);
    client.advance(1);
    expect(errors).toHaveLength(1);
    expect(isTimeoutError(errors[0])).toBe(true);
    expect(errors[0]).toMatchObject({ endpoint: 'detail', timeoutMs: 2_000 });
    expect(gate.reports.map((report) => report.httpStatus)).toEqual([undefined]);
    expect(client.nextTimerAt()).toBeUndefined();
  });
});
