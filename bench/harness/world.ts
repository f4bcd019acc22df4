import { createClient } from '../../src/client.js';
import type { ClientOptions, RequestBudgetOptions } from '../../src/domain/options.js';
import { createEmulator, type Emulator, type EndpointName, type ManualClock, type RequestFilter, type WorkflowDefinition } from '../../src/emulator/index.js';
import { createHttpClient, type HttpClient } from '../../src/http/index.js';
import type { Runs } from '../../src/runs/runs.js';
import { REQUEST_TIMEOUT_MS } from '../../test/support/request-timeout.js';
import { benchTime, type BenchTime } from './time.js';

/**
 * One account on one emulator, with the service's limits (service.md §2.1: 100 per minute, 10,000 per
 * day) on an accelerated clock, reached through the emulator's in-process `fetch` (no sockets: HTTP
 * cost stays out of the measurement). Each contender gets its own world, so no one shares a window.
 */
export interface World {
  readonly emulator: Emulator;
  readonly time: BenchTime;
  /**
   * flowstream as `createClient` composes it (src/client.ts: budget → http → runs), with its timers on
   * the emulator's clock: budget, http and runs all on `emulator.scheduler`. `options`: the client's
   * other options (its duration model, its polling bounds), the connection and clock being the world's.
   */
  flowstream(budget?: RequestBudgetOptions, options?: FlowstreamOptions): Runs;
  /**
   * The same HTTP client with no budget and no retries, for the baseline loops: the service's own tool
   * neither paces nor retries (service.md §6).
   */
  plain(): HttpClient;
  /** Requests the emulator answered (those `filter` keeps, default all), per endpoint, and how many of them were 429s. */
  requests(filter?: RequestFilter): RequestCounts;
  close(): Promise<void>;
}

/** What a bench may set of a flowstream client besides the world's connection, budget and clock. */
export type FlowstreamOptions = Omit<ClientOptions, 'apiKey' | 'baseUrl' | 'fetch' | 'budget' | 'scheduler'>;

export interface RequestCounts {
  readonly total: number;
  readonly byEndpoint: Readonly<Partial<Record<EndpointName, number>>>;
  readonly rateLimited: number;
}

export async function openWorld(options: { readonly speed: number; readonly workflows: readonly WorkflowDefinition[]; readonly clock?: ManualClock }): Promise<World> {
  // A manual clock (driven by `driveClock`) replaces real time accelerated: a day passes in seconds.
  const pace = options.clock === undefined ? { speed: options.speed } : { clock: options.clock };
  const emulator = await createEmulator({ ...pace, listen: false, samples: false, workflows: options.workflows });
  const time = benchTime(options.speed, emulator.scheduler);
  const connection = { apiKey: emulator.apiKey, baseUrl: emulator.url, fetch: emulator.fetch };
  // On the accelerated clock a request's default 30 s deadline is 0.3 s of real time at speed 100, which a
  // loaded machine can pass: a generous one there; the manual clock's worlds keep the default.
  const deadline = options.clock === undefined ? { timeoutMs: REQUEST_TIMEOUT_MS } : {};
  return {
    emulator,
    time,
    flowstream: (budget = {}, options = {}) => createClient({ ...deadline, ...options, ...connection, budget, scheduler: emulator.scheduler }),
    plain: () => createHttpClient({ ...connection, retry: false, ...deadline, scheduler: emulator.scheduler }),
    requests: (filter = {}) => {
      const byEndpoint: Partial<Record<EndpointName, number>> = {};
      let rateLimited = 0;
      const all = emulator.requests.list(filter);
      for (const request of all) {
        byEndpoint[request.endpoint] = (byEndpoint[request.endpoint] ?? 0) + 1;
        if (request.status === 429) rateLimited += 1;
      }
      return { total: all.length, byEndpoint, rateLimited };
    },
    close: () => emulator.close(),
  };
}
