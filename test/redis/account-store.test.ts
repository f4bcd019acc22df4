import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { budgetLimits } from '../../src/budget/account-rules.js';
import type { RequestBudgetOptions } from '../../src/domain/options.js';
import { RedisAccountStore, RedisLedger } from '../../src/redis/account-store.js';
import { startRedisServer, type RedisServer } from './redis-server.js';
import { SharedProcess } from '../../src/budget/process-rules.js';

const LIMITS = budgetLimits();
/** The account's clock in these tests: it moves only when a test moves it. */
let now = 1_000_000;

let server: RedisServer;
let redis: Redis;
beforeAll(async () => {
  server = await startRedisServer();
  redis = new Redis({ path: server.socket, lazyConnect: false, maxRetriesPerRequest: 1 });
});
afterAll(async () => {
  redis.disconnect();
  await server.close();
});

const store = (account: string, process: string, options: RequestBudgetOptions = {}, client: Redis = redis): RedisAccountStore =>
  new RedisAccountStore(client, { account, config: { options, process: new SharedProcess(process, 10_000) }, clock: () => now });

describe('the account\'s rule book through the Redis ledger, on a real redis-server', () => {
  it('grants the burst at once, then says when the pacer lets the next one go', async () => {
    const account = store('acct-burst', 'p1');
    const grants = [];
    for (let index = 0; index < 6; index++) grants.push(await account.grant('read', 1));
    expect(grants.slice(0, 5).map((grant) => grant.verdict)).toEqual(['granted', 'granted', 'granted', 'granted', 'granted']);
    const sixth = grants[5]!;
    expect(sixth.verdict).toBe('wait');
    // Five sends at about the same moment: the sixth waits about one pacing interval.
    if (sixth.verdict === 'wait') expect(sixth.at - sixth.now).toBeGreaterThan(600);
  });

  it('shares the pace of reads between processes by their waiting runs: 1 run against 3 runs', async () => {
    // A pacer that does not bind (a large burst), so each process's own share decides.
    const options = { requestsPerMinute: 200, safetyMargin: 0, burst: 100 };
    const interval = budgetLimits(options).pacingIntervalMs;
    const three = store('acct-share', 'three', options);
    const one = store('acct-share', 'one', options);
    expect((await three.grant('read', 3)).verdict).toBe('granted');
    expect((await one.grant('read', 1)).verdict).toBe('granted');
    // 4 runs wait across the fleet: the 1-run process's next read comes 4 intervals after its last,
    // the 3-run process's after 4/3 of one (1 while it was alone) — every run is read about equally
    // often, and the shares add up to the pacer's whole pace.
    const waitOf = async (account: RedisAccountStore, runs: number): Promise<number> => {
      const grant = await account.grant('read', runs);
      return grant.verdict === 'wait' ? grant.at - grant.now : 0;
    };
    const oneWaits = await waitOf(one, 1);
    const threeWaits = await waitOf(three, 3);
    expect(oneWaits).toBeCloseTo(4 * interval, 6);
    expect(threeWaits).toBeCloseTo(interval, 6);
  });

  it('refuses a start at once when the day is spent, and lets an abort use the reserve', async () => {
    // A day of 10: polls stop at 7 (the reserve is 3) and at once only the day's burst (6) goes;
    // starts stop at 8, aborts may take the rest.
    const options = { requestsPerDay: 10, dayReserve: 0.3, dayBurst: 0.9, burst: 10 };
    const reads = store('acct-day', 'reader', options);
    let granted = 0;
    for (let index = 0; index < 10; index++) if ((await reads.grant('read', 1)).verdict === 'granted') granted += 1;
    expect(granted).toBe(6);
    const starter = store('acct-day', 'starter', options);
    expect((await starter.grant('start', 0, 'c-1\n{}')).verdict).toBe('granted');
    expect((await starter.grant('start', 0, 'c-2\n{}')).verdict).toBe('granted');
    expect((await starter.grant('start', 0, 'c-3\n{}')).verdict).toBe('refused');
    expect((await starter.grant('abort', 0)).verdict).toBe('granted');
    expect((await starter.grant('abort', 0)).verdict).toBe('granted');
    expect((await starter.grant('abort', 0)).verdict).toBe('wait');
  });

  it('pauses every process of the account after one of them met a 429', async () => {
    const a = store('acct-429', 'a');
    const b = store('acct-429', 'b');
    await a.report({ httpStatus: 429 });
    const grant = await b.grant('start', 0, 'c-x\n{}');
    expect(grant.verdict).toBe('wait');
    if (grant.verdict === 'wait') expect(grant.at - grant.now).toBeGreaterThan(60_000);
  });

  it('spaces identical starts across processes by the duplicate window (service.md §2.2)', async () => {
    const a = store('acct-dup', 'a');
    const b = store('acct-dup', 'b');
    expect((await a.grant('start', 0, 'c-1\n{"variables":{}}')).verdict).toBe('granted');
    const again = await b.grant('start', 0, 'c-1\n{"variables":{}}');
    expect(again.verdict).toBe('wait');
    expect((await b.grant('start', 0, 'c-1\n{"variables":{"n":2}}')).verdict).toBe('granted');
  });

  it('keeps no start body in Redis: an identical start\'s mark is a digest, forgotten once the duplicate window is over', async () => {
    const a = store('acct-private', 'a');
    const body = 'c-1\n{"variables":{"email":"ada@example.com","token":"tok-secret-123"}}';
    expect((await a.grant('start', 0, body)).verdict).toBe('granted');
    await a.report({ httpStatus: 200, startKey: body });
    const keys = await redis.keys('{fs:acct-private}:*');
    const contents = await Promise.all(
      keys.map(async (key) => {
        switch (await redis.type(key)) {
          case 'hash':
            return JSON.stringify(await redis.hgetall(key));
          case 'zset':
            return JSON.stringify(await redis.zrange(key, 0, -1));
          default:
            return (await redis.get(key)) ?? '';
        }
      }),
    );
    expect(`${keys.join(' ')} ${contents.join(' ')}`).not.toMatch(/ada@example|tok-secret/u);
    // One key: the record, whose marks are digests.
    expect(keys).toEqual(['{fs:acct-private}:ledger']);
    // Still spaced: the same body waits, from another process too, until the duplicate window is over,
    // and then its mark is gone from the record.
    expect((await store('acct-private', 'b').grant('start', 0, body)).verdict).toBe('wait');
    now += LIMITS.duplicateStartSpacingMs;
    const later = await store('acct-private', 'b').grant('start', 0, 'c-2\n{}');
    expect(later.verdict).toBe('granted');
    expect(Object.keys(later.record.starts)).toHaveLength(1);
  });

  it('does not slow the account for a process configured with a lower per-minute limit (100 and 30)', async () => {
    const fast = store('acct-mixed', 'fast', { requestsPerMinute: 100 });
    const slow = store('acct-mixed', 'slow', { requestsPerMinute: 30 });
    expect((await fast.grant('interactive', 0)).verdict).toBe('granted');
    expect((await slow.grant('interactive', 0)).verdict).toBe('granted');
    // The slow process's send took one interval of the account's pace (682 ms), not of its own (2,297
    // ms): the rest of the account's burst of 5 is still there.
    const more = [];
    for (let index = 0; index < 3; index++) more.push((await fast.grant('interactive', 0)).verdict);
    expect(more).toEqual(['granted', 'granted', 'granted']);
  });

  it('holds a process configured with a lower per-minute limit to its own pace', async () => {
    // The account's burst (8 of the 20 asked for) is larger than the slow process's own (3 of 5: what
    // keeps its pace at 85% of its 30 a minute).
    const fast = store('acct-own-pace', 'fast', { requestsPerMinute: 100, burst: 20 });
    const slow = store('acct-own-pace', 'slow', { requestsPerMinute: 30 });
    expect((await fast.grant('interactive', 0)).verdict).toBe('granted');
    const verdicts = [];
    for (let index = 0; index < 4; index++) verdicts.push(await slow.grant('interactive', 0));
    expect(verdicts.slice(0, 3).map((grant) => grant.verdict)).toEqual(['granted', 'granted', 'granted']);
    const fourth = verdicts[3]!;
    expect(fourth.verdict).toBe('wait');
    // Its own interval at 30 a minute: ⌈62,000 / (29 − 3 + 1)⌉ = 2,297 ms after its own burst.
    if (fourth.verdict === 'wait') expect(fourth.at - fourth.now).toBeGreaterThan(2_000);
    // The account has room left: the fast process goes on.
    expect((await fast.grant('interactive', 0)).verdict).toBe('granted');
  });

  it('gives the reads a process with a lower limit cannot take to the others', async () => {
    const fast = store('acct-mixed-reads', 'fast', { requestsPerMinute: 100 });
    const slow = store('acct-mixed-reads', 'slow', { requestsPerMinute: 30 });
    // 20 runs waiting in each. The account's reads go at one per 682 ms; the slow process takes at
    // most one per 2,297 ms of them, so the fast one's turn comes every 1 / (1/682 − 1/2,297) ≈ 970 ms
    // — not every 1,364 ms, as an equal split by runs would give it.
    expect((await slow.grant('read', 20)).verdict).toBe('granted');
    expect((await fast.grant('read', 20)).verdict).toBe('granted');
    const next = await fast.grant('read', 20);
    expect(next.verdict).toBe('wait');
    if (next.verdict === 'wait') {
      expect(next.at - next.now).toBeGreaterThan(900);
      expect(next.at - next.now).toBeLessThan(1_000);
    }
  });

  it('keeps every key of an account in one cluster hash slot', async () => {
    await store('acct-slot', 'p').grant('read', 1);
    const keys = (await redis.keys('{fs:acct-slot}:*')).sort();
    expect(keys.length).toBeGreaterThanOrEqual(1);
    const slots = new Set(await Promise.all(keys.map((key) => redis.cluster('KEYSLOT', key).catch(() => 'no-cluster'))));
    // CLUSTER KEYSLOT needs cluster mode; the hash tag is what decides the slot either way.
    expect(keys.every((key) => key.startsWith('{fs:acct-slot}:'))).toBe(true);
    expect(slots.size).toBe(1);
  });
});

describe('the Redis ledger\'s one clock', () => {
  it('changes the account at the time Redis allows when a process\'s clock steps ahead, and says so once', async () => {
    // Real time (timeScale 1): the account's clock may run ahead of Redis's time only by the tolerance.
    const start = Date.now();
    let clock = start;
    const steps: number[] = [];
    const honest = new RedisAccountStore(redis, { account: 'acct-clock', config: { options: {}, process: new SharedProcess('a', 10_000) }, clock: () => start, timeScale: 1 });
    const stepped = new RedisAccountStore(redis, { account: 'acct-clock', config: { options: {}, process: new SharedProcess('b', 10_000) }, clock: () => clock, timeScale: 1, onClockStep: (aheadMs) => steps.push(aheadMs) });
    await honest.report({ httpStatus: 429 });
    // An hour ahead: the 429's pause would be long over on this clock, but not on the account's.
    clock = start + 3_600_000;
    const grant = await stepped.grant('interactive', 0);
    expect(grant.verdict).toBe('wait');
    expect(grant.now).toBeLessThan(start + 60_000);
    expect(await stepped.grant('interactive', 0)).toMatchObject({ verdict: 'wait' });
    expect(steps).toHaveLength(1);
    expect(steps[0]).toBeGreaterThan(3_500_000);
  });

  it('takes the scheduler\'s time as the account\'s when no timeScale says how it relates to Redis\'s (a virtual clock)', async () => {
    let clock = 0;
    const virtual = new RedisAccountStore(redis, { account: 'acct-virtual', config: { options: {}, process: new SharedProcess('a', 10_000) }, clock: () => clock });
    await virtual.report({ httpStatus: 429 });
    clock = 62_000;
    expect(await virtual.grant('interactive', 0)).toMatchObject({ verdict: 'granted', now: 62_000 });
  });
});

describe('the Redis ledger when Redis loses the account', () => {
  /** A process of `account` that was granted a read, then Redis restarted with nothing saved; its own connection, closed after `use`. */
  async function afterLoss(account: string, use: (store: RedisAccountStore) => Promise<void>): Promise<void> {
    const fresh = new Redis({ path: server.socket, maxRetriesPerRequest: null });
    fresh.on('error', () => undefined);
    try {
      const a = store(account, 'a', {}, fresh);
      expect((await a.grant('read', 1)).verdict).toBe('granted');
      await server.stop({ crash: true });
      await server.restart();
      await use(a);
    } finally {
      fresh.disconnect();
    }
  }

  it('pauses the account for a window after a restart with nothing saved, even when an answer\'s report reaches Redis first', async () => {
    await afterLoss('acct-lost', async (a) => {
      // The answer to the request granted before the loss is reported before anything else is asked.
      await a.report({ httpStatus: 200, rateLimit: { remainingPerMinute: 99 } });
      const next = await a.grant('read', 1);
      expect(next.verdict).toBe('wait');
      if (next.verdict === 'wait') expect(next.at - next.now).toBeGreaterThan(59_000);
    });
  });

  it('learns again mid-day from the service\'s headers what is left of the day, and spreads it rather than spending it at once', async () => {
    await afterLoss('acct-lost-day', async (a) => {
      // The service says 600 are left today (9,400 spent): 100 for polls above the reserve of 500.
      await a.report({ httpStatus: 200, sentAt: now, rateLimit: { remainingPerDay: 600 } });
      let granted = 0;
      const until = now + 10 * 60_000;
      while (now < until) {
        const grant = await a.grant('read', 1);
        if (grant.verdict === 'granted') granted += 1;
        now = grant.verdict === 'wait' ? Math.min(until, Math.max(now + 1, grant.at)) : now + 1;
      }
      // A tenth of the 100 at once, then 100 a day: not the 100 at the minute's pace.
      expect(granted).toBeGreaterThan(0);
      expect(granted).toBeLessThanOrEqual(12);
    });
  });
});

describe('the Redis ledger\'s compare-and-set', () => {
  const config = { options: {}, process: new SharedProcess('p-cas', 10_000) };
  /** A change that lets another writer in between its read and its write `times` times (the same connection, so in order). */
  const contended = (account: string, times: number) => {
    let calls = 0;
    return <T>(record: T, at: number): [T, number] => {
      calls += 1;
      if (calls <= times) void redis.hincrby(`{fs:${account}}:ledger`, 'v', 1);
      return [record, at];
    };
  };

  it('makes a change again each time another process wrote first, and counts the conflicts', async () => {
    const ledger = new RedisLedger(redis, { account: 'acct-cas', config });
    await expect(ledger.transact(now, contended('acct-cas', 3))).resolves.toBe(now);
    expect(ledger.conflicts).toBe(3);
  });

  it('makes a change again in one round trip a conflict: the write that met it brings the record back', async () => {
    const ledger = new RedisLedger(redis, { account: 'acct-cas-trips', config });
    await ledger.transact(now, (record, at) => [record, at]);
    const scriptCalls = async (): Promise<number> => {
      const stats = await redis.info('commandstats');
      return [...stats.matchAll(/^cmdstat_(?:evalsha|eval):calls=(\d+)/gmu)].reduce((sum, match) => sum + Number(match[1]), 0);
    };
    const before = await scriptCalls();
    await expect(ledger.transact(now, contended('acct-cas-trips', 3))).resolves.toBe(now);
    // One read, then a write per attempt: 3 conflicted, the 4th written.
    expect((await scriptCalls()) - before).toBe(1 + 4);
  });

  it('judges each attempt at the clock\'s time once the record is read, not at the time the change was asked', async () => {
    let clock = now;
    const ledger = new RedisLedger(redis, { account: 'acct-cas-clock', config, clock: () => clock });
    const judgedAt: number[] = [];
    const change = contended('acct-cas-clock', 2);
    await ledger.transact(now, (record, at) => {
      judgedAt.push(at);
      // The clock moves on while the attempt is on its way to Redis.
      clock += 3_000;
      return change(record, at);
    });
    expect(judgedAt).toEqual([now, now + 3_000, now + 6_000]);
  });

  it('counts a grant when Redis answers, not when it was asked: a grant that waited for a slow Redis is judged later', async () => {
    let clock = now;
    const account = new RedisAccountStore(redis, { account: 'acct-slow-redis', config: { options: {}, process: new SharedProcess('p', 10_000) }, clock: () => clock });
    const grant = account.grant('read', 1);
    // The clock moves on before Redis has answered.
    clock += 4_000;
    expect(await grant).toMatchObject({ verdict: 'granted', now: now + 4_000 });
  });

  it('gives up with BUDGET_UNAVAILABLE after 65 conflicts in a row rather than spin for ever', async () => {
    const ledger = new RedisLedger(redis, { account: 'acct-cas-spin', config });
    await expect(ledger.transact(now, contended('acct-cas-spin', Number.POSITIVE_INFINITY))).rejects.toMatchObject({ code: 'BUDGET_UNAVAILABLE' });
    expect(ledger.conflicts).toBe(65);
  });
});

