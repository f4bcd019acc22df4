import { describe, expect, it } from 'vitest';
import { chooseNext, FairQueue, queuedRequest } from '../../src/budget/fair-queue.js';
import type { ClassHead, FairClass, QueuedRequest } from '../../src/budget/fair-queue.js';
import { InFlight } from '../../src/budget/ledger.js';
import { KeyCadences } from '../../src/budget/budget-core.js';
import { capAfterSend, capReadyAt, serverCap } from '../../src/budget/account-rules.js';
import { ticket } from './simulation.js';

describe('server cap', () => {
  const input = { remaining: 10, sentAt: 1_000, now: 1_000, windowMs: 62_000, reserve: 5, inFlight: 1, lastSendAt: 1_000, spread: true };

  it('leaves what the service has left, minus our requests on their way and the reserve, spread over the window', () => {
    const cap = serverCap(input);
    expect(cap).toEqual({ until: 63_000, allowance: 4, hardAllowance: 9, spacingMs: 15_500, notBefore: 16_500 });
    expect(capReadyAt(cap, 2_000)).toBe(16_500);
    const spent = [16_500, 32_000, 47_500, 63_000 - 1].reduce<ReturnType<typeof capAfterSend>>((current, at) => capAfterSend(current, at), cap);
    expect(spent?.allowance).toBe(0);
    expect(capReadyAt(spent, 62_999)).toBe(63_000);
    expect(capReadyAt(spent, 63_000)).toBe(Number.NEGATIVE_INFINITY);
    expect(capAfterSend(spent, 63_000)).toBeUndefined();
  });

  it('only stops at zero when told not to spread', () => {
    expect(serverCap({ ...input, spread: false })).toMatchObject({ allowance: 4, spacingMs: 0, notBefore: 1_000 });
    expect(serverCap({ ...input, remaining: 3 })).toMatchObject({ allowance: 0, spacingMs: 0 });
  });

  it('with nothing left for polls, lets one look again each period once the service has nothing left either, never waiting the whole window blind', () => {
    const cap = serverCap({ ...input, remaining: 1, windowMs: 86_402_000, spread: false, lookEveryMs: 62_000 });
    expect(cap.look).toEqual({ at: 63_000, everyMs: 62_000 });
    expect(capReadyAt(cap, 2_000)).toBe(63_000);
    const looked = capAfterSend(cap, 63_500);
    expect(capReadyAt(looked, 63_500)).toBe(125_500);
  });

  it('with nothing left for polls but the reserve, spreads the looks to spend at most half of it, a quarter of an hour apart at most', () => {
    // 201 on their way or left, 200 of them the service's: 100 looks over the day, one each 864 s.
    const spread = serverCap({ ...input, remaining: 201, reserve: 500, windowMs: 86_400_000, spread: false, lookEveryMs: 62_000 });
    expect(spread.look).toEqual({ at: 865_000, everyMs: 864_000 });
    expect(capReadyAt(capAfterSend(spread, 865_000), 865_000)).toBe(1_729_000);
    // 3 left: one look over the day would leave it blind; a quarter of an hour (15 periods) at most.
    const small = serverCap({ ...input, remaining: 3, windowMs: 86_402_000, spread: false, lookEveryMs: 62_000 });
    expect(small.look).toEqual({ at: 931_000, everyMs: 930_000 });
  });
});

describe('fair queue', () => {
  function head(klass: FairClass, next: QueuedRequest, oldest = next): ClassHead {
    return { klass, next, oldest };
  }
  function entry(id: number, priority: QueuedRequest['ticket']['priority'], tag: number, enqueuedAt = 0): QueuedRequest {
    return queuedRequest(id, ticket(priority, `k-${id}`), enqueuedAt, id, tag, tag, false);
  }

  it('tags a key\'s further requests behind its own earlier ones, and a new key at the class\'s virtual time', () => {
    const queue = new FairQueue();
    for (let tag = 0; tag <= 4; tag++) queue.served(queue.enqueue(100 + tag, ticket('status', 'old'), 0));
    for (let tag = 0; tag <= 4; tag++) queue.remove(100 + tag);
    // The class's virtual time is 4: a new key takes that turn, its further requests the turns after.
    expect(queue.enqueue(0, ticket('status', 'we-1'), 0).tag).toBe(4);
    expect(queue.enqueue(1, ticket('status', 'we-1'), 0).tag).toBe(5);
    expect(queue.enqueue(2, ticket('status', 'we-2'), 0).tag).toBe(4);
    // A run's output read shares its status reads' turns (one flow per run).
    expect(queue.enqueue(3, ticket('output', 'we-1'), 0).tag).toBe(6);
    expect(queue.enqueue(4, ticket('interactive'), 0).tag).toBe(0);
  });

  it('prefers the higher class, whatever the tags', () => {
    expect(chooseNext([head('reads', entry(1, 'output', 9)), head('interactive', entry(0, 'interactive', 1))], 0, 9).chosen.id).toBe(0);
    expect(chooseNext([head('start', entry(0, 'start', 3)), head('abort', entry(1, 'abort', 20))], 0, 9).chosen.id).toBe(1);
  });

  it('serves within a class by tag, then arrival', () => {
    const queue = new FairQueue();
    for (const [id, key] of [[0, 'a'], [1, 'a'], [2, 'b'], [3, 'a'], [4, 'c']] as const) queue.offer(queue.enqueue(id, ticket('status', key), 0));
    const order: number[] = [];
    for (let next = queue.of('reads').next(); next !== undefined; next = queue.of('reads').next()) {
      order.push(next.id);
      queue.served(next);
      queue.remove(next.id);
    }
    expect(order).toEqual([0, 2, 4, 1, 3]);
  });

  it('counts overtakings and lets the longest-waiting lower request through at the limit', () => {
    const heads = [head('interactive', entry(0, 'interactive', 1, 500)), head('reads', entry(1, 'status', 1, 300), entry(2, 'status', 1, 100))] as const;
    expect(chooseNext(heads, 0, 2)).toMatchObject({ chosen: { id: 0 }, bypassed: 1 });
    expect(chooseNext(heads, 2, 2)).toMatchObject({ chosen: { id: 2 }, bypassed: 0 });
    expect(chooseNext([head('reads', entry(0, 'status', 1))], 5, 2)).toMatchObject({ chosen: { id: 0 }, bypassed: 0 });
  });

  it('drops a cancelled request from its class at once, whichever heap position it held', () => {
    const queue = new FairQueue();
    for (let id = 0; id < 50; id++) queue.offer(queue.enqueue(id, ticket('status', `we-${id % 7}`), id));
    for (let id = 0; id < 50; id += 3) queue.remove(id);
    const left: number[] = [];
    for (let next = queue.of('reads').next(); next !== undefined; next = queue.of('reads').next()) {
      left.push(next.id);
      queue.remove(next.id);
    }
    expect(left.sort((a, b) => a - b)).toEqual(Array.from({ length: 50 }, (_, id) => id).filter((id) => id % 3 !== 0));
    expect(queue.size).toBe(0);
  });
});

describe('requests in flight', () => {
  it('settles the very ticket reported first, then an equal one, oldest first', () => {
    const retried = ticket('status', 'we-1');
    const inFlight = new InFlight();
    inFlight.add(ticket('status', 'we-1'), 1);
    inFlight.add(retried, 2);
    expect(inFlight.settle(retried)).toBe(2);
    expect(inFlight.settle(ticket('output', 'we-1'))).toBeUndefined();
    expect(inFlight.settle(ticket('status', 'we-1'))).toBe(1);
    expect(inFlight.size).toBe(0);
  });
});

describe('per-run cadences', () => {
  it('forgets a run idle for the window, but not one with a request queued or still in flight', () => {
    const cadences = new KeyCadences(62_000);
    for (const key of ['we-idle', 'we-queued', 'we-reading']) cadences.polled(ticket('status', key), 0, 0);
    cadences.busy(ticket('status', 'we-queued'), 1, 60_000);
    cadences.busy(ticket('output', 'we-reading'), 1, 61_000);
    cadences.prune(50_000);
    expect(Object.keys(cadences.record())).toEqual(['we-idle', 'we-queued', 'we-reading']);
    cadences.prune(70_000);
    expect(Object.keys(cadences.record())).toEqual(['we-queued', 'we-reading']);
    // Its last request answered, an idle run is forgotten at once.
    cadences.busy(ticket('output', 'we-reading'), -1, 71_000);
    expect(Object.keys(cadences.record())).toEqual(['we-queued']);
  });
});
