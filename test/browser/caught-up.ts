import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Page, Request as PageRequest } from 'playwright-core';
import type { Emulator, ManualClock } from '../../src/emulator/index.js';
import type { RunHub } from '../../src/runs/run-hub.js';
import { ServerSentEvents } from '../../src/runs/connect-run.js';

/*
 * What says that a page driven by a manual clock has caught up with the last step, instead of a
 * moment of real time: the server's client has no exchange open, the page has no request on its way,
 * and each run the page shows has applied every event the relay wrote for it.
 */

/** A fetch for the server's client that knows how many of its exchanges are open: sent, and the answer's body not read to its end. */
export interface CountingFetch {
  readonly fetch: typeof globalThis.fetch;
  open(): number;
}

export function countingFetch(): CountingFetch {
  let open = 0;
  const counted: typeof globalThis.fetch = async (input, init) => {
    open += 1;
    let response: Response;
    try {
      response = await globalThis.fetch(input, init);
    } catch (error) {
      open -= 1;
      throw error;
    }
    const source = response.body;
    if (source === null) {
      open -= 1;
      return response;
    }
    let closed = false;
    const close = (): void => {
      if (closed) return;
      closed = true;
      open -= 1;
    };
    const reader = source.getReader();
    // The same bytes, handed on as they come; the exchange closes when the last is handed on (or the body is dropped).
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        try {
          const { done, value } = await reader.read();
          if (done) {
            controller.close();
            close();
          } else {
            controller.enqueue(value);
          }
        } catch (error) {
          controller.error(error);
          close();
        }
      },
      async cancel(reason) {
        close();
        await reader.cancel(reason);
      },
    });
    return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
  };
  return { fetch: counted, open: () => open };
}

/** The relay's record, as its server wrote it: the ids of the events it sent on each execution's event streams. */
export interface RelayWrites {
  /** How many events the relay wrote for `executionId`, counted once however many streams carried them (a resume sends some again). */
  events(executionId: string): number;
  close(): void;
}

const EVENTS_PATH = /\/executions\/([^/]+)\/events$/u;

/**
 * Watches every `node:http` server of this process for event streams of the relay at `relayOrigin`
 * (`http://127.0.0.1:port`), and counts the events written on them. Run event and snapshot frames
 * carry an id; a snapshot counts as one event here, as `connectRun` gives it (these tests have none).
 */
export function watchRelayWrites(relayOrigin: () => string): RelayWrites {
  const ids = new Map<string, Set<string>>();
  const onRequest = (message: unknown): void => {
    const { request, response } = message as { request: IncomingMessage; response: ServerResponse };
    if (request.method !== 'GET' || `http://${request.headers.host ?? ''}` !== relayOrigin()) return;
    const path = new URL(request.url ?? '/', relayOrigin()).pathname;
    const encoded = EVENTS_PATH.exec(path)?.[1];
    if (encoded === undefined) return;
    const executionId = decodeURIComponent(encoded);
    const sent = ids.get(executionId) ?? new Set<string>();
    ids.set(executionId, sent);
    const parser = new ServerSentEvents();
    const decoder = new TextDecoder();
    const write = response.write.bind(response) as (chunk: unknown, ...rest: unknown[]) => boolean;
    response.write = ((chunk: unknown, ...rest: unknown[]) => {
      if (chunk instanceof Uint8Array) {
        for (const item of parser.push(decoder.decode(chunk, { stream: true }))) if (item.kind === 'message' && item.message.id !== undefined) sent.add(item.message.id);
      }
      return write(chunk, ...rest);
    }) as ServerResponse['write'];
  };
  subscribe('http.server.request.start', onRequest);
  return {
    events: (executionId) => ids.get(executionId)?.size ?? 0,
    close: () => {
      unsubscribe('http.server.request.start', onRequest);
    },
  };
}

/**
 * The page's requests on their way: sent and not yet answered (an event stream, until its headers
 * came: from then on `RelayWrites` and the page's count say how far it is).
 */
export interface PageRequests {
  open(): readonly PageRequest[];
}

export function trackPageRequests(page: Page): PageRequests {
  const open = new Set<PageRequest>();
  page.on('request', (request) => {
    open.add(request);
  });
  page.on('response', (response) => {
    open.delete(response.request());
  });
  page.on('requestfailed', (request) => {
    open.delete(request);
  });
  return { open: () => [...open] };
}

/**
 * The page's requests to a relay at `/flowstream` that it answers only once time moved: a start (a
 * budget may pace it); a stream of an execution the relay's client follows and has no event of yet
 * (the answer comes with the first); a cancel once the service has the abort (the answer comes with
 * the run's end).
 */
export function waitsOnRelayService(hub: Pick<RunHub, 'followers'>, emulator: Pick<Emulator, 'requests'>, relayWrites: RelayWrites): (request: PageRequest) => boolean {
  return (request) => {
    const path = new URL(request.url()).pathname;
    if (request.method() === 'POST' && path === '/flowstream/runs') return true;
    const [, encoded, action] = /^\/flowstream\/executions\/([^/]+)\/(events|cancel)$/u.exec(path) ?? [];
    if (encoded === undefined) return false;
    const executionId = decodeURIComponent(encoded);
    if (action === 'events') return hub.followers(executionId) > 0 && relayWrites.events(executionId) === 0;
    return emulator.requests.list({ endpoint: 'abort', executionId }).length > 0;
  };
}

/** What {@link caughtUpWith} looks at. */
export interface CaughtUpParts {
  readonly clock: ManualClock;
  readonly serverFetch: CountingFetch;
  readonly relayWrites: RelayWrites;
  readonly page: Page;
  readonly pageRequests: PageRequests;
  /**
   * A request of the page that the server has taken as far as it goes with time standing still: the
   * relay answers it only once the service moved (a start its budget paces, a stream's first event, a
   * cancel's end), so time moves for it.
   */
  readonly waitsOnService: (request: PageRequest) => boolean;
  readonly timeoutMs: number;
}

/**
 * Why the page has not caught up with the clock yet, or `''` when it has: the page has applied, for
 * each run it shows (an element with `data-execution-id`, its count in `data-events`), as many events
 * as the relay wrote for that execution — and, read after it, so that whatever the last step set off
 * without a timer has set out by then: no timer is due (time standing still, the due ones fire here),
 * the server's client has no exchange open, and the page has no request on its way.
 */
async function lagOf(parts: CaughtUpParts): Promise<string> {
  const { clock, serverFetch, relayWrites, page, pageRequests, waitsOnService } = parts;
  clock.advance(0);
  const runs = await page.locator('[data-execution-id]').evaluateAll((elements) => elements.map((element) => ({ executionId: element.getAttribute('data-execution-id') ?? '', events: Number(element.getAttribute('data-events') ?? '0') })));
  const due = clock.nextTimerAt();
  if (due !== undefined && due <= clock.now()) return 'a timer is due';
  if (serverFetch.open() > 0) return `the server's client has ${serverFetch.open()} exchange(s) open`;
  const open = pageRequests.open().filter((request) => !waitsOnService(request));
  if (open.length > 0) return `the page waits for ${open.map((request) => `${request.method()} ${request.url()}`).join(', ')}`;
  const behind = runs.filter(({ executionId, events }) => executionId !== '' && events !== relayWrites.events(executionId));
  return behind.map(({ executionId, events }) => `${executionId} shows ${events} of ${relayWrites.events(executionId)} event(s)`).join(', ');
}

/**
 * Waits (bounded polling: readiness only, time standing still) until the page has caught up with the
 * emulator's clock, so that the next step is taken from what the page has seen of the last.
 */
export async function caughtUpWith(parts: CaughtUpParts): Promise<void> {
  const deadline = Date.now() + parts.timeoutMs;
  for (;;) {
    const lag = await lagOf(parts);
    if (lag === '') return;
    if (Date.now() > deadline) throw new Error(`The page did not catch up with the clock: ${lag}`);
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}
