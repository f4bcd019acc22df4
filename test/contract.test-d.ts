import type { Observable, SchedulerLike } from 'rxjs';
import { describe, expectTypeOf, it } from 'vitest';
import {
  ApiError,
  AuthenticationError,
  ConcurrencyLimitError,
  ConflictError,
  type FlowstreamError,
  InvalidRequestError,
  NetworkError,
  NotFoundError,
  PayloadTooLargeError,
  PermissionError,
  RateLimitError,
  RelayError,
  ResponseValidationError,
  RunTimeoutError,
  ServerError,
  StartInDoubtError,
  StepInDoubtError,
  TimeoutError,
  WorkflowFailedError,
  connectRun,
  createAccountBudget,
  createClient,
  createRunHub,
  type createRunLimiter,
  isApiError,
  isAuthenticationError,
  isConcurrencyLimitError,
  isConflictError,
  isFlowstreamError,
  isInvalidRequestError,
  isNetworkError,
  isNotFoundError,
  isPayloadTooLargeError,
  isPermissionError,
  isRateLimitError,
  isRelayError,
  isResponseValidationError,
  isRunTimeoutError,
  isServerError,
  isStartInDoubtError,
  isStepInDoubtError,
  isTimeoutError,
  isWorkflowFailedError,
  ofType,
  planSchema,
  runEach,
  runPipeline,
  runResult,
  runStore,
  shareRun,
  thenRun,
  toRunState,
  type AccountBudget,
  type CallOptions,
  type CheckpointStore,
  type Client,
  type ClientOptions,
  type ExecutionStatus,
  type GeneratedWorkflow,
  type NodeError,
  type NodeStatus,
  type OutputFile,
  type PipelineCheckpoint,
  type PipelineOptions,
  type PipelineStep,
  type RunEvent,
  type RunEventOf,
  type RunHandle,
  type RunHub,
  type RunOptions,
  type RunResult,
  type RunState,
  type StartedExecution,
  type UploadedFile,
  type WorkflowPlan,
  type WorkflowSummary,
} from '../src/index.js';
import { createPipelineQueue, createPipelineWorker, type PipelineQueue, type PipelineWorkerOptions } from '../src/bullmq/index.js';
import { createEmulator, type Emulator, type EmulatorOptions } from '../src/emulator/index.js';
import type { createTelemetry, TelemetryOptions } from '../src/otel/index.js';
import { useRun, useStartRun } from '../src/react/index.js';
import { createRunRelay, createRunTokens, toNodeListener, type RunRelay, type RunRelayOptions, type RunTokens } from '../src/relay/index.js';
import { createRedisBudget, type createRedisIdempotencyStore, createRedisRunHub, type RedisBudgetOptions } from '../src/redis/index.js';

/*
 * The public contract, name by name: what users and outside checks call, through the package's own
 * entry points (`flowstream` and its subpaths). A name or shape that drifts from it fails the typecheck.
 */

declare const client: Client;
declare const run$: Observable<RunEvent>;

describe('createClient and its options', () => {
  it('takes apiKey (required), baseUrl (optional: FLOWSTREAM_BASE_URL) and the documented options', () => {
    expectTypeOf(createClient).parameter(0).toEqualTypeOf<ClientOptions>();
    expectTypeOf(createClient).returns.toEqualTypeOf<Client>();
    expectTypeOf<{ apiKey: string }>().toExtend<ClientOptions>();
    expectTypeOf<{ baseUrl: string }>().not.toExtend<ClientOptions>();
    expectTypeOf<ClientOptions['apiKey']>().toEqualTypeOf<string>();
    expectTypeOf<'apiKey' | 'baseUrl' | 'fetch' | 'timeoutMs' | 'retry' | 'budget' | 'polling' | 'scheduler' | 'headers' | 'logger'>().toExtend<keyof ClientOptions>();
    expectTypeOf<ClientOptions['baseUrl']>().toEqualTypeOf<string | undefined>();
    expectTypeOf<ClientOptions['fetch']>().toEqualTypeOf<typeof globalThis.fetch | undefined>();
    expectTypeOf<ClientOptions['polling']>().toEqualTypeOf<{ readonly minMs?: number; readonly maxMs?: number } | undefined>();
    expectTypeOf<ClientOptions['scheduler']>().toEqualTypeOf<SchedulerLike | undefined>();
    expectTypeOf<{ apiKey: string; timeoutMs: number; retry: false; headers: Record<string, string>; logger: { warn(message: string): void } }>().toExtend<ClientOptions>();
  });

  it('takes budget as { requestsPerMinute?, requestsPerDay? }, an AccountBudget or false', () => {
    expectTypeOf<'requestsPerMinute' | 'requestsPerDay'>().toExtend<keyof Exclude<ClientOptions['budget'], AccountBudget | false | undefined>>();
    expectTypeOf<{ apiKey: string; budget: { requestsPerMinute: number; requestsPerDay: number } }>().toExtend<ClientOptions>();
    expectTypeOf<{ apiKey: string; budget: { requestsPerMinute: number } }>().toExtend<ClientOptions>();
    expectTypeOf<{ apiKey: string; budget: AccountBudget }>().toExtend<ClientOptions>();
    expectTypeOf<{ apiKey: string; budget: false }>().toExtend<ClientOptions>();
    expectTypeOf(createAccountBudget).returns.toExtend<AccountBudget>();
    expectTypeOf(createRedisBudget).returns.toExtend<AccountBudget>();
  });

  it('takes an AbortSignal and a priority per call', () => {
    expectTypeOf<'signal' | 'priority'>().toExtend<keyof CallOptions>();
    expectTypeOf<CallOptions['signal']>().toEqualTypeOf<AbortSignal | undefined>();
  });
});

describe('plain calls', () => {
  it('workflows.search, list and get', () => {
    expectTypeOf<'keyword' | 'order' | 'page' | 'pageSize'>().toExtend<keyof NonNullable<Parameters<Client['workflows']['search']>[0]>>();
    expectTypeOf<Client['workflows']['search']>().toBeCallableWith();
    expectTypeOf<Client['workflows']['search']>().returns.toEqualTypeOf<Promise<WorkflowSummary[]>>();
    expectTypeOf<'keyword' | 'order' | 'pageSize'>().toExtend<keyof NonNullable<Parameters<Client['workflows']['list']>[0]>>();
    expectTypeOf<Client['workflows']['list']>().returns.toEqualTypeOf<AsyncIterable<WorkflowSummary>>();
    expectTypeOf<Client['workflows']['get']>().toBeCallableWith('c-1');
    expectTypeOf<Client['workflows']['get']>().returns.toEqualTypeOf<Promise<WorkflowPlan>>();
  });

  it('executions.start, status, output and abort', () => {
    expectTypeOf<keyof NonNullable<Parameters<Client['executions']['start']>[1]>>().toEqualTypeOf<'variables'>();
    expectTypeOf<Client['executions']['start']>().toBeCallableWith('c-1');
    expectTypeOf<Client['executions']['start']>().returns.toEqualTypeOf<Promise<StartedExecution>>();
    expectTypeOf<StartedExecution>().toHaveProperty('executionId').toEqualTypeOf<string>();
    expectTypeOf<StartedExecution>().toHaveProperty('status').toEqualTypeOf<ExecutionStatus>();
    expectTypeOf<Client['executions']['status']>().toBeCallableWith('we-1');
    expectTypeOf<Client['executions']['output']>().toBeCallableWith('we-1');
    expectTypeOf<Client['executions']['abort']>().toBeCallableWith('we-1');
  });

  it('files.upload takes Files, Blobs with a name and named bytes, not a Blob without a name', () => {
    expectTypeOf<Client['files']['upload']>().toBeCallableWith([new File(['a'], 'a.txt'), Object.assign(new Blob(['b']), { name: 'b.txt' }), { name: 'c.bin', data: new Uint8Array(1) }]);
    // @ts-expect-error -- the service records every file under a name: a bare Blob has none
    expectTypeOf<Client['files']['upload']>().toBeCallableWith([new Blob(['b'])]);
    expectTypeOf<Client['files']['upload']>().returns.toEqualTypeOf<Promise<UploadedFile[]>>();
  });

  it('copilot.generate({ query, locale?, canvasId? }) → { canvasId, workflowPlan }', () => {
    expectTypeOf<keyof Parameters<Client['copilot']['generate']>[0]>().toEqualTypeOf<'query' | 'locale' | 'canvasId'>();
    expectTypeOf<Parameters<Client['copilot']['generate']>[0]['canvasId']>().toEqualTypeOf<string | undefined>();
    expectTypeOf<Client['copilot']['generate']>().toBeCallableWith({ query: 'q' });
    expectTypeOf<Client['copilot']['generate']>().returns.toEqualTypeOf<Promise<GeneratedWorkflow>>();
    expectTypeOf<GeneratedWorkflow>().toEqualTypeOf<{ readonly canvasId: string; readonly workflowPlan: WorkflowPlan }>();
  });
});

describe('reactive runs', () => {
  it('run, watch and startRun', () => {
    expectTypeOf<Client['run']>().toBeCallableWith('c-1', { variables: { topic: 'tides' } }, { timeoutMs: 60_000 });
    expectTypeOf(client.run('c-1')).toEqualTypeOf<Observable<RunEvent>>();
    expectTypeOf<Client['watch']>().toBeCallableWith('we-1', { abortOnUnsubscribe: true });
    expectTypeOf(client.watch('we-1')).toEqualTypeOf<Observable<RunEvent>>();
    expectTypeOf(client.startRun('c-1', { variables: {} }, {})).toEqualTypeOf<RunHandle>();
  });

  it('a RunHandle has executionId, events, state, result, cancel() and detach()', () => {
    expectTypeOf<RunHandle['executionId']>().toEqualTypeOf<Promise<string>>();
    expectTypeOf<RunHandle['events']>().toEqualTypeOf<Observable<RunEvent>>();
    expectTypeOf<RunHandle['state']>().toEqualTypeOf<Observable<RunState>>();
    expectTypeOf<RunHandle['result']>().toEqualTypeOf<Promise<RunResult>>();
    expectTypeOf<RunHandle['cancel']>().toEqualTypeOf<() => Promise<RunResult>>();
    expectTypeOf<RunHandle['detach']>().toEqualTypeOf<() => void>();
  });

  it('RunOptions', () => {
    expectTypeOf<RunOptions['pollInterval']>().toEqualTypeOf<{ readonly minMs?: number; readonly maxMs?: number } | undefined>();
    expectTypeOf<RunOptions['timeoutMs']>().toEqualTypeOf<number | undefined>();
    expectTypeOf<RunOptions['output']>().toEqualTypeOf<'stream' | 'final' | undefined>();
    expectTypeOf<RunOptions['abortOnUnsubscribe']>().toEqualTypeOf<boolean | undefined>();
    expectTypeOf<RunOptions['failOnWorkflowError']>().toEqualTypeOf<boolean | undefined>();
    expectTypeOf<RunOptions['signal']>().toEqualTypeOf<AbortSignal | undefined>();
    expectTypeOf<RunOptions['idempotencyKey']>().toEqualTypeOf<string | undefined>();
    expectTypeOf<RunOptions['idempotencyTtlMs']>().toEqualTypeOf<number | undefined>();
  });
});

describe('run events and the result', () => {
  it('each event type has the fields of the table', () => {
    expectTypeOf<RunEventOf<'started'>>().toEqualTypeOf<{ readonly type: 'started'; readonly executionId: string; readonly canvasId?: string; readonly status: ExecutionStatus }>();
    expectTypeOf<RunEventOf<'status'>>().toEqualTypeOf<{ readonly type: 'status'; readonly executionId: string; readonly status: ExecutionStatus; readonly previous?: ExecutionStatus }>();
    expectTypeOf<RunEventOf<'node'>>().toEqualTypeOf<{
      readonly type: 'node';
      readonly executionId: string;
      readonly nodeId: string;
      readonly title?: string;
      readonly status: NodeStatus;
      readonly previous?: NodeStatus;
      readonly error?: NodeError;
    }>();
    expectTypeOf<RunEventOf<'message'>>().toEqualTypeOf<{
      readonly type: 'message';
      readonly executionId: string;
      readonly nodeId: string;
      readonly messageId: string;
      readonly role: 'ai' | 'tool';
      readonly delta: string;
      readonly reasoningDelta: string;
      readonly content: string;
      readonly reasoningContent: string;
      readonly replaced: boolean;
    }>();
    expectTypeOf<RunEventOf<'file'>>().toEqualTypeOf<{ readonly type: 'file'; readonly executionId: string; readonly file: OutputFile }>();
    expectTypeOf<OutputFile>().toEqualTypeOf<{ readonly name: string; readonly type: string; readonly size?: number; readonly nodeId?: string; readonly url?: string }>();
    expectTypeOf<RunEventOf<'finished'>>().toEqualTypeOf<{ readonly type: 'finished'; readonly executionId: string; readonly result: RunResult }>();
  });

  it('RunResult has executionId, canvasId?, status, endedBy, nodes, output, files and failedNodes', () => {
    expectTypeOf<RunResult['executionId']>().toEqualTypeOf<string>();
    expectTypeOf<RunResult['canvasId']>().toEqualTypeOf<string | undefined>();
    expectTypeOf<RunResult['status']>().toEqualTypeOf<'finish' | 'failed'>();
    expectTypeOf<RunResult['endedBy']>().toEqualTypeOf<'finish' | 'failed' | 'aborted' | 'timeout'>();
    expectTypeOf<RunResult>().toHaveProperty('nodes');
    expectTypeOf<RunResult>().toHaveProperty('output');
    expectTypeOf<RunResult['files']>().toEqualTypeOf<readonly OutputFile[]>();
    expectTypeOf<RunResult>().toHaveProperty('failedNodes');
  });
});

describe('helpers', () => {
  it('ofType, toRunState, runStore, createRunLimiter, runResult and shareRun', () => {
    expectTypeOf(run$.pipe(ofType('node', 'file'))).toEqualTypeOf<Observable<RunEventOf<'node' | 'file'>>>();
    expectTypeOf(run$.pipe(toRunState())).toEqualTypeOf<Observable<RunState>>();
    expectTypeOf<RunState['progress']>().toHaveProperty('done').toEqualTypeOf<number>();
    expectTypeOf<RunState['progress']>().toHaveProperty('total').toEqualTypeOf<number>();
    expectTypeOf(runStore(run$)).toHaveProperty('subscribe').toBeFunction();
    expectTypeOf(runStore(run$)).toHaveProperty('getSnapshot').returns.toEqualTypeOf<RunState | undefined>();
    expectTypeOf<Parameters<typeof createRunLimiter>[0]['perKey']>().toEqualTypeOf<number>();
    expectTypeOf<Parameters<typeof createRunLimiter>[0]['mode']>().toEqualTypeOf<'queue' | 'reject' | undefined>();
    expectTypeOf(runResult(run$)).toEqualTypeOf<Promise<RunResult>>();
    expectTypeOf(run$.pipe(shareRun())).toEqualTypeOf<Observable<RunEvent>>();
  });
});

describe('errors', () => {
  it('every class extends FlowstreamError, has a code, and its guard narrows to it', () => {
    const error: unknown = undefined;
    expectTypeOf<FlowstreamError['code']>().toEqualTypeOf<string>();
    expectTypeOf<FlowstreamError['executionId']>().toEqualTypeOf<string | undefined>();
    if (isFlowstreamError(error)) expectTypeOf(error).toEqualTypeOf<FlowstreamError>();
    if (isApiError(error)) expectTypeOf(error).toEqualTypeOf<ApiError>();
    if (isAuthenticationError(error)) expectTypeOf(error).toEqualTypeOf<AuthenticationError>();
    if (isPermissionError(error)) expectTypeOf(error).toEqualTypeOf<PermissionError>();
    if (isNotFoundError(error)) expectTypeOf(error).toEqualTypeOf<NotFoundError>();
    if (isConflictError(error)) expectTypeOf(error).toEqualTypeOf<ConflictError>();
    if (isRateLimitError(error)) expectTypeOf(error).toEqualTypeOf<RateLimitError>();
    if (isInvalidRequestError(error)) expectTypeOf(error).toEqualTypeOf<InvalidRequestError>();
    if (isPayloadTooLargeError(error)) expectTypeOf(error).toEqualTypeOf<PayloadTooLargeError>();
    if (isServerError(error)) expectTypeOf(error).toEqualTypeOf<ServerError>();
    if (isConcurrencyLimitError(error)) expectTypeOf(error).toEqualTypeOf<ConcurrencyLimitError>();
    if (isStepInDoubtError(error)) expectTypeOf(error).toEqualTypeOf<StepInDoubtError>();
    if (isStartInDoubtError(error)) expectTypeOf(error).toEqualTypeOf<StartInDoubtError>();
    if (isNetworkError(error)) expectTypeOf(error).toEqualTypeOf<NetworkError>();
    if (isTimeoutError(error)) expectTypeOf(error).toEqualTypeOf<TimeoutError>();
    if (isResponseValidationError(error)) expectTypeOf(error).toEqualTypeOf<ResponseValidationError>();
    if (isWorkflowFailedError(error)) expectTypeOf(error).toEqualTypeOf<WorkflowFailedError>();
    if (isRunTimeoutError(error)) expectTypeOf(error).toEqualTypeOf<RunTimeoutError>();
    if (isRelayError(error)) expectTypeOf(error).toEqualTypeOf<RelayError>();
    for (const kind of [ApiError, ConcurrencyLimitError, StepInDoubtError, StartInDoubtError, NetworkError, TimeoutError, ResponseValidationError, WorkflowFailedError, RunTimeoutError, RelayError]) {
      expectTypeOf(kind.prototype).toExtend<FlowstreamError>();
    }
    for (const kind of [AuthenticationError, PermissionError, NotFoundError, ConflictError, RateLimitError, InvalidRequestError, PayloadTooLargeError, ServerError]) {
      expectTypeOf(kind.prototype).toExtend<ApiError>();
    }
  });

  it('carry the fields the contract names', () => {
    expectTypeOf<ApiError['status']>().toEqualTypeOf<number>();
    expectTypeOf<ApiError['errCode']>().toEqualTypeOf<string | undefined>();
    expectTypeOf<ApiError['errMsg']>().toEqualTypeOf<string | undefined>();
    expectTypeOf<ApiError['traceId']>().toEqualTypeOf<string | undefined>();
    expectTypeOf<InvalidRequestError['modelResponse']>().toEqualTypeOf<string | undefined>();
    expectTypeOf<RateLimitError['scope']>().toEqualTypeOf<'minute' | 'day' | undefined>();
    expectTypeOf<RateLimitError['resetAt']>().toEqualTypeOf<number | undefined>();
    expectTypeOf<ResponseValidationError>().toHaveProperty('issues');
    expectTypeOf<WorkflowFailedError['result']>().toEqualTypeOf<RunResult>();
    expectTypeOf<RelayError['status']>().toEqualTypeOf<number>();
  });
});

describe('pipelines', () => {
  it('thenRun, runEach and runPipeline with onStepFailure, per-step retry, resume and inDoubt', () => {
    expectTypeOf(thenRun).toBeFunction();
    expectTypeOf(runEach).toBeFunction();
    expectTypeOf(runPipeline).parameter(2).toEqualTypeOf<PipelineOptions | undefined>();
    expectTypeOf<PipelineOptions['inDoubt']>().toEqualTypeOf<'fail' | 'start-again' | undefined>();
    expectTypeOf<PipelineOptions['resume']>().toEqualTypeOf<PipelineCheckpoint | undefined>();
    expectTypeOf<PipelineOptions>().toHaveProperty('onStepFailure');
    expectTypeOf<PipelineStep<'step'>['retry']>().toEqualTypeOf<number | undefined>();
  });
});

describe('scale-out subpaths', () => {
  it('flowstream/redis: createRedisBudget, createRedisRunHub, createRedisIdempotencyStore', () => {
    expectTypeOf<'redis' | 'account' | 'requestsPerMinute' | 'requestsPerDay' | 'safetyMargin' | 'scheduler'>().toExtend<keyof RedisBudgetOptions>();
    expectTypeOf<RedisBudgetOptions['scheduler']>().toEqualTypeOf<SchedulerLike | undefined>();
    expectTypeOf(createRedisBudget).returns.toHaveProperty('close').returns.toEqualTypeOf<Promise<void>>();
    expectTypeOf<'redis' | 'account'>().toExtend<keyof Parameters<typeof createRedisRunHub>[0]>();
    expectTypeOf(createRedisRunHub).returns.toExtend<RunHub>();
    expectTypeOf<'redis' | 'account'>().toExtend<keyof Parameters<typeof createRedisIdempotencyStore>[0]>();
    expectTypeOf<CheckpointStore>().not.toBeNever();
  });

  it('flowstream/bullmq: createPipelineQueue and createPipelineWorker', () => {
    expectTypeOf<'connection'>().toExtend<keyof Parameters<typeof createPipelineQueue>[0]>();
    expectTypeOf(createPipelineQueue).returns.toEqualTypeOf<PipelineQueue>();
    expectTypeOf<PipelineQueue['start']>().toBeCallableWith('nightly', { topic: 'tides' }, { pipelineId: 'p-1' });
    expectTypeOf<NonNullable<Parameters<PipelineQueue['start']>[2]>['pipelineId']>().toEqualTypeOf<string | undefined>();
    expectTypeOf<PipelineQueue['cancel']>().toBeCallableWith('p-1');
    expectTypeOf<PipelineQueue['events$']>().toBeCallableWith('p-1');
    expectTypeOf<Pick<PipelineWorkerOptions, 'connection' | 'client' | 'definitions' | 'concurrency'>>().not.toBeNever();
    expectTypeOf(createPipelineWorker).parameter(0).toEqualTypeOf<PipelineWorkerOptions>();
  });
});

describe('relay, connectRun and the hub', () => {
  it('createRunTokens, createRunRelay, toNodeListener', () => {
    expectTypeOf<'secret'>().toExtend<keyof Parameters<typeof createRunTokens>[0]>();
    expectTypeOf(createRunTokens).returns.toEqualTypeOf<RunTokens>();
    expectTypeOf<keyof Parameters<RunTokens['sign']>[0]>().toEqualTypeOf<'executionId' | 'scope' | 'ttlMs'>();
    expectTypeOf<RunTokens['sign']>().toBeCallableWith({ executionId: 'we-1', scope: ['read'], ttlMs: 3_600_000 });
    expectTypeOf<RunTokens['sign']>().returns.toEqualTypeOf<Promise<string>>();
    expectTypeOf<'client' | 'tokens' | 'basePath' | 'cors' | 'start' | 'keepFinishedMs' | 'keepIdleMs' | 'hub'>().toExtend<keyof RunRelayOptions>();
    expectTypeOf<{ client: Client; tokens: RunTokens }>().toExtend<RunRelayOptions>();
    expectTypeOf<RunRelayOptions['hub']>().toEqualTypeOf<RunHub | undefined>();
    expectTypeOf(createRunRelay).returns.toEqualTypeOf<RunRelay>();
    expectTypeOf<RunRelay['fetch']>().toEqualTypeOf<(request: Request) => Promise<Response>>();
    expectTypeOf(toNodeListener).toBeCallableWith({} as RunRelay);
  });

  it('connectRun(url, { token, fetch?, pauseWhenHidden? }) and createRunHub()', () => {
    expectTypeOf(connectRun).toBeCallableWith('https://app.example/flowstream/executions/we-1/events', { token: 't' });
    expectTypeOf<'token' | 'fetch' | 'pauseWhenHidden'>().toExtend<keyof Parameters<typeof connectRun>[1]>();
    expectTypeOf<Parameters<typeof connectRun>[1]['pauseWhenHidden']>().toEqualTypeOf<boolean | undefined>();
    expectTypeOf(connectRun).returns.toEqualTypeOf<Observable<RunEvent>>();
    expectTypeOf(createRunHub).returns.toEqualTypeOf<RunHub>();
    expectTypeOf<ClientOptions['hub']>().toEqualTypeOf<RunHub | undefined>();
  });

  it('flowstream/react: useRun(source) and useStartRun', () => {
    expectTypeOf(useRun).toBeCallableWith(run$);
    expectTypeOf(useRun).returns.toEqualTypeOf<RunState | undefined>();
    expectTypeOf(useStartRun).toBeFunction();
  });
});

describe('telemetry, typed workflows and the emulator', () => {
  it('flowstream/otel: a telemetry hook from tracerProvider?, meterProvider?, propagate?, given to createClient', () => {
    expectTypeOf<TelemetryOptions>().toHaveProperty('tracerProvider');
    expectTypeOf<TelemetryOptions>().toHaveProperty('meterProvider');
    expectTypeOf<TelemetryOptions['propagate']>().toEqualTypeOf<boolean | undefined>();
    expectTypeOf<ReturnType<typeof createTelemetry>>().toExtend<NonNullable<ClientOptions['telemetry']>>();
  });

  it('planSchema(plan) and client.workflows.schema(canvasId)', () => {
    expectTypeOf(planSchema).toBeCallableWith({ variables: [] });
    expectTypeOf<Client['workflows']['schema']>().returns.resolves.toEqualTypeOf<ReturnType<typeof planSchema>>();
  });

  it('flowstream/emulator: createEmulator(options?) → { url, fetch, apiKey, close(), scheduler, … }', () => {
    expectTypeOf(createEmulator).toBeCallableWith();
    expectTypeOf(createEmulator).returns.toEqualTypeOf<Promise<Emulator>>();
    expectTypeOf<Emulator['url']>().toEqualTypeOf<string>();
    expectTypeOf<Emulator['apiKey']>().toEqualTypeOf<string>();
    expectTypeOf<Emulator['scheduler']>().toEqualTypeOf<SchedulerLike>();
    expectTypeOf<Emulator['close']>().toEqualTypeOf<() => Promise<void>>();
    expectTypeOf<{ fetch: Emulator['fetch'] }>().toExtend<Pick<ClientOptions, 'fetch'>>();
    expectTypeOf<EmulatorOptions['profile']>().toEqualTypeOf<'service' | 'spec' | undefined>();
    expectTypeOf<EmulatorOptions['rateLimit']>().toEqualTypeOf<{ readonly perMinute?: number; readonly perDay?: number } | false | undefined>();
    expectTypeOf<'profile' | 'speed' | 'rateLimit' | 'workflows' | 'port' | 'apiKey'>().toExtend<keyof EmulatorOptions>();
    expectTypeOf<EmulatorOptions['speed']>().toEqualTypeOf<number | undefined>();
  });
});
