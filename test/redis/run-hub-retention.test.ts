import { Redis } from 'ioredis';
import { Subject } from 'rxjs';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createRedisRunHub } from '../../src/redis/index.js';
import type { RunEvent } from '../../src/runs/events.js';
import { startRedisServer, type RedisServer } from './redis-server.js';
import { collectGarbage } from '../support/collect-garbage.js';

const EXECUTION_ID = 'we-leading-run';

let server: RedisServer;
beforeAll(async () => {
  server = await startRedisServer();
});
afterAll(async () => {
  await server.close();
});

/** Events of the run, given to `run`; what is left of them is watched through weak references. */
function emitMessages(run: Subject<RunEvent>, count: number): WeakRef<RunEvent>[] {
  const events: RunEvent[] = Array.from({ length: count }, (_, index) => ({
    type: 'message',
    executionId: EXECUTION_ID,
    nodeId: 'node-a',
    messageId: 'm-1',
    role: 'ai',
    delta: `part ${String(index)} `,
    reasoningDelta: '',
    content: '',
    reasoningContent: '',
    replaced: false,
  }));
  for (const event of events) run.next(event);
  return events.map((event) => new WeakRef(event));
}

it('a run leading its execution holds none of its events once the hub closed before its lease was answered', async () => {
  const redis = new Redis({ path: server.socket, maxRetriesPerRequest: null });
  redis.on('error', () => undefined);
  const hub = createRedisRunHub({ redis, account: 'retention' });
  const run = new Subject<RunEvent>();
  // The run goes on after the hub closed (its process shutting down while it runs).
  const leading = hub.lead(run).subscribe();
  try {
    run.next({ type: 'started', executionId: EXECUTION_ID, status: 'executing' });
    // Closed in the same task: the lease the run asked for is answered after.
    await hub.close();
    const events = emitMessages(run, 50);
    await collectGarbage();
    expect(events.filter((event) => event.deref() !== undefined)).toHaveLength(0);
  } finally {
    leading.unsubscribe();
    redis.disconnect();
  }
});
