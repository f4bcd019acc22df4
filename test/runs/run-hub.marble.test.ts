import { type Observable, take } from 'rxjs';
import { describe, expect, it } from 'vitest';
import type { RunEvent } from '../../src/runs/events.js';
import type { RunResult } from '../../src/domain/model.js';
import { createRunHub, hubPlaceOf, shareRun } from '../../src/runs/run-hub.js';
import { EXECUTION_ID, testScheduler } from './fixtures.js';

const result = { executionId: EXECUTION_ID, status: 'finish', endedBy: 'finish', nodes: [], output: [], files: [], failedNodes: [] } as unknown as RunResult;
const ev = {
  s: { type: 'started', executionId: EXECUTION_ID, status: 'executing' },
  a: { type: 'node', executionId: EXECUTION_ID, nodeId: 'a', status: 'executing' },
  f: { type: 'finished', executionId: EXECUTION_ID, result },
} satisfies Record<string, RunEvent>;

/** What a follower got, as `frame:type`, and how it ended. */
function record(events$: Observable<RunEvent>, now: () => number): string[] {
  const seen: string[] = [];
  events$.subscribe({
    next: (event) => seen.push(`${now()}:${event.type}`),
    error: () => seen.push(`${now()}:error`),
    complete: () => seen.push(`${now()}:complete`),
  });
  return seen;
}

describe('createRunHub: one poll per execution, shared by its followers', () => {
  it('subscribes the poll once for every follower; a late one gets a snapshot; the poll ends after the last one left', () => {
    const scheduler = testScheduler();
    scheduler.run(({ cold, expectSubscriptions, flush }) => {
      const hub = createRunHub();
      const poll = cold<RunEvent>('s 9ms a 29ms f', ev);
      const seen: string[] = [];
      const first = hub.follow(EXECUTION_ID, () => poll).subscribe((event) => seen.push(`first ${scheduler.now()}:${event.type}`));
      let second = first;
      cold('5ms x 9ms y 4ms z').subscribe((step) => {
        if (step === 'x') second = hub.follow(EXECUTION_ID, () => poll).subscribe((event) => seen.push(`second ${scheduler.now()}:${event.type}`));
        if (step === 'y') first.unsubscribe();
        if (step === 'z') second.unsubscribe();
      });
      flush();
      expect(seen).toEqual(['first 0:started', 'second 5:snapshot', 'first 10:node', 'second 10:node']);
      expectSubscriptions(poll.subscriptions).toBe('^ 19ms !');
    });
  });

  it('keeps the poll for a follower that comes back in the same task, and starts a new one after the end', () => {
    const scheduler = testScheduler();
    scheduler.run(({ cold, expectSubscriptions, flush }) => {
      const hub = createRunHub();
      const poll = cold<RunEvent>('s 9ms a 9ms (f|)', ev);
      // Subscribed and left at once (React StrictMode mounting twice): the next follower keeps its poll.
      hub.follow(EXECUTION_ID, () => poll).subscribe().unsubscribe();
      hub.follow(EXECUTION_ID, () => poll).pipe(take(1)).subscribe();
      const first = record(hub.follow(EXECUTION_ID, () => poll), () => scheduler.now());
      let second: string[] = [];
      cold('25ms x').subscribe(() => {
        second = record(hub.follow(EXECUTION_ID, () => poll), () => scheduler.now());
      });
      flush();
      expect(first).toEqual(['0:started', '10:node', '20:finished', '20:complete']);
      expect(second).toEqual(['25:started', '35:node', '45:finished', '45:complete']);
      expectSubscriptions(poll.subscriptions).toBe(['^ 19ms !', '25ms ^ 19ms !']);
      expect(hub.followers(EXECUTION_ID)).toBe(0);
    });
  });

  it('errors every follower with the poll, and starts a new poll for the next follower', () => {
    const scheduler = testScheduler();
    scheduler.run(({ cold, expectSubscriptions, flush }) => {
      const hub = createRunHub();
      const failing = cold<RunEvent>('s 4ms #', ev);
      const healthy = cold<RunEvent>('s 4ms (f|)', ev);
      const first = record(hub.follow(EXECUTION_ID, () => failing), () => scheduler.now());
      const second = record(hub.follow(EXECUTION_ID, () => failing), () => scheduler.now());
      let third: string[] = [];
      cold('10ms x').subscribe(() => {
        third = record(hub.follow(EXECUTION_ID, () => healthy), () => scheduler.now());
      });
      flush();
      expect(first).toEqual(['0:started', '5:error']);
      expect(second).toEqual(['0:started', '5:error']);
      expect(third).toEqual(['10:started', '15:finished', '15:complete']);
      expectSubscriptions(failing.subscriptions).toBe('^ 4ms !');
      expectSubscriptions(healthy.subscriptions).toBe('10ms ^ 4ms !');
    });
  });

  it('gives the followers of an execution a run leads instead of a poll, counting the run as a follower', () => {
    const scheduler = testScheduler();
    scheduler.run(({ cold, expectSubscriptions, flush }) => {
      const hub = createRunHub();
      const run = cold<RunEvent>('s 9ms a 9ms (f|)', ev);
      const poll = cold<RunEvent>('s 9ms a 9ms (f|)', ev);
      const led = record(hub.lead(run), () => scheduler.now());
      let follower: string[] = [];
      let followersThen = 0;
      cold('5ms x').subscribe(() => {
        followersThen = hub.followers(EXECUTION_ID);
        follower = record(hub.follow(EXECUTION_ID, () => poll), () => scheduler.now());
      });
      flush();
      expect(followersThen).toBe(1);
      expect(led).toEqual(['0:started', '10:node', '20:finished', '20:complete']);
      expect(follower).toEqual(['5:snapshot', '10:node', '20:finished', '20:complete']);
      expectSubscriptions(poll.subscriptions).toBe([]);
      expect(hub.followers(EXECUTION_ID)).toBe(0);
    });
  });

  it('numbers the events 1, 2, 3… in one sequence for every follower; a late snapshot stands at the last event, a follower after the end gets the snapshot before finished', () => {
    const scheduler = testScheduler();
    scheduler.run(({ cold, flush }) => {
      const hub = createRunHub();
      const poll = cold<RunEvent>('s 9ms a 9ms f', ev);
      const places = (seen: string[]) => (event: RunEvent) => {
        const place = hubPlaceOf(event);
        seen.push(`${event.type}@${String(place?.seq)}`);
        logs.add(place?.log);
      };
      const logs = new Set<string | undefined>();
      const first: string[] = [];
      const late: string[] = [];
      const after: string[] = [];
      hub.follow(EXECUTION_ID, () => poll).subscribe(places(first));
      cold('15ms x').subscribe(() => hub.follow(EXECUTION_ID, () => poll).subscribe(places(late)));
      cold('25ms x').subscribe(() => hub.follow(EXECUTION_ID, () => poll).subscribe(places(after)));
      flush();
      expect(first).toEqual(['started@1', 'node@2', 'finished@3']);
      expect(late).toEqual(['snapshot@2', 'finished@3']);
      expect(after).toEqual(['snapshot@2', 'finished@3']);
      expect(logs.size).toBe(1);
      expect([...logs][0]).toMatch(/^[0-9a-f]{24}$/u);
    });
  });

  it("keeps a led run's places when the run is shared (shareRun): its subscribers see the hub's sequence", () => {
    const scheduler = testScheduler();
    scheduler.run(({ cold, flush }) => {
      const hub = createRunHub();
      const follower: RunEvent[] = [];
      const shared: RunEvent[] = [];
      const run$ = hub.lead(cold<RunEvent>('s 9ms a 9ms (f|)', ev)).pipe(shareRun());
      run$.subscribe((event) => shared.push(event));
      cold('5ms x').subscribe(() => hub.follow(EXECUTION_ID, () => cold('-')).subscribe((event) => follower.push(event)));
      flush();
      const places = (events: readonly RunEvent[]): string[] => events.map((event) => `${event.type}@${String(hubPlaceOf(event)?.seq)}`);
      expect(places(shared)).toEqual(['started@1', 'node@2', 'finished@3']);
      expect(places(follower)).toEqual(['snapshot@1', 'node@2', 'finished@3']);
      expect(new Set([...shared, ...follower].map((event) => hubPlaceOf(event)?.log)).size).toBe(1);
    });
  });
});
