import fc from 'fast-check';
import { lastValueFrom, queueScheduler, Subject, toArray } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { createClient } from '../../src/client.js';
import { createEmulator, createManualClock, driveClock } from '../../src/emulator/index.js';
import { FlowstreamError } from '../../src/errors/flowstream-error.js';
import { EventLog } from '../../src/relay/event-log.js';
import { eventStream } from '../../src/relay/event-stream.js';
import { FollowedExecution, type FollowHooks } from '../../src/relay/followed-execution.js';
import type { RunEvent } from '../../src/runs/events.js';

/** A follow's hooks that do nothing, keeping `keepEvents` events. */
function quietHooks(keepEvents: number): FollowHooks {
  return { abort: () => Promise.resolve(), aborting: () => undefined, status: () => Promise.resolve('executing'), result: () => Promise.resolve(undefined), ended: () => undefined, used: () => undefined, unused: () => undefined, keepEvents };
}

const event = (n: number): RunEvent => ({ type: 'connection', executionId: 'we-1', state: 'polling', attempt: n }) as unknown as RunEvent;

describe('EventLog: a bounded history', () => {
  it('keeps at least `keep` and fewer than twice as many latest events, and says exactly which resumes it can serve', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 20 }), fc.integer({ min: 0, max: 200 }), fc.integer({ min: 0, max: 220 }), (keep, count, resumeAfter) => {
        const log = new EventLog(keep);
        for (let n = 1; n <= count; n += 1) log.append(event(n));
        expect(log.size).toBeGreaterThanOrEqual(Math.min(count, keep));
        expect(log.size).toBeLessThan(2 * keep);
        expect(log.lastSeq).toBe(count);
        const after = Math.min(resumeAfter, count);
        if (log.holds(after)) expect(log.after(after).map((entry) => entry.seq)).toEqual(Array.from({ length: count - after }, (_, index) => after + index + 1));
        // What it cannot serve whole, it says: a resume from before the oldest kept event is refused.
        else expect(after).toBeLessThan(count - log.size);
      }),
    );
  });

  it('keeps everything without a bound', () => {
    const log = new EventLog();
    for (let n = 1; n <= 5_000; n += 1) log.append(event(n));
    expect(log.size).toBe(5_000);
    expect(log.holds(0)).toBe(true);
  });
});

describe('a relay follow keeps only its latest events, and a viewer from before them gets a snapshot', () => {
  it('brings a viewer that fell behind the kept history, or resumes from before it, to the state with a snapshot: ids rising, none repeated, ending with the run\'s end', async () => {
    // A real run's events, from the emulator on a manual clock: no deadline passes while a loaded machine answers.
    const clock = createManualClock();
    const emulator = await createEmulator({ rateLimit: false, clock, listen: false });
    try {
      const client = createClient({ apiKey: emulator.apiKey, baseUrl: emulator.url, fetch: emulator.fetch, scheduler: emulator.scheduler, budget: false });
      const ran = lastValueFrom(client.run('c-sample-linear').pipe(toArray()));
      let ended = false;
      void ran.then(
        () => (ended = true),
        () => (ended = true),
      );
      await driveClock(clock, { until: () => ended });
      const events = await ran;
      expect(events.length).toBeGreaterThan(6);
      const source = new Subject<RunEvent>();
      const follow = new FollowedExecution('we-x', source, quietHooks(2));
      const settings = { scheduler: queueScheduler, heartbeatMs: 60_000, retryMs: 1_000, snapshotAfter: 1_000 };
      source.next(events[0] as RunEvent);
      // A viewer from the start reads the first event, then the rest come at once: it fell behind.
      const slow = eventStream(follow, { afterSeq: 0, followId: undefined }, settings).getReader();
      const decoder = new TextDecoder();
      let slowText = '';
      while (!slowText.includes('id: 1\n')) slowText += decoder.decode((await slow.read()).value);
      for (const each of events.slice(1)) source.next(each);
      source.complete();
      for (let chunk = await slow.read(); !chunk.done; chunk = await slow.read()) slowText += decoder.decode(chunk.value);
      expect(slowText).toContain('event: snapshot');
      // A viewer resuming after the first event is past what is kept too.
      let resumedText = '';
      const resumed = eventStream(follow, { afterSeq: 1, followId: undefined }, settings).getReader();
      for (let chunk = await resumed.read(); !chunk.done; chunk = await resumed.read()) resumedText += decoder.decode(chunk.value);
      const frames = resumedText.split('\n\n').filter((frame) => frame.startsWith('event:'));
      expect(frames[0]).toMatch(/^event: snapshot\n/u);
      // Both end at the last event, with ids rising: nothing repeated.
      for (const text of [slowText, resumedText]) {
        const ids = [...text.matchAll(/^id: (\d+)$/gmu)].map((match) => Number(match[1]));
        expect(ids.at(-1)).toBe(events.length);
        expect(ids).toEqual([...ids].sort((a, b) => a - b));
        expect(new Set(ids).size).toBe(ids.length);
        // It ends with the run's end: the `finished` event, or a snapshot that holds the result (which
        // connectRun turns into `finished`).
        const last = text.trimEnd().split('\n\n').at(-1) ?? '';
        expect(last.startsWith('event: finished\n') || (last.startsWith('event: snapshot\n') && last.includes('"result":{'))).toBe(true);
      }
      expect(follow.holds(0)).toBe(false);
    } finally {
      await emulator.close();
    }
  });
});

describe('a viewer whose id of the same numbering is ahead of the relay', () => {
  it('waits for the events after its id (another process of the hub was further on): no snapshot, none of them twice', async () => {
    const source = new Subject<RunEvent>();
    const follow = new FollowedExecution('we-1', source, quietHooks(1_000));
    const settings = { scheduler: queueScheduler, heartbeatMs: 60_000, retryMs: 1_000, snapshotAfter: 1_000 };
    for (let n = 1; n <= 3; n += 1) source.next(event(n));
    // It had events 1 to 5 from a relay that read the execution's stream further: this one has 3 so far.
    const ahead = eventStream(follow, { afterSeq: 5, followId: follow.followId }, settings).getReader();
    for (let n = 4; n <= 7; n += 1) source.next(event(n));
    source.complete();
    const decoder = new TextDecoder();
    let text = '';
    for (let chunk = await ahead.read(); !chunk.done; chunk = await ahead.read()) text += decoder.decode(chunk.value);
    expect(text).not.toContain('event: snapshot');
    expect([...text.matchAll(/^id: (\d+)$/gmu)].map((match) => Number(match[1]))).toEqual([6, 7]);
  });
});

describe('a viewer of a follow whose hub closed', () => {
  it('sees its stream end without an error, so that it reconnects (to a process whose hub follows on); another failure still ends with an error event', async () => {
    const settings = { scheduler: queueScheduler, heartbeatMs: 60_000, retryMs: 1_000, snapshotAfter: 1_000 };
    const decoder = new TextDecoder();
    const textAfter = async (error: unknown): Promise<string> => {
      const source = new Subject<RunEvent>();
      const follow = new FollowedExecution('we-1', source, quietHooks(1_000));
      source.next(event(1));
      const reader = eventStream(follow, { afterSeq: 0, followId: undefined }, settings).getReader();
      source.error(error);
      let text = '';
      for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) text += decoder.decode(chunk.value);
      return text;
    };
    const closed = await textAfter(new FlowstreamError('The run hub was closed', 'HUB_CLOSED'));
    expect(closed).toContain('id: 1\n');
    expect(closed).not.toContain('event: error');
    expect(await textAfter(new FlowstreamError('The service refused the key', 'AUTHENTICATION'))).toContain('event: error\ndata: {"error":"AUTHENTICATION"');
  });
});
