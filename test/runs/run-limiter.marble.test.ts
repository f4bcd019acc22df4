import { describe, expect, it } from 'vitest';
import { isConcurrencyLimitError } from '../../src/errors/concurrency-limit-error.js';
import { createRunLimiter } from '../../src/runs/run-limiter.js';
import { testScheduler } from './fixtures.js';

describe('createRunLimiter: runs per key', () => {
  it('queue: a run beyond the limit starts when a slot is given back, first come first served', () => {
    testScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const limiter = createRunLimiter({ perKey: 2, mode: 'queue' });
      const a = cold('---a|');
      const b = cold('-----b|');
      const c = cold('-c|');
      const d = cold('(d|)');
      expectObservable(limiter.run('user-1', () => a)).toBe('---a|');
      expectObservable(limiter.run('user-1', () => b)).toBe('-----b|');
      expectObservable(limiter.run('user-1', () => c)).toBe('-----c|');
      // Another key has its own slots.
      expectObservable(limiter.run('user-2', () => d)).toBe('(d|)');
      // c waits for a's slot (4), then runs.
      expectSubscriptions(c.subscriptions).toBe('----^-!');
      expectSubscriptions(d.subscriptions).toBe('(^!)');
    });
  });

  it('queue: unsubscribing while queued leaves the queue and starts nothing', () => {
    testScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const limiter = createRunLimiter({ perKey: 1 });
      const first = cold('-----a|');
      const given = cold('(b|)');
      const next = cold('(c|)');
      expectObservable(limiter.run('k', () => first)).toBe('-----a|');
      expectObservable(limiter.run('k', () => given), '^ 2ms !').toBe('');
      expectObservable(limiter.run('k', () => next)).toBe('------(c|)');
      expectSubscriptions(given.subscriptions).toBe([]);
      expectSubscriptions(next.subscriptions).toBe('------(^!)');
    });
  });

  it('gives the slot back on error and on unsubscribe', () => {
    testScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const limiter = createRunLimiter({ perKey: 1 });
      const failing = cold('--#');
      const left = cold('------x');
      const last = cold('(a|)');
      expectObservable(limiter.run('k', () => failing)).toBe('--#');
      expectObservable(limiter.run('k', () => left), '^ 4ms !').toBe('');
      expectObservable(limiter.run('k', () => last)).toBe('-----(a|)');
      expectSubscriptions(left.subscriptions).toBe('--^--!');
      expectSubscriptions(last.subscriptions).toBe('-----(^!)');
    });
  });

  it('reject: errors at once with ConcurrencyLimitError, starting nothing; counts active runs per key', () => {
    const errors: unknown[] = [];
    testScheduler().run(({ cold, expectObservable, expectSubscriptions, flush }) => {
      const limiter = createRunLimiter({ perKey: 1, mode: 'reject' });
      const running = cold('---a|');
      const refused = cold('(b|)');
      expectObservable(limiter.run('k', () => running)).toBe('---a|');
      cold('-x---y').subscribe((step) => {
        if (step === 'x') {
          expect(limiter.active('k')).toBe(1);
          limiter.run('k', () => refused).subscribe({ error: (error: unknown) => errors.push(error) });
        }
        if (step === 'y') expect(limiter.active('k')).toBe(0);
      });
      flush();
      expectSubscriptions(refused.subscriptions).toBe([]);
      expect(limiter.queued('k')).toBe(0);
    });
    expect(errors).toHaveLength(1);
    expect(isConcurrencyLimitError(errors[0])).toBe(true);
    expect(errors[0]).toMatchObject({ code: 'CONCURRENCY_LIMIT', key: 'k', limit: 1 });
  });

  it('counts active and queued runs', () => {
    testScheduler().run(({ cold, flush }) => {
      const limiter = createRunLimiter({ perKey: 1 });
      limiter.run('k', () => cold('--|')).subscribe();
      limiter.run('k', () => cold('--|')).subscribe();
      expect([limiter.active('k'), limiter.queued('k'), limiter.active('other')]).toEqual([1, 1, 0]);
      flush();
      expect([limiter.active('k'), limiter.queued('k')]).toEqual([0, 0]);
    });
  });

  it('refuses options that cannot be meant', () => {
    expect(() => createRunLimiter({ perKey: 0 })).toThrow(/perKey/);
    expect(() => createRunLimiter({ perKey: 1.5 })).toThrow(/perKey/);
    expect(() => createRunLimiter({ perKey: 1, mode: 'drop' as 'queue' })).toThrow(/mode/);
  });
});
