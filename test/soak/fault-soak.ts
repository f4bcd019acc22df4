/**
 * The fault soak: N runs, some left at random by their subscribers, while the service (the emulator on
 * 127.0.0.1) and Redis fail and recover at random — all drawn from one seed, so that a failing soak
 * replays. The client is a process of its own (soak-client.ts) on a Redis budget and the emulator's
 * accelerated clock; this side owns the emulator, the redis-server and the outages (fault-driver.ts),
 * and audits the end from the emulator's own record of every execution and abort (soak-audit.ts).
 * The fault-soak tests and `bench/fault-soak.ts` run it.
 */
import { fileURLToPath } from 'node:url';
import { createEmulator, clockScheduler, createScaledClock, type WorkflowDefinition } from '../../src/emulator/index.js';
import { mulberry32 } from '../../src/emulator/engine/seeded-random.js';
import { scrubbedEnv, startProcess } from '../cli/support/child-process.js';
import { startRedisServer } from '../redis/redis-server.js';
import { type AppliedFault, driveFaults } from './fault-driver.js';
import { DEFAULT_FAULT_SHAPE, faultSchedule, type FaultScheduleOptions, type FaultWindow } from './fault-schedule.js';
import { runPlan, type RunPlanOptions } from './run-plan.js';
import { auditSoak, violationLists, type AuditedRun, type RunEnding, type SoakAudit } from './soak-audit.js';
import type { OpenRun, SoakClientConfig, SoakClientLine, SoakClientReport } from './soak-client.js';

const CLIENT = fileURLToPath(new URL('soak-client.ts', import.meta.url));
const CANVAS = 'c-fault-soak';
/** A short workflow: two task nodes one after the other, about 40 s in all. */
export const SOAK_WORKFLOW: WorkflowDefinition = {
  canvasId: CANVAS,
  title: 'Fault soak',
  nodes: [
    { id: 'node-start', type: 'start' },
    { id: 'node-draft', title: 'Draft', parents: ['node-start'], durationMs: 15_000, messages: [{ content: 'A draft.' }, { content: 'A better draft.' }] },
    { id: 'node-final', title: 'Final', parents: ['node-draft'], durationMs: 20_000, messages: [{ content: 'The final text.' }] },
  ],
};
/** The service's minute (service.md §2.1); the day set wide, so that the day's pacing does not set the soak's length. */
const LIMITS = { perMinute: 100, perDay: 1_000_000 };

export interface FaultSoakOptions {
  readonly seed: number;
  readonly runs: number;
  /** Emulator ms per real ms. */
  readonly speed: number;
  /** Runs start over this long (emulator ms). */
  readonly arrivalMs: number;
  /** Outages until this long after the start (emulator ms); 0: none, the soak's control. */
  readonly faultsForMs: number;
  /** Outages' shape; default `DEFAULT_FAULT_SHAPE`. */
  readonly faultShape?: Omit<FaultScheduleOptions, 'horizonMs'>;
  /** Share of runs whose subscriber leaves. Default 0.3. */
  readonly leaveShare?: number;
  /** The heap is compared after this many runs ended and at the end. Default a tenth of the runs. */
  readonly warmupRuns?: number;
}

export interface FaultSoakReport {
  readonly seed: number;
  readonly runs: number;
  readonly speed: number;
  /** The outages drawn, and those applied (emulator ms from the start). */
  readonly schedule: readonly FaultWindow[];
  readonly applied: readonly AppliedFault[];
  readonly audit: SoakAudit;
  /** Requests the emulator received, answered 429, and hit by an outage. */
  readonly requests: { readonly total: number; readonly rateLimited: number; readonly faulted: number };
  /** The first runs that ended with an error: when (emulator ms from the start) and why. */
  readonly firstErrors: readonly { readonly key: string; readonly atMs: number; readonly code: string | undefined; readonly endpoint: string | undefined; readonly message: string }[];
  /** Why runs broke their promise: the error codes of the runs that did not follow their execution or failed without one, and of the lost aborts, how many the service never saw and how many an outage refused each time. */
  readonly why: {
    readonly notFollowed: Readonly<Record<string, number>>;
    readonly failedWithoutExecution: Readonly<Record<string, number>>;
    readonly abortsLost: { readonly neverSent: number; readonly refusedByOutage: number };
  };
  /**
   * When the client did not end by itself: the runs it had not ended, each with its last events, its
   * active resources (`process.getActiveResourcesInfo()`), and the last requests the emulator received
   * for those runs' executions.
   */
  readonly stuck?: { readonly open: readonly OpenRun[]; readonly resources: readonly string[]; readonly requests: readonly string[] };
  /** What the client process said at its end; undefined when it never got there. */
  readonly client: SoakClientReport | undefined;
  /** Whether the client process exited by itself, with code 0, once done. */
  readonly clientExited: boolean;
  readonly clientExitCode: number | null;
  /** The client's stderr, cut to its last 4,000 characters. */
  readonly clientStderr: string;
  /** Emulator ms from the start to the client's end; real ms of the whole soak. */
  readonly emulatorMs: number;
  readonly realMs: number;
}

/** The plan both sides draw from the seed: the runs the client follows and the keys the audit expects. */
export function soakRunPlan(options: FaultSoakOptions): RunPlanOptions {
  return {
    runs: options.runs,
    arrivalMs: options.arrivalMs,
    leaveShare: options.leaveShare ?? 0.3,
    leaveAtOnceShare: 0.1,
    leaveWithinMs: 40_000,
    prefix: `soak${String(options.seed)}`,
  };
}

/** Reads the client's `soak <json>` lines. */
function linesOf(stdout: string): SoakClientLine[] {
  return stdout
    .split('\n')
    .filter((line) => line.startsWith('soak '))
    .map((line) => JSON.parse(line.slice('soak '.length)) as SoakClientLine);
}

/**
 * Runs one fault soak and audits it. Everything it starts (redis-server, emulator, client process,
 * timers) is gone when it resolves.
 *
 * @example
 * const report = await runFaultSoak({ seed: 1, runs: 40, speed: 20, arrivalMs: 5 * 60_000, faultsForMs: 6 * 60_000 });
 * report.audit.broken; // 0 when every promise held
 */
export async function runFaultSoak(options: FaultSoakOptions): Promise<FaultSoakReport> {
  const began = performance.now();
  const schedule = options.faultsForMs > 0 ? faultSchedule(mulberry32(options.seed ^ 0x5eed), { ...(options.faultShape ?? DEFAULT_FAULT_SHAPE), horizonMs: options.faultsForMs }) : [];
  const planOptions = soakRunPlan(options);
  const plan = runPlan(mulberry32(options.seed), planOptions);
  const redis = await startRedisServer();
  const clock = createScaledClock(options.speed);
  const emulator = await createEmulator({ clock, samples: false, workflows: [SOAK_WORKFLOW], rateLimit: LIMITS });
  try {
    const config: SoakClientConfig = {
      socket: redis.socket,
      account: `soak-${String(options.seed)}`,
      baseUrl: emulator.url,
      apiKey: emulator.apiKey,
      speed: options.speed,
      realStart: clock.realStart,
      canvasId: CANVAS,
      seed: options.seed,
      plan: planOptions,
      requestsPerMinute: LIMITS.perMinute,
      requestsPerDay: LIMITS.perDay,
      warmupRuns: options.warmupRuns ?? Math.max(1, Math.floor(options.runs / 10)),
      outagesForMs: options.faultsForMs,
      idleMs: 60_000,
      tailMs: 15 * 60_000,
    };
    const client = startProcess(process.execPath, ['--expose-gc', '--import', 'tsx', CLIENT, JSON.stringify(config)], { env: scrubbedEnv(), cwd: process.cwd() });
    // Bounds for a stuck client only (real ms): the arrivals, the outages, 10 minutes to follow the
    // last run through, the idle tail, over the speed, three times over, and a minute to boot.
    const boundMs = (3 * (Math.max(options.arrivalMs, options.faultsForMs) + 10 * 60_000 + config.tailMs)) / options.speed + 60_000;
    const ready = await client.waitFor(/^soak (\{"type":"ready".*\})$/mu, 60_000).catch(async (error: unknown) => {
      // It never came up (its output is in the error): nothing of it may outlive the soak.
      client.child.kill('SIGKILL');
      await client.exited(10_000).catch(() => null);
      throw error;
    });
    const soakStart = (JSON.parse(ready[1] ?? '{}') as { soakStart: number }).soakStart;
    const driver = driveFaults(schedule, { emulator, redis, scheduler: clockScheduler(clock), soakStart });
    let exitCode: number | null = null;
    let clientExited = false;
    try {
      // The client says its report, closes its budget and must then exit by itself.
      await client.waitFor(/^soak \{"type":"report"/mu, boundMs);
      exitCode = await client.exited(30_000);
      clientExited = true;
    } catch {
      // Stuck: asked what it still waits for, then killed; the report says so.
      if (client.child.exitCode === null && client.child.signalCode === null) {
        client.child.kill('SIGUSR2');
        await client.waitFor(/^soak \{"type":"stuck"/mu, 10_000).catch(() => undefined);
      }
      client.child.kill('SIGKILL');
      await client.exited(10_000).catch(() => null);
    } finally {
      await driver.stop();
    }
    const emulatorMs = clock.now() - soakStart;
    const lines = linesOf(client.stdout());
    const endings = new Map<string, RunEnding>();
    let report: SoakClientReport | undefined;
    let stuck: { readonly open: readonly OpenRun[]; readonly resources: readonly string[] } | undefined;
    for (const line of lines) {
      if (line.type === 'run') endings.set(line.key, line.ending);
      if (line.type === 'report') report = line.report;
      if (line.type === 'stuck') stuck = { open: line.open, resources: line.resources };
    }
    const firstErrors = lines
      .flatMap((line) => (line.type === 'run' && line.ending.kind === 'errored' ? [{ key: line.key, atMs: line.atMs, code: line.ending.error.code, endpoint: line.ending.error.endpoint, message: line.ending.error.message }] : []))
      .slice(0, 10);
    const runs: AuditedRun[] = plan.map((run) => ({ key: run.key, ending: endings.get(run.key) ?? { kind: 'unsettled' } }));
    const executions = emulator.executions.list().map((execution) => {
      const variable = execution.variables.find((candidate) => candidate.name === 'soak');
      return { executionId: execution.executionId, runKey: variable?.kind === 'text' ? variable.value : undefined, status: execution.status };
    });
    const aborts = emulator.requests.list({ endpoint: 'abort' }).map((request) => ({ executionId: request.executionId ?? '', answered: request.status === 200 }));
    const all = emulator.requests.list();
    const requestsOf = (open: readonly OpenRun[]): string[] => {
      const ids = new Set(executions.filter((execution) => open.some((run) => run.key === execution.runKey)).map((execution) => execution.executionId));
      return all
        .filter((request) => request.executionId !== undefined && ids.has(request.executionId))
        .slice(-20)
        .map((request) => `${String(request.emulatorTime - soakStart)} ${request.endpoint} ${request.executionId ?? ''} ${String(request.status)}${request.faults.length > 0 ? ' faulted' : ''}`);
    };
    const audit = auditSoak(runs, executions, aborts);
    const codesOf = (keys: readonly string[]): Record<string, number> => {
      const counts: Record<string, number> = {};
      for (const key of keys) {
        const ending = endings.get(key);
        const code = ending?.kind === 'errored' ? (ending.error.code ?? ending.error.name) : 'none';
        counts[code] = (counts[code] ?? 0) + 1;
      }
      return counts;
    };
    const lostAbortsSent = audit.violations.abortsLost.map((key) => {
      const executionIds = new Set(executions.filter((execution) => execution.runKey === key).map((execution) => execution.executionId));
      return aborts.filter((abort) => executionIds.has(abort.executionId)).length;
    });
    return {
      seed: options.seed,
      runs: options.runs,
      speed: options.speed,
      schedule,
      applied: driver.applied(),
      audit,
      requests: { total: all.length, rateLimited: all.filter((request) => request.status === 429).length, faulted: all.filter((request) => request.faults.length > 0).length },
      firstErrors,
      why: {
        notFollowed: codesOf(audit.violations.notFollowed),
        failedWithoutExecution: codesOf(audit.violations.failedWithoutExecution),
        abortsLost: { neverSent: lostAbortsSent.filter((sent) => sent === 0).length, refusedByOutage: lostAbortsSent.filter((sent) => sent > 0).length },
      },
      client: report,
      ...(stuck === undefined ? {} : { stuck: { ...stuck, requests: requestsOf(stuck.open) } }),
      clientExited: clientExited && exitCode === 0,
      clientExitCode: exitCode,
      clientStderr: client.stderr().slice(-4_000),
      emulatorMs,
      realMs: performance.now() - began,
    };
  } finally {
    await emulator.close();
    await redis.close();
  }
}

/** A short account of a soak, for logs and the bench's table. */
export function describeSoak(report: FaultSoakReport): string {
  const { audit } = report;
  const broken = violationLists(audit.violations)
    .filter(([, list]) => list.length > 0)
    .map(([name, list]) => `${name} ${String(list.length)}`);
  const heap = report.client === undefined ? 'no report' : `${(report.client.heapWarmBytes / 1e6).toFixed(1)} → ${(report.client.heapEndBytes / 1e6).toFixed(1)} MB`;
  return [
    `seed ${String(report.seed)}: ${String(report.runs)} runs, ${String(report.applied.length)} outages, ${(report.emulatorMs / 60_000).toFixed(1)} emulator min in ${(report.realMs / 1000).toFixed(0)} s`,
    `  endings: finished ${String(audit.endings.finished)}, left ${String(audit.endings.left)}, errored ${String(audit.endings.errored)} (starts refused ${String(audit.startsRefused)}), unsettled ${String(audit.endings.unsettled)}; errors ${JSON.stringify(audit.errorsByCode)}`,
    `  executions ${String(audit.executions)}, aborts sent ${String(audit.aborts.sent)} (answered ${String(audit.aborts.answered)}); requests ${String(report.requests.total)}, 429s ${String(report.requests.rateLimited)}, hit by outages ${String(report.requests.faulted)}`,
    `  broken: ${broken.length === 0 ? 'none' : `${broken.join(', ')} (why: ${JSON.stringify(report.why)})`}; unhandled ${String(report.client?.unhandled.length ?? 'unknown')}; heap ${heap}; client exited by itself: ${String(report.clientExited)}`,
  ].join('\n');
}
