import { firstValueFrom, lastValueFrom, toArray } from 'rxjs';
import { describe, expect, it, vi } from 'vitest';
import type { ExecutionsApi, StartOptions } from '../../src/http/calls.js';
import { createRuns } from '../../src/runs/runs.js';
import { fromAbortable, withExecutionId } from '../../src/runs/run-lifecycle.js';
import { toAsyncIterable } from '../../src/runs/events.js';
import { CANVAS_ID, EXECUTION_ID, node, output, snapshot, started } from './fixtures.js';

describe('fromAbortable', () => {
  it('makes the call per subscription and delivers its answer', async () => {
    const call = vi.fn((signal: AbortSignal) => Promise.resolve(signal.aborted));
    const once$ = fromAbortable(call);
    expect(call).not.toHaveBeenCalled();
    await expect(firstValueFrom(once$)).resolves.toBe(false);
    await expect(firstValueFrom(once$)).resolves.toBe(false);
    expect(call).toHaveBeenCalledTimes(2);
  });

  it('aborts the request when unsubscribed before the answer', () => {
    let seen: AbortSignal | undefined;
    const subscription = fromAbortable((signal) => {
      seen = signal;
      return new Promise<never>(() => undefined);
    }).subscribe();
    expect(seen?.aborted).toBe(false);
    subscription.unsubscribe();
    expect(seen?.aborted).toBe(true);
  });

  it('does not abort a request that has answered', async () => {
    let seen: AbortSignal | undefined;
    await firstValueFrom(
      fromAbortable((signal) => {
        seen = signal;
        return Promise.resolve(1);
      }),
    );
    expect(seen?.aborted).toBe(false);
  });

  it('emits at once for a call that answers without a Promise', () => {
    const values: number[] = [];
    fromAbortable(() => 1).subscribe((value) => values.push(value));
    expect(values).toEqual([1]);
  });

  it('turns a call that throws at once into an error', async () => {
    await expect(
      firstValueFrom(
        fromAbortable(() => {
          throw new Error('bad argument');
        }),
      ),
    ).rejects.toThrow('bad argument');
  });
});

describe('withExecutionId', () => {
  it('adds the executionId to an error, keeping its class', () => {
    class NetworkFailure extends Error {}
    const error = new NetworkFailure('socket hang up');
    expect(withExecutionId(error, EXECUTION_ID)).toBe(error);
    expect(error).toBeInstanceOf(NetworkFailure);
    expect(error).toMatchObject({ executionId: EXECUTION_ID, message: 'socket hang up' });
  });

  it('keeps an executionId the error already has', () => {
    const error = Object.assign(new Error('x'), { executionId: 'we-other' });
    expect(withExecutionId(error, EXECUTION_ID)).toMatchObject({ executionId: 'we-other' });
  });

  it('returns what cannot carry it unchanged', () => {
    const frozen = Object.freeze(new Error('frozen'));
    expect(withExecutionId(frozen, EXECUTION_ID)).toBe(frozen);
    expect('executionId' in frozen).toBe(false);
    expect(withExecutionId('text', EXECUTION_ID)).toBe('text');
  });
});

function promiseApi(options: { readonly hang?: boolean } = {}) {
  const signals: AbortSignal[] = [];
  let reads = 0;
  const start = vi.fn(() => Promise.resolve(started()));
  const status = vi.fn((_id: string, call?: { readonly signal?: AbortSignal }) => {
    if (call?.signal !== undefined) signals.push(call.signal);
    reads += 1;
    if (options.hang === true) return new Promise<never>(() => undefined);
    return Promise.resolve(reads < 3 ? snapshot('executing', [node('n1', 'executing')]) : snapshot('finish', [node('n1', 'finish')]));
  });
  const abort = vi.fn(() => Promise.resolve());
  const api: ExecutionsApi = { start, status, output: () => Promise.resolve(output()), abort };
  return { api, start, status, abort, signals };
}

describe('createRuns over a Promise API', () => {
  it('runs to the end, passing a signal with every call, and does not abort', async () => {
    const { api, start, status, abort, signals } = promiseApi();
    const run$ = createRuns(api, { polling: { minMs: 0, maxMs: 0 } }).run(CANVAS_ID, { variables: { topic: 'tides' } });
    const events = await lastValueFrom(run$.pipe(toArray()));
    expect(events.map((event) => event.type)).toEqual(['started', 'node', 'status', 'node', 'finished']);
    expect(start).toHaveBeenCalledWith(CANVAS_ID, { variables: { topic: 'tides' } }, { signal: expect.any(AbortSignal) as unknown, onSending: expect.any(Function) as unknown });
    expect(status).toHaveBeenCalledTimes(3);
    expect(signals.every((signal) => !signal.aborted)).toBe(true);
    expect(abort).not.toHaveBeenCalled();
  });

  it('cancels the request in flight and aborts the execution once when unsubscribed', async () => {
    const { api, status, abort, signals } = promiseApi({ hang: true });
    const subscription = createRuns(api, { polling: { minMs: 0, maxMs: 0 } }).run(CANVAS_ID).subscribe();
    await vi.waitFor(() => {
      expect(status).toHaveBeenCalledTimes(1);
    });
    subscription.unsubscribe();
    expect(signals[0]?.aborted).toBe(true);
    expect(abort).toHaveBeenCalledTimes(1);
    expect(abort).toHaveBeenCalledWith(EXECUTION_ID, { signal: expect.any(AbortSignal) as unknown });
  });

  it('lets a start already on its way run to its answer when unsubscribed, and aborts once it answers', async () => {
    const { api, abort } = promiseApi();
    let answer: (value: ReturnType<typeof started>) => void = () => undefined;
    let call: StartOptions | undefined;
    api.start = (_canvasId, _input, options) => {
      call = options;
      options?.onSending?.(true);
      return new Promise((resolve) => (answer = resolve));
    };
    const subscription = createRuns(api).run(CANVAS_ID).subscribe();
    subscription.unsubscribe();
    // Not cancelled: it was sent, so the execution may exist.
    expect(call?.signal?.aborted).toBe(false);
    expect(abort).not.toHaveBeenCalled();
    answer(started());
    await vi.waitFor(() => {
      expect(abort).toHaveBeenCalledTimes(1);
    });
  });

  it('withdraws a start that is not on its way yet when unsubscribed: its call is cancelled and nothing is aborted', async () => {
    const { api, abort } = promiseApi();
    let call: StartOptions | undefined;
    api.start = (_canvasId, _input, options) => {
      call = options;
      return new Promise((_resolve, reject) => options?.signal?.addEventListener('abort', () => { reject(options.signal?.reason as Error); }));
    };
    const subscription = createRuns(api).run(CANVAS_ID).subscribe();
    subscription.unsubscribe();
    expect(call?.signal?.aborted).toBe(true);
    await Promise.resolve();
    expect(abort).not.toHaveBeenCalled();
  });
});

describe('the async-iterator bridge over a real run', () => {
  it('aborts the execution once when the loop breaks', async () => {
    const { api, abort } = promiseApi({ hang: true });
    const seen: string[] = [];
    for await (const event of toAsyncIterable(createRuns(api, { polling: { minMs: 0, maxMs: 0 } }).run(CANVAS_ID))) {
      seen.push(event.type);
      if (event.type === 'started') break;
    }
    expect(seen).toEqual(['started']);
    expect(abort).toHaveBeenCalledTimes(1);
  });
});
