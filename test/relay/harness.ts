import { afterEach } from 'vitest';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { firstValueFrom, type Observable, toArray } from 'rxjs';
import { type Client, createClient } from '../../src/client.js';
import { createEmulator, type Emulator, type ManualClock } from '../../src/emulator/index.js';
import { createRunRelay, type RunRelay, type RunRelayOptions } from '../../src/relay/run-relay.js';
import { createRunTokens, type RunTokens } from '../../src/relay/run-tokens.js';
import { toNodeListener } from '../../src/relay/node-listener.js';
import { connectRun, type ConnectRunOptions } from '../../src/runs/connect-run.js';
import type { RunEvent } from '../../src/runs/events.js';
import { REQUEST_TIMEOUT_MS } from '../support/request-timeout.js';

export const SECRET = 'the relay test secret, thirty-two bytes or more';

/** An emulator 50× faster on loopback, a client on its clock, and a relay served over node:http on loopback. */
export interface RelayWorld {
  readonly emulator: Emulator;
  readonly client: Client;
  readonly tokens: RunTokens;
  readonly relay: RunRelay;
  readonly server: Server;
  /** `http://127.0.0.1:<port>/flowstream` */
  readonly base: string;
  readonly eventsUrl: (executionId: string) => string;
  /** A token for `executionId`, scope `read` unless told. */
  readonly token: (executionId: string, scope?: readonly ['read'] | readonly ['read', 'cancel'], ttlMs?: number) => Promise<string>;
  /** A viewer of `executionId` through the relay, on emulator time. */
  readonly view: (executionId: string, token: string, options?: Partial<ConnectRunOptions>) => Observable<RunEvent>;
  close(): Promise<void>;
}

/** `clock`: a manual clock instead of the 50× one, for counts that must not depend on the machine's speed (drive it with `driveClock`). */
export async function relayWorld(options: Partial<RunRelayOptions> = {}, world: { readonly clock?: ManualClock } = {}): Promise<RelayWorld> {
  const emulator = await createEmulator({ rateLimit: false, ...(world.clock === undefined ? { speed: 50 } : { clock: world.clock }) });
  const client = createClient({ apiKey: emulator.apiKey, baseUrl: emulator.url, scheduler: emulator.scheduler, budget: false, timeoutMs: REQUEST_TIMEOUT_MS });
  const tokens = createRunTokens({ secret: SECRET, scheduler: emulator.scheduler });
  const relay = createRunRelay({ client, tokens, basePath: '/flowstream', scheduler: emulator.scheduler, ...options });
  const server = createServer(toNodeListener(relay));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/flowstream`;
  const eventsUrl = (executionId: string): string => `${base}/executions/${executionId}/events`;
  return {
    emulator,
    client,
    tokens,
    relay,
    server,
    base,
    eventsUrl,
    token: (executionId, scope = ['read'], ttlMs = 3_600_000) => tokens.sign({ executionId, scope, ttlMs }),
    view: (executionId, token, viewOptions = {}) => connectRun(eventsUrl(executionId), { token, scheduler: emulator.scheduler, failOnWorkflowError: false, ...viewOptions }),
    async close() {
      relay.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => {
        server.close(() => {
          resolve();
        });
      });
      await emulator.close();
    },
  };
}

/** All events of `events$` until it completes. */
export function allEvents(events$: Observable<RunEvent>): Promise<RunEvent[]> {
  return firstValueFrom(events$.pipe(toArray()));
}

/** The events without the viewer's own `connection` events (which depend on when its connections dropped). */
export function withoutConnection(events: readonly RunEvent[]): RunEvent[] {
  return events.filter((event) => event.type !== 'connection');
}

/** Each message's text rebuilt from its deltas, by message id. */
export function rebuiltMessages(events: readonly RunEvent[]): Record<string, string> {
  const texts: Record<string, string> = {};
  for (const event of events) {
    // A snapshot stands for the events before it: its messages are the texts so far.
    if (event.type === 'snapshot') for (const node of event.state.nodes) for (const message of node.messages) texts[message.messageId] = message.content;
    if (event.type !== 'message') continue;
    texts[event.messageId] = event.replaced ? event.delta : (texts[event.messageId] ?? '') + event.delta;
  }
  return texts;
}

/**
 * Worlds a test file opens through `world`, closed after each test: call once at the top of a file.
 *
 * @example
 * ```ts
 * const world = openWorlds();
 * it('…', async () => { const { client } = await world(); });
 * ```
 */
export function openWorlds(): (...args: Parameters<typeof relayWorld>) => Promise<RelayWorld> {
  const open: RelayWorld[] = [];
  afterEach(async () => {
    await Promise.all(open.splice(0).map((made) => made.close()));
  });
  return async (...args) => {
    const made = await relayWorld(...args);
    open.push(made);
    return made;
  };
}

