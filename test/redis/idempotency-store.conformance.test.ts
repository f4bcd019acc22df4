import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { clockScheduler, createManualClock, type ManualClock } from '../../src/emulator/index.js';
import { InvalidArgumentError } from '../../src/errors/validation-errors.js';
import { createRedisIdempotencyStore, type RedisIdempotencyStore } from '../../src/redis/index.js';
import { createMemoryIdempotencyStore, type IdempotencyClaim, type IdempotencyStore } from '../../src/runs/idempotency-store.js';
import { startRedisServer, type RedisServer } from './redis-server.js';

/*
 * One suite holds every idempotency store to the contract (`IdempotencyStore`), on a manual clock:
 * the store in memory and the one in a real redis-server.
 */

const TTL_MS = 60_000;
const POLL_MS = 100;
const LEASE_MS = 3_000;

let server: RedisServer;
const opened: RedisIdempotencyStore[] = [];
let accounts = 0;
beforeAll(async () => {
  server = await startRedisServer();
});
afterAll(async () => {
  await Promise.all(opened.splice(0).map((store) => store.close()));
  await server.close();
});

interface Subject {
  readonly clock: ManualClock;
  /** Two handles on one store: two clients of the account (two processes, for Redis). */
  readonly stores: readonly [IdempotencyStore, IdempotencyStore];
}

const makers: Record<string, () => Subject> = {
  memory: () => {
    const clock = createManualClock();
    const store = createMemoryIdempotencyStore({ scheduler: clockScheduler(clock) });
    return { clock, stores: [store, store] };
  },
  redis: () => {
    const clock = createManualClock();
    const account = `conformance-${process.pid}-${(accounts += 1)}`;
    const make = (): RedisIdempotencyStore => {
      const store = createRedisIdempotencyStore({ redis: `redis+unix://${server.socket}`, account, scheduler: clockScheduler(clock), pollMs: POLL_MS, leaseMs: LEASE_MS });
      opened.push(store);
      return store;
    };
    return { clock, stores: [make(), make()] };
  },
};

/** Resolves `claim`, moving the clock a poll at a time while it waits (a waiting Redis claim looks again every `pollMs`). */
async function settled(clock: ManualClock, claim: Promise<IdempotencyClaim>, polls = 5): Promise<IdempotencyClaim> {
  let outcome: IdempotencyClaim | undefined;
  let failure: { readonly error: unknown } | undefined;
  claim.then(
    (value) => (outcome = value),
    (error: unknown) => (failure = { error }),
  );
  for (let poll = 0; poll <= polls; poll += 1) {
    for (let turn = 0; turn < 20 && outcome === undefined && failure === undefined; turn += 1) await new Promise((resolve) => setImmediate(resolve));
    if (failure !== undefined) throw failure.error;
    if (outcome !== undefined) return outcome;
    clock.advance(POLL_MS);
  }
  throw new Error('the claim is still waiting');
}

async function started(claim: Promise<IdempotencyClaim>): Promise<string> {
  const value = await claim;
  if (value.kind !== 'start') throw new Error(`expected start, got ${value.kind}`);
  return value.token;
}

describe.each(Object.keys(makers))('IdempotencyStore conformance: %s', (name) => {
  const subject = (): Subject => makers[name]!();

  it('hands a free key to one caller; a caller that comes while its start is on its way follows the execution it records', async () => {
    const { clock, stores: [a, b] } = subject();
    const token = await started(a.claim('k', TTL_MS));
    const waiting = b.claim('k', TTL_MS);
    await a.record('k', token, 'we-1');
    expect(await settled(clock, waiting)).toEqual({ kind: 'follow', executionId: 'we-1' });
  });

  it('gives a released key to the next caller, one that was waiting included', async () => {
    const { clock, stores: [a, b] } = subject();
    const token = await started(a.claim('k', TTL_MS));
    const waiting = b.claim('k', TTL_MS);
    await a.release('k', token);
    expect((await settled(clock, waiting)).kind).toBe('start');
  });

  it('answers in doubt for an abandoned key until it expires, with when it was claimed', async () => {
    const { clock, stores: [a, b] } = subject();
    const claimedAt = clock.now();
    const token = await started(a.claim('k', TTL_MS));
    await a.abandon('k', token);
    expect(await settled(clock, b.claim('k', TTL_MS))).toEqual({ kind: 'in-doubt', claimedAt });
    clock.advance(TTL_MS);
    expect((await settled(clock, b.claim('k', TTL_MS))).kind).toBe('start');
  });

  it('frees a recorded key after its TTL; its old owner can no longer write it', async () => {
    const { clock, stores: [a, b] } = subject();
    const old = await started(a.claim('k', TTL_MS));
    await a.record('k', old, 'we-1');
    clock.advance(TTL_MS - 1);
    expect(await settled(clock, b.claim('k', TTL_MS))).toEqual({ kind: 'follow', executionId: 'we-1' });
    clock.advance(1);
    const token = await started(b.claim('k', TTL_MS));
    await a.release('k', old);
    await a.record('k', old, 'we-stale');
    await b.record('k', token, 'we-2');
    expect(await settled(clock, a.claim('k', TTL_MS))).toEqual({ kind: 'follow', executionId: 'we-2' });
  });

  it('stops waiting when the signal aborts', async () => {
    const { clock, stores: [a, b] } = subject();
    await started(a.claim('k', TTL_MS));
    const controller = new AbortController();
    const waiting = b.claim('k', TTL_MS, { signal: controller.signal });
    controller.abort(new Error('left'));
    await expect(settled(clock, waiting)).rejects.toThrow('left');
  });

  it('refuses an empty key and a TTL that cannot be meant', async () => {
    const { stores: [a] } = subject();
    await expect(a.claim('', TTL_MS)).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(a.claim('k', -1)).rejects.toBeInstanceOf(InvalidArgumentError);
  });
});

describe('createRedisIdempotencyStore: owners', () => {
  it('keeps a live owner’s claim past its lease (renewed), and answers in doubt once a vanished owner’s lease ran out', async () => {
    const clock = createManualClock();
    const account = `conformance-${process.pid}-${(accounts += 1)}`;
    const make = (): RedisIdempotencyStore => {
      const store = createRedisIdempotencyStore({ redis: `redis+unix://${server.socket}`, account, scheduler: clockScheduler(clock), pollMs: POLL_MS, leaseMs: LEASE_MS });
      opened.push(store);
      return store;
    };
    const [owner, other] = [make(), make()];
    const redis = new Redis({ path: server.socket });
    try {
      const claimedAt = clock.now();
      await started(owner.claim('k', TTL_MS));
      // Two leases with the owner alive, a renewal at each third: the claim stays the owner's.
      for (let renewal = 1; renewal <= 6; renewal += 1) {
        clock.advance(LEASE_MS / 3);
        const renewedTo = clock.now() + LEASE_MS;
        await vi.waitFor(async () => {
          expect(Number(await redis.hget(`{fs:${account}}:idempotency:k`, 'leaseUntil'))).toBe(renewedTo);
        }, { timeout: 5_000, interval: 5 });
      }
      const waiting = other.claim('k', TTL_MS);
      await expect(Promise.race([waiting, settled(clock, new Promise<never>(() => undefined), 2).catch(() => 'still waiting')])).resolves.toBe('still waiting');
      // The owner vanishes (no more renewals): within a lease the key is in doubt.
      await owner.close();
      expect(await settled(clock, waiting, LEASE_MS / POLL_MS + 1)).toEqual({ kind: 'in-doubt', claimedAt });
    } finally {
      redis.disconnect();
    }
  });
});
