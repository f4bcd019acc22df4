/**
 * The dashboard's server: the page and the app's routes on one origin, a run relay on another. The API
 * key stays here, in the client; the page gets what it may see and nothing more:
 *
 * - `GET /app/dashboard` — where the relay is, and the workflows the page may run (an allow-list this
 *   server decides), each with its tasks and their edges for the graph.
 * - `GET /app/budget` — the client's request budget as server-sent events (`event: budget`), for the meter.
 * - `POST /app/cancel-token` — the app's own token minting: whoever holds the read token of a run it
 *   started gets a short-lived token that may also cancel it (`{ executionId }` in, `{ token }` out).
 * - The relay (`/flowstream`): `POST /runs` starts an allowed workflow and hands back a read-only token;
 *   events stream from `GET /executions/:id/events`; `POST /executions/:id/cancel` takes the cancel token.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { SchedulerLike, Subscription } from 'rxjs';
import type { BudgetState, Client } from '../../src/index.js';
import { createRunRelay, createRunTokens, isRunTokenError, toNodeListener, type RunTokens } from '../../src/relay/index.js';
import { serveFolder } from './static-server.js';

/** A workflow the page may run, as the page draws it. */
export interface DashboardWorkflow {
  readonly canvasId: string;
  readonly title: string;
  readonly tasks: readonly { readonly id: string; readonly title: string; readonly dependentTasks: readonly string[] }[];
}

/** What `GET /app/dashboard` answers. */
export interface DashboardConfig {
  /** The relay's routes, e.g. `http://127.0.0.1:4321/flowstream`. */
  readonly relay: string;
  readonly workflows: readonly DashboardWorkflow[];
}

/** The part of the budget's state the meter shows (`GET /app/budget`). */
export type BudgetMeterState = Pick<BudgetState, 'at' | 'limitPerMinute' | 'limitPerDay' | 'usedThisMinute' | 'remainingThisMinute' | 'usedToday' | 'remainingToday' | 'inFlight'> & { readonly queued: number };

export interface DashboardServerOptions {
  /** The client that holds the key: it starts, follows and aborts runs for every viewer. */
  readonly client: Client;
  /** The built page (`bundleProgressPage`'s folder). */
  readonly pageDir: string;
  /** The canvases the page may start: the server's allow-list. */
  readonly workflows: readonly string[];
  /** Signs the run tokens (32 bytes or more). */
  readonly secret: string;
  /** The relay's and the tokens' clock: give the client's. Default real time. */
  readonly scheduler?: SchedulerLike;
}

export interface DashboardServer {
  /** The page's origin: open `${url}/index.html`. */
  readonly url: string;
  /** The relay's routes, on another origin. */
  readonly relay: string;
  /** Ends every open connection to the relay, as a restarting proxy would: viewers reconnect and resume. */
  dropRelayConnections(): void;
  close(): Promise<void>;
}

const CANCEL_TOKEN_TTL_MS = 60_000;
const READ_TOKEN_TTL_MS = 3_600_000;
/** The largest body the app routes read: an execution id fits many times over. */
const MAX_BODY_BYTES = 4_096;

function sendJson(response: ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' }).end(JSON.stringify(body));
}

async function readJson(request: IncomingMessage): Promise<unknown> {
  let text = '';
  for await (const chunk of request) {
    text += String(chunk);
    if (text.length > MAX_BODY_BYTES) throw new Error('body too large');
  }
  return JSON.parse(text) as unknown;
}

function meterState(state: BudgetState): BudgetMeterState {
  const { at, limitPerMinute, limitPerDay, usedThisMinute, remainingThisMinute, usedToday, remainingToday, inFlight } = state;
  return { at, limitPerMinute, limitPerDay, usedThisMinute, remainingThisMinute, usedToday, remainingToday, inFlight, queued: state.queued.total };
}

/** The app's routes on the page's origin; true for a request they answered. */
function appRoutes(client: Client, tokens: RunTokens, config: () => Promise<DashboardConfig>): (request: IncomingMessage, response: ServerResponse) => boolean {
  const budgetStreams = new Set<Subscription>();
  return (request, response) => {
    const path = new URL(request.url ?? '/', 'http://127.0.0.1').pathname;
    if (request.method === 'GET' && path === '/app/dashboard') {
      config().then((body) => { sendJson(response, 200, body); }, (error: unknown) => { sendJson(response, 502, { error: 'UPSTREAM', message: error instanceof Error ? error.message : String(error) }); });
      return true;
    }
    if (request.method === 'GET' && path === '/app/budget') {
      const budget = client.budget;
      if (budget === undefined) {
        sendJson(response, 404, { error: 'NO_BUDGET', message: 'This client has no request budget' });
        return true;
      }
      response.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
      const subscription = budget.state$.subscribe((state) => response.write(`event: budget\ndata: ${JSON.stringify(meterState(state))}\n\n`));
      budgetStreams.add(subscription);
      response.once('close', () => {
        subscription.unsubscribe();
        budgetStreams.delete(subscription);
      });
      return true;
    }
    if (request.method === 'POST' && path === '/app/cancel-token') {
      void (async () => {
        try {
          const { executionId } = (await readJson(request)) as { executionId?: unknown };
          const readToken = /^Bearer (\S+)$/u.exec(request.headers.authorization ?? '')?.[1];
          if (typeof executionId !== 'string' || readToken === undefined) {
            sendJson(response, 400, { error: 'BAD_REQUEST', message: 'Send { executionId } with the run\'s read token as Authorization: Bearer' });
            return;
          }
          // The run's own viewer (it holds the token the start gave) may cancel it; an app would check its user here.
          await tokens.verify(readToken, { executionId, scope: 'read' });
          sendJson(response, 200, { token: await tokens.sign({ executionId, scope: ['read', 'cancel'], ttlMs: CANCEL_TOKEN_TTL_MS }) });
        } catch (error) {
          // A token that is not this run's read token is refused; anything else was a malformed request.
          if (isRunTokenError(error)) sendJson(response, 403, { error: 'FORBIDDEN', message: error.message });
          else sendJson(response, 400, { error: 'BAD_REQUEST', message: 'Send { executionId } as JSON' });
        }
      })();
      return true;
    }
    return false;
  };
}

/**
 * Starts the dashboard's two servers on 127.0.0.1 (ephemeral ports): the page with its app routes, and
 * the relay, which answers the page's origin (CORS) and nothing else.
 */
export async function startDashboardServer(options: DashboardServerOptions): Promise<DashboardServer> {
  const { client, scheduler } = options;
  const allowed = new Set(options.workflows);
  const tokens = createRunTokens({ secret: options.secret, ...(scheduler === undefined ? {} : { scheduler }) });
  let relayBase = '';
  let plans: Promise<DashboardConfig> | undefined;
  // Plans are read once, on the first page load, through the client (and so its budget).
  const config = (): Promise<DashboardConfig> => {
    plans ??= Promise.all(
      options.workflows.map(async (canvasId): Promise<DashboardWorkflow> => {
        const plan = await client.workflows.get(canvasId);
        return { canvasId, title: plan.title, tasks: plan.tasks.map(({ id, title, dependentTasks }) => ({ id, title, dependentTasks })) };
      }),
    ).then((workflows) => ({ relay: relayBase, workflows }));
    plans.catch(() => { plans = undefined; });
    return plans;
  };
  const site = await serveFolder(options.pageDir, appRoutes(client, tokens, config));
  const relay = createRunRelay({
    client,
    tokens,
    basePath: '/flowstream',
    cors: { origins: [site.url] },
    ...(scheduler === undefined ? {} : { scheduler }),
    start: async (request) => {
      const { canvasId } = (await request.json().catch(() => ({}))) as { canvasId?: unknown };
      if (typeof canvasId !== 'string' || !allowed.has(canvasId)) {
        return Response.json({ error: 'FORBIDDEN', message: 'This dashboard does not run that workflow' }, { status: 403 });
      }
      // Read only: cancelling takes a token the app mints when asked (POST /app/cancel-token).
      return { canvasId, scope: ['read'], ttlMs: READ_TOKEN_TTL_MS };
    },
  });
  const listener = toNodeListener(relay);
  const relayServer = createServer(listener);
  await new Promise<void>((resolve) => relayServer.listen(0, '127.0.0.1', resolve));
  relayBase = `http://127.0.0.1:${(relayServer.address() as AddressInfo).port}/flowstream`;
  return {
    url: site.url,
    relay: relayBase,
    dropRelayConnections: () => {
      relayServer.closeAllConnections();
    },
    close: async () => {
      relay.close();
      relayServer.closeAllConnections();
      await Promise.all([site.close(), new Promise<void>((resolve) => relayServer.close(() => { resolve(); }))]);
    },
  };
}

/** The sample workflows `npm run web` offers: chains, parallel branches, files, a failing branch, a long run to cancel. */
export const DASHBOARD_WORKFLOWS: readonly string[] = ['c-sample-files', 'c-sample-parallel', 'c-sample-linear', 'c-sample-branch-failure', 'c-sample-timeout'];
