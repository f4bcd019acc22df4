import { describe, expect, it } from 'vitest';
import { createMemoryCheckpointStore, type CheckpointStoreEvent } from '../../src/pipeline/checkpoint-store.js';

describe('the in-memory checkpoint store', () => {
  it('moves a step only from the state it expects, under the latest claim', async () => {
    const store = createMemoryCheckpointStore();
    const token = await store.claim('p');
    const starting = { status: 'starting', attempt: 1, attemptedAt: 5 } as const;
    expect(await store.transition('p', 'a', undefined, starting, token)).toBe(true);
    // Compare-and-set: a second writer that also saw "no entry" loses.
    expect(await store.transition('p', 'a', undefined, starting, token)).toBe(false);
    const running = { ...starting, status: 'running', executionId: 'we-1' } as const;
    expect(await store.transition('p', 'a', starting, running, token)).toBe(true);
    expect((await store.load('p'))?.checkpoint.steps).toEqual({ a: running });
  });

  it('fences out a process that lost the lead: its writes fail once another claimed the pipeline', async () => {
    const store = createMemoryCheckpointStore();
    const old = await store.claim('p');
    const fresh = await store.claim('p');
    expect(fresh).toBeGreaterThan(old);
    expect(await store.transition('p', 'a', undefined, { status: 'starting', attempt: 1 }, old)).toBe(false);
    expect(await store.transition('p', 'a', undefined, { status: 'starting', attempt: 1 }, fresh)).toBe(true);
    expect((await store.load('p'))?.fence).toBe(fresh);
  });

  it('tells every follower of a pipeline its changes and a cancel, also one asked before they listened', async () => {
    const store = createMemoryCheckpointStore();
    const early: CheckpointStoreEvent[] = [];
    store.events('p').subscribe((event) => early.push(event));
    const token = await store.claim('p');
    await store.transition('p', 'a', undefined, { status: 'starting', attempt: 1 }, token);
    await store.requestCancel('p');
    const late: CheckpointStoreEvent[] = [];
    store.events('p').subscribe((event) => late.push(event));
    expect(early.map((event) => event.type)).toEqual(['step', 'cancel']);
    expect(late).toEqual([{ type: 'cancel', pipelineId: 'p' }]);
    expect(await store.load('other')).toBeUndefined();
  });
});

describe('a cancel crossing a start in the in-memory checkpoint store', () => {
  it('refuses to record a step starting once the pipeline is cancelled, and still records the ends of what runs', async () => {
    const store = createMemoryCheckpointStore();
    const token = await store.claim('p');
    const running = { status: 'running', executionId: 'we-1', attempt: 1 } as const;
    expect(await store.transition('p', 'a', undefined, { status: 'starting', attempt: 1 }, token)).toBe(true);
    expect(await store.transition('p', 'a', { status: 'starting', attempt: 1 }, running, token)).toBe(true);
    await store.requestCancel('p');
    expect(await store.transition('p', 'b', undefined, { status: 'starting', attempt: 1 }, token)).toBe(false);
    expect(await store.transition('p', 'a', running, { ...running, status: 'aborted' }, token)).toBe(true);
    expect((await store.load('p'))?.checkpoint.steps).toEqual({ a: { ...running, status: 'aborted' } });
  });
});
