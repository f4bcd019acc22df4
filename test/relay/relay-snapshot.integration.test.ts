import { filter, firstValueFrom, from, lastValueFrom } from 'rxjs';
import { afterEach, describe, expect, it } from 'vitest';
import type { RunEvent } from '../../src/runs/events.js';
import type { RunState } from '../../src/runs/run-state.js';
import { toRunState } from '../../src/runs/to-run-state.js';
import { allEvents, rebuiltMessages, type RelayWorld, relayWorld } from './harness.js';

const open: RelayWorld[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((world) => world.close()));
});

async function world(...args: Parameters<typeof relayWorld>): Promise<RelayWorld> {
  const made = await relayWorld(...args);
  open.push(made);
  return made;
}

/** The state `events` fold to, without the time it took. */
async function finalState(events: readonly RunEvent[]): Promise<RunState> {
  const state = await lastValueFrom(from(events).pipe(toRunState()));
  return { ...state, elapsedMs: 0 };
}

const ids = (text: string): number[] => [...text.matchAll(/^id: (\d+)$/gmu)].map((match) => Number(match[1]));

describe('the run relay: a late viewer of a long history', () => {
  it('gets one snapshot standing for the events so far, then the live ones; connectRun folds to the same state as a viewer from the start', async () => {
    const { client, token, eventsUrl, view } = await world({ snapshotAfter: 3 });
    const { executionId } = await client.executions.start('c-sample-linear');
    const readToken = await token(executionId);
    const early = allEvents(view(executionId, readToken));
    await firstValueFrom(view(executionId, readToken).pipe(filter((event) => event.type === 'message')));
    const lateRaw = fetch(eventsUrl(executionId), { headers: { authorization: `Bearer ${readToken}` } }).then((response) => response.text());
    const late = await allEvents(view(executionId, readToken));
    const fromStart = await early;
    const text = await lateRaw;
    const frames = text.split('\n\n');
    expect(frames[1]).toMatch(/^event: snapshot\nid: (\d+)\ndata: \{/u);
    const [first = 0, ...rest] = ids(text);
    expect(first).toBeGreaterThan(3);
    expect(rest).toEqual(rest.map((_, index) => first + index + 1));
    expect(late.length).toBeLessThan(fromStart.length);
    expect(late.at(-1)).toEqual(fromStart.at(-1));
    expect(await finalState(late)).toEqual(await finalState(fromStart));
    expect(rebuiltMessages(late)).toEqual(rebuiltMessages(fromStart));
  });

  it('gives no snapshot to a viewer resuming after an id, nor to one from the start of a short history', async () => {
    const { client, token, eventsUrl } = await world({ snapshotAfter: 3 });
    const { executionId } = await client.executions.start('c-sample-linear');
    const readToken = await token(executionId);
    const whole = await (await fetch(`${eventsUrl(executionId)}?after=1&token=${readToken}`)).text();
    expect(whole).not.toContain('event: snapshot');
    expect(ids(whole)[0]).toBe(2);
    const { client: other, token: otherToken, eventsUrl: otherUrl } = await world({ snapshotAfter: 1_000 });
    const { executionId: short } = await other.executions.start('c-sample-linear');
    const text = await (await fetch(`${otherUrl(short)}?token=${await otherToken(short)}`)).text();
    expect(text).not.toContain('event: snapshot');
    expect(ids(text)[0]).toBe(1);
  });
});
