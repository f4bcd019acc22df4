import { describe, expect, it } from 'vitest';
import { chooseNext, fairTag, initialVirtualTimes } from '../../src/budget/fair-queue.js';
import type { QueuedRequest } from '../../src/budget/fair-queue.js';
import { settleInFlight } from '../../src/budget/in-flight.js';
import { pruneCadences } from '../../src/budget/key-cadence.js';
import { logReadyAt, pruneSendLog, sendsWithin } from '../../src/budget/send-log.js';
import { capAfterSend, capReadyAt, serverCap } from '../../src/budget/server-cap.js';
import { ticket } from './simulation.js';

describe('send log', () => {
  it('counts a window as the service does: a send exactly one window ago has left it', () => {
    expect(sendsWithin([0, 10, 20], 20, 10)).toBe(1);
    expect(sendsWithin([0, 10, 20], 19, 10)).toBe(2);
    expect(pruneSendLog([0, 10, 20], 20, 10)).toEqual([20]);
  });

  it('says when the limit-th latest send leaves the window', () => {
    expect(logReadyAt([0, 10, 20], 2, 100)).toBe(110);
    expect(logReadyAt([0, 10, 20], 4, 100)).toBe(Number.NEGATIVE_INFINITY);
  });
});

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
});

describe('fair queue', () => {
  function entry(id: number, priority: QueuedRequest['ticket']['priority'], tag: number, enqueuedAt = 0): QueuedRequest {
    return { id, ticket: ticket(priority, `k-${id}`), enqueuedAt, arrival: id, tag };
  }

  it('tags a key\'s further requests behind its own earlier ones, and a new key at the class\'s virtual time', () => {
    const queue = [{ ...entry(0, 'status', 5), ticket: ticket('status', 'we-1') }];
    const clocks = { ...initialVirtualTimes(), status: 4 };
    expect(fairTag(queue, clocks, ticket('status', 'we-1'))).toBe(6);
    expect(fairTag(queue, clocks, ticket('status', 'we-2'))).toBe(5);
    // A run's output read shares its status reads' turns (one flow per run).
    expect(fairTag(queue, clocks, ticket('output', 'we-1'))).toBe(6);
    expect(fairTag(queue, clocks, ticket('search'))).toBe(1);
  });

  it('prefers priority over tag and tag over arrival', () => {
    expect(chooseNext([entry(0, 'search', 1), entry(1, 'output', 9)], 0, 9).chosen.id).toBe(1);
    expect(chooseNext([entry(0, 'status', 3), entry(1, 'output', 2)], 0, 9).chosen.id).toBe(1);
    expect(chooseNext([entry(0, 'output', 2), entry(1, 'status', 2)], 0, 9).chosen.id).toBe(0);
    expect(chooseNext([entry(0, 'status', 3), entry(1, 'status', 2)], 0, 9).chosen.id).toBe(1);
    expect(chooseNext([entry(0, 'status', 2), entry(1, 'status', 2)], 0, 9).chosen.id).toBe(0);
  });

  it('counts overtakings and lets the longest-waiting lower request through at the limit', () => {
    const waiting = [entry(0, 'status', 1, 500), entry(1, 'search', 1, 300), entry(2, 'search', 1, 100)] as const;
    expect(chooseNext(waiting, 0, 2)).toMatchObject({ chosen: { id: 0 }, bypassed: 1 });
    expect(chooseNext(waiting, 2, 2)).toMatchObject({ chosen: { id: 2 }, bypassed: 0 });
    expect(chooseNext([entry(0, 'status', 1)], 5, 2)).toMatchObject({ chosen: { id: 0 }, bypassed: 0 });
  });
});

describe('requests in flight', () => {
  it('settles the very ticket reported first, then an equal one, oldest first', () => {
    const retried = ticket('status', 'we-1');
    const inFlight = [
      { ticket: ticket('status', 'we-1'), sentAt: 1 },
      { ticket: retried, sentAt: 2 },
    ];
    expect(settleInFlight(inFlight, retried)).toEqual({ remaining: [inFlight[0]], sentAt: 2 });
    expect(settleInFlight(inFlight, ticket('status', 'we-1'))).toEqual({ remaining: [inFlight[1]], sentAt: 1 });
    expect(settleInFlight(inFlight, ticket('output', 'we-1'))).toEqual({ remaining: inFlight, sentAt: undefined });
  });
});

describe('per-run cadences', () => {
  const cadences = new Map([
    ['we-idle', { lastSentAt: 0, intervalMs: 4_000, waitMs: 0 }],
    ['we-queued', { lastSentAt: 0, intervalMs: 4_000, waitMs: 0 }],
    ['we-reading', { lastSentAt: 0, intervalMs: 4_000, waitMs: 0 }],
  ]);

  it('forgets a run idle for the window, but not one with a request queued or still in flight', () => {
    const queued = { id: 1, ticket: ticket('status', 'we-queued'), enqueuedAt: 60_000, arrival: 1, tag: 1 };
    const inFlight = { ticket: ticket('output', 'we-reading'), sentAt: 61_000 };
    expect([...pruneCadences(cadences, [queued, inFlight], 70_000, 62_000).keys()]).toEqual(['we-queued', 'we-reading']);
    expect(pruneCadences(cadences, [queued, inFlight], 50_000, 62_000)).toBe(cadences);
  });
});
