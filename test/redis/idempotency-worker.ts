/**
 * One process of a fleet starting runs with one idempotency key (the idempotency fleet test spawns
 * several): a client whose idempotency store is the account's in Redis. Once loaded it prints `ready`
 * and waits for its config, one line of JSON on stdin (see `IdempotencyWorkerConfig`) — so that a test
 * spawns its processes before its emulator exists, and the fleet's starts cross; then it runs `runs`
 * runs with the key at once, prints `result <executionId>` for each that finished (`error <code>` for
 * one that failed) and `done` when all ended.
 */
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { createClient } from '../../src/client.js';
import { isFlowstreamError } from '../../src/errors/flowstream-error.js';
import { createRedisIdempotencyStore } from '../../src/redis/index.js';
import { runResult } from '../../src/runs/events.js';

export interface IdempotencyWorkerConfig {
  readonly socket: string;
  readonly account: string;
  readonly baseUrl: string;
  readonly apiKey: string;
  readonly canvasId: string;
  readonly key: string;
  readonly runs: number;
  readonly leaseMs: number;
  readonly pollMs: number;
}

const lines = createInterface({ input: process.stdin });
process.stdout.write('ready\n');
const [line] = (await once(lines, 'line')) as [string];
lines.close();
const config = JSON.parse(line) as IdempotencyWorkerConfig;
const idempotency = createRedisIdempotencyStore({ redis: `redis+unix://${config.socket}`, account: config.account, leaseMs: config.leaseMs, pollMs: config.pollMs });
const client = createClient({ apiKey: config.apiKey, baseUrl: config.baseUrl, budget: false, polling: { minMs: 50, maxMs: 200 }, idempotency });
await Promise.all(
  Array.from({ length: config.runs }, async () => {
    try {
      const result = await runResult(client.run(config.canvasId, {}, { idempotencyKey: config.key }));
      process.stdout.write(`result ${result.executionId}\n`);
    } catch (error: unknown) {
      process.stdout.write(`error ${isFlowstreamError(error) ? error.code : String(error)}\n`);
    }
  }),
);
process.stdout.write('done\n');
await idempotency.close();
