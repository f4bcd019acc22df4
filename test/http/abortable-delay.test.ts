import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { asyncScheduler } from 'rxjs';
import { abortableDelay } from '../../src/http/abortable-delay.js';

/** An AbortSignal that counts its abort listeners. */
function countingSignal(): { controller: AbortController; listeners: () => number } {
  const controller = new AbortController();
  let count = 0;
  const add = controller.signal.addEventListener.bind(controller.signal);
  const remove = controller.signal.removeEventListener.bind(controller.signal);
  vi.spyOn(controller.signal, 'addEventListener').mockImplementation((...args: Parameters<AbortSignal['addEventListener']>) => { count += 1; add(...args); });
  vi.spyOn(controller.signal, 'removeEventListener').mockImplementation((...args: Parameters<AbortSignal['removeEventListener']>) => { count -= 1; remove(...args); });
  return { controller, listeners: () => count };
}

beforeEach(() => { vi.useFakeTimers(); });
afterEach(() => { vi.useRealTimers(); });

describe('abortableDelay', () => {
  it('resolves after the delay and removes its abort listener', async () => {
    const { controller, listeners } = countingSignal();
    const wait = abortableDelay(1_000, asyncScheduler, controller.signal);
    expect(listeners()).toBe(1);
    await vi.advanceTimersByTimeAsync(1_000);
    await expect(wait).resolves.toBeUndefined();
    expect(listeners()).toBe(0);
  });

  it('rejects with the signal’s reason as soon as it aborts, leaving no timer', async () => {
    const controller = new AbortController();
    const wait = abortableDelay(60_000, asyncScheduler, controller.signal);
    controller.abort(new Error('left'));
    await expect(wait).rejects.toThrow('left');
    expect(vi.getTimerCount()).toBe(0);
  });

  it('rejects at once for an already aborted signal', async () => {
    await expect(abortableDelay(10, asyncScheduler, AbortSignal.abort(new Error('early')))).rejects.toThrow('early');
    expect(vi.getTimerCount()).toBe(0);
  });
});
