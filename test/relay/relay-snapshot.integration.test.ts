import { filter, firstValueFrom, from, lastValueFrom, share } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { createRunRelay } from '../../src/relay/run-relay.js';
import { connectRun } from '../../src/runs/connect-run.js';
import type { RunEvent } from '../../src/runs/events.js';
import { type RunState, toRunState } from '../../src/runs/run-state.js';
import { allEvents, rebuiltMessages, openWorlds } from './harness.js';

const world = openWorlds();

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

describe('the run relay: a viewer whose id is from another numbering (the relay restarted)', () => {
  it('gets a snapshot instead of nothing for an id past the last event', async () => {
    const { client, token, eventsUrl, view } = await world();
    const { executionId } = await client.executions.start('c-sample-empty');
    const readToken = await token(executionId);
    const log = await allEvents(view(executionId, readToken));
    const text = await (await fetch(eventsUrl(executionId), { headers: { authorization: `Bearer ${readToken}`, 'last-event-id': '10000' } })).text();
    const frames = text.trimEnd().split('\n\n');
    expect(frames.slice(1).map((frame) => frame.split('\n')[0])).toEqual(['event: snapshot']);
    expect(ids(text)).toEqual([log.length]);
  });

  it('connectRun resumes on a restarted relay: it is brought to the state, no message text repeated, and ends with the same state', async () => {
    const { client, tokens, relay, emulator, token } = await world();
    const restarted = createRunRelay({ client, tokens, basePath: '/flowstream', scheduler: emulator.scheduler });
    let current = relay;
    const { executionId } = await client.executions.start('c-sample-linear');
    const readToken = await token(executionId);
    const events$ = connectRun(`http://relay.local/flowstream/executions/${executionId}/events`, {
      token: readToken,
      scheduler: emulator.scheduler,
      failOnWorkflowError: false,
      fetch: (input, init) => current.fetch(new Request(input, init)),
    }).pipe(share());
    const seen = allEvents(events$);
    await firstValueFrom(events$.pipe(filter((event) => event.type === 'node' && event.nodeId === 'node-outline' && event.status === 'executing')));
    current = restarted;
    relay.close();
    const events = await seen;
    restarted.close();
    const result = events.at(-1);
    expect(result).toMatchObject({ type: 'finished', result: { status: 'finish' } });
    const content = Object.fromEntries((result?.type === 'finished' ? result.result.output : []).flatMap((node) => node.messages.map((message) => [message.messageId, message.content])));
    expect(rebuiltMessages(events)).toEqual(content);
    // The restarted relay brought it to the state with a snapshot: a restart it went through, no text repeated.
    expect(events.filter((event) => event.type === 'started')).toHaveLength(1);
    expect(events.filter((event) => event.type === 'snapshot')).toHaveLength(1);
    expect((await finalState(events)).nodes.map((node) => node.status)).toEqual(['finish', 'finish', 'finish', 'finish']);
  });
});
