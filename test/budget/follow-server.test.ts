import { describe, expect, it } from 'vitest';
import { maxInAnyWindow, Simulation, ticket } from './simulation.js';

const PACE = 682;
const WINDOW = 62_000; // the service's 60 s plus the 2 s latency allowance

function queueMany(sim: Simulation, count: number, prefix = 'we'): number[] {
  return Array.from({ length: count }, (_, index) => sim.enqueue(ticket('status', `${prefix}-${index}`)));
}

function gaps(times: readonly number[]): number[] {
  return times.slice(1).map((time, index) => time - times[index]!);
}

describe('after a 429', () => {
  it('pauses everything until the service\'s window can have reset, then resumes without a burst', () => {
    const sim = new Simulation();
    sim.advanceTo(1_000);
    const [rejected] = queueMany(sim, 3, 'early');
    sim.advanceTo(1_500);
    sim.report(sim.sent.find((sent) => sent.id === rejected)!.ticket, 429, { remainingPerMinute: 0 });
    queueMany(sim, 8);
    // The window that refused it opened at most 60 s before it arrived, within 2 s of its send.
    sim.advanceTo(1_000 + WINDOW - 1);
    expect(sim.sent).toHaveLength(3);
    sim.advanceTo(10 * WINDOW);
    const resumed = sim.sent.slice(3).map((sent) => sent.at);
    expect(resumed[0]).toBe(1_000 + WINDOW);
    // One at a time at the steady pace, although the bucket sat idle for a whole window.
    expect(gaps(resumed)).toEqual(Array.from({ length: 7 }, () => PACE));
  });

  it('waits for Retry-After when the IP throttler gives one (service.md §1.3)', () => {
    const sim = new Simulation();
    const [first] = queueMany(sim, 1, 'early');
    sim.advanceTo(50);
    sim.report(sim.sent.find((sent) => sent.id === first)!.ticket, 429, { retryAfterMs: 3_000 });
    queueMany(sim, 2);
    sim.advanceTo(60_000);
    expect(sim.sent.slice(1).map((sent) => sent.at)).toEqual([3_050, 3_050 + PACE]);
  });

  it('extends the pause when requests already on their way are refused too', () => {
    const sim = new Simulation();
    queueMany(sim, 1, 'early');
    sim.advanceTo(300);
    queueMany(sim, 1, 'later');
    sim.advanceTo(400);
    sim.report(sim.sent[0]!.ticket, 429);
    sim.report(sim.sent[1]!.ticket, 429);
    queueMany(sim, 1);
    sim.advanceTo(10 * WINDOW);
    expect(sim.sent[2]!.at).toBe(300 + WINDOW);
  });

  it('never pauses longer than one window, however long a Retry-After asks for (the call that met it fails instead)', () => {
    const sim = new Simulation();
    queueMany(sim, 1, 'early');
    sim.advanceTo(50);
    sim.report(sim.sent[0]!.ticket, 429, { retryAfterMs: Number.MAX_SAFE_INTEGER });
    expect(sim.account.record.pausedUntil).toBe(50 + WINDOW);
    const [abort] = [sim.enqueue(ticket('abort', 'we-1'))];
    sim.advanceTo(2 * WINDOW);
    expect(sim.sentAt(abort)).toBe(50 + WINDOW);
  });

  it('shows the pause in its state', () => {
    const sim = new Simulation();
    queueMany(sim, 1);
    sim.report(sim.sent[0]!.ticket, 429);
    expect(sim.account.record.pausedUntil).toBe(WINDOW);
  });
});

describe('following the service\'s headers', () => {
  it('slows down when the service counts more requests than ours (another process shares the account)', () => {
    const sim = new Simulation();
    queueMany(sim, 1, 'first');
    sim.advanceTo(100);
    // We sent 1, so 99 would remain if we were alone; 40 means others used 59.
    sim.report(sim.sent[0]!.ticket, 200, { remainingPerMinute: 40 });
    queueMany(sim, 6);
    sim.advanceTo(30_000);
    // 40 − 5 kept in reserve = 35 left, spread over what is left of the 62 s after the send at 0.
    const spacing = (WINDOW - 100) / 35;
    const times = sim.sent.slice(1).map((sent) => sent.at);
    expect(times[0]).toBeCloseTo(spacing, 6);
    for (const gap of gaps(times)) expect(gap).toBeCloseTo(spacing, 6);
  });

  it('stops until the window can have reset when the service has nothing left for us', () => {
    const sim = new Simulation();
    queueMany(sim, 1, 'first');
    sim.advanceTo(100);
    sim.report(sim.sent[0]!.ticket, 200, { remainingPerMinute: 5 });
    queueMany(sim, 2);
    sim.advanceTo(WINDOW - 1);
    expect(sim.sent).toHaveLength(1);
    sim.advanceTo(WINDOW);
    expect(sim.sent.slice(1).map((sent) => sent.at)).toEqual([WINDOW, WINDOW]);
  });

  it('counts its own requests still on their way against what the service says is left', () => {
    const sim = new Simulation();
    queueMany(sim, 4, 'first');
    sim.advanceTo(100);
    // Three others are still travelling: 10 − 3 − 5 reserve = 2 more before the window resets.
    sim.report(sim.sent[0]!.ticket, 200, { remainingPerMinute: 10 });
    queueMany(sim, 5);
    sim.advanceTo(WINDOW - 1);
    expect(sim.sent).toHaveLength(6);
  });

  it('returns to its own pace once the service\'s count matches ours again', () => {
    const sim = new Simulation();
    queueMany(sim, 1, 'first');
    sim.advanceTo(100);
    sim.report(sim.sent[0]!.ticket, 200, { remainingPerMinute: 5 });
    expect(sim.account.record.minuteCap).not.toBeNull();
    sim.report(sim.sent[0]!.ticket, 200, { remainingPerMinute: 99 });
    expect(sim.account.record.minuteCap).toBeNull();
    queueMany(sim, 3);
    expect(sim.sent.map((sent) => sent.at)).toEqual([0, 100, 100, 100]);
  });

  it('ignores a remaining count that our own requests explain', () => {
    const sim = new Simulation();
    queueMany(sim, 5, 'first');
    sim.advanceTo(100);
    sim.report(sim.sent[0]!.ticket, 200, { remainingPerMinute: 95 });
    expect(sim.account.record.minuteCap).toBeNull();
  });

  it('stops short of the daily limit when the service says the day is nearly spent', () => {
    const sim = new Simulation();
    queueMany(sim, 1, 'first');
    sim.advanceTo(100);
    // 520 left today, 500 kept in reserve (5% of 10,000): 20 more sends until the day can have reset,
    // spread over that time (a tenth of them at once) rather than spent in the first minute.
    sim.report(sim.sent[0]!.ticket, 200, { remainingPerDay: 520 });
    queueMany(sim, 30);
    sim.advanceTo(3_600_000);
    expect(sim.sent.length).toBeLessThanOrEqual(5);
    sim.advanceTo(86_400_000 + 2_000 - 1);
    expect(sim.sent.length).toBeGreaterThanOrEqual(19);
    expect(sim.sent.length).toBeLessThanOrEqual(21);
    expect(Math.max(...gaps(sim.sent.map((sent) => sent.at)))).toBeLessThan(3 * (86_400_000 / 20));
  });
});

describe('its own daily limit', () => {
  it('never sends more than the usable part of requestsPerDay within a day', () => {
    const sim = new Simulation({ requestsPerDay: 20 });
    queueMany(sim, 25);
    sim.advanceTo(86_402_000);
    // 20 − ⌊20 × 5%⌋ = 19 at most in any day window, spread over the day rather than spent at once.
    expect(sim.sent.length).toBeGreaterThanOrEqual(17);
    expect(sim.sent.length).toBeLessThanOrEqual(19);
    expect(sim.sent.filter((sent) => sent.at < 3_600_000).length).toBeLessThan(10);
    sim.advanceTo(3 * 86_402_000);
    expect(sim.sent).toHaveLength(25);
    expect(maxInAnyWindow(sim.sent.map((sent) => sent.at), 86_402_000)).toBeLessThanOrEqual(19);
  });
});

describe('following a service whose counts mean nothing', () => {
  it('stops following a per-minute count stuck at 0 once a request after the window is served and still reads 0', () => {
    const sim = new Simulation();
    queueMany(sim, 1, 'first');
    sim.advanceTo(100);
    sim.report(sim.sent[0]!.ticket, 200, { remainingPerMinute: 0 });
    queueMany(sim, 40);
    sim.advanceTo(WINDOW - 1);
    expect(sim.sent).toHaveLength(1);
    // After the window the count has reset: requests go again, and the first is served with "0" again.
    sim.advanceTo(WINDOW);
    sim.report(sim.sent[1]!.ticket, 200, { remainingPerMinute: 0 });
    expect(sim.account.record.ignoring.minute).toBe(true);
    expect(sim.account.record.minuteCap).toBeNull();
    // Followed, that "0" would have stopped everything for another window; ignored, the pacer goes on.
    sim.advanceTo(2 * WINDOW - 1);
    expect(sim.sent.length).toBe(41);
  });

  it('looks again after a minute when the day\'s count leaves nothing, rather than stall every request for a day', () => {
    const sim = new Simulation();
    queueMany(sim, 1, 'first');
    sim.advanceTo(100);
    sim.report(sim.sent[0]!.ticket, 200, { remainingPerDay: 0 });
    queueMany(sim, 3);
    sim.advanceTo(WINDOW - 1);
    expect(sim.sent).toHaveLength(1);
    sim.advanceTo(WINDOW);
    expect(sim.sent.length).toBeGreaterThan(1);
    // Served with 0 again: the day's count is stuck, and no longer followed.
    sim.report(sim.sent[1]!.ticket, 200, { remainingPerDay: 0 });
    expect(sim.account.record.ignoring.day).toBe(true);
  });

  it('keeps following a day that is really spent: the look after a minute meets a 429, and everything waits again', () => {
    const sim = new Simulation();
    queueMany(sim, 1, 'first');
    sim.advanceTo(100);
    sim.report(sim.sent[0]!.ticket, 200, { remainingPerDay: 0 });
    queueMany(sim, 10);
    sim.advanceTo(WINDOW);
    const looked = sim.sent.length;
    sim.report(sim.sent[1]!.ticket, 429, { remainingPerDay: 0 });
    expect(sim.account.record.ignoring.day).toBe(false);
    sim.advanceTo(2 * WINDOW - 1);
    expect(sim.sent).toHaveLength(looked);
  });
});
