import { createHttpClient, type HttpClient } from '../../../src/http/client.js';
import type { HttpOptions as ClientOptions } from '../../../src/http/options.js';
import { API_KEY } from './loopback-server.js';

/** Retry timing shrunk so tests decide outcomes without waiting on the clock. */
export const FAST_RETRY = { retries: 3, baseDelayMs: 1, maxDelayMs: 4, rateLimitWaitMs: 5, maxWaitMs: 1_000 } as const;

/** A client of the test server at `origin`. */
export function clientFor(origin: string, options: Partial<ClientOptions> = {}): HttpClient {
  return createHttpClient({ apiKey: API_KEY, baseUrl: `${origin}/v1`, retry: FAST_RETRY, ...options });
}
