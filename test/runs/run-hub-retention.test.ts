import { type Observable, Subject, VirtualTimeScheduler } from 'rxjs';
import { expect, it } from 'vitest';
import type { RunEvent } from '../../src/runs/events.js';
import { createRunHub } from '../../src/runs/run-hub.js';
import { RunReader, withReading } from '../../src/runs/run-state.js';
import { EXECUTION_ID } from './fixtures.js';
import { collectGarbage } from '../support/collect-garbage.js';

/** One reading of a run of this client, its events emitted to `poll`; what is left of them is watched through weak references. */
function emitReading(poll: Subject<RunEvent>, reader: RunReader): WeakRef<RunEvent>[] {
  const events: RunEvent[] = [
    { type: 'started', executionId: EXECUTION_ID, status: 'executing' },
    { type: 'node', executionId: EXECUTION_ID, nodeId: 'a', status: 'executing', title: 'Search' },
    { type: 'node', executionId: EXECUTION_ID, nodeId: 'b', status: 'init', title: 'Summarise' },
  ];
  for (const event of withReading(reader.read(events)).events) poll.next(event);
  return events.map((event) => new WeakRef(event));
}

it('a followed execution holds how it stands for a late follower, not the events of its last reading', async () => {
  const hub = createRunHub();
  const poll = new Subject<RunEvent>();
  const start = (): Observable<RunEvent> => poll;
  const following = hub.follow(EXECUTION_ID, start).subscribe();
  const events = emitReading(poll, new RunReader(new VirtualTimeScheduler()));
  await collectGarbage();
  expect(events.filter((event) => event.deref() !== undefined)).toHaveLength(0);
  // The state is still there for the next follower.
  const late: RunEvent[] = [];
  hub.follow(EXECUTION_ID, start).subscribe((event) => late.push(event)).unsubscribe();
  expect(late).toMatchObject([{ type: 'snapshot', state: { status: 'executing', nodes: [{ nodeId: 'a', status: 'executing' }, { nodeId: 'b', status: 'init' }] } }]);
  following.unsubscribe();
});
