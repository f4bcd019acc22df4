import { filter, firstValueFrom, type Observable } from 'rxjs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { type Client, createClient } from '../../src/client.js';
import { createEmulator, type Emulator } from '../../src/emulator/index.js';
import type { RunEvent } from '../../src/runs/events.js';
import { type RunState, runStore } from '../../src/runs/run-state.js';
import { shareRun } from '../../src/runs/run-hub.js';

const open: Emulator[] = [];

afterEach(async () => {
  await Promise.all(open.splice(0).map((emulator) => emulator.close()));
});

/** The emulator 100× faster, reached in-process, with an unbudgeted client polling at 5–20 ms: a start leaves at once. */
async function setup(): Promise<{ emulator: Emulator; client: Client }> {
  const emulator = await createEmulator({ speed: 100, rateLimit: false, listen: false });
  open.push(emulator);
  const client = createClient({ apiKey: emulator.apiKey, baseUrl: emulator.url, fetch: emulator.fetch, budget: false, polling: { minMs: 5, maxMs: 20 } });
  return { emulator, client };
}

/** Resolves with the first state `store` shows that satisfies `wanted`, or that comes with an error. */
function stateOf(store: ReturnType<typeof runStore>, wanted: (state: RunState) => boolean): Promise<RunState> {
  return new Promise((resolve) => {
    const leave = store.subscribe((state) => {
      if (state === undefined || (!wanted(state) && store.getError() === undefined)) return;
      resolve(state);
      queueMicrotask(() => {
        leave();
      });
    });
  });
}

describe('a run subscribed, left and subscribed again in one task (React StrictMode mounting twice)', () => {
  it('runStore: starts one execution and aborts none', async () => {
    const { emulator, client } = await setup();
    const store = runStore(client.run('c-sample-linear'));
    const listener = (): void => undefined;
    const leaveFirst = store.subscribe(listener);
    leaveFirst();
    const leaveSecond = store.subscribe(listener);
    const final = await stateOf(store, (state) => state.result !== undefined);
    leaveSecond();
    expect(store.getError()).toBeUndefined();
    expect(final.result).toMatchObject({ status: 'finish', endedBy: 'finish' });
    expect(emulator.requests.list({ endpoint: 'run' })).toHaveLength(1);
    expect(emulator.requests.list({ endpoint: 'abort' })).toHaveLength(0);
  });

  it('runStore: a real leave still aborts the execution exactly once', async () => {
    const { emulator, client } = await setup();
    const store = runStore(client.run('c-sample-timeout'));
    const leave = store.subscribe(() => undefined);
    const { executionId = '' } = await stateOf(store, (state) => state.nodes.some((node) => node.status === 'executing'));
    leave();
    await vi.waitFor(() => {
      expect(emulator.executions.get(executionId)?.status).toBe('failed');
    }, { timeout: 10_000 });
    expect(emulator.requests.list({ endpoint: 'run' })).toHaveLength(1);
    expect(emulator.requests.list({ endpoint: 'abort', executionId })).toHaveLength(1);
  });

  it('shareRun: starts one execution and aborts none', async () => {
    const { emulator, client } = await setup();
    const run$: Observable<RunEvent> = client.run('c-sample-linear').pipe(shareRun());
    run$.subscribe().unsubscribe();
    const finished = await firstValueFrom(run$.pipe(filter((event) => event.type === 'finished')));
    expect(finished.result).toMatchObject({ status: 'finish', endedBy: 'finish' });
    expect(emulator.requests.list({ endpoint: 'run' })).toHaveLength(1);
    expect(emulator.requests.list({ endpoint: 'abort' })).toHaveLength(0);
  });

  it('shareRun: a real leave still aborts the execution exactly once', async () => {
    const { emulator, client } = await setup();
    const run$ = client.run('c-sample-timeout').pipe(shareRun());
    const subscription = run$.subscribe();
    const working = await firstValueFrom(run$.pipe(filter((event) => event.type === 'node' && event.status === 'executing')));
    subscription.unsubscribe();
    await vi.waitFor(() => {
      expect(emulator.executions.get(working.executionId)?.status).toBe('failed');
    }, { timeout: 10_000 });
    expect(emulator.requests.list({ endpoint: 'run' })).toHaveLength(1);
    expect(emulator.requests.list({ endpoint: 'abort', executionId: working.executionId })).toHaveLength(1);
  });
});
