import type { Observable } from 'rxjs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { type Client, createClient } from '../../src/client.js';
import { createEmulator, createManualClock, driveClock, type Emulator, type ManualClock, type WorkflowDefinition } from '../../src/emulator/index.js';
import { isWorkflowFailedError } from '../../src/errors/run-errors.js';
import type { RunEvent } from '../../src/runs/events.js';
import { createRunHub } from '../../src/runs/run-hub.js';

const open: Emulator[] = [];
afterEach(async () => {
  vi.restoreAllMocks();
  await Promise.all(open.splice(0).map((emulator) => emulator.close()));
});

/** A start node and one task of 8 s with one message. */
const ONE_TASK: WorkflowDefinition = {
  canvasId: 'c-one-task',
  title: 'One task',
  nodes: [
    { id: 'node-start', type: 'start' },
    { id: 'node-task', parents: ['node-start'], durationMs: 8_000, messages: [{ content: 'done' }] },
  ],
};

/** The emulator on a manual clock (counts that do not depend on the machine's speed), in-process, a client on its time without jitter. */
async function setup(hub = createRunHub()): Promise<{ emulator: Emulator; client: Client; clock: ManualClock }> {
  vi.spyOn(Math, 'random').mockReturnValue(0.5);
  const clock = createManualClock();
  const emulator = await createEmulator({ clock, listen: false, samples: false, rateLimit: false, workflows: [ONE_TASK] });
  open.push(emulator);
  const client = createClient({ apiKey: emulator.apiKey, baseUrl: emulator.url, fetch: emulator.fetch, scheduler: emulator.scheduler, budget: false, hub });
  return { emulator, client, clock };
}

/** Collects `events$` until it ends, driving the clock meanwhile; resolves with the events and the error, if any. */
async function follow(clock: ManualClock, ...streams: Observable<RunEvent>[]): Promise<{ events: RunEvent[]; error: unknown }[]> {
  const outcomes = streams.map((): { events: RunEvent[]; error: unknown; ended: boolean } => ({ events: [], error: undefined, ended: false }));
  streams.forEach((events$, index) => {
    const outcome = outcomes[index]!;
    events$.subscribe({
      next: (event) => outcome.events.push(event),
      error: (error: unknown) => {
        outcome.error = error;
        outcome.ended = true;
      },
      complete: () => (outcome.ended = true),
    });
  });
  await driveClock(clock, { until: () => outcomes.every((outcome) => outcome.ended) });
  return outcomes;
}

const statusReads = (emulator: Emulator, executionId: string): number => emulator.requests.list({ endpoint: 'status', executionId }).length;

describe('a client hub: one poll stream per execution in a process', () => {
  it('two concurrent watches of one execution cost the service the status reads of one watch', async () => {
    const { emulator, client, clock } = await setup();
    const alone = await client.executions.start('c-one-task');
    const [one] = await follow(clock, client.watch(alone.executionId));
    const shared = await client.executions.start('c-one-task');
    const [first, second] = await follow(clock, client.watch(shared.executionId), client.watch(shared.executionId));

    const single = statusReads(emulator, alone.executionId);
    expect(single).toBeGreaterThan(3);
    expect(Math.abs(statusReads(emulator, shared.executionId) - single)).toBeLessThanOrEqual(single * 0.05);
    expect(first?.events.at(-1)).toMatchObject({ type: 'finished', result: { status: 'finish' } });
    expect(second?.events.map((event) => event.type)).toEqual(first?.events.map((event) => event.type));
    expect(one?.events.map((event) => event.type)).toEqual(first?.events.map((event) => event.type));
  });

  it('a late watch first gets a snapshot of the state so far, then the live events, on the same poll', async () => {
    const { emulator, client, clock } = await setup();
    const { executionId } = await client.executions.start('c-one-task');
    const early: RunEvent[] = [];
    let executing = false;
    const subscription = client.watch(executionId).subscribe((event) => {
      early.push(event);
      if (event.type === 'node' && event.status === 'executing') executing = true;
    });
    await driveClock(clock, { until: () => executing });
    const readsBefore = statusReads(emulator, executionId);
    const [late] = await follow(clock, client.watch(executionId));
    subscription.unsubscribe();

    const snapshot = late?.events[0];
    expect(snapshot?.type === 'snapshot' && snapshot.state.nodes.find((node) => node.nodeId === 'node-task')?.status).toBe('executing');
    expect(late?.events.at(-1)).toMatchObject({ type: 'finished' });
    // One poll: the late watch's events after its snapshot are the early watch's last ones, not a second stream's.
    expect(late?.events.slice(1)).toEqual(early.slice(early.length - (late?.events.length ?? 0) + 1));
    expect(statusReads(emulator, executionId) - readsBefore).toBeLessThan(readsBefore * 2);
  });

  it('a watch of the execution a client.run started joins the run instead of polling again', async () => {
    const { emulator, client, clock } = await setup();
    let executionId: string | undefined;
    const run = new Promise<RunEvent[]>((resolve) => {
      const events: RunEvent[] = [];
      client.run('c-one-task').subscribe({
        next: (event) => {
          events.push(event);
          if (event.type === 'started') executionId = event.executionId;
        },
        complete: () => {
          resolve(events);
        },
      });
    });
    await driveClock(clock, { until: () => executionId !== undefined });
    const watched = follow(clock, client.watch(executionId ?? ''));
    const [[watch], runEvents] = await Promise.all([watched, run]);

    expect(watch?.events[0]).toMatchObject({ type: 'snapshot', executionId });
    expect(watch?.events.at(-1)).toEqual(runEvents.at(-1));
    // Every status read of the execution is the run's: the watch made none of its own.
    const runReads = emulator.requests.list({ endpoint: 'status', executionId: executionId ?? '' });
    expect(runReads.length).toBeGreaterThan(3);
    const aloneExecution = await client.executions.start('c-one-task');
    await follow(clock, client.watch(aloneExecution.executionId));
    expect(Math.abs(runReads.length - statusReads(emulator, aloneExecution.executionId))).toBeLessThanOrEqual(1);
  });

  it('a watch of the execution a startRun started joins it: one poll stream', async () => {
    const { emulator, client, clock } = await setup();
    const handle = client.startRun('c-one-task');
    let executionId: string | undefined;
    void handle.executionId.then((id) => (executionId = id));
    await driveClock(clock, { until: () => executionId !== undefined });
    const [watch] = await follow(clock, client.watch(executionId ?? ''));
    const result = await handle.result;

    expect(watch?.events[0]).toMatchObject({ type: 'snapshot', executionId });
    expect(watch?.events.at(-1)).toMatchObject({ type: 'finished', result });
    const aloneExecution = await client.executions.start('c-one-task');
    await follow(clock, client.watch(aloneExecution.executionId));
    expect(Math.abs(statusReads(emulator, executionId ?? '') - statusReads(emulator, aloneExecution.executionId))).toBeLessThanOrEqual(1);
  });

  it('a watch that joined a run goes on with its own poll when the run is unsubscribed, without repeating the run from its start', async () => {
    const { emulator, client, clock } = await setup();
    let executionId: string | undefined;
    let executing = false;
    const run = client.run('c-one-task').subscribe((event) => {
      if (event.type === 'started') executionId = event.executionId;
      if (event.type === 'node' && event.status === 'executing') executing = true;
    });
    await driveClock(clock, { until: () => executing });
    const watched = follow(clock, client.watch(executionId ?? '', { failOnWorkflowError: false }));
    run.unsubscribe();
    const [watch] = await watched;

    // The run's leaving aborted the execution (service.md §3.5); the watch saw it end.
    expect(emulator.requests.list({ endpoint: 'abort', executionId: executionId ?? '' })).toHaveLength(1);
    expect(watch?.events.at(-1)).toMatchObject({ type: 'finished', result: { status: 'failed' } });
    expect(watch?.events.filter((event) => event.type === 'started')).toEqual([]);
    expect(watch?.events.map((event) => event.type).slice(0, 2)).toEqual(['snapshot', 'snapshot']);
  });

  it('abortOnUnsubscribe aborts only when the last watch following the execution leaves', async () => {
    const { emulator, client, clock } = await setup();
    const { executionId } = await client.executions.start('c-one-task');
    let seen = 0;
    const aborting = client.watch(executionId, { abortOnUnsubscribe: true }).subscribe(() => (seen += 1));
    const staying = client.watch(executionId).subscribe();
    await driveClock(clock, { until: () => seen >= 3 });
    aborting.unsubscribe();
    await driveClock(clock, { until: () => emulator.requests.list().length > 8 });
    expect(emulator.requests.list({ endpoint: 'abort' })).toHaveLength(0);

    const lastAborting = client.watch(executionId, { abortOnUnsubscribe: true }).subscribe();
    staying.unsubscribe();
    expect(emulator.requests.list({ endpoint: 'abort' })).toHaveLength(0);
    lastAborting.unsubscribe();
    await driveClock(clock, { until: () => emulator.requests.list({ endpoint: 'abort' }).length > 0 });
    expect(emulator.requests.list({ endpoint: 'abort', executionId })).toHaveLength(1);
  });

  it('each watch keeps its own failOnWorkflowError on a shared poll', async () => {
    const { emulator, client, clock } = await setup();
    const { executionId } = await client.executions.start('c-one-task');
    await client.executions.abort(executionId);
    const [failing, completing] = await follow(clock, client.watch(executionId), client.watch(executionId, { failOnWorkflowError: false }));
    expect(statusReads(emulator, executionId)).toBe(1);
    expect(isWorkflowFailedError(failing?.error)).toBe(true);
    expect(completing?.error).toBeUndefined();
    expect(completing?.events.at(-1)).toMatchObject({ type: 'finished', result: { status: 'failed' } });
  });

  it('clients given one hub share it', async () => {
    const hub = createRunHub();
    const { emulator, client, clock } = await setup(hub);
    const other = createClient({ apiKey: emulator.apiKey, baseUrl: emulator.url, fetch: emulator.fetch, scheduler: emulator.scheduler, budget: false, hub });
    const alone = await client.executions.start('c-one-task');
    await follow(clock, client.watch(alone.executionId));
    const { executionId } = await client.executions.start('c-one-task');
    await follow(clock, client.watch(executionId), other.watch(executionId));
    expect(client.hub).toBe(hub);
    expect(statusReads(emulator, executionId)).toBe(statusReads(emulator, alone.executionId));
    expect(hub.followers(executionId)).toBe(0);
  });
});
