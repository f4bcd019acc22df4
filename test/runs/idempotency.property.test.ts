import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InvalidRequestError, NotFoundError, ServerError } from '../../src/errors/api-errors.js';
import { FlowstreamError } from '../../src/errors/flowstream-error.js';
import { NetworkError, TimeoutError } from '../../src/errors/transport-errors.js';
import { InvalidArgumentError } from '../../src/errors/validation-errors.js';
import { type ClaimedStartEvent, type ClaimSettlement, decideClaim, reduceClaimedStart, startFailure, type StoredClaim, UNSETTLED_START } from '../../src/runs/idempotency.js';

/**
 * One call of a run's start: whether a request of it left, and how it ended. A run makes its start
 * again only after a call that sent nothing failed for want of its budget's store (`unsent`), so
 * every call but the last ended that way.
 */
interface Call {
  readonly sends: boolean;
  readonly end: 'started' | 'nothing-started' | 'unknown' | 'unsent' | 'dropped';
}

const lastCallArb: fc.Arbitrary<Call> = fc.oneof(
  fc.record({ sends: fc.boolean(), end: fc.constantFrom<Call['end']>('started', 'nothing-started', 'dropped') }),
  fc.constant<Call>({ sends: true, end: 'unknown' }),
  fc.constant<Call>({ sends: false, end: 'unsent' }),
);
const callsArb = fc.tuple(fc.array(fc.constant<Call>({ sends: false, end: 'unsent' }), { maxLength: 3 }), lastCallArb).map(([retried, last]) => [...retried, last]);

/** The events of `calls` with the run's end at `endAt`: no call begins after it, the call open then still ends. */
function eventsOf(calls: readonly Call[], endAt: number): ClaimedStartEvent[] {
  const events: { readonly event: ClaimedStartEvent; readonly call: number }[] = [];
  calls.forEach((call, index) => {
    events.push({ event: { type: 'call' }, call: index });
    if (call.sends) events.push({ event: { type: 'sending' }, call: index });
    const end: ClaimedStartEvent =
      call.end === 'started' ? { type: 'started', executionId: 'we-1' } : call.end === 'dropped' ? { type: 'dropped' } : { type: 'failed', failure: call.end };
    events.push({ event: end, call: index });
  });
  const at = Math.min(endAt, events.length);
  const openCall = events.slice(0, at).findLast(({ event }) => event.type === 'call')?.call;
  const after = events.slice(at).filter(({ call }) => call === openCall);
  return [...events.slice(0, at).map(({ event }) => event), { type: 'run-ended' }, ...after.map(({ event }) => event)];
}

function settle(events: readonly ClaimedStartEvent[]): ClaimSettlement[] {
  let state = UNSETTLED_START;
  const settlements: ClaimSettlement[] = [];
  for (const event of events) {
    const step = reduceClaimedStart(state, event);
    state = step.state;
    settlements.push(...step.commands);
  }
  return settlements;
}

describe('reduceClaimedStart: what becomes of a claimed idempotency key', () => {
  it('settles the key exactly once by the time the run and its start have ended', () => {
    fc.assert(
      fc.property(callsArb, fc.nat(12), (calls, endAt) => {
        expect(settle(eventsOf(calls, endAt))).toHaveLength(1);
      }),
    );
  });

  it('records the execution when the start answered with one', () => {
    fc.assert(
      fc.property(callsArb, fc.nat(12), (calls, endAt) => {
        const events = eventsOf(calls, endAt);
        const answered = events.some((event) => event.type === 'started');
        expect(settle(events)[0]?.type === 'record').toBe(answered);
      }),
    );
  });

  it('never frees a key whose start may have reached the service: released only when nothing was sent or the service refused it', () => {
    fc.assert(
      fc.property(callsArb, fc.nat(12), (calls, endAt) => {
        const events = eventsOf(calls, endAt);
        const [settlement] = settle(events);
        const sent = events.some((event) => event.type === 'sending');
        const refused = events.some((event) => event.type === 'failed' && event.failure === 'nothing-started');
        if (settlement?.type === 'release') expect(!sent || refused).toBe(true);
        if (settlement?.type === 'abandon') expect(sent && !refused).toBe(true);
      }),
    );
  });

  it('waits for a start still on its way when the run ends, and records its answer', () => {
    const settlements = settle([{ type: 'call' }, { type: 'sending' }, { type: 'run-ended' }, { type: 'started', executionId: 'we-late' }]);
    expect(settlements).toEqual([{ type: 'record', executionId: 'we-late' }]);
  });
});

describe('startFailure: whether a failed start call can have started an execution', () => {
  const details = { endpoint: 'run', status: 400 } as const;
  it.each([
    ['a refusal by the service (400)', new InvalidRequestError(details), true, 'nothing-started'],
    ['a business error (not found)', new NotFoundError({ ...details, status: 200, errCode: 'E1000' }), true, 'nothing-started'],
    ['a server fault (5xx)', new ServerError({ ...details, status: 502 }), true, 'unknown'],
    ['a connection that broke after sending', new NetworkError({ endpoint: 'run' }), true, 'unknown'],
    ['a timeout after sending', new TimeoutError({ endpoint: 'run', timeoutMs: 5 }), true, 'unknown'],
    ['a budget that could not reach its store, before sending', new FlowstreamError('away', 'BUDGET_UNAVAILABLE'), false, 'unsent'],
    ['variables refused before sending', new InvalidArgumentError('variables', 'unknown name'), false, 'nothing-started'],
  ] as const)('%s', (_name, error, sent, expected) => {
    expect(startFailure(error, sent)).toBe(expected);
  });
});

describe('decideClaim: the rule every idempotency store keeps', () => {
  const claim = (fields: Partial<StoredClaim>): StoredClaim => ({ claimedAt: 1_000, expiresAt: 2_000, abandoned: false, held: false, ...fields });
  it.each([
    ['nothing stored', undefined, 1_500, { kind: 'start' }],
    ['a start on its way, its owner alive', claim({ held: true }), 1_500, { kind: 'wait' }],
    ['a start on its way past the expiry, its owner alive', claim({ held: true }), 5_000, { kind: 'wait' }],
    ['a recorded execution', claim({ executionId: 'we-1' }), 1_500, { kind: 'follow', executionId: 'we-1' }],
    ['a recorded execution, expired', claim({ executionId: 'we-1' }), 2_000, { kind: 'start' }],
    ['an abandoned start', claim({ abandoned: true }), 1_500, { kind: 'in-doubt', claimedAt: 1_000 }],
    ['a start whose owner vanished', claim({}), 1_500, { kind: 'in-doubt', claimedAt: 1_000 }],
    ['a start whose owner vanished, expired', claim({}), 2_500, { kind: 'start' }],
  ] as const)('%s', (_name, stored, now, expected) => {
    expect(decideClaim(stored, now)).toEqual(expected);
  });
});
