import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import type { SchedulerLike } from 'rxjs';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { answeringPrepared, createFileIdempotencyStore, type FileIdempotencyStore } from '../../src/cli/idempotency-keys.js';
import { clockScheduler, createManualClock, type ManualClock } from '../../src/emulator/index.js';
import { InvalidArgumentError } from '../../src/errors/validation-errors.js';
import { createRedisIdempotencyStore, type RedisIdempotencyStore } from '../../src/redis/index.js';
import { createMemoryIdempotencyStore, type IdempotencyClaim, type IdempotencyStore } from '../../src/runs/idempotency.js';
import { startRedisServer, type RedisServer } from './redis-server.js';

/*
 * One suite holds every idempotency store to the contract (`IdempotencyStore`), on a manual clock:
 * the store in memory, the one in a real redis-server, and the one in a folder of `flowstream run
 * --idempotency-key` (two handles on one folder, as two runs of the command).
 */

const TTL_MS = 60_000;
const POLL_MS = 100;
const LEASE_MS = 3_000;

let server: RedisServer;
let folders: string;
const opened: RedisIdempotencyStore[] = [];
let accounts = 0;
beforeAll(async () => {
  server = await startRedisServer();
  folders = await mkdtemp(join(tmpdir(), 'flowstream-keys-'));
});
afterAll(async () => {
  await rm(folders, { recursive: true, force: true });
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
  file: () => {
    const clock = createManualClock();
    const directory = join(folders, `keys-${(accounts += 1)}`);
    const make = (): IdempotencyStore => createFileIdempotencyStore({ directory, baseUrl: 'http://127.0.0.1:1/v1', scheduler: clockScheduler(clock) });
    return { clock, stores: [make(), make()] };
  },
};

/** Real ms a claim may take to answer on a loaded machine (readiness only: the outcome never depends on it). */
const WITHIN_MS = 10_000;

/**
 * Resolves a claim that waits on another's start: while it waits, the clock moves to its next timer
 * (a waiting Redis claim looks again every `pollMs`; the owner's lease is renewed every third of a lease).
 */
async function awaited<T>(clock: ManualClock, claim: Promise<T>): Promise<T> {
  let outcome: { readonly value: T } | { readonly error: unknown } | undefined;
  claim.then(
    (value) => (outcome = { value }),
    (error: unknown) => (outcome = { error }),
  );
  // Read through a function: the callbacks above set it, which narrowing cannot see.
  const current = (): typeof outcome => outcome;
  const deadline = Date.now() + WITHIN_MS;
  while (current() === undefined && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 5));
    const next = clock.nextTimerAt();
    if (current() === undefined && next !== undefined) clock.advance(Math.max(0, next - clock.now()));
  }
  const settled = current();
  if (settled === undefined) throw new Error('the claim is still waiting');
  if ('error' in settled) throw settled.error;
  return settled.value;
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
    expect(await awaited(clock, waiting)).toEqual({ kind: 'follow', executionId: 'we-1' });
  });

  it('of two callers claiming a free key at once, one starts and the other follows what it records', async () => {
    const { clock, stores: [a, b] } = subject();
    const claims = [a.claim('k', TTL_MS), b.claim('k', TTL_MS)];
    const first = await Promise.race(claims.map(async (claim, index) => ({ index, value: await claim })));
    expect(first.value.kind).toBe('start');
    const owner = first.index === 0 ? a : b;
    await owner.record('k', (first.value as { readonly token: string }).token, 'we-1');
    expect(await awaited(clock, claims[1 - first.index]!)).toEqual({ kind: 'follow', executionId: 'we-1' });
  });

  it('gives a released key to the next caller, one that was waiting included', async () => {
    const { clock, stores: [a, b] } = subject();
    const token = await started(a.claim('k', TTL_MS));
    const waiting = b.claim('k', TTL_MS);
    await a.release('k', token);
    expect((await awaited(clock, waiting)).kind).toBe('start');
  });

  it('answers in doubt for an abandoned key until it expires, with when it was claimed', async () => {
    const { clock, stores: [a, b] } = subject();
    const claimedAt = clock.now();
    const token = await started(a.claim('k', TTL_MS));
    await a.abandon('k', token);
    expect(await b.claim('k', TTL_MS)).toEqual({ kind: 'in-doubt', claimedAt });
    clock.advance(TTL_MS);
    expect((await b.claim('k', TTL_MS)).kind).toBe('start');
  });

  it('frees a recorded key after its TTL; its old owner can no longer write it', async () => {
    const { clock, stores: [a, b] } = subject();
    const old = await started(a.claim('k', TTL_MS));
    await a.record('k', old, 'we-1');
    clock.advance(TTL_MS - 1);
    expect(await b.claim('k', TTL_MS)).toEqual({ kind: 'follow', executionId: 'we-1' });
    clock.advance(1);
    const token = await started(b.claim('k', TTL_MS));
    await a.release('k', old);
    await a.record('k', old, 'we-stale');
    await b.record('k', token, 'we-2');
    expect(await a.claim('k', TTL_MS)).toEqual({ kind: 'follow', executionId: 'we-2' });
  });

  it('stops waiting when the signal aborts', async () => {
    const { clock, stores: [a, b] } = subject();
    await started(a.claim('k', TTL_MS));
    const controller = new AbortController();
    const waiting = b.claim('k', TTL_MS, { signal: controller.signal });
    controller.abort(new Error('left'));
    await expect(awaited(clock, waiting)).rejects.toThrow('left');
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
      let answer: IdempotencyClaim | undefined;
      void waiting.then((value) => (answer = value));
      // Its first look is answered `wait` (the owner's lease lives): it looks again after `pollMs`.
      await vi.waitFor(() => {
        expect(clock.nextTimerAt()).toBe(clock.now() + POLL_MS);
      }, { timeout: WITHIN_MS, interval: 5 });
      expect(answer).toBeUndefined();
      // The owner vanishes (no more renewals): within a lease the key is in doubt.
      await owner.close();
      expect(await awaited(clock, waiting)).toEqual({ kind: 'in-doubt', claimedAt });
    } finally {
      redis.disconnect();
    }
  });
});

/** Two handles on one folder of keys, as two runs of `flowstream run --idempotency-key`, and a handle of another service. */
function fileStores(): { readonly clock: ManualClock; readonly directory: string; readonly stores: readonly [FileIdempotencyStore, FileIdempotencyStore]; readonly otherService: FileIdempotencyStore } {
  const clock = createManualClock();
  const directory = join(folders, `keys-${(accounts += 1)}`);
  const make = (baseUrl: string): FileIdempotencyStore => createFileIdempotencyStore({ directory, baseUrl, scheduler: clockScheduler(clock) });
  return { clock, directory, stores: [make('http://127.0.0.1:1/v1'), make('http://127.0.0.1:1/v1')], otherService: make('http://127.0.0.1:2/v1') };
}

const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

/** How many keys are on disk, over every service. */
async function keysOnDisk(directory: string): Promise<number> {
  const services = await readdir(directory);
  const keys = await Promise.all(services.map((service) => readdir(join(directory, service))));
  return keys.flat().length;
}

describe('createFileIdempotencyStore: prepare', () => {
  it('takes a free key before the run sends anything: another claim waits on it, then follows the execution it records', async () => {
    const { clock, stores: [a, b] } = fileStores();
    const token = await started(a.prepare('k', TTL_MS));
    const waiting = b.claim('k', TTL_MS);
    await a.sending('k', token);
    await a.record('k', token, 'we-1');
    expect(await awaited(clock, waiting)).toEqual({ kind: 'follow', executionId: 'we-1' });
    // A held key is prepared as it is claimed: what holds it, taking nothing.
    expect(await b.prepare('k', TTL_MS)).toEqual({ kind: 'follow', executionId: 'we-1' });
  });

  it('a prepared key whose process died before sending is free; one that died after sending is in doubt', async () => {
    const { directory, stores: [a, b] } = fileStores();
    // A process that has exited: its pid names no live process.
    const dead = spawnSync(process.execPath, ['-e', '']).pid;
    // Its claim file says that process took it, as if it had claimed and then died.
    const diedAs = (key: string, token: string): void => {
      const file = join(directory, sha256('http://127.0.0.1:1/v1'), sha256(key), `claim-${token.split(':')[0] ?? ''}.json`);
      writeFileSync(file, JSON.stringify({ ...(JSON.parse(readFileSync(file, 'utf8')) as object), pid: dead }));
    };
    diedAs('preparing', await started(a.prepare('preparing', TTL_MS)));
    expect((await b.claim('preparing', TTL_MS)).kind).toBe('start');
    const sent = await started(a.prepare('sent', TTL_MS));
    await a.sending('sent', sent);
    diedAs('sent', sent);
    expect((await b.claim('sent', TTL_MS)).kind).toBe('in-doubt');
    // The command's store hands the prepared start to the run's claim, marked as sending.
    const prepared = await a.prepare('handed', TTL_MS);
    const handed = answeringPrepared(a, 'handed', prepared);
    expect(await handed.claim('handed', TTL_MS)).toEqual(prepared);
    await handed.unclaimed();
    diedAs('handed', await started(Promise.resolve(prepared)));
    expect((await b.claim('handed', TTL_MS)).kind).toBe('in-doubt');
  });

  it('a prepared start that its run never claims (an upload failed) is released: the key is free at once', async () => {
    const { stores: [a, b] } = fileStores();
    await answeringPrepared(a, 'k', await a.prepare('k', TTL_MS)).unclaimed();
    expect((await b.claim('k', TTL_MS)).kind).toBe('start');
  });
});

describe('createFileIdempotencyStore: sweeping', () => {
  const SHORT_MS = 1_000;

  it('a new claim removes the free keys of its service (expired or released), never a live one, one in doubt before its TTL, or one whose start is on its way', async () => {
    const { clock, directory, stores: [a, b], otherService } = fileStores();
    await a.record('expired', await started(a.claim('expired', SHORT_MS)), 'we-1');
    await a.abandon('in-doubt-expired', await started(a.claim('in-doubt-expired', SHORT_MS)));
    await a.record('live', await started(a.claim('live', TTL_MS)), 'we-2');
    const claimedAt = clock.now();
    await a.abandon('in-doubt', await started(a.claim('in-doubt', TTL_MS)));
    // Its owner (this process) lives and its start has not answered: past its TTL it is still waited on.
    const onItsWay = await started(a.claim('on-its-way', SHORT_MS));
    // Released after the claims above, whose sweeps would have removed it.
    await a.release('released', await started(a.claim('released', TTL_MS)));
    await otherService.record('expired', await started(otherService.claim('expired', SHORT_MS)), 'we-other');
    clock.advance(SHORT_MS);
    expect(await keysOnDisk(directory)).toBe(7);
    await started(b.claim('new', TTL_MS));
    // live, in-doubt, on-its-way, new; and the other service's key, which a claim of its own sweeps.
    expect(await keysOnDisk(directory)).toBe(5);
    expect(await b.claim('live', TTL_MS)).toEqual({ kind: 'follow', executionId: 'we-2' });
    expect(await b.claim('in-doubt', TTL_MS)).toEqual({ kind: 'in-doubt', claimedAt });
    await a.record('on-its-way', onItsWay, 'we-3');
    await started(otherService.claim('new', TTL_MS));
    expect(await keysOnDisk(directory)).toBe(5);
  });

  it('two processes claiming one key while their claims of other keys sweep it hand it out once per TTL', async () => {
    const { clock, stores: [a, b] } = fileStores();
    for (let round = 0; round < 20; round += 1) {
      const claims = [a.claim('k', TTL_MS), b.claim('k', TTL_MS)];
      const sweeps = [a.claim(`a-${round}`, SHORT_MS), b.claim(`b-${round}`, SHORT_MS)];
      const first = await Promise.race(claims.map(async (claim, index) => ({ index, value: await claim })));
      expect(first.value.kind).toBe('start');
      const owner = first.index === 0 ? a : b;
      await owner.record('k', (first.value as { readonly token: string }).token, `we-${round}`);
      expect(await awaited(clock, claims[1 - first.index]!)).toEqual({ kind: 'follow', executionId: `we-${round}` });
      await Promise.all(sweeps.map(async (sweep, index) => (index === 0 ? a : b).release(`${index === 0 ? 'a' : 'b'}-${round}`, await started(sweep))));
      clock.advance(TTL_MS);
    }
  });

  it('a claim that read a key’s folder before a sweep emptied it, and another process claimed it afresh, does not take the key from that claim', async () => {
    const clock = createManualClock();
    const directory = join(folders, `keys-${(accounts += 1)}`);
    const baseUrl = 'http://127.0.0.1:1/v1';
    const folder = join(directory, sha256(baseUrl), sha256('k'));
    // Run once, between this process's read of the key's folder and its claim: what a sweep by another
    // process and a claim by a third would have done meanwhile (numbers start again at 1).
    let meanwhile: (() => void) | undefined;
    const clockOf = clockScheduler(clock);
    const stalled: SchedulerLike = {
      now: () => {
        const run = meanwhile;
        meanwhile = undefined;
        run?.();
        return clockOf.now();
      },
      schedule: clockOf.schedule.bind(clockOf),
    };
    const a = createFileIdempotencyStore({ directory, baseUrl, scheduler: clockOf });
    const b = createFileIdempotencyStore({ directory, baseUrl, scheduler: stalled });
    await a.record('k', await started(a.claim('k', TTL_MS)), 'we-1');
    clock.advance(TTL_MS);
    meanwhile = () => {
      rmSync(folder, { recursive: true });
      mkdirSync(folder, { recursive: true });
      const now = clock.now();
      writeFileSync(join(folder, 'claim-1.json'), JSON.stringify({ token: '1:third', claimedAt: now, expiresAt: now + TTL_MS, host: hostname(), pid: process.pid, executionId: 'we-third' }));
    };
    expect(await b.claim('k', TTL_MS)).toEqual({ kind: 'follow', executionId: 'we-third' });
    expect(meanwhile).toBeUndefined();
    expect(await a.claim('k', TTL_MS)).toEqual({ kind: 'follow', executionId: 'we-third' });
  });
});
