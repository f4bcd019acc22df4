/**
 * One process of a fleet following executions through a Redis run hub (the hub test spawns several):
 * a client on the emulator's clock (same speed and real start as the test's emulator) whose hub is
 * the account's in Redis. Prints `ready`, then reads one line of JSON from stdin (the execution ids to
 * follow), watches each, prints every event as a JSON line `{ executionId, seq, event }`, then how
 * many reads of each execution this process sent (`reads <executionId> <n>`) and `done` once every
 * watch ended. Any later line on stdin asks for the reads so far (`sofar <executionId> <n>`, then `reported`). Config: one JSON argument (see `HubWorkerConfig`).
 */
import { createInterface } from 'node:readline';
import { Redis } from 'ioredis';
import { lastValueFrom, tap } from 'rxjs';
import { createClient } from '../../src/client.js';
import { clockScheduler, createScaledClock } from '../../src/emulator/index.js';
import { createRedisRunHub } from '../../src/redis/index.js';
import { hubPlaceOf } from '../../src/runs/run-hub.js';

export interface HubWorkerConfig {
  readonly socket: string;
  readonly account: string;
  readonly baseUrl: string;
  readonly apiKey: string;
  readonly speed: number;
  readonly realStart: number;
  readonly leaseMs: number;
  readonly pollMs: number;
}

const config = JSON.parse(process.argv[2] ?? '{}') as HubWorkerConfig;
const redis = new Redis({ path: config.socket, maxRetriesPerRequest: null });
const scheduler = clockScheduler(createScaledClock(config.speed, Date.now, config.realStart));
const hub = createRedisRunHub({ redis, account: config.account, leaseMs: config.leaseMs, scheduler });
/** The requests about each execution this process sent (each names it in its URL), as the service sees them. */
const reads = new Map<string, number>();
const counting: typeof fetch = (input, init) => {
  const executionId = /we-[a-z0-9]+/u.exec(input instanceof Request ? input.url : String(input))?.[0];
  if (executionId !== undefined) reads.set(executionId, (reads.get(executionId) ?? 0) + 1);
  return fetch(input, init);
};
const client = createClient({ apiKey: config.apiKey, baseUrl: config.baseUrl, fetch: counting, scheduler, budget: false, polling: { minMs: config.pollMs, maxMs: config.pollMs }, timeoutMs: 120_000, hub });
process.stdout.write('ready\n');

const printReads = (executionIds: readonly string[], label: string): void => {
  for (const executionId of executionIds) process.stdout.write(`${label} ${executionId} ${String(reads.get(executionId) ?? 0)}\n`);
};
const lines = createInterface({ input: process.stdin });
const line = await new Promise<string>((resolve) => lines.once('line', resolve));
const executionIds = JSON.parse(line) as string[];
// Any later line asks how many reads were sent so far.
lines.on('line', () => {
  printReads(executionIds, 'sofar');
  process.stdout.write('reported\n');
});
await Promise.all(
  executionIds.map((executionId) =>
    lastValueFrom(
      client.watch(executionId, { failOnWorkflowError: false }).pipe(
        tap((event) => {
          process.stdout.write(`${JSON.stringify({ executionId, seq: hubPlaceOf(event)?.seq ?? -1, event })}\n`);
        }),
      ),
    ),
  ),
);
printReads(executionIds, 'reads');
lines.close();
await hub.close();
redis.disconnect();
process.stdout.write('done\n');
