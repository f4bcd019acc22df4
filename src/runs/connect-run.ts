import { asyncScheduler, Observable, type SchedulerLike, type Subscription, timer } from 'rxjs';
import { RelayError } from '../errors/relay-error.js';
import { WorkflowFailedError } from '../errors/run-errors.js';
import { booleanArgument, InvalidArgumentError, objectArgument, schedulerArgument, shownType, timerDelay } from '../errors/validation-errors.js';
import type { MessageEvent, RunEvent, RunEventType } from './events.js';
import { messageChange } from './execution-view.js';
import type { RunState } from './run-state.js';

/*
 * The browser's client of a run relay: `connectRun` follows a run through the relay's
 * server-sent events, reconnecting and resuming where it left off; below it, the reader of a
 * `text/event-stream`.
 */

/**
 * The text of each message a viewer was given, to say each message event as what is new to it. The
 * relay's events already are, except after it restarted: its new follow tells each message from its
 * start, and a viewer that had its beginning would get it twice. Here its delta is cut to what the
 * viewer lacks (or, for text rewritten meanwhile, the whole text with `replaced`).
 */
class MessageTexts {
  readonly #given = new Map<string, { readonly content: string; readonly reasoningContent: string }>();

  next(event: MessageEvent): MessageEvent {
    const given = this.#given.get(event.messageId);
    this.#given.set(event.messageId, { content: event.content, reasoningContent: event.reasoningContent });
    if (given === undefined) return event;
    return { ...event, ...(messageChange(given, event) ?? { delta: '', reasoningDelta: '', replaced: false }) };
  }

  /** A snapshot's messages are the texts given so far: later events carry only what is new after them. */
  learn(state: RunState): void {
    for (const node of state.nodes) for (const message of node.messages) this.#given.set(message.messageId, { content: message.content, reasoningContent: message.reasoningContent });
  }
}

/** Options of {@link connectRun}. */
export interface ConnectRunOptions {
  /** The run token the app's server handed out for this execution; sent as `Authorization: Bearer`. */
  readonly token: string;
  /** The fetch to use (default the global one). */
  readonly fetch?: typeof fetch;
  /** In a browser: disconnect while the page is hidden, reconnect (resuming) when it shows again. Default false. */
  readonly pauseWhenHidden?: boolean;
  /** Error with `WorkflowFailedError` after a `failed` result (default true, as `client.run`); false completes instead. */
  readonly failOnWorkflowError?: boolean;
  /** Longest wait between reconnections, in ms (default 30 s); the first waits what the relay said (`retry:`). */
  readonly maxReconnectMs?: number;
  /** The timers of reconnection; default real time. */
  readonly scheduler?: SchedulerLike;
}

const DEFAULTS = { retryMs: 2_000, maxReconnectMs: 30_000 } as const;

/** The relay's name for the numbering of a stream's ids, sent back when resuming. */
const FOLLOW_HEADER = 'flowstream-follow';

/** How often the relay says it sends a heartbeat to a quiet stream, in ms. */
const HEARTBEAT_HEADER = 'flowstream-heartbeat';

/**
 * Heartbeats a stream may miss in a row before it is taken for dead: a relay that froze (its process
 * stopped, its host stalled) or a connection that silently broke leaves its socket open, and no error
 * would ever come.
 */
const MISSED_HEARTBEATS = 3;

/** Why a connection was given up: it went silent for longer than the relay's heartbeats allow. */
const SILENT = 'no heartbeat from the relay';

/** The shortest wait before reconnecting, whatever `retry:` says: a relay failing at once is not called in a tight loop. */
const MIN_RETRY_MS = 100;

/** The event names of a relay's stream that are run events. */
const RUN_EVENT_TYPES: ReadonlySet<string> = new Set<RunEventType>(['started', 'status', 'node', 'message', 'file', 'connection', 'finished']);

/**
 * The wait before reconnection `attempt` (1 for the first after a drop): the relay's `retry:` delay,
 * doubling with each failed attempt up to `maxMs`, then drawn in its upper half (`random` in [0, 1)) so
 * that viewers dropped together do not all come back at once.
 */
export function reconnectDelay(retryMs: number, attempt: number, maxMs: number, random: number): number {
  const full = Math.min(maxMs, retryMs * 2 ** Math.max(0, attempt - 1));
  return Math.round(full / 2 + (full / 2) * random);
}

/**
 * Follows a run through a run relay (`flowstream/relay`) — in a browser or anywhere fetch streams —
 * with the token the app's server signed: the same events as `client.run`, so `toRunState`,
 * `runStore`, `ofType` and `runResult` work on it (a late viewer's snapshot of a long history comes as
 * the events that make up its state: each node at its status, each message whole). A dropped connection is made again with backoff and
 * resumes after the last event received, so nothing is missed or repeated; while it is down, `connection`
 * events say so. A stream that goes silent for three of the relay's heartbeats (a relay process that froze,
 * a connection broken without a word) counts as dropped too. A relay refusing the token (401, 403), not knowing the execution (404) or unable to
 * follow it (its own 502, as its `error` event mid-stream) errors with `RelayError` at once. Unsubscribing only disconnects: the execution runs on.
 *
 * @example
 * ```ts
 * const store = runStore(connectRun(`/flowstream/executions/${executionId}/events`, { token, pauseWhenHidden: true }));
 * ```
 */
export function connectRun(url: string | URL, options: ConnectRunOptions): Observable<RunEvent> {
  // Options left out say what is missing (the token), rather than fail on reading it.
  const token: unknown = objectArgument<Partial<ConnectRunOptions>>('options', options).token;
  if (typeof token !== 'string' || token === '') throw new InvalidArgumentError('token', 'must be the run token the relay signed (a non-empty string)');
  const given: unknown = options.fetch;
  if (given !== undefined && typeof given !== 'function') throw new InvalidArgumentError('fetch', `must be a function with the signature of the global fetch (got ${shownType(given)})`);
  const fetchFn = options.fetch ?? globalThis.fetch.bind(globalThis);
  const scheduler = schedulerArgument('scheduler', options.scheduler) ?? asyncScheduler;
  const maxReconnectMs = timerDelay('maxReconnectMs', options.maxReconnectMs ?? DEFAULTS.maxReconnectMs);
  const failOnWorkflowError = booleanArgument('failOnWorkflowError', options.failOnWorkflowError) ?? true;
  booleanArgument('pauseWhenHidden', options.pauseWhenHidden);
  const target = relayUrl(url);
  return new Observable<RunEvent>((subscriber) => {
    let lastId: string | undefined;
    /** The relay's follow `lastId` counts in: a relay that restarted numbers afresh, and knows by this that `lastId` is not its own. */
    let followId: string | undefined;
    const texts = new MessageTexts();
    let executionId = executionIdIn(target);
    let retryMs: number = DEFAULTS.retryMs;
    let attempts = 0;
    let failingSince: number | undefined;
    let connection: AbortController | undefined;
    let waiting: Subscription | undefined;
    let paused = false;
    let stopped = false;

    /** Passes `event` on; after `finished`, ends (true). */
    const emit = (event: RunEvent): boolean => {
      executionId = event.executionId;
      subscriber.next(event.type === 'message' ? texts.next(event) : event);
      if (event.type !== 'finished') return false;
      stopped = true;
      if (failOnWorkflowError && event.result.endedBy === 'failed') subscriber.error(new WorkflowFailedError(event.result));
      else subscriber.complete();
      return true;
    };

    /**
     * One connection: resolves when the stream ended (after `finished`, or early: then it is made
     * again), with a `RelayError` that ends the run, or rejects with what a new connection may cure.
     */
    const read = async (signal: AbortSignal): Promise<RelayError | undefined> => {
      const headers: Record<string, string> = { accept: 'text/event-stream', authorization: `Bearer ${options.token}` };
      if (lastId !== undefined) headers['last-event-id'] = lastId;
      if (followId !== undefined) headers[FOLLOW_HEADER] = followId;
      const response = await fetchFn(target, { headers, signal, cache: 'no-store' });
      if (!response.ok) {
        const { error, fromRelay } = await refusal(response, executionId);
        // The relay's own 502 says what its `error` event says mid-stream: it could not follow the execution, and
        // forgot it after its client's retries gave up. A 502 of a proxy (no relay body) is a relay away, as a 503.
        if (retriedStatus(response.status) && !(response.status === 502 && fromRelay)) throw error;
        return error;
      }
      // A 200 that is not an event stream (a login page from a proxy, say) is no relay: reconnecting would not help.
      if (!/^text\/event-stream\b/iu.test(response.headers.get('content-type') ?? '')) {
        await response.body?.cancel();
        return new RelayError(response.status, 'NOT_AN_EVENT_STREAM', `Expected text/event-stream, got ${response.headers.get('content-type') ?? 'no content type'}`, executionId === undefined ? {} : { executionId });
      }
      if (response.body === null) return undefined;
      followId = response.headers.get(FOLLOW_HEADER) ?? undefined;
      reconnected();
      const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
      const parser = new ServerSentEvents();
      const silence = silenceWatch(response.headers.get(HEARTBEAT_HEADER), reader);
      try {
        for (;;) {
          const { done, value } = await reader.read();
          if (silence.noticed()) throw new Error(SILENT);
          if (done) return undefined;
          silence.heard();
          for (const item of parser.push(value)) {
            if (item.kind === 'retry') {
              retryMs = Math.max(MIN_RETRY_MS, item.retryMs);
              continue;
            }
            const { message } = item;
            if (message.event === 'error') return streamFailure(message.data, executionId);
            if (message.event === 'snapshot') {
              const state = runStateOf(message.data);
              if (state === undefined) return new RelayError(200, 'MALFORMED_EVENT', 'The relay sent a snapshot that is not a run state', executionId === undefined ? {} : { executionId });
              // The state so far, standing for the events before it (a `snapshot` event, as a shared run gives a late subscriber).
              if (message.id !== undefined) lastId = message.id;
              texts.learn(state);
              const id = state.executionId ?? executionId;
              if (id === undefined) return new RelayError(200, 'MALFORMED_EVENT', 'The relay sent a snapshot without an execution id', {});
              executionId = id;
              subscriber.next({ type: 'snapshot', executionId: id, state });
              if (state.result !== undefined && emit({ type: 'finished', executionId: id, result: state.result })) return undefined;
              continue;
            }
            if (!RUN_EVENT_TYPES.has(message.event)) continue;
            const event = runEventOf(message.event, message.data);
            if (event === undefined) return new RelayError(200, 'MALFORMED_EVENT', `The relay sent a ${message.event} event that is not one`, executionId === undefined ? {} : { executionId });
            if (message.id !== undefined) lastId = message.id;
            if (emit(event)) return undefined;
          }
        }
      } finally {
        silence.stop();
        reader.cancel().catch(() => undefined);
      }
    };

    /**
     * Watches a stream for silence, once it has begun (a proxy that holds the whole answer back is left to
     * deliver it at its end): with no text for as long as `MISSED_HEARTBEATS` of the relay's heartbeats,
     * the stream is cancelled and `noticed()` says so. A stream of a relay that sends no heartbeat header is not watched.
     */
    const silenceWatch = (heartbeat: string | null, reader: ReadableStreamDefaultReader<string>): { heard(): void; noticed(): boolean; stop(): void } => {
      const heartbeatMs = heartbeat !== null && /^\d{1,9}$/u.test(heartbeat) ? Number(heartbeat) : 0;
      const limitMs = MISSED_HEARTBEATS * heartbeatMs;
      let watch: Subscription | undefined;
      let heardAt = 0;
      let noticed = false;
      // One timer for the whole stream, not one a chunk: when it fires it looks at when text last came,
      // and waits the rest of the limit again if some came since it was set.
      const arm = (delayMs: number): void => {
        watch = timer(delayMs, scheduler).subscribe(() => {
          const quietMs = scheduler.now() - heardAt;
          if (quietMs < limitMs) {
            arm(limitMs - quietMs);
            return;
          }
          noticed = true;
          reader.cancel().catch(() => undefined);
        });
      };
      return {
        heard: () => {
          if (heartbeatMs === 0) return;
          heardAt = scheduler.now();
          if (watch === undefined) arm(limitMs);
        },
        noticed: () => noticed,
        stop: () => {
          watch?.unsubscribe();
        },
      };
    };

    /** Reads again succeed: a failing spell ends, and a viewer that saw it is told. */
    const reconnected = (): void => {
      if (failingSince !== undefined && executionId !== undefined) subscriber.next({ type: 'connection', executionId });
      attempts = 0;
      failingSince = undefined;
    };

    const connect = (): void => {
      waiting = undefined;
      const controller = new AbortController();
      connection = controller;
      read(controller.signal).then(
        (final) => {
          if (final === undefined) {
            dropped(controller, 'the stream ended');
          } else if (connection === controller && !stopped) {
            stopped = true;
            subscriber.error(final);
          }
        },
        (error: unknown) => {
          dropped(controller, error instanceof RelayError ? `HTTP ${error.status}` : error instanceof Error && error.message === SILENT ? SILENT : 'network error');
        },
      );
    };

    /** The connection is gone (the stream ended early, or failed): wait, then connect again, unless this viewer left or paused. */
    const dropped = (controller: AbortController, why: string): void => {
      if (connection !== controller || stopped || paused) return;
      connection = undefined;
      attempts += 1;
      // One reading of the clock: on a running clock two could differ, and the first failure's would not read 0.
      const now = scheduler.now();
      failingSince ??= now;
      if (executionId !== undefined) subscriber.next({ type: 'connection', executionId, reconnecting: { attempts, failingForMs: now - failingSince, error: why } });
      waiting = timer(reconnectDelay(retryMs, attempts, maxReconnectMs, Math.random()), scheduler).subscribe(connect);
    };

    const pause = (): void => {
      paused = true;
      waiting?.unsubscribe();
      waiting = undefined;
      connection?.abort();
      connection = undefined;
    };

    const resume = (): void => {
      if (!paused || stopped) return;
      paused = false;
      connect();
    };

    const page = options.pauseWhenHidden === true ? visibleDocument() : undefined;
    const onVisibility = (): void => {
      if (page?.visibilityState === 'hidden') pause();
      else resume();
    };
    page?.addEventListener('visibilitychange', onVisibility);
    if (page?.visibilityState === 'hidden') paused = true;
    else connect();

    return () => {
      stopped = true;
      page?.removeEventListener('visibilitychange', onVisibility);
      waiting?.unsubscribe();
      connection?.abort();
    };
  });
}

/** What `pauseWhenHidden` uses of the page's `document`. */
interface VisibleDocument {
  readonly visibilityState: string;
  addEventListener(type: 'visibilitychange', listener: () => void): void;
  removeEventListener(type: 'visibilitychange', listener: () => void): void;
}

/** The execution of a relay's events URL (`…/executions/:id/events`), known before any event came; `undefined` for another shape. */
function executionIdIn(url: URL): string | undefined {
  const segment = /\/executions\/([^/]+)\/events\/?$/u.exec(url.pathname)?.[1];
  if (segment === undefined) return undefined;
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}

/** The page's document, in a browser; `undefined` elsewhere. */
function visibleDocument(): VisibleDocument | undefined {
  return (globalThis as { readonly document?: VisibleDocument }).document;
}

/** Where a relative URL is resolved: the page's address in a browser. */
/** The events URL, resolved against the page's address (a browser's relative `/flowstream/…`); anything else is an `InvalidArgumentError` at the call, not a `TypeError`. */
function relayUrl(url: string | URL): URL {
  // A URL by its `href`: one from another realm (a test's DOM, an iframe) is not `instanceof` this one's.
  const raw: unknown = url;
  const href: unknown = typeof raw === 'object' && raw !== null ? Reflect.get(raw, 'href') : undefined;
  const given = typeof href === 'string' ? href : raw;
  let target: URL;
  if (typeof given === 'string') {
    try {
      target = new URL(given, pageLocation());
    } catch {
      throw new InvalidArgumentError('url', `is not a URL${pageLocation() === undefined ? ' (outside a page it must be absolute)' : ''} (got ${JSON.stringify(given)})`);
    }
  } else throw new InvalidArgumentError('url', `must be a string or a URL (got ${shownType(given)})`);
  if (target.protocol !== 'http:' && target.protocol !== 'https:') throw new InvalidArgumentError('url', `must use http or https (got ${target.protocol})`);
  return target;
}

function pageLocation(): string | undefined {
  return (globalThis as { readonly location?: { readonly href: string } }).location?.href;
}

/** The error of a refused connection, and whether its body is the relay's own `{ error, message }`. */
async function refusal(response: Response, executionId: string | undefined): Promise<{ readonly error: RelayError; readonly fromRelay: boolean }> {
  const body = await response.text().catch(() => '');
  const { error, message } = errorFields(body);
  return {
    error: new RelayError(response.status, error ?? `HTTP_${response.status}`, message ?? response.statusText, executionId === undefined ? {} : { executionId }),
    fromRelay: error !== undefined && message !== undefined,
  };
}

/** The relay could not follow the execution any more (its `error` event): final, a new connection would not cure it. */
function streamFailure(data: string, executionId: string | undefined): RelayError {
  const { error, message } = errorFields(data);
  return new RelayError(502, error ?? 'UPSTREAM_FAILED', message ?? 'The relay stopped following the execution', executionId === undefined ? {} : { executionId });
}

function errorFields(text: string): { readonly error?: string; readonly message?: string } {
  try {
    const parsed: unknown = JSON.parse(text);
    if (typeof parsed !== 'object' || parsed === null) return {};
    const { error, message } = parsed as { readonly error?: unknown; readonly message?: unknown };
    return { ...(typeof error === 'string' ? { error } : {}), ...(typeof message === 'string' ? { message } : {}) };
  } catch {
    return {};
  }
}

/** `data` parsed as a JSON object; `undefined` for anything else. */
function objectOf(data: string): Readonly<Record<string, unknown>> | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(data);
  } catch {
    return undefined;
  }
  return typeof parsed === 'object' && parsed !== null ? (parsed as Readonly<Record<string, unknown>>) : undefined;
}

/** The run event a message carries, checked as far as its name and type agree; `undefined` for anything else. */
function runEventOf(name: string, data: string): RunEvent | undefined {
  const parsed = objectOf(data);
  return parsed?.['type'] === name && typeof parsed['executionId'] === 'string' ? (parsed as unknown as RunEvent) : undefined;
}

/** The run state a snapshot carries, checked as far as its shape goes; `undefined` for anything else. */
function runStateOf(data: string): RunState | undefined {
  const parsed = objectOf(data);
  return parsed !== undefined && Array.isArray(parsed['nodes']) && Array.isArray(parsed['files']) ? (parsed as unknown as RunState) : undefined;
}

/** Statuses a new connection may cure: the relay or a proxy failing or busy (but see the relay's own 502). A refusal (401, 403, 404, 400) is final. */
function retriedStatus(status: number): boolean {
  return status >= 500 || status === 408 || status === 429;
}

// --- a text/event-stream, read as it arrives -----------------------------------------------------
/** One message of a `text/event-stream`: its event name (`message` when none), its data, and its id when it set one. */
interface ServerSentMessage {
  readonly event: string;
  readonly data: string;
  readonly id?: string;
}

/** What a stream says: a message, or a new reconnection delay (`retry:`). */
export type ServerSentItem = { readonly kind: 'message'; readonly message: ServerSentMessage } | { readonly kind: 'retry'; readonly retryMs: number };

/**
 * Reads a `text/event-stream` as its text arrives, in chunks cut anywhere, by the HTML standard's
 * rules: lines end in CRLF, LF or CR; `:` starts a comment; a blank line dispatches the message when it
 * has data; `retry:` takes digits only. The same items come out however the text was cut.
 *
 * @example
 * ```ts
 * const reader = new ServerSentEvents();
 * reader.push('event: status\nid: 3\ndata: {}\n\n'); // [{ kind: 'message', message: { event: 'status', data: '{}', id: '3' } }]
 * ```
 */
export class ServerSentEvents {
  #pending = '';
  #skipLf = false;
  #data: string[] = [];
  #event = '';
  #id: string | undefined;

  /** Takes the next chunk of text and returns what it completed. */
  push(chunk: string): ServerSentItem[] {
    if (chunk === '') return [];
    // A chunk that ended in CR closed its line; an LF opening the next chunk is the rest of that CRLF.
    const text = this.#pending + (this.#skipLf && chunk.startsWith('\n') ? chunk.slice(1) : chunk);
    this.#skipLf = text.endsWith('\r');
    const lines = text.split(/\r\n|\r|\n/u);
    this.#pending = lines.pop() ?? '';
    const items: ServerSentItem[] = [];
    for (const line of lines) this.#line(line, items);
    return items;
  }

  #line(line: string, items: ServerSentItem[]): void {
    if (line === '') {
      this.#dispatch(items);
      return;
    }
    if (line.startsWith(':')) return;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    switch (field) {
      case 'event':
        this.#event = value;
        break;
      case 'data':
        this.#data.push(value);
        break;
      case 'id':
        if (!value.includes('\0')) this.#id = value;
        break;
      case 'retry':
        if (/^\d+$/u.test(value)) items.push({ kind: 'retry', retryMs: Number(value) });
        break;
      default:
        break;
    }
  }

  #dispatch(items: ServerSentItem[]): void {
    const id = this.#id;
    if (this.#data.length > 0) items.push({ kind: 'message', message: { event: this.#event === '' ? 'message' : this.#event, data: this.#data.join('\n'), ...(id === undefined ? {} : { id }) } });
    this.#data = [];
    this.#event = '';
    this.#id = undefined;
  }
}
