import { asyncScheduler, filter, firstValueFrom, type Observable, type SchedulerLike, type Subscription, timer } from 'rxjs';
import type { Client } from '../client.js';
import type { Variables } from '../domain/model.js';
import type { RunEvent } from '../runs/events.js';
import type { RunHub } from '../runs/run-hub.js';
import { isNotFoundError } from '../errors/api-errors.js';
import { readResult } from '../runs/execution-view.js';
import { isStartInDoubtError } from '../errors/start-in-doubt-error.js';
import { InvalidArgumentError, isInvalidArgumentError, MAX_TIMER_MS, schedulerArgument, timerDelay } from '../errors/validation-errors.js';
import { type ErrorBody, errorBody } from './error-body.js';
import { eventStream } from './event-stream.js';
import { FollowedExecution } from './followed-execution.js';
import { normalizedBasePath, routeOf } from './relay-routes.js';
import { isRunTokenError } from './run-token-error.js';
import { checkedTokenTerms, type RunScope, type RunTokens, type RunTokenScope } from './run-tokens.js';

/**
 * What a relay uses of a client: `watch` to follow an execution, `executions.start`, `.status` and `.output`, `run`
 * for a start with an idempotency key, `abortThroughOutage` for a viewer's cancel (and a started run left
 * without a token), and its `hub` when it has one.
 */
export type RelayClient = Pick<Client, 'watch' | 'run' | 'abortThroughOutage'> & { readonly executions: Pick<Client['executions'], 'start' | 'status' | 'output'>; readonly hub?: RunHub };

/** Which page origins may call the relay from a browser (CORS): a list, or `'*'` for any. */
export interface RelayCors {
  readonly origins: readonly string[] | '*';
  /** How long a browser may keep a preflight's answer, in seconds (default 600). */
  readonly maxAgeSeconds?: number;
}

/**
 * What `POST {basePath}/runs` starts, as the `start` hook decides from the request: a workflow and its
 * variables, and the token handed back (`scope` default `['read', 'cancel']`, `ttlMs` the relay's
 * `tokenTtlMs`). The hook answers a `Response` itself to refuse (a 401 for a user not signed in).
 *
 * @example
 * ```ts
 * // A browser may send its POST again when the answer was lost: the same key starts nothing new.
 * const start = async (request: Request): Promise<StartDecision | Response> => {
 *   const user = await signedInUser(request);
 *   if (user === undefined) return new Response(null, { status: 401 });
 *   const key = request.headers.get('idempotency-key');
 *   return { canvasId: 'c-123', variables: await request.json(), ...(key === null ? {} : { idempotencyKey: `${user.id}:${key}` }) };
 * };
 * ```
 */
export interface StartDecision {
  readonly canvasId: string;
  readonly variables?: Variables;
  readonly scope?: RunTokenScope;
  readonly ttlMs?: number;
  /**
   * Makes the start idempotent (the client's `RunOptions.idempotencyKey`, kept in the client's
   * idempotency store): a request that decides a key already used within `idempotencyTtlMs` is
   * answered as the first one was — that execution's id, with a new token — and starts nothing. Decide
   * keys per user (as in the example): whoever presents a key is answered its execution. A key whose
   * start may have reached the service without an answer is refused with 409 `START_IN_DOUBT`.
   */
  readonly idempotencyKey?: string;
  /** How long `idempotencyKey` is remembered, in ms (default a day). */
  readonly idempotencyTtlMs?: number;
}

/** Options of {@link createRunRelay}. */
export interface RunRelayOptions {
  /** The client that follows, starts and aborts executions (it holds the API key; viewers never see it). */
  readonly client: RelayClient;
  /** Checks the tokens viewers present, and signs those `POST /runs` answers. */
  readonly tokens: RunTokens;
  /** Where the routes live, e.g. `/flowstream` (default: the root). */
  readonly basePath?: string;
  /** Browser origins allowed to call the relay across origins; none by default (same origin only). */
  readonly cors?: RelayCors;
  /** Enables `POST {basePath}/runs`: decides from the request what to start, or refuses with a Response. */
  readonly start?: (request: Request) => StartDecision | Response | Promise<StartDecision | Response>;
  /** How long a finished execution's events stay for late and resuming viewers, in ms (default 60 s; 0 forgets at once). */
  readonly keepFinishedMs?: number;
  /**
   * How long the relay goes on following an unfinished execution that no viewer watches any more, in ms
   * (default 60 s; 0: it stops as soon as the last viewer leaves). A viewer that drops and comes back
   * within it (the usual reconnection) resumes where it was; after it, the relay stops reading the
   * execution's status and output for nobody, and a viewer that comes back later is followed again: it
   * gets the state so far (a `snapshot` event), then the live events. The execution is never aborted.
   *
   * @example
   * ```ts
   * // Viewers on phones that sleep for minutes: keep following for 5 minutes without one.
   * const relay = createRunRelay({ client, tokens, keepIdleMs: 300_000 });
   * ```
   */
  readonly keepIdleMs?: number;
  /** How often a quiet stream gets a heartbeat comment, in ms (default 15 s). */
  readonly heartbeatMs?: number;
  /** The reconnection delay the stream tells viewers (`retry:`), in ms (default 2 s). */
  readonly retryMs?: number;
  /**
   * A viewer from the start of an execution with more events than this gets one `snapshot` event (the
   * `RunState` so far) standing for them, then the events after it (default 1,000; 0: always).
   */
  readonly snapshotAfter?: number;
  /** How long the tokens `POST /runs` answers live, in ms (default one hour). */
  readonly tokenTtlMs?: number;
  /**
   * Where the relay follows executions, sharing each one's poll with every other follower in the hub
   * (watches and runs of clients given the same hub). Default: the client's hub, so a `client.watch`
   * or `client.run` of an execution in the same process and the relay's viewers cost one poll stream.
   */
  readonly hub?: RunHub;
  /** The relay's timers (heartbeats, keeping finished executions); give it the client's. Default real time. */
  readonly scheduler?: SchedulerLike;
}

/** A run relay: a `fetch`-style handler for any server runtime, and `close()`. */
export interface RunRelay {
  /** Answers one request to the relay's routes (404 for any other path). */
  fetch(request: Request): Promise<Response>;
  /** Stops following every execution (they run on), ends every stream, and answers 503 from then on. */
  close(): void;
}

/** The fewest latest events a follow keeps for viewers resuming after an id (at most twice as many are held). */
const KEEP_EVENTS = 1_000;

const DEFAULTS = {
  keepFinishedMs: 60_000,
  keepIdleMs: 60_000,
  heartbeatMs: 15_000,
  retryMs: 2_000,
  tokenTtlMs: 3_600_000,
  snapshotAfter: 1_000,
  corsMaxAgeSeconds: 600,
} as const;

/**
 * Names the follow an event stream's numbers belong to: sent with the stream, and back by a viewer
 * resuming (`connectRun` does), so a number from a restarted relay's earlier numbering is not taken for
 * one of the new.
 */
const FOLLOW_HEADER = 'flowstream-follow';

/**
 * Says how often a quiet event stream gets a heartbeat, in ms: `connectRun` takes a stream silent for
 * several of them for a relay that froze or a connection that broke without a word, and reconnects.
 */
const HEARTBEAT_HEADER = 'flowstream-heartbeat';

const STARTER_SCOPE: RunTokenScope = ['read', 'cancel'];

/**
 * A relay between a UI and the service: viewers follow an execution through it with a token instead
 * of the API key. However many viewers an execution has, the relay follows it once (one poll stream
 * through the client's budget, shared through the `hub` with the client's own watches and runs of
 * it); viewers leaving never abort it, and one that reconnects resumes after
 * the last event it got. An execution no viewer has watched for `keepIdleMs` is no longer followed
 * (its poll stops) until a viewer comes back. Answers `Request`s with `Response`s, so it runs on Node (`toNodeListener`),
 * Deno, Bun and workers.
 *
 * Routes: `GET {basePath}/executions/:id/events` (server-sent events), `POST {basePath}/executions/:id/cancel`
 * (a token with scope `cancel`; answers the `RunResult`), and `POST {basePath}/runs` with a `start` hook.
 *
 * @example
 * ```ts
 * const tokens = createRunTokens({ secret: process.env.RELAY_SECRET! });
 * const relay = createRunRelay({ client, tokens, basePath: '/flowstream' });
 * http.createServer(toNodeListener(relay)).listen(8080);
 * // in a route of the app, once the user may see the run:
 * const token = await tokens.sign({ executionId, scope: ['read'], ttlMs: 3_600_000 });
 * ```
 */
export function createRunRelay(options: RunRelayOptions): RunRelay {
  const settings = relaySettings(options);
  const { client, tokens, scheduler } = settings;
  const follows = new Map<string, FollowedExecution>();
  const forgetting = new Map<string, Subscription>();
  /** The follows no one uses, each until it is let go (`keepIdleMs`). */
  const idle = new Map<FollowedExecution, Subscription>();
  let closed = false;

  const stopIdling = (follow: FollowedExecution): void => {
    idle.get(follow)?.unsubscribe();
    idle.delete(follow);
  };

  /** Stops following an execution no viewer watches: its poll stops (unless others in the hub follow it); the next viewer follows it afresh. */
  const letGo = (follow: FollowedExecution): void => {
    if (follows.get(follow.executionId) === follow) follows.delete(follow.executionId);
    follow.close();
  };

  const hooks = {
    // A follow keeps at least the events a late viewer from the start would be given (`snapshotAfter`),
    // and never fewer than KEEP_EVENTS for viewers resuming after a short drop.
    keepEvents: Math.max(settings.snapshotAfter, KEEP_EVENTS),
    // Sent until the service takes it, as a run's own abort is, whatever becomes of the request that asked.
    abort: (executionId: string) => client.abortThroughOutage(executionId),
    // Every process's viewers are told the abort ended it, not only this one's: the hub carries it (not waited for).
    aborting: (executionId: string) => {
      settings.hub?.aborting?.(executionId);
    },
    // A person waits on the cancel: the read goes ahead of the runs' polls.
    status: async (executionId: string) => (await client.executions.status(executionId, { priority: 'interactive' })).status,
    result: async (executionId: string) => {
      const [snapshot, output] = await Promise.all([client.executions.status(executionId, { priority: 'interactive' }), client.executions.output(executionId, { priority: 'interactive' })]);
      return readResult(snapshot, output);
    },
    used: stopIdling,
    unused: (follow: FollowedExecution) => {
      if (closed || follow.end !== undefined) return;
      if (settings.keepIdleMs === 0) {
        letGo(follow);
        return;
      }
      idle.set(
        follow,
        timer(settings.keepIdleMs, scheduler).subscribe(() => {
          idle.delete(follow);
          letGo(follow);
        }),
      );
    },
    ended: (follow: FollowedExecution) => {
      stopIdling(follow);
      if (closed) return;
      // A follow that failed is forgotten at once (the next viewer follows afresh); a finished one is kept for late viewers.
      if (follow.end?.kind !== 'finished' || settings.keepFinishedMs === 0) {
        follows.delete(follow.executionId);
        return;
      }
      forgetting.set(
        follow.executionId,
        timer(settings.keepFinishedMs, scheduler).subscribe(() => {
          forgetting.delete(follow.executionId);
          if (follows.get(follow.executionId) === follow) follows.delete(follow.executionId);
        }),
      );
    },
  };

  function followOf(executionId: string): FollowedExecution {
    const known = follows.get(executionId);
    if (known !== undefined) return known;
    const watch = (): Observable<RunEvent> => client.watch(executionId, { abortOnUnsubscribe: false, failOnWorkflowError: false });
    // The client's own hub is followed through its `watch`; another hub shares the client's watch with its followers.
    const events = settings.hub === undefined || settings.hub === client.hub ? watch() : settings.hub.follow(executionId, watch);
    const follow = new FollowedExecution(executionId, events, hooks);
    if (follow.end?.kind !== 'error') follows.set(executionId, follow);
    return follow;
  }

  /**
   * Answers with `use` of the follow of an execution that exists, or says why there is none. The
   * request is one of the follow's users until answered, so it is not let go for idleness meanwhile.
   */
  async function withFollow(executionId: string, use: (follow: FollowedExecution) => Response | Promise<Response>): Promise<Response> {
    const follow = followOf(executionId);
    const release = follow.use();
    try {
      const { events, end } = await follow.ready();
      if (events > 0 || end === undefined || end.kind !== 'error') return await use(follow);
      if (isNotFoundError(end.error)) return notFound(executionId);
      return failure(502, errorBody(end.error));
    } finally {
      release();
    }
  }

  async function events(request: Request, url: URL, executionId: string): Promise<Response> {
    const refused = await authorized(request, url, executionId, 'read');
    if (refused !== undefined) return refused;
    const after = resumePoint(request, url);
    if (after === undefined) return failure(400, { error: 'BAD_REQUEST', message: 'Last-Event-ID and after must be a whole number' });
    const followId = request.headers.get(FOLLOW_HEADER) ?? url.searchParams.get('follow') ?? undefined;
    return withFollow(
      executionId,
      (follow) =>
        new Response(eventStream(follow, { afterSeq: after, followId }, settings), {
          status: 200,
          headers: { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache, no-transform', 'x-accel-buffering': 'no', [FOLLOW_HEADER]: follow.followId, [HEARTBEAT_HEADER]: String(settings.heartbeatMs) },
        }),
    );
  }

  async function cancel(request: Request, url: URL, executionId: string): Promise<Response> {
    const refused = await authorized(request, url, executionId, 'cancel');
    if (refused !== undefined) return refused;
    // Not after the follow's first event, as a viewer's stream is: the abort must not wait for a hub or
    // a service that is away (FollowedExecution.cancel reads the status apart from the follow).
    const follow = followOf(executionId);
    const release = follow.use();
    try {
      return json(200, await follow.cancel());
    } catch (error) {
      return isNotFoundError(error) ? notFound(executionId) : failure(502, errorBody(error));
    } finally {
      release();
    }
  }

  async function start(request: Request): Promise<Response> {
    const hook = settings.start;
    if (hook === undefined) return failure(404, { error: 'NOT_FOUND', message: 'This relay starts no runs' });
    const decision = await hook(request);
    if (decision instanceof Response) return decision;
    let executionId: string | undefined;
    try {
      // Everything the token needs is checked before the start leaves: a start answered with no token
      // would leave an execution running that no viewer can follow or cancel.
      const terms = checkedTokenTerms(decision.scope ?? STARTER_SCOPE, decision.ttlMs ?? settings.tokenTtlMs);
      executionId = await startExecution(client, decision);
      const token = await tokens.sign({ executionId, ...terms });
      return json(201, { executionId, token });
    } catch (error) {
      // Its token could not be made: the execution no one can follow is aborted rather than left running —
      // unless a key started it, which the POST sent again follows (and gets a token then). The answer
      // does not wait: the abort goes on through an outage, and one given up is logged by the client.
      if (executionId !== undefined && decision.idempotencyKey === undefined) void client.abortThroughOutage(executionId);
      return failure(isInvalidArgumentError(error) ? 400 : isStartInDoubtError(error) ? 409 : 502, errorBody(error));
    }
  }

  /** `undefined` when the request's token allows `scope` on `executionId`; else the 401 or 403. */
  async function authorized(request: Request, url: URL, executionId: string, scope: RunScope): Promise<Response | undefined> {
    const token = tokenOf(request, url);
    if (token === undefined) return failure(401, { error: 'UNAUTHORIZED', message: 'A run token is required (Authorization: Bearer <token> or ?token=)' });
    try {
      await tokens.verify(token, { executionId, scope });
      return undefined;
    } catch (error) {
      if (isRunTokenError(error)) return failure(403, errorBody(error));
      throw error;
    }
  }

  async function answer(request: Request): Promise<Response> {
    if (closed) return failure(503, { error: 'RELAY_CLOSED', message: 'The relay is closed' });
    const url = new URL(request.url);
    const route = routeOf(request.method, url.pathname, settings.basePath);
    switch (route.kind) {
      case 'events':
        return events(request, url, route.executionId);
      case 'cancel':
        return cancel(request, url, route.executionId);
      case 'start':
        return start(request);
      case 'preflight':
        return new Response(null, { status: 204, headers: preflightHeaders(settings.cors) });
      case 'method-not-allowed':
        return failure(405, { error: 'METHOD_NOT_ALLOWED', message: `Use ${route.allow}` }, { allow: route.allow });
      case 'not-found':
        return failure(404, { error: 'NOT_FOUND', message: 'No such route' });
      default:
        return assertNever(route);
    }
  }

  return {
    async fetch(request) {
      let response: Response;
      try {
        response = await answer(request);
      } catch (error) {
        response = failure(500, errorBody(error));
      }
      return withCors(response, request.headers.get('origin'), settings.cors);
    },
    close() {
      closed = true;
      for (const subscription of forgetting.values()) subscription.unsubscribe();
      forgetting.clear();
      for (const subscription of idle.values()) subscription.unsubscribe();
      idle.clear();
      for (const follow of follows.values()) follow.close();
      follows.clear();
    },
  };
}

interface RelaySettings {
  readonly client: RelayClient;
  readonly tokens: RunTokens;
  readonly basePath: string;
  readonly cors: RelayCors | undefined;
  readonly start: RunRelayOptions['start'];
  readonly keepFinishedMs: number;
  readonly keepIdleMs: number;
  readonly heartbeatMs: number;
  readonly retryMs: number;
  readonly tokenTtlMs: number;
  readonly snapshotAfter: number;
  readonly hub: RunHub | undefined;
  readonly scheduler: SchedulerLike;
}

function relaySettings(options: RunRelayOptions): RelaySettings {
  const given: unknown = options;
  if (typeof given !== 'object' || given === null) throw new InvalidArgumentError('options', 'must be an object with at least client and tokens');
  const client: unknown = options.client;
  if (typeof client !== 'object' || client === null || typeof (client as Partial<RelayClient>).watch !== 'function') throw new InvalidArgumentError('client', 'must be a flowstream client (createClient)');
  const tokens: unknown = options.tokens;
  if (typeof tokens !== 'object' || tokens === null || typeof (tokens as Partial<RunTokens>).sign !== 'function' || typeof (tokens as Partial<RunTokens>).verify !== 'function') {
    throw new InvalidArgumentError('tokens', 'must be run tokens (createRunTokens)');
  }
  const basePath: unknown = options.basePath;
  if (basePath !== undefined && typeof basePath !== 'string') throw new InvalidArgumentError('basePath', `must be a path such as '/flowstream' (got ${typeof basePath})`);
  if (options.start !== undefined && typeof options.start !== 'function') throw new InvalidArgumentError('start', 'must be a function');
  return {
    client: options.client,
    tokens: options.tokens,
    basePath: normalizedBasePath(options.basePath),
    cors: corsOf(options.cors),
    start: options.start,
    keepFinishedMs: keepingMs('keepFinishedMs', orDefault(options.keepFinishedMs, DEFAULTS.keepFinishedMs)),
    keepIdleMs: keepingMs('keepIdleMs', orDefault(options.keepIdleMs, DEFAULTS.keepIdleMs)),
    heartbeatMs: timerDelay('heartbeatMs', orDefault(options.heartbeatMs, DEFAULTS.heartbeatMs)),
    retryMs: timerDelay('retryMs', orDefault(options.retryMs, DEFAULTS.retryMs)),
    tokenTtlMs: timerDelay('tokenTtlMs', orDefault(options.tokenTtlMs, DEFAULTS.tokenTtlMs)),
    snapshotAfter: eventCount('snapshotAfter', orDefault(options.snapshotAfter, DEFAULTS.snapshotAfter)),
    hub: hubOf(options.hub) ?? options.client.hub,
    scheduler: schedulerArgument('scheduler', options.scheduler) ?? asyncScheduler,
  };
}

/**
 * The CORS option checked: `origins` a list of origins or `'*'`. A single origin given as a string would
 * otherwise be matched as text (`includes`), letting in every origin that is a part of it.
 */
function corsOf(cors: RelayCors | undefined): RelayCors | undefined {
  if (cors === undefined) return undefined;
  const given: unknown = cors;
  if (typeof given !== 'object' || given === null) throw new InvalidArgumentError('cors', 'must be { origins: [...] } or { origins: \'*\' }');
  const { origins, maxAgeSeconds } = given as { readonly origins?: unknown; readonly maxAgeSeconds?: unknown };
  if (origins !== '*' && !(Array.isArray(origins) && origins.every((origin) => typeof origin === 'string'))) {
    throw new InvalidArgumentError('cors', `origins must be a list of origins (e.g. ['https://app.example']) or '*' (got ${typeof origins === 'string' ? JSON.stringify(origins) : typeof origins})`);
  }
  if (maxAgeSeconds !== undefined && (typeof maxAgeSeconds !== 'number' || !Number.isSafeInteger(maxAgeSeconds) || maxAgeSeconds < 0)) {
    throw new InvalidArgumentError('cors', `maxAgeSeconds must be a whole number of seconds, 0 or more (got ${typeof maxAgeSeconds === 'number' ? String(maxAgeSeconds) : typeof maxAgeSeconds})`);
  }
  return cors;
}

/**
 * An option as given, or its default when left out. Only `undefined` is left out: `null` from untyped
 * configuration (JSON, YAML) is a wrong value, refused by the option's check, never the default in disguise.
 */
function orDefault(value: unknown, fallback: number): unknown {
  return value === undefined ? fallback : value;
}

/** The `hub` option: a run hub or left out (then the client's); `null` is refused rather than taken for left out. */
function hubOf(hub: RunHub | undefined): RunHub | undefined {
  const given: unknown = hub;
  if (given === null) throw new InvalidArgumentError('hub', 'must be a run hub (createRunHub, createRedisRunHub) or left out (got null)');
  return hub;
}

/** How long something is kept, in ms: 0 (not at all) up to the longest timer. */
function keepingMs(name: string, value: unknown): number {
  if (typeof value !== 'number' || !(value >= 0 && value <= MAX_TIMER_MS)) throw new InvalidArgumentError(name, `must be a number of ms from 0 to ${MAX_TIMER_MS} (got ${String(value)})`);
  return value;
}

function eventCount(name: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) throw new InvalidArgumentError(name, `must be a whole number of events, 0 or more (got ${String(value)})`);
  return value;
}

/** The token of a request: `Authorization: Bearer <token>` (scheme in any case), else `?token=`. */
function tokenOf(request: Request, url: URL): string | undefined {
  const bearer = /^bearer\s+(\S+)\s*$/iu.exec(request.headers.get('authorization') ?? '')?.[1];
  const token = bearer ?? url.searchParams.get('token') ?? undefined;
  return token === '' ? undefined : token;
}

/** Where a viewer resumes: after `Last-Event-ID` (what EventSource sends back) or `?after=`; 0 from the start; `undefined` when malformed. */
function resumePoint(request: Request, url: URL): number | undefined {
  const given = request.headers.get('last-event-id') ?? url.searchParams.get('after');
  if (given === null || given === '') return 0;
  return /^\d{1,15}$/u.test(given) ? Number(given) : undefined;
}

/**
 * Starts what `decision` says and answers the execution's id: a plain start, or with its idempotency
 * key a run that claims the key and then starts the execution or follows the one the key started, left
 * as soon as the id is known (the execution runs on: `abortOnUnsubscribe: false`).
 */
async function startExecution(client: RelayClient, decision: StartDecision): Promise<string> {
  const input = decision.variables === undefined ? {} : { variables: decision.variables };
  if (decision.idempotencyKey === undefined) {
    if (decision.idempotencyTtlMs !== undefined) throw new InvalidArgumentError('idempotencyTtlMs', 'needs an idempotencyKey');
    return (await client.executions.start(decision.canvasId, input)).executionId;
  }
  const run$ = client.run(decision.canvasId, input, {
    idempotencyKey: decision.idempotencyKey,
    ...(decision.idempotencyTtlMs === undefined ? {} : { idempotencyTtlMs: decision.idempotencyTtlMs }),
    abortOnUnsubscribe: false,
    failOnWorkflowError: false,
  });
  return (await firstValueFrom(run$.pipe(filter((event) => event.executionId !== '')))).executionId;
}

function json(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', ...headers } });
}

function notFound(executionId: string): Response {
  return failure(404, { error: 'NOT_FOUND', message: `No execution ${executionId}` });
}

function failure(status: number, body: ErrorBody, headers: Record<string, string> = {}): Response {
  return json(status, body, headers);
}

function allowedOrigin(origin: string | null, cors: RelayCors | undefined): string | undefined {
  if (origin === null || cors === undefined) return undefined;
  if (cors.origins === '*' || cors.origins.includes(origin)) return origin;
  return undefined;
}

function preflightHeaders(cors: RelayCors | undefined): Record<string, string> {
  return {
    'access-control-allow-methods': 'GET, POST, OPTIONS',
    'access-control-allow-headers': 'Authorization, Content-Type, Last-Event-ID, Flowstream-Follow, Idempotency-Key',
    'access-control-max-age': String(cors?.maxAgeSeconds ?? DEFAULTS.corsMaxAgeSeconds),
  };
}

/** `response` with the CORS headers its request's origin gets: the origin itself when allowed, nothing otherwise. */
function withCors(response: Response, origin: string | null, cors: RelayCors | undefined): Response {
  const allowed = allowedOrigin(origin, cors);
  if (allowed === undefined) return response;
  const headers = new Headers(response.headers);
  headers.set('access-control-allow-origin', allowed);
  headers.set('access-control-expose-headers', 'Flowstream-Follow, Flowstream-Heartbeat');
  headers.append('vary', 'Origin');
  return new Response(response.body, { status: response.status, statusText: response.statusText, headers });
}

function assertNever(value: never): never {
  throw new Error(`Unexpected route ${JSON.stringify(value)}`);
}
