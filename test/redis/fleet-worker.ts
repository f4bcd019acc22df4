/**
 * One process of a fleet on one account (the fleet harness spawns several): a client whose budget is
 * the account's in Redis. On an accelerated clock (`speed` given) the client runs on the emulator's
 * clock (same speed and real start as the harness's emulator); without `speed` it runs in real time on
 * its default scheduler. Once loaded it prints `ready` and waits for a line `go` on stdin — so that a
 * fleet starts together however long each process took to load, and a late process joins the account
 * when told, not when its loading ends (its budget is connected but takes no part in the account's
 * shares until its first request). It starts `runs` runs at once, prints `started <executionId>` for each (`failed <n>` for one that failed) and `done` when all
 * ended, after `loop <p50> <p99> <max>`: how late its event loop ran, real ms, from its start to its end (a
 * process starved of the CPU keeps its turns late). Config: one JSON argument (see `FleetWorkerConfig`).
 */
import { once } from 'node:events';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
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
  /** The emulator's clock speed; absent in real time. */
  readonly speed?: number;
  readonly realStart: number;
  readonly canvasId: string;
  readonly runs: number;
  readonly name: string;
  /** The account's minute, when not the service's 100. */
  readonly perMinute?: number;
  /** The account's day, when not the service's 10,000. */
  readonly perDay?: number;
  /** The runs' output mode. Default `'stream'`, the client's. */
  readonly output?: 'stream' | 'final';
  /** Wait for a line `go` on stdin before the first request (default: start the runs at once). */
  readonly waitForGo?: boolean;
}

const config = JSON.parse(process.argv[2] ?? '{}') as FleetWorkerConfig;
const redis = new Redis({ path: config.socket, maxRetriesPerRequest: null });
const scheduler = config.speed === undefined ? undefined : clockScheduler(createScaledClock(config.speed, Date.now, config.realStart));
const budget = createRedisBudget({
  redis,
  account: config.account,
  ...(config.perMinute === undefined ? {} : { requestsPerMinute: config.perMinute }),
  ...(config.perDay === undefined ? {} : { requestsPerDay: config.perDay }),
  ...(config.speed === undefined ? {} : { timeScale: config.speed }),
  ...(scheduler === undefined ? {} : { scheduler }),
});
// A request's deadline is emulator time: on an accelerated clock the default 30 s are a couple of real
// seconds, which a loaded machine's stalls can outlast, so the deadline is stretched there.
const timing = scheduler === undefined ? {} : { scheduler, timeoutMs: 120_000 };
const client = createClient({ apiKey: config.apiKey, baseUrl: config.baseUrl, budget, ...timing });
if (config.waitForGo === true) {
  // A process's first request is slow (connections, code loaded on first use): a few hundred ms of
  // a busy machine, seconds of an accelerated clock, longer than the budget's latency allowance
  // (2 s), so the service's first window would count it later than the budget did and leave less
  // than the budget's reserve. It is made before the fleet starts, with no API key: answered 401,
  // which the service does not count (service.md §2.1) and the figures leave out.
  await fetch(new URL('/v1/openapi/workflow/we-warm-up/status', config.baseUrl)).then((response) => response.arrayBuffer());
  const lines = createInterface({ input: process.stdin });
  process.stdout.write('ready\n');
  for (;;) {
    const [line] = (await once(lines, 'line')) as [string];
    if (line.trim() === 'go') break;
  }
  lines.close();
}

const loopDelay = monitorEventLoopDelay({ resolution: 10 });
loopDelay.enable();
await Promise.all(
  Array.from({ length: config.runs }, (_, n) =>
    lastValueFrom(
      client.run(config.canvasId, { variables: { worker: config.name, n } }, { output: config.output ?? 'stream' }).pipe(
        tap((event) => {
          if (event.type === 'started') process.stdout.write(`started ${event.executionId}\n`);
        }),
      ),
    ).catch((error: unknown) => {
      process.stdout.write(`failed ${n}\n`);
      process.stderr.write(`run ${n} failed: ${String(error)}\n`);
    }),
  ),
);
loopDelay.disable();
const delayMs = (ns: number): string => (ns / 1e6).toFixed(0);
process.stdout.write(`loop ${delayMs(loopDelay.percentile(50))} ${delayMs(loopDelay.percentile(99))} ${delayMs(loopDelay.max)}\n`);
await budget.close();
redis.disconnect();
process.stdout.write('done\n');
