import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { clockScheduler, createEmulator, createManualClock, type Emulator } from '../../src/emulator/index.js';
import { startRedisServer, type RedisServer } from '../redis/redis-server.js';
import { driveFaults } from './fault-driver.js';
import type { FaultKind, FaultWindow } from './fault-schedule.js';

let emulator: Emulator | undefined;
let redis: RedisServer | undefined;
afterEach(async () => {
  await emulator?.close();
  await redis?.close();
  emulator = undefined;
  redis = undefined;
});

async function targets(): Promise<{ emulator: Emulator; redis: RedisServer }> {
  emulator = await createEmulator({ speed: 1, listen: false });
  redis = await startRedisServer();
  return { emulator, redis };
}

/** One search request through the emulator's in-process fetch: its HTTP status, or 0 when the connection dropped. */
async function search(target: Emulator): Promise<number> {
  const response = await target.fetch(`${target.url}/openapi/workflows`, { headers: { Authorization: `Bearer ${target.apiKey}` } }).catch(() => undefined);
  return response?.status ?? 0;
}

/** The kernel's state of a process: `T` when stopped by a signal; undefined once gone. */
function processState(pid: number | undefined): string | undefined {
  if (pid === undefined) return undefined;
  try {
    return /^\d+ \(.*\) (\S)/u.exec(readFileSync(`/proc/${String(pid)}/stat`, 'utf8'))?.[1];
  } catch {
    return undefined;
  }
}

const POLL = { timeout: 10_000, interval: 10 };

describe("the fault soak's driver", () => {
  it.each([
    { kind: 'service-5xx', status: 503 },
    { kind: 'service-drop', status: 0 },
    { kind: 'service-latency', status: 200 },
  ] satisfies { kind: FaultKind; status: number }[])('$kind: every request is hit while it lasts, none once stopped', async ({ kind, status }) => {
    const { emulator: target, redis: server } = await targets();
    const window: FaultWindow = kind === 'service-latency' ? { kind, startMs: 0, durationMs: 600_000, latencyMs: 50 } : { kind, startMs: 0, durationMs: 600_000 };
    const driver = driveFaults([window], { emulator: target, redis: server, scheduler: clockScheduler(target.clock), soakStart: target.clock.now() });
    await expect.poll(() => target.faults.list().length, POLL).toBe(1);
    expect(await search(target)).toBe(status);
    expect(target.requests.list().at(-1)?.faults).toHaveLength(1);

    await driver.stop();
    expect(target.faults.list()).toEqual([]);
    expect(await search(target)).toBe(200);
    expect(target.requests.list().at(-1)?.faults).toEqual([]);
    expect(driver.applied()).toEqual([{ kind, startMs: expect.any(Number) as number, endMs: expect.any(Number) as number }]);
  });

  it('redis-pause freezes Redis while it lasts (SIGSTOP) and lets it run once stopped', async () => {
    const { emulator: target, redis: server } = await targets();
    const pid = server.pid;
    const driver = driveFaults([{ kind: 'redis-pause', startMs: 0, durationMs: 600_000 }], { emulator: target, redis: server, scheduler: clockScheduler(target.clock), soakStart: target.clock.now() });
    await expect.poll(() => processState(pid), POLL).toBe('T');
    await driver.stop();
    expect(processState(pid)).not.toBe('T');
    await expect(server.command('PING')).resolves.toBe('+PONG\r\n');
  });

  it('redis-kill kills Redis (kill -9) while it lasts and restarts it, empty, once stopped', async () => {
    const { emulator: target, redis: server } = await targets();
    await server.command('SET', 'flowstream:probe', 'ok');
    const driver = driveFaults([{ kind: 'redis-kill', startMs: 0, durationMs: 600_000 }], { emulator: target, redis: server, scheduler: clockScheduler(target.clock), soakStart: target.clock.now() });
    await expect.poll(() => server.pid, POLL).toBeUndefined();
    await expect(server.command('PING')).rejects.toThrow();
    await driver.stop();
    await expect(server.command('GET', 'flowstream:probe')).resolves.toBe('$-1\r\n');
  });

  it('ends each outage when its time is up, on the emulator clock, and applies those to come in order', async () => {
    const { emulator: target, redis: server } = await targets();
    const schedule: FaultWindow[] = [
      { kind: 'service-5xx', startMs: 0, durationMs: 100 },
      { kind: 'redis-pause', startMs: 50, durationMs: 100 },
      { kind: 'service-drop', startMs: 200, durationMs: 100 },
    ];
    const driver = driveFaults(schedule, { emulator: target, redis: server, scheduler: clockScheduler(target.clock), soakStart: target.clock.now() });
    await expect.poll(() => driver.applied().length, POLL).toBe(3);
    const applied = driver.applied();
    expect(applied.map((fault) => fault.kind)).toEqual(['service-5xx', 'redis-pause', 'service-drop']);
    for (const [index, fault] of applied.entries()) {
      expect(fault.startMs).toBeGreaterThanOrEqual(schedule[index]!.startMs);
      expect(fault.endMs - fault.startMs).toBeGreaterThanOrEqual(schedule[index]!.durationMs);
    }
    expect(target.faults.list()).toEqual([]);
    await expect(server.command('PING')).resolves.toBe('+PONG\r\n');
    await driver.stop();
  });

  it('refuses a clock that does not follow real time', async () => {
    const target = await createEmulator({ clock: createManualClock(), listen: false });
    emulator = target;
    redis = await startRedisServer();
    expect(() => driveFaults([], { emulator: target, redis: redis!, scheduler: clockScheduler(target.clock), soakStart: 0 })).toThrow(RangeError);
  });
});
