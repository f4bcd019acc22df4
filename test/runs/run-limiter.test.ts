import { of, Subject } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { isConcurrencyLimitError } from '../../src/errors/concurrency-limit-error.js';
import { createRunLimiter } from '../../src/runs/run-limiter.js';

const MANY = 5_000;

describe('createRunLimiter: long chains of runs that end at once', () => {
  it(`queue: ${MANY.toLocaleString('en')} queued runs that complete at once all run, in order, without growing the stack`, () => {
    const limiter = createRunLimiter({ perKey: 1 });
    const first = new Subject<number>();
    const seen: number[] = [];
    limiter.run('k', () => first).subscribe((value) => seen.push(value));
    for (let index = 1; index <= MANY; index += 1) limiter.run('k', () => of(index)).subscribe((value) => seen.push(value));
    expect(limiter.queued('k')).toBe(MANY);
    first.next(0);
    first.complete();
    expect(seen).toEqual(Array.from({ length: MANY + 1 }, (_, index) => index));
    expect([limiter.active('k'), limiter.queued('k')]).toEqual([0, 0]);
  });

  it(`a consumer that subscribes the next run as each one completes, ${MANY.toLocaleString('en')} times, does not overflow the stack`, () => {
    const limiter = createRunLimiter({ perKey: 1 });
    const seen: number[] = [];
    const next = (index: number): void => {
      limiter.run('k', () => of(index)).subscribe({
        next: (value) => seen.push(value),
        complete: () => {
          if (index < MANY) next(index + 1);
        },
      });
    };
    next(1);
    expect(seen).toHaveLength(MANY);
    expect(seen.at(-1)).toBe(MANY);
    expect(limiter.active('k')).toBe(0);
  });
});

describe('createRunLimiter: slots for work that is not one Observable (acquire, tryAcquire)', () => {
  it('queue: acquire waits in the same line as run() and resolves when a slot is given back; release is idempotent', async () => {
    const limiter = createRunLimiter({ perKey: 1 });
    const releaseFirst = await limiter.acquire('k');
    const order: string[] = [];
    const second = limiter.acquire('k').then((release) => {
      order.push('acquired');
      return release;
    });
    const running = new Subject<string>();
    limiter.run('k', () => running).subscribe((value) => order.push(value));
    expect([limiter.active('k'), limiter.queued('k')]).toEqual([1, 2]);
    releaseFirst();
    releaseFirst();
    const releaseSecond = await second;
    expect([limiter.active('k'), limiter.queued('k')]).toEqual([1, 1]);
    releaseSecond();
    running.next('run');
    expect(order).toEqual(['acquired', 'run']);
    expect([limiter.active('k'), limiter.queued('k')]).toEqual([1, 0]);
    running.complete();
    releaseSecond();
    expect([limiter.active('k'), limiter.queued('k')]).toEqual([0, 0]);
  });

  it('reject: acquire rejects at once with ConcurrencyLimitError when no slot is free', async () => {
    const limiter = createRunLimiter({ perKey: 1, mode: 'reject' });
    const release = await limiter.acquire('k');
    const refused = await limiter.acquire('k').catch((error: unknown) => error);
    expect(isConcurrencyLimitError(refused)).toBe(true);
    expect(refused).toMatchObject({ key: 'k', limit: 1 });
    expect([limiter.active('k'), limiter.queued('k')]).toEqual([1, 0]);
    release();
    await expect(limiter.acquire('k')).resolves.toBeTypeOf('function');
  });

  it('gives up waiting when the signal aborts: rejects with its reason, holds nothing, and the next in line gets the slot', async () => {
    const limiter = createRunLimiter({ perKey: 1 });
    const release = await limiter.acquire('k');
    const controller = new AbortController();
    const abandoned = limiter.acquire('k', { signal: controller.signal }).catch((error: unknown) => error);
    const next = limiter.acquire('k');
    controller.abort();
    expect(await abandoned).toMatchObject({ name: 'AbortError' });
    expect(limiter.queued('k')).toBe(1);
    release();
    const releaseNext = await next;
    expect(limiter.active('k')).toBe(1);
    releaseNext();
    expect(limiter.active('k')).toBe(0);
    await expect(limiter.acquire('k', { signal: AbortSignal.abort(new Error('gone')) })).rejects.toThrow('gone');
    expect([limiter.active('k'), limiter.queued('k')]).toEqual([0, 0]);
  });

  it('refuses, from JavaScript, missing options and a signal that is not an AbortSignal with InvalidArgumentError, holding nothing', async () => {
    expect(() => (createRunLimiter as (options?: unknown) => unknown)()).toThrow(expect.objectContaining({ name: 'InvalidArgumentError', argument: 'options' }));
    expect(() => createRunLimiter(null as never)).toThrow(expect.objectContaining({ name: 'InvalidArgumentError', argument: 'options' }));
    const limiter = createRunLimiter({ perKey: 1 });
    await expect(limiter.acquire('u', { signal: new AbortController() as unknown as AbortSignal })).rejects.toMatchObject({ name: 'InvalidArgumentError', argument: 'signal' });
    await expect(limiter.acquire('u', null as never)).rejects.toMatchObject({ name: 'InvalidArgumentError', argument: 'options' });
    expect(limiter.active('u')).toBe(0);
  });

  it('tryAcquire: a slot if one is free now, else undefined, in either mode', () => {
    for (const mode of ['queue', 'reject'] as const) {
      const limiter = createRunLimiter({ perKey: 2, mode });
      const first = limiter.tryAcquire('k');
      const second = limiter.tryAcquire('k');
      expect(first).toBeTypeOf('function');
      expect(second).toBeTypeOf('function');
      expect(limiter.tryAcquire('k')).toBeUndefined();
      expect([limiter.active('k'), limiter.queued('k')]).toEqual([2, 0]);
      first?.();
      first?.();
      expect(limiter.active('k')).toBe(1);
      expect(limiter.tryAcquire('k')).toBeTypeOf('function');
    }
  });
});
