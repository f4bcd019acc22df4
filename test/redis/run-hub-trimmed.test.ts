import { Redis } from 'ioredis';
import { lastValueFrom, tap } from 'rxjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../../src/client.js';
import { createEmulator, createScaledClock } from '../../src/emulator/index.js';
import type { WorkflowDefinition } from '../../src/emulator/workflows/definition.js';
import { createRedisRunHub } from '../../src/redis/index.js';
import type { RunEvent } from '../../src/runs/events.js';
import { hubPlaceOf } from '../../src/runs/run-hub.js';
import { type RunState, toRunState } from '../../src/runs/run-state.js';
import { REQUEST_TIMEOUT_MS } from '../support/request-timeout.js';
import { startRedisServer, type RedisServer } from './redis-server.js';

/** 80 short tasks side by side, then one more: a first reading of over 80 events, then 80 more at once. */
const TASKS = Array.from({ length: 80 }, (_, index) => ({ id: `node-${String(index)}`, parents: ['node-start'], durationMs: 2_000 }));
const WORKFLOW: WorkflowDefinition = { canvasId: 'c-hub-trimmed', nodes: [{ id: 'node-start', type: 'start' }, ...TASKS, { id: 'node-last', parents: TASKS.map(({ id }) => id), durationMs: 5_000 }] };

let server: RedisServer;
beforeAll(async () => {
  server = await startRedisServer();
});
afterAll(async () => {
  await server.close();
});

describe('createRedisRunHub: a stream trimmed before its follower read it', () => {
  it('brings the follower to the state with a snapshot where events were trimmed away: no gap in the places without one, ending in the state of the whole run', async () => {
    const emulator = await createEmulator({ clock: createScaledClock(25), rateLimit: false, samples: false, workflows: [WORKFLOW] });
    const redis = new Redis({ path: server.socket, maxRetriesPerRequest: null });
    // A stream of about 1 event: a reading's batch is trimmed as it is appended, before the reads come.
    const hub = createRedisRunHub({ redis, account: `hub-trimmed-${process.pid}`, leaseMs: 5_000, scheduler: emulator.scheduler, maxLen: 1 });
    try {
      const client = createClient({ apiKey: emulator.apiKey, baseUrl: emulator.url, fetch: emulator.fetch, scheduler: emulator.scheduler, budget: false, polling: { minMs: 1_000, maxMs: 1_000 }, timeoutMs: REQUEST_TIMEOUT_MS, hub });
      const { executionId } = await client.executions.start('c-hub-trimmed');
      const seen: { readonly seq: number; readonly event: RunEvent }[] = [];
      const states: RunState[] = [];
      await lastValueFrom(
        client.watch(executionId).pipe(
          tap((event) => seen.push({ seq: hubPlaceOf(event)?.seq ?? -1, event })),
          toRunState(),
          tap((state) => states.push(state)),
        ),
      );
      const gaps = seen.filter(({ seq, event }, index) => index > 0 && seq !== (seen[index - 1]?.seq ?? 0) + 1 && event.type !== 'snapshot');
      expect(gaps).toEqual([]);
      expect(seen[0]?.event.type === 'started' || seen[0]?.event.type === 'snapshot').toBe(true);
      expect(seen.at(-1)?.event.type).toBe('finished');
      const last = states.at(-1);
      expect(last?.nodes.filter((node) => node.status === 'finish')).toHaveLength(82);
    } finally {
      await hub.close();
      redis.disconnect();
      await emulator.close();
    }
  }, 20_000);
});
