import { afterEach, describe, expect, it } from 'vitest';
import { type Client, createAccountBudget, createClient } from '../../src/index.js';
import { createTelemetry } from '../../src/otel/index.js';
import { recordTelemetry, type Recorded } from './support.js';

// The budget gauges of several budgets in one process (two accounts, two clients): each budget's
// observations carry their own attributes, so none is reported over another. A budget's state needs
// no request: nothing is sent, the clients' base URL is never called.

const recorders: Recorded[] = [];
afterEach(async () => {
  await Promise.all(recorders.splice(0).map((recorded) => recorded.close()));
});

function clientOf(requestsPerMinute: number, telemetry: Recorded['telemetry']): Client {
  return createClient({ apiKey: 'rf_test', baseUrl: 'http://127.0.0.1:9/v1', budget: { requestsPerMinute }, telemetry });
}

/** The gauge's minute points as `budget id → value`, with the attributes of each. */
async function minutes(recorded: Recorded): Promise<{ readonly attributes: Record<string, unknown>; readonly value: unknown }[]> {
  return (await recorded.metric('flowstream.budget.remaining')).filter((point) => point.attributes['scope'] === 'minute').map(({ attributes, value }) => ({ attributes, value }));
}

describe('flowstream/otel budget gauges', () => {
  it('reports two budgets of one telemetry apart: each its own flowstream.budget.id', async () => {
    const recorded = recordTelemetry();
    recorders.push(recorded);
    const clients = [clientOf(30, recorded.telemetry), clientOf(70, recorded.telemetry)];
    const points = await minutes(recorded);
    expect(points.map((point) => point.value).sort()).toEqual([30, 70]);
    expect(new Set(points.map((point) => point.attributes['flowstream.budget.id'])).size).toBe(2);
    const waiting = await recorded.metric('flowstream.budget.waiting');
    expect(new Set(waiting.map((point) => point.attributes['flowstream.budget.id'])).size).toBe(2);
    expect(clients).toHaveLength(2);
  });

  it('reports two budgets apart when each client has its own telemetry on one meter provider', async () => {
    const recorded = recordTelemetry();
    recorders.push(recorded);
    const meterProvider = recorded.meterProvider;
    const clients = [30, 70].map((limit) => clientOf(limit, createTelemetry({ meterProvider })));
    expect((await minutes(recorded)).map((point) => point.value).sort()).toEqual([30, 70]);
    expect(clients).toHaveLength(2);
  });

  it('reports a budget shared by two clients once', async () => {
    const recorded = recordTelemetry();
    recorders.push(recorded);
    const budget = createAccountBudget({ requestsPerMinute: 40 });
    const clients = [0, 1].map(() => createClient({ apiKey: 'rf_test', baseUrl: 'http://127.0.0.1:9/v1', budget, telemetry: recorded.telemetry }));
    expect((await minutes(recorded)).map((point) => point.value)).toEqual([40]);
    expect(clients).toHaveLength(2);
  });

  it('labels the gauges with the telemetry’s account option, flowstream.account', async () => {
    const recorded = recordTelemetry();
    recorders.push(recorded);
    const meterProvider = recorded.meterProvider;
    const clients = [
      createClient({ apiKey: 'rf_test', baseUrl: 'http://127.0.0.1:9/v1', budget: { requestsPerMinute: 30 }, telemetry: createTelemetry({ meterProvider, account: 'acme' }) }),
      createClient({ apiKey: 'rf_test', baseUrl: 'http://127.0.0.1:9/v1', budget: { requestsPerMinute: 70 }, telemetry: createTelemetry({ meterProvider, account: 'globex' }) }),
    ];
    const points = await minutes(recorded);
    expect(Object.fromEntries(points.map((point) => [point.attributes['flowstream.account'], point.value]))).toEqual({ acme: 30, globex: 70 });
    expect(clients).toHaveLength(2);
  });
});
