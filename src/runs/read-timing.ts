import type { DurationEstimate } from '../domain/durations.js';
import { logSurvival } from './log-normal.js';

/*
 * Where a run's next status read goes when the nodes it waits on have learned durations.
 *
 * The run waits for its next change: the first end among its running nodes, each a log-normal
 * (duration-model.ts) conditioned on having run so far without ending. Reads are a cost, a late
 * sighting is a loss; spacing reads δ(t) apart costs 1/δ(t) reads per ms while the change is still to
 * come, and a change in a gap waits half of it on average, so the expected loss per ms is
 * f(t)·δ(t)/2 against S(t)/δ(t) reads. Minimising loss + λ × reads gives δ(t) = √(2λ / h(t)), with
 * h = f / S the hazard: reads dense where a change is likely, sparse where it is not. λ is set so that
 * the reads of the whole wait for this change — those already made since the last one, and those
 * expected until it comes — are what the run may spend over that wait (`READ_SHARE` of one per
 * `allowanceMs`, one per its quiet pace): reads saved while a change was unlikely are spent when it is.
 * δ stays within the run's bounds.
 */

/** A running node the model knows: when it started (on the run's scheduler) and its estimate. */
export interface RunningNode {
  readonly startedAt: number;
  readonly estimate: DurationEstimate;
}

export interface ReadTimingInput {
  /** The time of the read just answered. */
  readonly now: number;
  /** The nodes whose end is the run's next change; at least one. */
  readonly running: readonly RunningNode[];
  /** The run's allowance: on average it may read once per this (its bounds' maximum). */
  readonly allowanceMs: number;
  /** When the run began waiting for this change: the read that saw the last one. */
  readonly waitingSince: number;
  /** Reads made since `waitingSince`, this one included. */
  readonly readsSpent: number;
  readonly minMs: number;
  readonly maxMs: number;
  /** The latest `dueAt` may be past the read's own time: no read is put off further than this. */
  readonly floorMs: number;
}

/**
 * The wait before the next read, and when that read is due: the moment the change has become as
 * likely as one of the run's reads is worth (one in k, for k reads it may spend on this wait; between
 * 1 in 20 and even odds), or the floor, whichever comes first. On a tight budget the read is ranked by
 * that moment (`ReadNeed.likelyAt`): the likeliest changed first.
 */
export interface ReadTiming {
  readonly waitMs: number;
  readonly dueAt: number;
}

/**
 * The share of its allowance a run with a model spends: all of it — the same count as without a
 * model, landing where changes are. (At 0.9 the model saw no sooner than the cadence at cv 0.6 in
 * the simulation of learned-durations.sim.ts, with a tenth fewer reads.)
 */
export const READ_SHARE = 1;

/**
 * The longest wait between a run's reads, and the latest a read may be due past its own time, in fair
 * intervals: the bound on starvation when the model is wrong (no run waits more than a
 * bounded multiple of its fair interval), and so on what a wrong model can cost.
 */
export const FLOOR_INTERVALS = 1.5;

/**
 * Bounds of how likely the change must have become for the run's read to be due: never before one
 * chance in twenty (a read that early is a read wasted), never later than even odds.
 */
const MIN_DUE_CHANCE = 0.05;
const MAX_DUE_CHANCE = 0.5;

/** Points of the grid the next change's distribution is laid on. */
const GRID = 256;

/** The grid ends where the change is all but certain to have come. */
const LOG_TAIL = Math.log(1e-3);

/** service.md §3.6: no node runs past 30 minutes, so no change is further off than that. */
const LONGEST_MS = 30 * 60_000;

/** ln P(no running node has ended by `at` | none had by `now`). */
function logStillRunning(running: readonly RunningNode[], now: number, at: number): number {
  let log = 0;
  for (const node of running) log += logSurvival(node.estimate, at - node.startedAt) - logSurvival(node.estimate, now - node.startedAt);
  return log;
}

/** From `now`, the span within which the next change is all but certain, doubling from a second. */
function horizonMs(running: readonly RunningNode[], now: number): number {
  let span = 1_000;
  while (span < LONGEST_MS && logStillRunning(running, now, now + span) > LOG_TAIL) span *= 2;
  return Math.min(span, LONGEST_MS);
}

const clamp = (value: number, low: number, high: number): number => Math.min(high, Math.max(low, value));

/**
 * When the next read goes (see the file's header for the rule) and when it is due.
 *
 * @example
 * ```ts
 * const { waitMs, dueAt } = timeNextRead({ now, running: [{ startedAt, estimate }], allowanceMs: 2_000, waitingSince: startedAt, readsSpent: 1, minMs: 500, maxMs: 10_000, floorMs: 6_000 });
 * ```
 */
export function timeNextRead(input: ReadTimingInput): ReadTiming {
  const { now, running } = input;
  const span = horizonMs(running, now);
  const step = span / GRID;
  // still[k]: P(no change by now + k·step | none by now); weight[k]: the time in bin k while the change is still to come.
  const still = Array.from({ length: GRID + 1 }, (_, k) => Math.exp(logStillRunning(running, now, now + k * step)));
  const weight = still.slice(0, GRID).map((here, k) => ((here + (still[k + 1] ?? 0)) / 2) * step);
  const expectedWait = weight.reduce((sum, w) => sum + w, 0);
  // The reads the run may spend on this wait for the change (those made since it began count).
  const reads = (READ_SHARE * (now - input.waitingSince + expectedWait)) / input.allowanceMs;
  const waitMs = spacedWait(input, still, weight, Math.max(1, reads - input.readsSpent), step);

  // Due when the change has become likely enough to be worth one of those reads: 1 in k for k reads,
  // so that the reads a tight budget gives the run land where each has a fair chance, not all at the
  // median.
  const threshold = clamp(1 / reads, MIN_DUE_CHANCE, MAX_DUE_CHANCE);
  let likelyAt = now + span;
  for (let k = 0; k < GRID; k += 1) {
    const here = still[k] ?? 1;
    const next = still[k + 1] ?? 0;
    if (1 - next >= threshold) {
      likelyAt = now + k * step + (here > next ? ((here - (1 - threshold)) / (here - next)) * step : 0);
      break;
    }
  }
  return { waitMs, dueAt: Math.round(Math.min(likelyAt, now + waitMs + input.floorMs)) };
}

/** The wait that spends the run's allowance where the change is likely (the file's header). */
function spacedWait(input: ReadTimingInput, still: readonly number[], weight: readonly number[], target: number, step: number): number {
  const { now, minMs, maxMs } = input;
  // hazard[k]: the rate of change in bin k.
  const hazard = still.slice(0, GRID).map((here, k) => (here > 0 ? Math.max(0, here - (still[k + 1] ?? 0)) / (here * step) : Number.POSITIVE_INFINITY));
  const gap = (lambda: number, k: number): number => {
    const rate = hazard[k] ?? 0;
    return rate > 0 ? clamp(Math.sqrt((2 * lambda) / rate), minMs, maxMs) : maxMs;
  };
  const expectedReads = (lambda: number): number => weight.reduce((sum, w, k) => sum + w / gap(lambda, k), 0);

  // Reads fall as λ grows: bisect ln λ for the target.
  let low = -10;
  let high = 40;
  for (let i = 0; i < 48; i += 1) {
    const middle = (low + high) / 2;
    if (expectedReads(Math.exp(middle)) > target) low = middle;
    else high = middle;
  }
  const lambda = Math.exp(high);

  // The next read comes when the read density ∫ dt / δ(t) reaches one.
  let density = 0;
  let nextAt = now + maxMs;
  for (let k = 0; k < GRID; k += 1) {
    const inBin = step / gap(lambda, k);
    if (density + inBin >= 1) {
      nextAt = now + k * step + ((1 - density) / inBin) * step;
      break;
    }
    density += inBin;
  }
  return Math.floor(clamp(nextAt - now, minMs, maxMs));
}
