/**
 * The fault soak's outages, drawn from a seeded generator so that a failing soak replays: when the
 * service (the emulator) and Redis fail, how, and for how long. Pure: the driver (fault-driver.ts)
 * applies a schedule, this file only draws it. Times are emulator ms from the soak's start.
 */

/** How the service fails: every request answered 503, its connection dropped, or answered late. */
export type ServiceFaultKind = 'service-5xx' | 'service-drop' | 'service-latency';
/** How Redis fails: frozen (SIGSTOP … SIGCONT) or killed (kill -9 … a fresh, empty restart). */
export type RedisFaultKind = 'redis-pause' | 'redis-kill';
export type FaultKind = ServiceFaultKind | RedisFaultKind;

export const SERVICE_FAULT_KINDS: readonly ServiceFaultKind[] = ['service-5xx', 'service-drop', 'service-latency'];
export const REDIS_FAULT_KINDS: readonly RedisFaultKind[] = ['redis-pause', 'redis-kill'];

/** One outage: from `startMs` for `durationMs`; a latency outage delays each request by `latencyMs`. */
export interface FaultWindow {
  readonly kind: FaultKind;
  readonly startMs: number;
  readonly durationMs: number;
  /** Emulator ms each request waits (service-latency only). */
  readonly latencyMs?: number;
}

/** A closed range [min, max] of emulator ms. */
export type Range = readonly [min: number, max: number];

export interface FaultScheduleOptions {
  /** Every window ends by then. */
  readonly horizonMs: number;
  /** How long an outage lasts; kept under the 10 minutes a run is meant to follow through. */
  readonly outageMs: Range;
  /** Quiet time before each outage of a track. */
  readonly gapMs: Range;
  /** How late a slow service answers; kept well under a request's timeout (30 s). */
  readonly latencyMs: Range;
}

/**
 * Default shape: outages from 20 s to 3 min (longer than a request's retries, 3.5 s, and than the
 * Redis budget's 30 s patience; shorter than 10 minutes), each after 30 s to 4 min of quiet.
 */
export const DEFAULT_FAULT_SHAPE: Omit<FaultScheduleOptions, 'horizonMs'> = {
  outageMs: [20_000, 180_000],
  gapMs: [30_000, 240_000],
  latencyMs: [1_000, 8_000],
};

const between = (random: () => number, [min, max]: Range): number => Math.round(min + random() * (max - min));

/** The kinds of a track in a random order, round after round, so that each comes up as often as the others. */
function* rounds<T>(random: () => number, kinds: readonly T[]): Generator<T, never> {
  for (;;) {
    const round = [...kinds];
    // Fisher–Yates.
    for (let index = round.length - 1; index > 0; index -= 1) {
      const other = Math.floor(random() * (index + 1));
      [round[index], round[other]] = [round[other]!, round[index]!];
    }
    yield* round;
  }
}

/** One track: outages of `kinds`, one at a time, each after a gap, all ending by the horizon. */
function track(random: () => number, kinds: readonly FaultKind[], options: FaultScheduleOptions): FaultWindow[] {
  const windows: FaultWindow[] = [];
  const next = rounds(random, kinds);
  for (let at = between(random, options.gapMs); ; ) {
    const kind = next.next().value;
    const durationMs = between(random, options.outageMs);
    if (at + durationMs > options.horizonMs) return windows;
    windows.push(kind === 'service-latency' ? { kind, startMs: at, durationMs, latencyMs: between(random, options.latencyMs) } : { kind, startMs: at, durationMs });
    at += durationMs + between(random, options.gapMs);
  }
}

/**
 * Draws the soak's outages: two independent tracks, the service's and Redis's, so that the two fail
 * alone and together. Within a track outages never overlap, and its kinds come in shuffled rounds (each
 * kind once before any comes again); every outage ends by `horizonMs`; a window that would chain the
 * two tracks into a stretch longer than `JOINT_OUTAGE_MAX_MS` is left out. Sorted by start.
 *
 * @example
 * faultSchedule(mulberry32(7), { ...DEFAULT_FAULT_SHAPE, horizonMs: 20 * 60_000 });
 * // [{ kind: 'redis-pause', startMs: 95_310, durationMs: 41_224 }, { kind: 'service-5xx', … }, …]
 */
export function faultSchedule(random: () => number, options: FaultScheduleOptions): FaultWindow[] {
  return withinJointLimit(faultTracks(random, options));
}

/** The two tracks as drawn, before the joint limit (`faultSchedule`); sorted by start. */
export function faultTracks(random: () => number, options: FaultScheduleOptions): FaultWindow[] {
  const [minOutage, maxOutage] = options.outageMs;
  if (!(minOutage >= 0 && maxOutage >= minOutage && options.gapMs[0] > 0 && options.gapMs[1] >= options.gapMs[0])) {
    throw new RangeError('fault schedule: outages need 0 ≤ min ≤ max and gaps 0 < min ≤ max');
  }
  const service = track(random, SERVICE_FAULT_KINDS, options);
  const redis = track(random, REDIS_FAULT_KINDS, options);
  return [...service, ...redis].sort((a, b) => a.startMs - b.startMs);
}

/**
 * The longest stretch in which something a run needs is failing, the two tracks' outages chained:
 * well under the 10 minutes a run follows an outage through, so that a run meant to follow through
 * every outage of the soak can.
 */
export const JOINT_OUTAGE_MAX_MS = 6 * 60_000;
/** Quiet time that ends a stretch for every run: twice the longest wait between a run's attempts in an outage (30 s). */
export const JOINT_QUIET_MS = 60_000;
/** After Redis lost its data the Redis budget sends nothing for a window (a minute): part of the stretch. */
export const REDIS_RECOVERY_MS = 60_000;

/** When a window's effect on the runs ends: a kill of Redis ends a minute after Redis is back. */
export const effectEndMs = (window: FaultWindow): number => window.startMs + window.durationMs + (window.kind === 'redis-kill' ? REDIS_RECOVERY_MS : 0);

/**
 * Drops each window (in order of start) that would make a stretch — windows less than
 * `JOINT_QUIET_MS` apart, chained — longer than `JOINT_OUTAGE_MAX_MS`.
 */
function withinJointLimit(windows: readonly FaultWindow[]): FaultWindow[] {
  const kept: FaultWindow[] = [];
  let stretchStart = Number.NEGATIVE_INFINITY;
  let stretchEnd = Number.NEGATIVE_INFINITY;
  for (const window of windows) {
    const joins = window.startMs < stretchEnd + JOINT_QUIET_MS;
    const start = joins ? stretchStart : window.startMs;
    const end = Math.max(joins ? stretchEnd : Number.NEGATIVE_INFINITY, effectEndMs(window));
    if (end - start > JOINT_OUTAGE_MAX_MS) continue;
    kept.push(window);
    stretchStart = start;
    stretchEnd = end;
  }
  return kept;
}

/** Whether `kind` is one of the service's faults (else Redis's). */
export const isServiceFault = (kind: FaultKind): kind is ServiceFaultKind => (SERVICE_FAULT_KINDS as readonly string[]).includes(kind);
