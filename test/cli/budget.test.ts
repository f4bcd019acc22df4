import { Writable } from 'node:stream';
import { Redis } from 'ioredis';
import type { Subscription } from 'rxjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../src/cli/cli.js';
import type { StopSignal } from '../../src/cli/progress/interrupts.js';
import { createEmulator, createScaledClock, type Emulator } from '../../src/emulator/index.js';
import type { WorkflowDefinition } from '../../src/emulator/workflows/definition.js';
import { createClient, toRunState } from '../../src/index.js';
import { createRedisBudget, createRedisRunHub, type RedisBudget } from '../../src/redis/index.js';
import { hubStateKeyPattern } from '../../src/redis/account-name.js';
import type { BudgetView } from '../../src/cli/budget/budget-view.js';
import { startRedisServer, type RedisServer } from '../redis/redis-server.js';
import { flowstreamFromSourceInTerminal } from './support/source-cli.js';
import { REQUEST_TIMEOUT_MS } from '../support/request-timeout.js';
import { runPiped as piped } from './support/piped-cli.js';

// `flowstream budget` as a user runs it (from source, spawned with only PATH, HOME and FLOWSTREAM_*),
// against the emulator's rate limiter (service.md §2.1: 100 a minute, 10,000 a day, with headers) and
// against a fleet of three processes' budgets sharing one account in a real redis-server.

const ESC = String.fromCharCode(27);

let emulator: Emulator;
let redis: RedisServer;

beforeAll(async () => {
  [emulator, redis] = await Promise.all([createEmulator(), startRedisServer()]);
});

afterAll(async () => {
  await Promise.all([emulator.close(), redis.close()]);
});

function views(stdout: string): BudgetView[] {
  return stdout.trimEnd().split('\n').map((line) => JSON.parse(line) as BudgetView);
}

async function searches(count: number): Promise<void> {
  for (let sent = 0; sent < count; sent++) {
    const response = await fetch(`${emulator.url}/openapi/workflows?pageSize=1`, { headers: { Authorization: `Bearer ${emulator.apiKey}` } });
    expect(response.status).toBe(200);
  }
}

describe('flowstream budget against the service', { timeout: 20_000 }, () => {
  it('prints, piped, one JSON line per refresh with the minute and the day of the whole account, read off the service\'s headers', async () => {
    const before = emulator.requests.list().length;
    // Another process of the account spends 3 requests: the service's count includes them.
    await searches(3);
    const cli = await piped(['budget', '--url', emulator.url, '--count', '2', '--interval', '0.1'], { FLOWSTREAM_API_KEY: emulator.apiKey });
    expect(cli.code).toBe(0);
    const [first, second] = views(cli.stdout);
    const used = before + 3 + 1;
    expect(first).toMatchObject({ source: 'service', recorded: true, minute: { limit: 100, used, remaining: 100 - used }, day: { limit: 10_000, used, remaining: 10_000 - used }, runs: null, processes: null });
    expect(first?.server).toMatchObject({ remainingPerMinute: 100 - used, remainingPerDay: 10_000 - used });
    // Each refresh is one request of the account.
    expect(second?.minute.used).toBe(used + 1);
    expect(cli.stdout).not.toContain(emulator.apiKey);
  });

  it('refuses an interval longer than a timer can wait (24 days) as a usage error, sending nothing, rather than refresh every millisecond', async () => {
    const before = emulator.requests.list().length;
    const cli = await piped(['budget', '--url', emulator.url, '--count', '3', '--interval', '1e7'], { FLOWSTREAM_API_KEY: emulator.apiKey });
    expect(cli).toMatchObject({ code: 2, stdout: '' });
    expect(cli.stderr).toContain("option '--interval <seconds>' argument '1e7' is invalid");
    expect(emulator.requests.list()).toHaveLength(before);
  });

  it('stops once its reader is gone (`flowstream budget | head -1`), exit 0, rather than refresh for ever, a request each time', async () => {
    let writes = 0;
    const stdout = new Writable({
      write(_chunk: Buffer, _encoding, done) {
        writes += 1;
        // The reader took its one line and left: every later write fails as a closed pipe does.
        done(writes === 1 ? null : Object.assign(new Error('write EPIPE'), { code: 'EPIPE' }));
      },
    }) as unknown as NodeJS.WriteStream;
    // As the command's entry point does: a closed pipe does not end the process by itself.
    stdout.on('error', () => undefined);
    const before = emulator.requests.list().length;
    const code = await runCli(['budget', '--url', emulator.url, '--count', '20', '--interval', '0.01'], { env: { FLOWSTREAM_API_KEY: emulator.apiKey }, stdout, stderr: stdout, interrupts: () => () => undefined });
    expect(code).toBe(0);
    expect(writes).toBe(2);
    expect(emulator.requests.list().length - before).toBe(2);
  });

  it('stops on Ctrl-C when piped, exit 0, its lines whole', async () => {
    const interrupt: { send?: ((signal: StopSignal) => void) | undefined } = {};
    const lines: string[] = [];
    const stdout = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(chunk.toString());
        // Ctrl-C after the second refresh.
        if (lines.length === 2) interrupt.send?.('SIGINT');
        done();
      },
    }) as unknown as NodeJS.WriteStream;
    const code = await runCli(['budget', '--url', emulator.url, '--interval', '0.1'], {
      env: { FLOWSTREAM_API_KEY: emulator.apiKey },
      stdout,
      stderr: stdout,
      interrupts: (listener) => {
        interrupt.send = listener;
        return () => {
          interrupt.send = undefined;
        };
      },
    });
    expect(code).toBe(0);
    expect(views(lines.join(''))).toHaveLength(2);
    // Nothing listens for Ctrl-C any more.
    expect(interrupt.send).toBeUndefined();
  });

  it('takes the key from the environment only, and says so when it is missing, exit 2', async () => {
    const cli = await piped(['budget', '--url', emulator.url, '--api-key', emulator.apiKey]);
    expect(cli.code).toBe(2);
    const missing = await piped(['budget', '--url', emulator.url]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('No API key: set FLOWSTREAM_API_KEY (budget reads the key only from the environment).');
    expect(missing.stderr).not.toContain('--api-key');
  });

  it('documents its sources, flags and output in --help', async () => {
    const cli = await piped(['budget', '--help']);
    expect(cli.code).toBe(0);
    for (const text of ['Usage: flowstream budget', '--url <url>', '--redis <url>', '--account <name>', '--interval <seconds>', '--count <n>', '--json', 'q or Ctrl-C quits']) expect(cli.stdout).toContain(text);
  });

  it('in a terminal redraws in place and on Ctrl-C restores the cursor and exits 0', async () => {
    const cli = flowstreamFromSourceInTerminal(['budget', '--url', emulator.url, '--interval', '0.2'], { FLOWSTREAM_API_KEY: emulator.apiKey });
    await cli.waitFor(/minute .* used, \d+ left of 100/u);
    // A later refresh moves the cursor up over the frame and draws it again, in place.
    await cli.waitFor(new RegExp(`${ESC}\\[2K${ESC}\\[1A`, 'u'));
    cli.child.stdin?.write('\x03');
    expect(await cli.exited(10_000)).toBe(0);
    // Hidden while drawing, shown again at the end.
    expect(cli.stdout()).toContain(`${ESC}[?25l`);
    expect(cli.stdout().slice(cli.stdout().lastIndexOf(`${ESC}[?25l`))).toContain(`${ESC}[?25h`);
    expect(cli.stdout()).toContain('not told by the service');
  });
});

describe('flowstream budget --redis against a fleet', { timeout: 20_000 }, () => {
  const fleet: { budgets: RedisBudget[] } = { budgets: [] };
  const url = (): string => `redis+unix://${redis.socket}`;

  beforeAll(async () => {
    fleet.budgets = [0, 1, 2].map(() => createRedisBudget({ redis: url(), account: 'acme-fleet' }));
    // Three processes of the account, each sending two requests through the shared budget.
    await Promise.all(fleet.budgets.map(async (budget) => {
      const client = createClient({ apiKey: emulator.apiKey, baseUrl: emulator.url, budget });
      await client.workflows.search({ pageSize: 1 });
      await client.workflows.search({ pageSize: 1 });
    }));
  });

  afterAll(async () => {
    await Promise.all(fleet.budgets.map((budget) => budget.close()));
  });

  it('prints the account\'s record, piped: the minute and the day as the fleet counts them and its three processes, without joining it', async () => {
    const cli = await piped(['budget', '--redis', url(), '--account', 'acme-fleet', '--count', '2', '--interval', '0.1']);
    expect(cli.code).toBe(0);
    const [first, second] = views(cli.stdout);
    expect(first).toMatchObject({ source: 'redis', account: 'acme-fleet', recorded: true, minute: { limit: 100, used: 6, remaining: 94 }, day: { used: 6 }, runs: { polling: 0, byState: null } });
    expect(first?.processes).toHaveLength(3);
    expect(first?.server.remainingPerMinute).toBeTypeOf('number');
    // Reading sends nothing and joins nothing: the second refresh sees the same account.
    expect(second?.minute.used).toBe(6);
    expect(second?.processes).toHaveLength(3);
  });

  it('in a terminal shows the meters and each process, and quits on q with the cursor restored, exit 0', async () => {
    const cli = flowstreamFromSourceInTerminal(['budget', '--redis', url(), '--account', 'acme-fleet', '--interval', '0.2']);
    // A frame can reach the terminal in several writes: wait for its process lines, the last it draws.
    await cli.waitFor(/100\/min {2}0 runs polling {2}lease /u);
    expect(cli.stdout()).toMatch(/processes 3/u);
    expect(cli.stdout()).toMatch(/minute .* 6 used, 94 left of 100/u);
    cli.child.stdin?.write('q');
    expect(await cli.exited(10_000)).toBe(0);
    expect(cli.stdout().slice(cli.stdout().lastIndexOf(`${ESC}[?25l`))).toContain(`${ESC}[?25h`);
  });

  it('says when Redis holds nothing for the account', async () => {
    const cli = await piped(['budget', '--redis', url(), '--account', 'nobody-here', '--count', '1']);
    expect(cli.code).toBe(0);
    expect(views(cli.stdout)[0]).toMatchObject({ recorded: false, minute: { used: 0 }, processes: [] });
  });

  it('takes --redis and --account together only, exit 2', async () => {
    const cli = await piped(['budget', '--redis', url()]);
    expect(cli.code).toBe(2);
    expect(cli.stderr).toContain('--redis and --account go together');
  });
});

/** A task of `durationMs` after the start node, failing at its end when `fails`. */
function oneTask(canvasId: string, durationMs: number, fails = false): WorkflowDefinition {
  return {
    canvasId,
    nodes: [{ id: 'node-start', type: 'start' }, { id: 'node-task', parents: ['node-start'], durationMs, ...(fails ? { failure: { kind: 'error' as const, errors: ['boom'] } } : {}) }],
  };
}

describe('flowstream budget --redis with the fleet\'s Redis run hubs', { timeout: 20_000 }, () => {
  it('shows, piped, the executions two processes\' hubs follow, counted by state', async () => {
    // The emulator's clock 25 times real time; the long task runs an emulator hour (over two real minutes).
    const hubEmulator = await createEmulator({ clock: createScaledClock(25), rateLimit: false, samples: false, workflows: [oneTask('c-quick', 1_000), oneTask('c-fails', 1_000, true), oneTask('c-long', 3_600_000)] });
    const account = 'acme-hubs';
    const fleet = [0, 1].map(() => {
      const connection = new Redis({ path: redis.socket, maxRetriesPerRequest: null });
      connection.on('error', () => undefined);
      const hub = createRedisRunHub({ redis: connection, account, scheduler: hubEmulator.scheduler });
      const client = createClient({ apiKey: hubEmulator.apiKey, baseUrl: hubEmulator.url, fetch: hubEmulator.fetch, scheduler: hubEmulator.scheduler, budget: false, polling: { minMs: 1_000, maxMs: 1_000 }, timeoutMs: REQUEST_TIMEOUT_MS, hub });
      return { connection, hub, client };
    });
    const [a, b] = fleet as [(typeof fleet)[number], (typeof fleet)[number]];
    const subscriptions: Subscription[] = [];
    /** Follows the execution in `process` until its state has `status`. */
    const followUntil = (process: typeof a, executionId: string, status: string): Promise<void> =>
      new Promise((resolve, reject) => {
        subscriptions.push(process.client.watch(executionId, { failOnWorkflowError: false }).pipe(toRunState()).subscribe({
          next: (state) => {
            if (state.status === status) resolve();
          },
          error: reject,
        }));
      });
    try {
      const [quick, fails, long] = await Promise.all(['c-quick', 'c-fails', 'c-long'].map(async (canvasId) => (await a.client.executions.start(canvasId)).executionId));
      await Promise.all([followUntil(a, quick!, 'finish'), followUntil(b, quick!, 'finish'), followUntil(a, fails!, 'failed'), followUntil(b, long!, 'executing')]);
      const cli = await piped(['budget', '--redis', `redis+unix://${redis.socket}`, '--account', account, '--count', '1']);
      expect(cli.code).toBe(0);
      expect(views(cli.stdout)[0]?.runs?.byState).toEqual({ counts: { init: 0, executing: 1, finish: 1, failed: 1, unknown: 0, unread: 0 }, atLeast: false });
    } finally {
      for (const subscription of subscriptions) subscription.unsubscribe();
      await Promise.all(fleet.map(({ hub }) => hub.close()));
      for (const { connection } of fleet) connection.disconnect();
      await hubEmulator.close();
    }
  });

  it('stops at 5,000 followed executions and says "at least"', async () => {
    // The state keys of 5,001 finished executions, as a hub leaves them.
    const connection = new Redis({ path: redis.socket });
    const keys = Array.from({ length: 5_001 }, (_, n) => hubStateKeyPattern('acme-many').replace('*', `we-${n}`));
    try {
      const writes = connection.pipeline();
      for (const key of keys) writes.hset(key, 'log', 'l', 'seq', '3', 'state', '{"status":"finish","nodes":[],"files":[]}', 'finished', '1');
      await writes.exec();
      const cli = await piped(['budget', '--redis', `redis+unix://${redis.socket}`, '--account', 'acme-many', '--count', '1']);
      expect(cli.code).toBe(0);
      expect(views(cli.stdout)[0]?.runs?.byState).toEqual({ counts: { init: 0, executing: 0, finish: 5_000, failed: 0, unknown: 0, unread: 0 }, atLeast: true });
    } finally {
      await connection.del(...keys);
      connection.disconnect();
    }
  });
});
