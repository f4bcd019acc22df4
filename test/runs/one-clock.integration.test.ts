import { TestScheduler } from 'rxjs/testing';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createClient } from '../../src/client.js';
import { createEmulator, createManualClock, driveClock, type Emulator, type WorkflowDefinition } from '../../src/emulator/index.js';
import { isRunTimeoutError } from '../../src/errors/run-errors.js';
import type { RunEvent } from '../../src/runs/events.js';
import { REQUEST_TIMEOUT_MS } from '../support/request-timeout.js';

const open: Emulator[] = [];
afterEach(async () => {
  vi.restoreAllMocks();
  await Promise.all(open.splice(0).map((emulator) => emulator.close()));
});

/** A start node and one task of 4 s with one message: the smallest run with every kind of event. */
const ONE_TASK: WorkflowDefinition = {
  canvasId: 'c-one-task',
  title: 'One task',
  nodes: [
    { id: 'node-start', type: 'start' },
    { id: 'node-task', parents: ['node-start'], durationMs: 4_000, messages: [{ content: 'done' }] },
  ],
};

/** Frames of a marble diagram (`TestScheduler.parseMarbles`), in ms, with the value at each. */
function marbleFrames(marbles: string, values: Record<string, string>): [number, string][] {
  // Inside `run`, one character is one frame (1 ms), as in the marble tests of RxJS.
  return new TestScheduler(() => undefined).run(() =>
    TestScheduler.parseMarbles(marbles, values, undefined, true, true).map((frame): [number, string] => [frame.frame, (frame.notification as { value: string }).value]),
  );
}

describe('one clock: a client on emulator.scheduler lives on emulator time end to end', () => {
  it('runs a whole run in virtual time over the in-process fetch: events and requests at fixed emulator times', async () => {
    // No jitter: the cadence's waits are exactly 500 ms, 750 ms, … (±0).
    vi.spyOn(Math, 'random').mockReturnValue(0.5);
    const clock = createManualClock();
    const emulator = await createEmulator({ clock, listen: false, samples: false, workflows: [ONE_TASK] });
    open.push(emulator);
    const client = createClient({ apiKey: emulator.apiKey, baseUrl: emulator.url, fetch: emulator.fetch, scheduler: emulator.scheduler });
    const start = clock.now();
    const events: [number, string][] = [];
    let ended = false;
    client.run('c-one-task').subscribe({
      next: (event: RunEvent) => {
        const label = event.type === 'node' ? `${event.nodeId}:${event.status}` : event.type === 'status' ? `status:${event.status}` : event.type;
        events.push([clock.now() - start, label]);
      },
      complete: () => (ended = true),
    });
    await driveClock(clock, { until: () => ended });

    const requests = emulator.requests.list().map((request): [number, string] => [request.emulatorTime - start, request.endpoint]);
    // Events: started at once; the first status read (500 ms) shows the task still `init` (service.md
    // §3.2: it starts on the service's first poll tick, 1.5 s after the run); the read 500 ms later sees
    // no change, the next (750 ms later, at 1.75 s) sees it executing. It ends at 5.5 s; the read that
    // finds it done comes 500 + 750 + 1,125 + 1,688 ms after that one (the cadence backs off while nothing
    // changes), and 500 ms later, after the service's tick (6 s), the execution is `finish`.
    expect(events).toEqual(
      marbleFrames('a 499ms (bc) 1246ms d 4062ms (ef) 496ms (gh)', {
        a: 'started',
        b: 'node-start:finish',
        c: 'node-task:init',
        d: 'node-task:executing',
        e: 'node-task:finish',
        f: 'message',
        g: 'status:finish',
        h: 'finished',
      }),
    );
    // Requests: the status reads on that cadence; output read while the task streams and when it ended,
    // which holds the final output: the end is the one status read after it.
    expect(requests).toEqual(marbleFrames('r 499ms s 499ms s 749ms s 499ms o 749ms s 1124ms s 1687ms o 499ms s', { r: 'run', s: 'status', o: 'output' }));
    // Nothing is left pending on the clock: every timer of the run belonged to its subscription.
    expect(clock.nextTimerAt()).toBeUndefined();
  });

  it('errors with RunTimeoutError after 60 s of emulator time, 1.2 s of real time at speed 50', async () => {
    const emulator = await createEmulator({ speed: 50, listen: false });
    open.push(emulator);
    const client = createClient({ apiKey: emulator.apiKey, baseUrl: emulator.url, fetch: emulator.fetch, scheduler: emulator.scheduler, timeoutMs: REQUEST_TIMEOUT_MS });
    const startedAt = emulator.clock.now();
    const realStart = performance.now();
    const error = await new Promise<unknown>((resolve) => {
      client.run('c-sample-timeout', {}, { timeoutMs: 60_000 }).subscribe({ error: resolve, complete: () => { resolve(undefined); } });
    });
    const realMs = performance.now() - realStart;
    const emulatorMs = emulator.clock.now() - startedAt;
    console.info(`timeoutMs 60 000 at speed 50: RunTimeoutError after ${emulatorMs.toFixed(0)} emulator ms, ${realMs.toFixed(0)} real ms`);
    expect(isRunTimeoutError(error)).toBe(true);
    expect(emulatorMs).toBeGreaterThanOrEqual(60_000);
    // The deadline is an emulator minute, not a real one (a real one would far exceed the test's timeout).
    expect(emulatorMs).toBeLessThan(65_000);
  });
});
