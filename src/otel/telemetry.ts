import {
  type Attributes,
  type Context,
  context,
  type Counter,
  type Histogram,
  isSpanContextValid,
  type MeterProvider,
  metrics,
  type Span,
  SpanKind,
  SpanStatusCode,
  trace,
  type TracerProvider,
} from '@opentelemetry/api';
import type { ClientTelemetry, TelemetryTarget } from '../client.js';
import type { BudgetState } from '../domain/budget.js';
import type { Endpoint, RequestPriority } from '../domain/endpoints.js';
import { type NodeTimes, seeNodeEvent } from '../domain/node-times.js';
import type { RequestTelemetry, RequestTelemetryEnd, RequestTelemetryStart } from '../domain/telemetry.js';
import { isFlowstreamError, isRunTimeoutError } from '../errors/index.js';
import { booleanArgument, InvalidArgumentError, knownKeys, objectArgument, shownType } from '../errors/validation-errors.js';
import { PACKAGE_VERSION } from '../http/package-version.js';
import type { PipelineTelemetry, PipelineTelemetryEnd, PipelineTelemetryStart, StepTelemetry, StepTelemetryEnd, StepTelemetryStart } from '../pipeline/pipeline-telemetry.js';
import type { RunEvent } from '../runs/events.js';
import type { RunTelemetry, RunTelemetryEnd, RunTelemetryStart } from '../runs/run-lifecycle.js';
import { type DetectionLatency, detectionLatencies } from './detection-latency.js';
import { URL_TEMPLATES } from './url-templates.js';

/**
 * Options of {@link createTelemetry}.
 *
 * @example
 * ```ts
 * createTelemetry({ tracerProvider, meterProvider, propagate: true });
 * ```
 */
export interface TelemetryOptions {
  /** Where spans go. Default: the global tracer provider (`trace.setGlobalTracerProvider`). */
  readonly tracerProvider?: TracerProvider;
  /** Where metrics go. Default: the global meter provider (`metrics.setGlobalMeterProvider`). */
  readonly meterProvider?: MeterProvider;
  /**
   * Send a W3C `traceparent` header with every API request, so the service's traces (if it records
   * any) join the client's. Default false: nothing about the client's traces leaves the process.
   */
  readonly propagate?: boolean;
  /**
   * The account of the clients given this telemetry, as `flowstream.account` on their budget gauges
   * (`flowstream.budget.waiting`, `flowstream.budget.remaining`): name it when one process serves several
   * accounts, to tell them apart on a dashboard. Each budget's gauges also carry `flowstream.budget.id`,
   * so that two budgets are never reported over each other, named or not.
   */
  readonly account?: string;
}

const SCOPE = 'flowstream';

const TELEMETRY_OPTION_NAMES: readonly (keyof TelemetryOptions)[] = ['tracerProvider', 'meterProvider', 'propagate', 'account'];

/** The `account` option: a non-empty string or left out. */
function accountArgument(given: unknown): string | undefined {
  if (given === undefined) return undefined;
  if (typeof given !== 'string' || given === '') throw new InvalidArgumentError('account', `must be a non-empty string or left out (got ${given === '' ? 'an empty string' : shownType(given)})`);
  return given;
}

/**
 * Each budget's `flowstream.budget.id`, one per budget in the process, whichever telemetry observes it:
 * numbered in the order budgets are first seen, a handful of values (a budget is per client or per
 * account, not per run).
 */
const budgetIds = new WeakMap<object, string>();
let budgetsSeen = 0;
function budgetId(budget: object): string {
  let id = budgetIds.get(budget);
  if (id === undefined) {
    budgetsSeen += 1;
    id = String(budgetsSeen);
    budgetIds.set(budget, id);
  }
  return id;
}

/** The attributes of one budget's gauge observations, made once per budget. */
interface BudgetLabels {
  readonly budget: Attributes;
  readonly minute: Attributes;
  readonly day: Attributes;
}

function budgetLabels(id: string, account: string | undefined): BudgetLabels {
  const budget = Object.freeze({ 'flowstream.budget.id': id, ...(account === undefined ? {} : { 'flowstream.account': account }) });
  return { budget, minute: Object.freeze({ ...budget, scope: 'minute' }), day: Object.freeze({ ...budget, scope: 'day' }) };
}

/** A provider option: the global one when left out; anything without its `getTracer`/`getMeter` is an `InvalidArgumentError`. */
function providerArgument<P extends object>(name: string, given: P | undefined, method: string, global: P): P {
  if (given === undefined) return global;
  const value: unknown = given;
  if (typeof value !== 'object' || value === null || typeof Reflect.get(value, method) !== 'function') {
    throw new InvalidArgumentError(name, `must be an OpenTelemetry ${name} (with ${method}) or left out (got ${value === null ? 'null' : typeof value === 'object' ? `an object without ${method}` : typeof value})`);
  }
  return given;
}

/** Whether a telemetry parent given to the client is an OpenTelemetry `Context`. */
function isContext(value: unknown): value is Context {
  return typeof value === 'object' && value !== null && 'getValue' in value && 'setValue' in value && 'deleteValue' in value;
}

/** The parent given (an OpenTelemetry `Context`), else the active one. */
function parentContext(given: unknown): Context {
  return isContext(given) ? given : context.active();
}

/** An error in a few words for `error.type`: its flowstream code, else its name. Never its message, which may quote data. */
function errorType(error: unknown): string {
  if (isFlowstreamError(error)) return error.code;
  return error instanceof Error ? error.name : typeof error;
}

function failed(span: Span, error: unknown): void {
  span.setAttribute('error.type', errorType(error));
  span.setStatus({ code: SpanStatusCode.ERROR, ...(error instanceof Error ? { message: error.message } : {}) });
}

/** `traceparent` of a span (W3C Trace Context, version 00). */
function traceparent(span: Span): Readonly<Record<string, string>> | undefined {
  const spanContext = span.spanContext();
  if (!isSpanContextValid(spanContext)) return undefined;
  return { traceparent: `00-${spanContext.traceId}-${spanContext.spanId}-${(spanContext.traceFlags & 0xff).toString(16).padStart(2, '0')}` };
}

/** The attributes every request of one endpoint and budget class shares, spans' and metrics', made once. */
interface RequestKind {
  /** The span's attributes at its start: these, and the execution's id when the request is about one. */
  spanAttributes(executionId: string | undefined): Attributes;
  /** `flowstream.requests` by outcome. */
  readonly byOutcome: Readonly<Record<RequestTelemetryEnd['outcome'], Attributes>>;
  /** `flowstream.budget.wait`. */
  readonly labels: Attributes;
  /** `flowstream.rate_limited`. */
  readonly endpoint: Attributes;
}

function requestKind(endpoint: Endpoint, priority: RequestPriority, method: RequestTelemetryStart['method']): RequestKind {
  const template = URL_TEMPLATES[endpoint];
  const shared: Attributes = Object.freeze({ 'http.request.method': method, 'url.template': template, 'flowstream.endpoint': endpoint, 'flowstream.budget.class': priority });
  const labels = Object.freeze({ 'flowstream.endpoint': endpoint, 'flowstream.budget.class': priority });
  const outcome = (name: RequestTelemetryEnd['outcome']): Attributes => Object.freeze({ ...labels, 'flowstream.outcome': name });
  return {
    // The SDK copies the attributes it is given, so the shared set can be handed over as it is.
    spanAttributes: (executionId) =>
      executionId === undefined
        ? shared
        : { 'http.request.method': method, 'url.template': template, 'flowstream.endpoint': endpoint, 'flowstream.budget.class': priority, 'flowstream.execution_id': executionId },
    byOutcome: Object.freeze({ ok: outcome('ok'), error: outcome('error'), cancelled: outcome('cancelled') }),
    labels,
    endpoint: Object.freeze({ 'flowstream.endpoint': endpoint }),
  };
}

const TRANSITION_LABELS: Readonly<Record<DetectionLatency['transition'], Attributes>> = {
  start: Object.freeze({ 'flowstream.transition': 'start' }),
  end: Object.freeze({ 'flowstream.transition': 'end' }),
};

interface RequestInstruments {
  readonly requests: Counter;
  readonly rateLimited: Counter;
  readonly budgetWait: Histogram;
}

/** One request's span and what its end records: an object per request, no closure. */
class RequestSpan implements RequestTelemetry {
  readonly #span: Span;
  readonly #kind: RequestKind;
  readonly #instruments: RequestInstruments;
  readonly headers?: Readonly<Record<string, string>>;

  constructor(span: Span, kind: RequestKind, instruments: RequestInstruments, headers: Readonly<Record<string, string>> | undefined) {
    this.#span = span;
    this.#kind = kind;
    this.#instruments = instruments;
    if (headers !== undefined) this.headers = headers;
  }

  end(end: RequestTelemetryEnd): void {
    const span = this.#span;
    if (end.status !== undefined) span.setAttribute('http.response.status_code', end.status);
    span.setAttribute('flowstream.retries', end.retries);
    span.setAttribute('flowstream.budget.wait_ms', end.budgetWaitMs);
    span.setAttribute('flowstream.outcome', end.outcome);
    if (end.outcome === 'error') failed(span, end.error);
    span.end(end.at);
    const kind = this.#kind;
    const { requests, rateLimited, budgetWait } = this.#instruments;
    requests.add(1, kind.byOutcome[end.outcome]);
    if (end.rateLimited > 0) rateLimited.add(end.rateLimited, kind.endpoint);
    budgetWait.record(end.budgetWaitMs, kind.labels);
  }
}

/**
 * How a run that ended without a result is labelled: left (`unsubscribed`), past its `timeoutMs`
 * (`timeout`, as a run handle's result says: the run aborted its execution and errored with
 * `RunTimeoutError` without following it to its end), another error, or detached (completed without one).
 */
function endedWithoutResult(end: RunTelemetryEnd): string {
  switch (end.outcome) {
    case 'unsubscribed':
      return 'unsubscribed';
    case 'error':
      return isRunTimeoutError(end.error) ? 'timeout' : 'error';
    case 'completed':
      return 'detached';
    default:
      return end.outcome satisfies never;
  }
}

/**
 * Makes a client's telemetry hook from OpenTelemetry: give it to `createClient({ telemetry })`.
 *
 * Traces: a `flowstream.run` span per run, watch or run handle (attributes `flowstream.canvas_id`,
 * `flowstream.execution_id`, `flowstream.ended_by`: `finish`, `failed`, `aborted`, `timeout` (past its
 * `timeoutMs`), or without a result `unsubscribed`, `error`, `detached`; an event `node` per node transition and `file`
 * per output file); under it a `flowstream.request` span per API request (`http.request.method`,
 * `url.template`, `http.response.status_code`, `flowstream.budget.class`, `flowstream.budget.wait_ms`,
 * `flowstream.retries`); `flowstream.pipeline` and a `flowstream.step` per step over a pipeline's runs.
 * A run's span goes under `RunOptions.telemetryParent` (a `Context`) or the active context.
 *
 * Metrics: `flowstream.requests` (endpoint, class, outcome), `flowstream.rate_limited`,
 * `flowstream.budget.wait` (ms), `flowstream.budget.waiting`, `flowstream.budget.remaining` (scope
 * minute or day; both gauges per budget: `flowstream.budget.id`, and `flowstream.account` with the
 * `account` option), `flowstream.run.detection_latency` (ms from a node's start or end as the service
 * reports it to the read that saw it), `flowstream.runs` (ended by).
 *
 * Span times are read off the client's scheduler, like every other time of the client. The API key
 * is never in any attribute.
 *
 * @example
 * ```ts
 * import { createClient } from 'flowstream';
 * import { createTelemetry } from 'flowstream/otel';
 * const client = createClient({ apiKey, baseUrl, telemetry: createTelemetry({ tracerProvider, meterProvider }) });
 * ```
 */
export function createTelemetry(options: TelemetryOptions = {}): ClientTelemetry {
  knownKeys('options', objectArgument('options', options), TELEMETRY_OPTION_NAMES);
  const tracer = providerArgument('tracerProvider', options.tracerProvider, 'getTracer', trace.getTracerProvider()).getTracer(SCOPE, PACKAGE_VERSION);
  const meter = providerArgument('meterProvider', options.meterProvider, 'getMeter', metrics.getMeterProvider()).getMeter(SCOPE, PACKAGE_VERSION);
  const propagate = booleanArgument('propagate', options.propagate) === true;
  const account = accountArgument(options.account);

  const requests = meter.createCounter('flowstream.requests', { description: 'API requests, retries included in one', unit: '{request}' });
  const rateLimited = meter.createCounter('flowstream.rate_limited', { description: 'Answers with HTTP 429', unit: '{response}' });
  const budgetWait = meter.createHistogram('flowstream.budget.wait', { description: 'Time a request waited for the request budget', unit: 'ms' });
  const runs = meter.createCounter('flowstream.runs', { description: 'Runs, watches and run handles that ended', unit: '{run}' });
  const detection = meter.createHistogram('flowstream.run.detection_latency', {
    description: "Time from a node's start or end as the service reports it to the read that saw it",
    unit: 'ms',
  });
  const waiting = meter.createObservableGauge('flowstream.budget.waiting', { description: 'Requests waiting for the request budget', unit: '{request}' });
  const remaining = meter.createObservableGauge('flowstream.budget.remaining', { description: 'Requests the budget has left in its window', unit: '{request}' });

  // Budgets are held weakly: a client and its budget go when their users let go of them. An account
  // budget given to several clients is observed once.
  const budgets: { readonly budget: WeakRef<{ snapshot(): BudgetState }>; readonly labels: BudgetLabels }[] = [];
  const observeBudget = (budget: { snapshot(): BudgetState }): void => {
    if (budgets.some((observed) => observed.budget.deref() === budget)) return;
    budgets.push({ budget: new WeakRef(budget), labels: budgetLabels(budgetId(budget), account) });
  };
  meter.addBatchObservableCallback(
    (observer) => {
      for (let index = budgets.length - 1; index >= 0; index -= 1) {
        const observed = budgets[index];
        const budget = observed?.budget.deref();
        if (observed === undefined || budget === undefined) {
          budgets.splice(index, 1);
          continue;
        }
        const state = budget.snapshot();
        observer.observe(waiting, state.queued.total, observed.labels.budget);
        observer.observe(remaining, state.remainingThisMinute, observed.labels.minute);
        observer.observe(remaining, state.remainingToday, observed.labels.day);
      }
    },
    [waiting, remaining],
  );

  // What every request of one endpoint and class shares, made once: a poll builds no attribute set. An
  // endpoint has one method (`ENDPOINTS`), so the first request's is every request's.
  const kinds = new Map<Endpoint, Map<RequestPriority, RequestKind>>();
  const kindOf = (endpoint: Endpoint, priority: RequestPriority, method: RequestTelemetryStart['method']): RequestKind => {
    let byPriority = kinds.get(endpoint);
    if (byPriority === undefined) {
      byPriority = new Map();
      kinds.set(endpoint, byPriority);
    }
    let kind = byPriority.get(priority);
    if (kind === undefined) {
      kind = requestKind(endpoint, priority, method);
      byPriority.set(priority, kind);
    }
    return kind;
  };
  const instruments: RequestInstruments = { requests, rateLimited, budgetWait };
  const runLabelSets = new Map<string, Attributes>();
  const runLabels = (endedBy: string, kind: RunTelemetryStart['kind']): Attributes => {
    const key = `${kind} ${endedBy}`;
    let labels = runLabelSets.get(key);
    if (labels === undefined) {
      labels = Object.freeze({ 'flowstream.ended_by': endedBy, 'flowstream.run.kind': kind });
      runLabelSets.set(key, labels);
    }
    return labels;
  };

  const request = (start: RequestTelemetryStart): RequestTelemetry => {
    const kind = kindOf(start.endpoint, start.priority, start.method);
    const span = tracer.startSpan('flowstream.request', { kind: SpanKind.CLIENT, startTime: start.at, attributes: kind.spanAttributes(start.executionId) }, parentContext(start.parent));
    return new RequestSpan(span, kind, instruments, propagate ? traceparent(span) : undefined);
  };

  const run = (start: RunTelemetryStart): RunTelemetry => {
    const parent = parentContext(start.parent);
    const span = tracer.startSpan(
      'flowstream.run',
      {
        startTime: start.at,
        attributes: {
          'flowstream.run.kind': start.kind,
          ...(start.canvasId === undefined ? {} : { 'flowstream.canvas_id': start.canvasId }),
          ...(start.executionId === undefined ? {} : { 'flowstream.execution_id': start.executionId }),
        },
      },
      parent,
    );
    const seen = new Map<string, NodeTimes>();
    let endedBy: string | undefined;
    // A watch's first reading shows what happened before it came: catching up, not detection.
    let catchingUpAt: number | undefined;
    const event = (event: RunEvent, at: number): void => {
      switch (event.type) {
        case 'started':
          span.setAttribute('flowstream.execution_id', event.executionId);
          if (event.canvasId !== undefined) span.setAttribute('flowstream.canvas_id', event.canvasId);
          if (start.kind === 'watch') catchingUpAt = at;
          return;
        case 'node': {
          span.addEvent(
            'node',
            {
              'flowstream.node_id': event.nodeId,
              'flowstream.node.status': event.status,
              ...(event.previous === undefined ? {} : { 'flowstream.node.previous': event.previous }),
              ...(event.title === undefined ? {} : { 'flowstream.node.title': event.title }),
            },
            at,
          );
          if (at === catchingUpAt) return;
          const saw = seen.get(event.nodeId);
          const times = seeNodeEvent(saw, event, at);
          if (times !== undefined && times !== saw) seen.set(event.nodeId, times);
          return;
        }
        case 'file':
          span.addEvent(
            'file',
            {
              'flowstream.file.name': event.file.name,
              'flowstream.file.type': event.file.type,
              ...(event.file.size === undefined ? {} : { 'flowstream.file.size': event.file.size }),
              ...(event.file.nodeId === undefined ? {} : { 'flowstream.node_id': event.file.nodeId }),
            },
            at,
          );
          return;
        case 'finished':
          endedBy = event.result.endedBy;
          span.setAttribute('flowstream.ended_by', endedBy);
          for (const latency of detectionLatencies(seen, event.result.output)) detection.record(latency.ms, TRANSITION_LABELS[latency.transition]);
          return;
        case 'snapshot':
        case 'status':
        case 'message':
        case 'connection':
          return;
      }
    };
    return {
      parent: trace.setSpan(parent, span),
      event,
      end: (end: RunTelemetryEnd) => {
        const by = endedBy ?? endedWithoutResult(end);
        span.setAttribute('flowstream.ended_by', by);
        if (end.outcome === 'error') failed(span, end.error);
        span.end(end.at);
        runs.add(1, runLabels(by, start.kind));
      },
    };
  };

  const pipeline = (start: PipelineTelemetryStart): PipelineTelemetry => {
    const parent = parentContext(start.parent);
    const span = tracer.startSpan(
      'flowstream.pipeline',
      {
        startTime: start.at,
        attributes: {
          'flowstream.pipeline.steps': [...start.steps],
          ...(start.name === undefined ? {} : { 'flowstream.pipeline.name': start.name }),
          ...(start.pipelineId === undefined ? {} : { 'flowstream.pipeline.id': start.pipelineId }),
          ...(start.jobId === undefined ? {} : { 'messaging.message.id': start.jobId, 'messaging.system': 'bullmq' }),
        },
      },
      parent,
    );
    const inPipeline = trace.setSpan(parent, span);
    return {
      step: (step: StepTelemetryStart): StepTelemetry => {
        const stepSpan = tracer.startSpan(
          'flowstream.step',
          {
            startTime: step.at,
            attributes: {
              'flowstream.step': step.step,
              'flowstream.canvas_id': step.canvasId,
              ...(step.resumedExecutionId === undefined ? {} : { 'flowstream.execution_id': step.resumedExecutionId }),
              ...(start.jobId === undefined ? {} : { 'messaging.message.id': start.jobId }),
            },
          },
          inPipeline,
        );
        return {
          parent: trace.setSpan(inPipeline, stepSpan),
          end: (end: StepTelemetryEnd) => {
            stepSpan.setAttribute('flowstream.step.status', end.status);
            if (end.status === 'failed') failed(stepSpan, end.error);
            stepSpan.end(end.at);
          },
        };
      },
      end: (end: PipelineTelemetryEnd) => {
        span.setAttribute('flowstream.pipeline.outcome', end.outcome);
        if (end.outcome === 'failed') failed(span, end.error);
        span.end(end.at);
      },
    };
  };

  return {
    request,
    run,
    pipeline,
    attach: (target: TelemetryTarget) => {
      if (target.budget !== undefined) observeBudget(target.budget);
    },
  };
}
