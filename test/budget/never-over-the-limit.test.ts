import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { budgetLimits } from '../../src/budget/account-rules.js';
import { REQUEST_PRIORITIES } from '../../src/domain/endpoints.js';
import type { RateLimitInfo } from '../../src/domain/requests.js';
import { Agenda, maxInAnyWindow, mostUpToEach, serviceRejections, Simulation, ticket } from './simulation.js';

const arrival = fc.record({
  at: fc.integer({ min: 0, max: 300_000 }),
  priority: fc.constantFrom(...REQUEST_PRIORITIES),
  key: fc.integer({ min: 0, max: 6 }),
  cancelAfterMs: fc.option(fc.integer({ min: 0, max: 30_000 }), { nil: undefined }),
});

const answer = fc.record({
  // Travel time to the service, within the budget's latency allowance; then the service's own time.
  travelMs: fc.integer({ min: 0, max: 2_000 }),
  serviceMs: fc.integer({ min: 0, max: 1_500 }),
  httpStatus: fc.constantFrom(200, 200, 200, 200, 429, 409, 500, undefined),
  remainingPerMinute: fc.option(fc.integer({ min: 0, max: 100 }), { nil: undefined }),
  remainingPerDay: fc.option(fc.integer({ min: 0, max: 10_000 }), { nil: undefined }),
  retryAfterMs: fc.option(fc.integer({ min: 0, max: 5_000 }), { nil: undefined }),
});

const settings = fc.record({
  requestsPerMinute: fc.integer({ min: 1, max: 150 }),
  burst: fc.integer({ min: 1, max: 10 }),
  safetyMargin: fc.constantFrom(0, 0.05, 0.2),
});

type Generated<A> = A extends fc.Arbitrary<infer T> ? T : never;
type Answer = Generated<typeof answer>;
type Arrival = Generated<typeof arrival>;
type Settings = Generated<typeof settings>;

function rateLimitOf(reply: Answer): RateLimitInfo {
  return {
    ...(reply.remainingPerMinute === undefined ? {} : { remainingPerMinute: reply.remainingPerMinute }),
    ...(reply.remainingPerDay === undefined ? {} : { remainingPerDay: reply.remainingPerDay }),
    ...(reply.retryAfterMs === undefined ? {} : { retryAfterMs: reply.retryAfterMs }),
  };
}

/** Plays arrivals against the scheduler; each request gets the next scripted answer, round and round. */
function play(options: Settings, arrivals: readonly Arrival[], answers: readonly [Answer, ...Answer[]], untilMs: number) {
  const sim = new Simulation(options);
  const arrivedAt: number[] = [];
  let replies = 0;
  const agenda = new Agenda(sim, (sent) => {
    const reply = answers[replies++ % answers.length] ?? answers[0];
    arrivedAt.push(sent.at + reply.travelMs);
    agenda.at(sent.at + reply.travelMs + reply.serviceMs, () => {
      sim.report(sent.ticket, reply.httpStatus, rateLimitOf(reply));
    });
  });
  const cancelled = new Set<number>();
  for (const request of arrivals) {
    agenda.at(request.at, () => {
      const id = sim.enqueue(ticket(request.priority, `k-${request.key}`));
      if (request.cancelAfterMs !== undefined) {
        agenda.at(sim.now + request.cancelAfterMs, () => {
          if (sim.sentAt(id) === undefined) cancelled.add(id);
          sim.cancel(id);
        });
      }
    });
  }
  agenda.runUntil(untilMs);
  return { sim, arrivedAt, cancelled };
}

describe('never over the limit', () => {
  it('sends at most the limit in any 60 s window, whatever arrives and whatever the service answers', () => {
    fc.assert(
      fc.property(settings, fc.array(arrival, { maxLength: 300 }), fc.array(answer, { minLength: 1, maxLength: 40 }), (options, arrivals, answers) => {
        const { sim, arrivedAt } = play(options, arrivals, answers as [Answer, ...Answer[]], 1_000_000);
        const limits = budgetLimits(options);
        const sentAt = sim.sent.map((sent) => sent.at);
        // Any sliding window (the worst one starts at a send), and our own longer window with the
        // margin, which only aborts may use (an execution left running spends credits).
        expect(maxInAnyWindow(sentAt, 60_000)).toBeLessThanOrEqual(options.requestsPerMinute);
        expect(maxInAnyWindow(sentAt, limits.minuteWindowMs)).toBeLessThanOrEqual(limits.perMinute);
        expect(mostUpToEach(sim.sent, (sent) => sent.ticket.priority !== 'abort', limits.minuteWindowMs)).toBeLessThanOrEqual(limits.usablePerMinute);
        // The service's fixed windows, opened by whichever request arrives first (service.md §2.1).
        expect(serviceRejections(arrivedAt, options.requestsPerMinute)).toBe(0);
      }),
      { numRuns: 150 },
    );
  });

  it('eventually sends every request that was not cancelled, when the day allows it', () => {
    fc.assert(
      fc.property(settings, fc.array(arrival, { maxLength: 150 }), fc.array(answer, { minLength: 1, maxLength: 20 }), (options, arrivals, answers) => {
        const withinTheDay = answers.map((reply) => ({ ...reply, remainingPerDay: undefined })) as [Answer, ...Answer[]];
        const { sim, cancelled } = play(options, arrivals, withinTheDay, 50_000_000);
        expect(sim.sent.length + cancelled.size).toBe(arrivals.length);
        expect(sim.snapshot().queued.total).toBe(0);
        expect(sim.wakeAt).toBeUndefined();
      }),
      { numRuns: 100 },
    );
  });
});
