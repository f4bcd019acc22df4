import type { SchedulerLike, Subscription } from 'rxjs';
import type { Emulator, FaultHandle } from '../../src/emulator/index.js';
import type { RedisServer } from '../redis/redis-server.js';
import { type FaultKind, type FaultWindow } from './fault-schedule.js';

/** An outage as it happened: emulator ms from the soak's start. */
export interface AppliedFault {
  readonly kind: FaultKind;
  readonly startMs: number;
  readonly endMs: number;
}

export interface FaultDriver {
  /** The outages applied so far (an outage in progress is not listed until it ends). */
  applied(): readonly AppliedFault[];
  /** Ends the outage in progress now (Redis running again, the service well) and cancels those to come. */
  stop(): Promise<void>;
}

export interface FaultTargets {
  readonly emulator: Emulator;
  readonly redis: RedisServer;
  /** The emulator's scheduler: outages begin and end on its clock. */
  readonly scheduler: SchedulerLike;
  /** The emulator time the schedule counts from. */
  readonly soakStart: number;
}

/**
 * Applies a fault schedule (fault-schedule.ts) to the emulator and to Redis, on the emulator's clock:
 * the service's outages as emulator faults on every request (503 before handling, the connection
 * dropped before handling — so that neither a start nor an abort took effect — or each request answered
 * late), Redis's as SIGSTOP … SIGCONT or kill -9 … restart (empty). Redis's steps run one after the
 * other, in order, even when a restart is slow.
 */
export function driveFaults(schedule: readonly FaultWindow[], targets: FaultTargets): FaultDriver {
  const { emulator, redis, scheduler, soakStart } = targets;
  // Latency and Redis's outages happen in real time: emulator time must follow it.
  if (!(emulator.clock.speed > 0)) throw new RangeError('driveFaults needs an emulator on a scaled clock (speed > 0)');
  const applied: AppliedFault[] = [];
  const timers: Subscription[] = [];
  /** Redis's steps, in order. */
  let redisSteps: Promise<void> = Promise.resolve();
  /** A Redis step that failed (a restart that did not come up): `stop()` throws it. */
  let failure: unknown;
  let stopped = false;
  /** What ends the outage in progress, by track. */
  const inProgress = new Map<'service' | 'redis', { readonly kind: FaultKind; readonly startMs: number; readonly end: () => void }>();
  const since = (): number => emulator.clock.now() - soakStart;

  const redisStep = (step: () => Promise<void> | void): void => {
    redisSteps = redisSteps.then(step).catch((error: unknown) => {
      failure ??= error;
    });
  };

  function begin(window: FaultWindow): void {
    if (stopped) return;
    let end: () => void;
    let trackName: 'service' | 'redis' = 'service';
    switch (window.kind) {
      case 'service-5xx':
      case 'service-drop':
      case 'service-latency': {
        const fault: FaultHandle =
          window.kind === 'service-5xx'
            ? emulator.faults.add({ kind: 'status', status: 503 })
            : window.kind === 'service-drop'
              ? emulator.faults.add({ kind: 'drop' })
              : // The emulator's latency is real time.
                emulator.faults.add({ kind: 'latency', ms: Math.round((window.latencyMs ?? 0) / emulator.clock.speed) });
        end = () => {
          fault.remove();
        };
        break;
      }
      case 'redis-pause':
        trackName = 'redis';
        redisStep(() => {
          redis.pause();
        });
        end = () => {
          redisStep(() => {
            redis.resume();
          });
        };
        break;
      case 'redis-kill':
        trackName = 'redis';
        redisStep(() => redis.stop({ crash: true }));
        end = () => {
          redisStep(() => redis.restart());
        };
        break;
    }
    const track = trackName;
    inProgress.set(track, { kind: window.kind, startMs: since(), end });
    timers.push(
      scheduler.schedule(() => {
        finish(track);
      }, window.durationMs),
    );
  }

  function finish(track: 'service' | 'redis'): void {
    const current = inProgress.get(track);
    if (current === undefined) return;
    inProgress.delete(track);
    current.end();
    applied.push({ kind: current.kind, startMs: current.startMs, endMs: since() });
  }

  for (const window of schedule) {
    timers.push(
      scheduler.schedule(
        () => {
          begin(window);
        },
        Math.max(0, soakStart + window.startMs - emulator.clock.now()),
      ),
    );
  }

  return {
    applied: () => [...applied].sort((a, b) => a.startMs - b.startMs),
    stop: async () => {
      stopped = true;
      for (const timer of timers.splice(0)) timer.unsubscribe();
      finish('service');
      finish('redis');
      await redisSteps;
      if (failure !== undefined) throw failure instanceof Error ? failure : new Error('a Redis step of the fault soak failed', { cause: failure });
    },
  };
}
