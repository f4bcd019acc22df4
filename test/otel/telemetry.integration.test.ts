import { context, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createClient } from '../../src/client.js';
import { createEmulator, createManualClock, driveClock, type Emulator, type WorkflowDefinition } from '../../src/emulator/index.js';
import { runPipeline } from '../../src/pipeline/run-pipeline.js';
import type { RunEvent } from '../../src/runs/events.js';
import { childrenOf, parentOf, recordTelemetry, type Recorded, sumOf } from './support.js';

const open: Emulator[] = [];
const recorders: Recorded[] = [];
afterEach(async () => {
  vi.restoreAllMocks();
  await Promise.all(open.splice(0).map((emulator) => emulator.close()));
  await Promise.all(recorders.splice(0).map((recorded) => recorded.close()));
});

const REPORT: WorkflowDefinition = {
  canvasId: 'c-report',
  title: 'Report',
  nodes: [
    { id: 'node-start', type: 'start' },
    { id: 'node-task', parents: ['node-start'], durationMs: 4_000, messages: [{ content: 'done' }], files: [{ name: 'report.md', type: 'text/markdown', content: '# tides' }] },
  ],
};
const FAILING: WorkflowDefinition = {
  canvasId: 'c-failing',
  title: 'Failing',
  nodes: [
    { id: 'node-start', type: 'start' },
    { id: 'node-task', parents: ['node-start'], durationMs: 3_000, failure: { kind: 'error', errors: ['Request timeout. Please try again later.'] } },
  ],
};
const LONG: WorkflowDefinition = {
  canvasId: 'c-long',
  title: 'Long',
  nodes: [
    { id: 'node-start', type: 'start' },
    { id: 'node-task', parents: ['node-start'], durationMs: 600_000 },
  ],
};

/** An emulator on a manual clock, a client on its time reporting to the real SDK, and every request's headers. */
async function setUp(options: { readonly propagate?: boolean } = {}) {
  vi.spyOn(Math, 'random').mockReturnValue(0.5);
  const clock = createManualClock();
  const emulator = await createEmulator({ clock, listen: false, samples: false, workflows: [REPORT, FAILING, LONG] });
  open.push(emulator);
  const recorded = recordTelemetry(options);
  recorders.push(recorded);
  const sent: Headers[] = [];
  // The emulator's own fetch, with the headers of every request kept for the checks.
  const fetch: typeof globalThis.fetch = (input, init) => {
    sent.push(new Headers(input instanceof Request ? input.headers : init?.headers));
    return emulator.fetch(input, init);
  };
  const client = createClient({ apiKey: emulator.apiKey, baseUrl: emulator.url, fetch, scheduler: emulator.scheduler, telemetry: recorded.telemetry });
  return { clock, emulator, recorded, client, sent };
}

function named(spans: readonly ReadableSpan[], name: string): ReadableSpan[] {
  return spans.filter((span) => span.name === name);
}

function only(spans: readonly ReadableSpan[], name: string): ReadableSpan {
  const found = named(spans, name);
  expect(found).toHaveLength(1);
  return found[0]!;
}

describe('flowstream/otel: traces and metrics of a client against the emulator', () => {
  it('traces a run: its span with ids, node and file events, and every request as a child span with HTTP attributes', async () => {
    const { clock, emulator, recorded, client, sent } = await setUp();
    const start = clock.now();
    let ended = false;
    client.run('c-report').subscribe({ complete: () => (ended = true) });
    await driveClock(clock, { until: () => ended });

    const spans = recorded.spans();
    const run = only(spans, 'flowstream.run');
    const executionId = emulator.executions.list()[0]!.executionId;
    expect(parentOf(run)).toBeUndefined();
    expect(run.attributes).toMatchObject({ 'flowstream.canvas_id': 'c-report', 'flowstream.execution_id': executionId, 'flowstream.ended_by': 'finish' });
    expect(run.status.code).toBe(SpanStatusCode.UNSET);
    // One `node` event per transition, in order, and the file.
    const nodeEvents = run.events.filter((event) => event.name === 'node').map((event) => `${String(event.attributes?.['flowstream.node_id'])}:${String(event.attributes?.['flowstream.node.status'])}`);
    expect(nodeEvents).toEqual(['node-start:finish', 'node-task:init', 'node-task:executing', 'node-task:finish']);
    expect(run.events.filter((event) => event.name === 'file').map((event) => event.attributes)).toEqual([
      expect.objectContaining({ 'flowstream.file.name': 'report.md', 'flowstream.file.type': 'text/markdown', 'flowstream.node_id': 'node-task' }),
    ]);
    // Every request the emulator saw is one child span of the run, in order.
    const requests = named(spans, 'flowstream.request');
    expect(childrenOf(spans, run)).toEqual(expect.arrayContaining(requests));
    expect(requests.map((span) => span.attributes['flowstream.endpoint'])).toEqual(emulator.requests.list().map((request) => request.endpoint));
    const [startRequest, firstStatus] = requests;
    expect(startRequest!.kind).toBe(SpanKind.CLIENT);
    expect(startRequest!.attributes).toMatchObject({
      'http.request.method': 'POST',
      'url.template': 'openapi/workflow/{canvasId}/run',
      'http.response.status_code': 200,
      'flowstream.budget.class': 'start',
      'flowstream.budget.wait_ms': 0,
      'flowstream.retries': 0,
    });
    expect(firstStatus!.attributes).toMatchObject({ 'http.request.method': 'GET', 'url.template': 'openapi/workflow/{executionId}/status', 'flowstream.budget.class': 'status', 'flowstream.execution_id': executionId });
    // Span times are the client's clock (emulator time): the run lasted from the subscription to the end.
    const [seconds, nanos] = run.startTime;
    expect(seconds * 1000 + nanos / 1e6).toBe(start);
    // Nothing of the traces leaves without `propagate`, and the key is in no attribute or event.
    expect(sent.every((headers) => !headers.has('traceparent'))).toBe(true);
    expect(JSON.stringify(spans.map((span) => [span.attributes, span.events]))).not.toContain(emulator.apiKey);

    expect(sumOf(await recorded.metric('flowstream.runs'), { 'flowstream.ended_by': 'finish' })).toBe(1);
    expect(sumOf(await recorded.metric('flowstream.requests'), { 'flowstream.endpoint': 'status', 'flowstream.outcome': 'ok' })).toBe(requests.filter((span) => span.attributes['flowstream.endpoint'] === 'status').length);
    expect(sumOf(await recorded.metric('flowstream.budget.wait'))).toBe(requests.length);
    // The task's start and end were each seen by a later read: two latencies, each below the slowest cadence.
    const latency = await recorded.metric('flowstream.run.detection_latency');
    expect(sumOf(latency)).toBe(2);
    for (const point of latency) expect(typeof point.value === 'number' ? point.value : point.value.max).toBeLessThanOrEqual(10_000);
    // The budget's gauges: nothing waiting, and what is left of the minute and the day.
    expect(sumOf(await recorded.metric('flowstream.budget.waiting'))).toBe(0);
    const remaining = await recorded.metric('flowstream.budget.remaining');
    expect(remaining.map((point) => point.attributes['scope']).sort()).toEqual(['day', 'minute']);
    expect(sumOf(remaining, { scope: 'day' })).toBe(10_000 - requests.length);
  });

  it('marks a failed run: ended by failed, its span an error, counted', async () => {
    const { clock, recorded, client } = await setUp();
    let failure: unknown;
    client.run('c-failing').subscribe({ error: (error: unknown) => (failure = error) });
    await driveClock(clock, { until: () => failure !== undefined });

    const run = only(recorded.spans(), 'flowstream.run');
    expect(run.attributes['flowstream.ended_by']).toBe('failed');
    expect(run.status.code).toBe(SpanStatusCode.ERROR);
    expect(run.attributes['error.type']).toBe('WORKFLOW_FAILED');
    expect(run.events.filter((event) => event.name === 'node').at(-1)?.attributes).toMatchObject({ 'flowstream.node_id': 'node-task', 'flowstream.node.status': 'failed' });
    expect(sumOf(await recorded.metric('flowstream.runs'), { 'flowstream.ended_by': 'failed' })).toBe(1);
  });

  it('marks a run that passed its timeoutMs as ended by timeout, not error, and counts it so', async () => {
    const { clock, recorded, client } = await setUp();
    let failure: unknown;
    client.run('c-long', {}, { timeoutMs: 30_000 }).subscribe({ error: (error: unknown) => (failure = error) });
    await driveClock(clock, { until: () => failure !== undefined });

    const run = only(recorded.spans(), 'flowstream.run');
    expect(run.attributes['flowstream.ended_by']).toBe('timeout');
    expect(run.status.code).toBe(SpanStatusCode.ERROR);
    expect(run.attributes['error.type']).toBe('RUN_TIMEOUT');
    expect(sumOf(await recorded.metric('flowstream.runs'), { 'flowstream.ended_by': 'timeout' })).toBe(1);
    expect(sumOf(await recorded.metric('flowstream.runs'), { 'flowstream.ended_by': 'error' })).toBe(0);
  });

  it('traces an aborted run handle: ended by aborted, the abort request under the run', async () => {
    const { clock, recorded, client } = await setUp();
    const handle = client.startRun('c-long');
    let executing = false;
    handle.events.subscribe((event: RunEvent) => {
      if (event.type === 'node' && event.status === 'executing') executing = true;
    });
    await driveClock(clock, { until: () => executing });
    let cancelled = false;
    void handle.cancel().then(() => (cancelled = true));
    await driveClock(clock, { until: () => cancelled });

    const spans = recorded.spans();
    const run = only(spans, 'flowstream.run');
    expect(run.attributes['flowstream.ended_by']).toBe('aborted');
    const abort = named(spans, 'flowstream.request').filter((span) => span.attributes['flowstream.endpoint'] === 'abort');
    expect(abort).toHaveLength(1);
    expect(parentOf(abort[0]!)).toBe(run.spanContext().spanId);
    expect(abort[0]!.attributes).toMatchObject({ 'flowstream.budget.class': 'abort', 'http.request.method': 'POST', 'http.response.status_code': 200 });
    expect(sumOf(await recorded.metric('flowstream.runs'), { 'flowstream.ended_by': 'aborted' })).toBe(1);
  });

  it('traces a pipeline: a span per step under the pipeline span, each step run under its step', async () => {
    const { clock, emulator, recorded, client } = await setUp();
    let ended = false;
    runPipeline(client, { steps: { draft: { canvasId: 'c-report' }, review: { canvasId: 'c-report', dependsOn: ['draft'] } } }, { scheduler: emulator.scheduler, telemetry: { name: 'article' } }).subscribe({
      complete: () => (ended = true),
    });
    await driveClock(clock, { until: () => ended });

    const spans = recorded.spans();
    const pipeline = only(spans, 'flowstream.pipeline');
    expect(parentOf(pipeline)).toBeUndefined();
    expect(pipeline.attributes).toMatchObject({ 'flowstream.pipeline.name': 'article', 'flowstream.pipeline.outcome': 'finished' });
    const steps = childrenOf(spans, pipeline);
    expect(steps.map((span) => [span.name, span.attributes['flowstream.step'], span.attributes['flowstream.step.status']])).toEqual([
      ['flowstream.step', 'draft', 'finish'],
      ['flowstream.step', 'review', 'finish'],
    ]);
    for (const step of steps) {
      const [run] = childrenOf(spans, step);
      expect(run?.name).toBe('flowstream.run');
      expect(run?.attributes['flowstream.ended_by']).toBe('finish');
      expect(childrenOf(spans, run!).every((span) => span.name === 'flowstream.request')).toBe(true);
      expect(childrenOf(spans, run!).length).toBeGreaterThan(2);
    }
  });

  it('counts a 429 from the service and the retry that cured it, on the request span', async () => {
    const { clock, emulator, recorded, client } = await setUp();
    emulator.faults.add({ kind: 'rate-limit', endpoint: 'status', times: 1 });
    let ended = false;
    client.run('c-report').subscribe({ complete: () => (ended = true) });
    await driveClock(clock, { until: () => ended });

    const limited = named(recorded.spans(), 'flowstream.request').filter((span) => span.attributes['flowstream.retries'] === 1);
    expect(limited).toHaveLength(1);
    // The budget held the retry until the window could have reset: the wait is on the span.
    expect(limited[0]!.attributes).toMatchObject({ 'flowstream.endpoint': 'status', 'http.response.status_code': 200, 'flowstream.outcome': 'ok' });
    expect(limited[0]!.attributes['flowstream.budget.wait_ms']).toBeGreaterThan(0);
    expect(sumOf(await recorded.metric('flowstream.rate_limited'), { 'flowstream.endpoint': 'status' })).toBe(1);
  });

  it('records a server error and its retry: retries 1, the answer that followed', async () => {
    const { clock, emulator, recorded, client } = await setUp();
    emulator.faults.add({ kind: 'status', status: 503, endpoint: 'output', times: 1 });
    let ended = false;
    client.run('c-report').subscribe({ complete: () => (ended = true) });
    await driveClock(clock, { until: () => ended });

    const output = named(recorded.spans(), 'flowstream.request').filter((span) => span.attributes['flowstream.endpoint'] === 'output');
    expect(output[0]!.attributes).toMatchObject({ 'flowstream.retries': 1, 'http.response.status_code': 200 });
    expect(output.slice(1).every((span) => span.attributes['flowstream.retries'] === 0)).toBe(true);
    expect(sumOf(await recorded.metric('flowstream.rate_limited'))).toBe(0);
  });

  it('sends traceparent, naming the request span, only with propagate: true', async () => {
    const { clock, recorded, client, sent } = await setUp({ propagate: true });
    let ended = false;
    client.run('c-report').subscribe({ complete: () => (ended = true) });
    await driveClock(clock, { until: () => ended });

    const requests = named(recorded.spans(), 'flowstream.request');
    expect(sent.map((headers) => headers.get('traceparent'))).toEqual(requests.map((span) => `00-${span.spanContext().traceId}-${span.spanContext().spanId}-01`));
  });

  it('ends a run left by its subscriber as unsubscribed, and its requests under it', async () => {
    const { clock, recorded, client } = await setUp();
    let executing = false;
    const subscription = client.run('c-long').subscribe((event: RunEvent) => {
      if (event.type === 'node' && event.status === 'executing') executing = true;
    });
    await driveClock(clock, { until: () => executing });
    subscription.unsubscribe();
    await driveClock(clock, { until: () => named(recorded.spans(), 'flowstream.request').some((span) => span.attributes['flowstream.endpoint'] === 'abort') });

    const spans = recorded.spans();
    const run = only(spans, 'flowstream.run');
    expect(run.attributes['flowstream.ended_by']).toBe('unsubscribed');
    expect(named(spans, 'flowstream.request').every((span) => parentOf(span) === run.spanContext().spanId)).toBe(true);
  });

  it('puts a run and a plain call under the span given as their telemetryParent, and a left call ends cancelled', async () => {
    const { clock, recorded, client } = await setUp();
    const request = recorded.tracer.startSpan('handle request');
    const parent = trace.setSpan(context.active(), request);
    let ended = false;
    client.run('c-report', {}, { telemetryParent: parent }).subscribe({ complete: () => (ended = true) });
    await driveClock(clock, { until: () => ended });
    await client.workflows.get('c-report', { telemetryParent: parent });
    const left = new AbortController();
    const plan = client.workflows.get('c-report', { signal: left.signal });
    left.abort();
    await expect(plan).rejects.toBeDefined();
    request.end();

    const spans = recorded.spans();
    const mine = only(spans, 'handle request');
    const under = childrenOf(spans, mine);
    expect(under.map((span) => span.name).sort()).toEqual(['flowstream.request', 'flowstream.run']);
    expect(under.find((span) => span.name === 'flowstream.request')?.attributes).toMatchObject({ 'flowstream.endpoint': 'detail', 'url.template': 'openapi/workflows/{canvasId}', 'flowstream.budget.class': 'interactive' });
    const cancelled = named(spans, 'flowstream.request').filter((span) => span.attributes['flowstream.outcome'] === 'cancelled');
    expect(cancelled.map((span) => [span.attributes['flowstream.endpoint'], parentOf(span)])).toEqual([['detail', undefined]]);
    expect(sumOf(await recorded.metric('flowstream.requests'), { 'flowstream.endpoint': 'detail', 'flowstream.outcome': 'cancelled' })).toBe(1);
  });

  it('measures detection latency of a watch only from what it saw happen, not what its first reading caught up on', async () => {
    const { clock, recorded, client } = await setUp();
    const { executionId } = await client.executions.start('c-report');
    // The task starts on the service's first tick and runs 4 s: attach half-way through it.
    await driveClock(clock, { toTime: clock.now() + 3_500 });
    let ended = false;
    client.watch(executionId).subscribe({ complete: () => (ended = true) });
    await driveClock(clock, { until: () => ended });

    const run = only(recorded.spans(), 'flowstream.run');
    expect(run.attributes).toMatchObject({ 'flowstream.run.kind': 'watch', 'flowstream.execution_id': executionId, 'flowstream.ended_by': 'finish' });
    const latency = await recorded.metric('flowstream.run.detection_latency');
    expect(latency.map((point) => point.attributes['flowstream.transition'])).toEqual(['end']);
    expect(sumOf(latency)).toBe(1);
  });
});
