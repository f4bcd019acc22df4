/**
 * One process of a fleet on one account (the fleet test spawns several): a client on the emulator's
 * clock (same speed and real start as the test's emulator) whose budget is the account's in Redis.
 * It starts `runs` runs at once, prints `started <executionId>` for each and `done` when all ended.
 * Config: one JSON argument (see `FleetWorkerConfig`).
 */
import { Redis } from 'ioredis';
import { lastValueFrom, tap } from 'rxjs';
import { createClient } from '../../src/client.js';
import { clockScheduler, createScaledClock } from '../../src/emulator/index.js';
import { createRedisBudget } from '../../src/redis/index.js';

export interface FleetWorkerConfig {
  readonly socket: string;
  readonly account: string;
  readonly baseUrl: string;
  readonly apiKey: string;
  readonly speed: number;
  readonly realStart: number;
  readonly canvasId: string;
  readonly runs: number;
  readonly name: string;
}

const config = JSON.parse(process.argv[2] ?? '{}') as FleetWorkerConfig;
const clock = createScaledClock(config.speed, Date.now, config.realStart);
const redis = new Redis({ path: config.socket, maxRetriesPerRequest: null });
const scheduler = clockScheduler(clock);
const budget = createRedisBudget({ redis, account: config.account, timeScale: config.speed, scheduler });
const client = createClient({ apiKey: config.apiKey, baseUrl: config.baseUrl, budget, scheduler });

await Promise.all(
  Array.from({ length: config.runs }, (_, n) =>
    lastValueFrom(
      client.run(config.canvasId, { variables: { worker: config.name, n } }).pipe(
        tap((event) => {
          if (event.type === 'started') process.stdout.write(`started ${event.executionId}\n`);
        }),
      ),
    ).catch((error: unknown) => {
      process.stderr.write(`run ${n} failed: ${String(error)}\n`);
    }),
  ),
);
await budget.close();
redis.disconnect();
process.stdout.write('done\n');
