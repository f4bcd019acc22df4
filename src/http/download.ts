import { asyncScheduler, type SchedulerLike } from 'rxjs';
import { DownloadError } from '../errors/download-error.js';
import { abortSignalArgument, InvalidArgumentError, objectArgument, schedulerArgument, shownType, timerDelay } from '../errors/validation-errors.js';
import type { OutputFile } from '../domain/model.js';
import { linkSignals } from './linked-signal.js';

/**
 * How to fetch an output file.
 *
 * @example
 * ```ts
 * await downloadFile(file, { maxBytes: 10 * 1024 * 1024, timeoutMs: 60_000 });
 * ```
 */
export interface DownloadOptions {
  /** The `fetch` to use; the global one by default. It is never the client's authenticated instance. */
  readonly fetch?: typeof globalThis.fetch;
  readonly signal?: AbortSignal;
  /** The whole download, body included, ends with `DownloadError` (`reason: 'timeout'`) after this long. Default 5 minutes. */
  readonly timeoutMs?: number;
  /** A larger file is stopped as soon as it passes this many bytes: `DownloadError` (`reason: 'too-large'`). Default 1 GiB. */
  readonly maxBytes?: number;
  /**
   * Turns the service's file URL into the one to fetch: a self-hosted service hands out URLs on the
   * host it believes it has (`http://localhost:…`), which another machine must reach elsewhere.
   */
  readonly rewriteUrl?: (url: string) => string;
  /** The clock of `timeoutMs` (a client's `scheduler`, the emulator's); real time by default. */
  readonly scheduler?: SchedulerLike;
}

/** Default `timeoutMs` of a download. */
export const DEFAULT_DOWNLOAD_TIMEOUT_MS = 5 * 60_000;
/** Default `maxBytes` of a download. */
export const DEFAULT_DOWNLOAD_MAX_BYTES = 1024 * 1024 * 1024;

function urlOf(file: Pick<OutputFile, 'url'> | string, rewrite: ((url: string) => string) | undefined): string {
  const raw: unknown = file;
  if (typeof raw !== 'string' && (typeof raw !== 'object' || raw === null)) throw new InvalidArgumentError('file', `must be an output file or its URL (got ${shownType(raw)})`);
  const given = typeof file === 'string' ? file : file.url;
  if (given === undefined || given === '') throw new InvalidArgumentError('file.url', 'is missing: files appear with a URL only once their node finished (service.md §4.6)');
  const url = rewrite === undefined ? given : rewrite(given);
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new InvalidArgumentError('file.url', `is not an absolute URL (got "${url}")`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new InvalidArgumentError('file.url', `must use http or https (got ${parsed.protocol})`);
  return url;
}

function positiveWhole(name: string, value: number): number {
  if (!Number.isSafeInteger(value) || value < 1) throw new InvalidArgumentError(name, `must be a whole number ≥ 1 (got ${String(value)})`);
  return value;
}

interface Guard {
  readonly url: string;
  readonly maxBytes: number;
  readonly timeoutMs: number;
  readonly deadline: AbortSignal;
  readonly signal: AbortSignal | undefined;
  /** Clears the deadline's timer and listeners; called once the download ends, however. */
  readonly finish: () => void;
}

/** The error a failed read stands for: the caller's abort, the deadline, or the transfer itself. */
function failureOf(error: unknown, guard: Guard): unknown {
  if (guard.signal?.aborted === true) return guard.signal.reason;
  if (guard.deadline.aborted) return new DownloadError({ url: guard.url, reason: 'timeout', timeoutMs: guard.timeoutMs });
  return error instanceof DownloadError ? error : new DownloadError({ url: guard.url, cause: error });
}

/** The body, counted as it is read: past `maxBytes` it stops, and the deadline ends with it. */
function guardedBody(body: ReadableStream<Uint8Array>, guard: Guard): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  let received = 0;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { done, value } = await reader.read();
        if (done) {
          guard.finish();
          controller.close();
          return;
        }
        received += value.byteLength;
        if (received > guard.maxBytes) throw new DownloadError({ url: guard.url, reason: 'too-large', maxBytes: guard.maxBytes });
        controller.enqueue(value);
      } catch (error) {
        const failure = failureOf(error, guard);
        guard.finish();
        await reader.cancel(failure).catch(() => undefined);
        controller.error(failure);
      }
    },
    async cancel(reason) {
      guard.finish();
      await reader.cancel(reason);
    },
  });
}

/**
 * Opens an output file's public URL. Output URLs need no Authorization (service.md §4.6) and may live on
 * another host, so this goes through a plain `fetch` that knows no API key, without cookies or referrer.
 * The body it returns is bounded: by `maxBytes` (a declared Content-Length over it fails at once) and
 * by `timeoutMs`, which covers the body too.
 *
 * @example
 * ```ts
 * const response = await openFile(result.files[0]!, { maxBytes: 50 * 1024 * 1024 });
 * ```
 */
export async function openFile(file: Pick<OutputFile, 'url'> | string, options: DownloadOptions = {}): Promise<Response> {
  objectArgument('options', options);
  const url = urlOf(file, options.rewriteUrl);
  const maxBytes = positiveWhole('maxBytes', options.maxBytes ?? DEFAULT_DOWNLOAD_MAX_BYTES);
  const timeoutMs = timerDelay('timeoutMs', options.timeoutMs ?? DEFAULT_DOWNLOAD_TIMEOUT_MS);
  const fetcher = options.fetch ?? globalThis.fetch;
  const signal = abortSignalArgument('signal', options.signal);
  const scheduler = schedulerArgument('scheduler', options.scheduler) ?? asyncScheduler;
  signal?.throwIfAborted();
  const deadline = new AbortController();
  // The caller's signal and the deadline as one; whichever aborts first unlinks both.
  const link = linkSignals([signal, deadline.signal]);
  // A body nobody reads to its end is let go here too: the deadline unlinks the caller's signal.
  const timer = scheduler.schedule(() => {
    deadline.abort();
  }, timeoutMs);
  const finish = (): void => {
    timer.unsubscribe();
    link.unlink();
  };
  // An abort ends the download even when nobody reads the body: its deadline's timer goes with it.
  link.signal?.addEventListener('abort', finish, { once: true });
  const guard: Guard = { url, maxBytes, timeoutMs, deadline: deadline.signal, signal, finish };
  let response: Response;
  try {
    response = await fetcher(url, { method: 'GET', credentials: 'omit', referrerPolicy: 'no-referrer', ...(link.signal === undefined ? {} : { signal: link.signal }) });
  } catch (error) {
    guard.finish();
    throw failureOf(error, guard);
  }
  const declared = Number(response.headers.get('content-length') ?? Number.NaN);
  const failure = !response.ok
    ? new DownloadError({ url, status: response.status })
    : declared > maxBytes
      ? new DownloadError({ url, reason: 'too-large', maxBytes })
      : undefined;
  if (failure !== undefined || response.body === null) {
    guard.finish();
    await response.body?.cancel().catch(() => undefined);
    if (failure !== undefined) throw failure;
    return response;
  }
  return new Response(guardedBody(response.body, guard), { status: response.status, statusText: response.statusText, headers: response.headers });
}

/**
 * Downloads an output file into memory, bounded as {@link openFile} is.
 *
 * @example
 * ```ts
 * const blob = await downloadFile(result.files[0]!);
 * ```
 */
export async function downloadFile(file: Pick<OutputFile, 'url'> | string, options: DownloadOptions = {}): Promise<Blob> {
  const response = await openFile(file, options);
  // `openFile` checked them: not null, and a real signal.
  try {
    return await response.blob();
  } catch (error) {
    if (options.signal?.aborted === true) throw options.signal.reason as Error;
    throw error instanceof DownloadError ? error : new DownloadError({ url: urlOf(file, options.rewriteUrl), cause: error });
  }
}
