import { setMaxListeners } from 'node:events';
import type { AppContext } from './app/context.js';
import { createApp } from './app/create-app.js';
import type { SchedulerLike } from 'rxjs';
import type { Clock } from './clock.js';
import { clockScheduler } from './scheduler.js';
import type { ExecutionView } from './execution-view.js';
import { viewExecution } from './execution-view.js';
import type { EmulatorOptions, Profile } from './options.js';
import { resolveOptions } from './options.js';
import type { FetchFunction } from './server/in-process-fetch.js';
import { inProcessFetch } from './server/in-process-fetch.js';
import { LOOPBACK_HOST, listenOnLoopback } from './server/node-server.js';
import { ExecutionStore } from './state/execution-store.js';
import type { FaultHandle, FaultSpec } from './state/faults.js';
import { FaultRegistry } from './state/faults.js';
import { IpThrottler } from './state/ip-throttler.js';
import { RateLimiter } from './state/rate-limiter.js';
import type { RequestFilter, RequestRecord } from './state/request-log.js';
import { RequestLog } from './state/request-log.js';
import { RunDebounce } from './state/run-debounce.js';
import { UploadStore } from './state/upload-store.js';
import type { StoredWorkflow } from './state/workflow-registry.js';
import { WorkflowRegistry } from './state/workflow-registry.js';
import type { WorkflowDefinition } from './workflows/definition.js';
import { parseWorkflowDefinition } from './workflows/parse-definition.js';
import { SAMPLE_WORKFLOWS } from './workflows/samples.js';

/** A running emulator of the Workflow API. */
export interface Emulator {
  /** The API base, `http://127.0.0.1:<port>/v1` (loopback only; no port when `listen: false`). */
  readonly url: string;
  /** The same app in-process, with the signature of the global `fetch`; takes absolute URLs under `url`. */
  readonly fetch: FetchFunction;
  /** The account's API key, for `Authorization: Bearer <apiKey>`. */
  readonly apiKey: string;
  readonly profile: Profile;
  /** Emulator time and its speed. */
  readonly clock: Clock;
  /**
   * An RxJS scheduler on the emulator's clock: a client given it (`createClient({ …, scheduler:
   * emulator.scheduler })`) lives on emulator time end to end — at `speed: 50` a run's 60 s
   * `timeoutMs` passes in 1.2 s of real time; on a manual clock, as `clock.advance` moves it.
   */
  readonly scheduler: SchedulerLike;
  readonly workflows: WorkflowControls;
  readonly executions: ExecutionControls;
  readonly requests: RequestControls;
  readonly faults: FaultControls;
  /** Closes the server and every connection, and cuts injected latency short. Idempotent. */
  close(): Promise<void>;
}

/** The canvases of the account. */
export interface WorkflowControls {
  /** Validates and adds a workflow; returns its canvasId. Throws `WorkflowDefinitionError` for a bad one. */
  add(definition: WorkflowDefinition): string;
  list(): StoredWorkflow[];
  get(canvasId: string): StoredWorkflow | undefined;
  /** True when there was such a workflow. Its executions go on. */
  remove(canvasId: string): boolean;
}

/** Executions, seen at the current emulator time. */
export interface ExecutionControls {
  list(): ExecutionView[];
  get(executionId: string): ExecutionView | undefined;
}

/** The log of every request received. */
export interface RequestControls {
  list(filter?: RequestFilter): RequestRecord[];
  clear(): void;
}

/** Injected faults, switchable at runtime. */
export interface FaultControls {
  add(spec: FaultSpec): FaultHandle;
  list(): FaultHandle[];
  remove(id: string): boolean;
  clear(): void;
}

/**
 * Starts an emulator of the Workflow API: real HTTP on 127.0.0.1 and the same app in-process.
 *
 * @example
 * const emulator = await createEmulator({ speed: 50 });
 * const response = await fetch(`${emulator.url}/openapi/workflow/c-sample-linear/run`, {
 *   method: 'POST',
 *   headers: { Authorization: `Bearer ${emulator.apiKey}`, 'Content-Type': 'application/json' },
 *   body: '{}',
 * });
 * // { success: true, data: { executionId: 'we-…', status: 'running' } }
 * await emulator.close();
 */
export async function createEmulator(options: EmulatorOptions = {}): Promise<Emulator> {
  const resolved = resolveOptions(options);
  const { clock } = resolved;
  const workflows = new WorkflowRegistry();
  const definitions = [...(resolved.samples ? SAMPLE_WORKFLOWS : []), ...resolved.workflows];
  // Parse all before serving: a bad definition fails creation and leaves nothing open.
  for (const definition of definitions) workflows.add(parseWorkflowDefinition(definition), clock.now());

  const closing = new AbortController();
  // Every request held by a latency fault listens for the close: as many at once as clients send.
  setMaxListeners(0, closing.signal);
  // The port, hence the URL that output file links use, is known only once the server listens.
  const server = resolved.listen ? await listenOnLoopback(resolved.port) : undefined;
  const baseUrl = server === undefined ? `http://${LOOPBACK_HOST}/v1` : `http://${LOOPBACK_HOST}:${String(server.port)}/v1`;
  const executions = new ExecutionStore(resolved.profile === 'service' ? 'poll-tick' : 'instant');
  const requests = new RequestLog();
  const faults = new FaultRegistry();
  const context: AppContext = {
    profile: resolved.profile,
    clock,
    baseUrl,
    apiKey: resolved.apiKey,
    cors: resolved.cors,
    workflows,
    executions,
    uploads: new UploadStore(resolved.apiKey),
    rateLimiter: resolved.rateLimit === undefined ? undefined : new RateLimiter(resolved.rateLimit),
    // service.md §2.1: the production service's per-IP throttler; the spec says nothing of it.
    throttler: resolved.rateLimit === undefined || resolved.profile === 'spec' ? undefined : new IpThrottler(),
    debounce: new RunDebounce(),
    requests,
    faults,
    closing: closing.signal,
  };
  const app = createApp(context);
  server?.serve(app);

  return {
    url: baseUrl,
    fetch: inProcessFetch(app, baseUrl, () => closing.signal.aborted),
    apiKey: resolved.apiKey,
    profile: resolved.profile,
    clock,
    scheduler: clockScheduler(clock),
    workflows: {
      add: (definition) => workflows.add(parseWorkflowDefinition(definition), clock.now()).workflow.canvasId,
      list: () => workflows.list(),
      get: (canvasId) => workflows.get(canvasId),
      remove: (canvasId) => workflows.remove(canvasId),
    },
    executions: {
      list: () => executions.list().map((record) => viewExecution(record, clock.now())),
      get: (executionId) => {
        const record = executions.get(executionId);
        return record === undefined ? undefined : viewExecution(record, clock.now());
      },
    },
    requests: { list: (filter) => requests.list(filter), clear: () => { requests.clear(); } },
    faults: {
      add: (spec) => faults.add(spec),
      list: () => faults.list(),
      remove: (id) => faults.remove(id),
      clear: () => { faults.clear(); },
    },
    close: async () => {
      if (closing.signal.aborted) return;
      closing.abort();
      await server?.close();
    },
  };
}
