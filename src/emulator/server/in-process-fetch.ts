import { ConnectionDropped } from '../app/connection-dropped.js';
import type { FetchHandler } from '../app/create-app.js';

/** The signature of the global `fetch`. */
export type FetchFunction = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

/**
 * The app called in-process, with the global `fetch`'s contract: a dropped connection, a closed
 * emulator or a URL outside the emulator rejects with a `TypeError`; an aborted signal rejects
 * with its reason.
 */
export function inProcessFetch(handler: FetchHandler, baseUrl: string, isClosed: () => boolean): FetchFunction {
  return async (input, init) => {
    const request = new Request(input, init);
    if (!request.url.startsWith(`${baseUrl}/`) && request.url !== baseUrl) throw new TypeError(`fetch failed: ${request.url} is not under ${baseUrl}`);
    if (isClosed()) throw new TypeError('fetch failed: the emulator is closed');
    const signal = request.signal;
    signal.throwIfAborted();
    let onAbort: (() => void) | undefined;
    const aborted = new Promise<never>((_, reject) => {
      onAbort = () => {
        reject(signal.reason as Error);
      };
      signal.addEventListener('abort', onAbort, { once: true });
    });
    try {
      return await Promise.race([handler(request), aborted]);
    } catch (error) {
      if (error instanceof ConnectionDropped) throw new TypeError('fetch failed', { cause: error });
      throw error;
    } finally {
      if (onAbort !== undefined) signal.removeEventListener('abort', onAbort);
    }
  };
}
