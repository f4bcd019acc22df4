import type { DurationEstimate } from '../domain/durations.js';
import type { OutputNode } from '../domain/model.js';
import { durationOf, serviceNodeTimes } from '../domain/node-times.js';
import type { CadenceBounds } from './poll-plan.js';
import type { RunEvent } from './events.js';
import { isNodeDone } from './execution-view.js';
import { OUTLIER_SIGMAS } from '../budget/duration-model.js';

/*
 * What a run knows of its nodes' times, for learned durations: when each node was seen to
 * start and end, bracketed by the reads around it, and — once the model knows the nodes that are
 * running — where its next read goes (below, "Where the next read goes"), on the little of the
 * log-normal distribution that takes (at the end).
 */

/** A moment known to lie within `widthMs` before `at`'s bracket end; `at` is the best guess. */
export interface Bracketed {
  readonly at: number;
  readonly widthMs: number;
}

/** When a node was seen starting and ending, each within its bracket. */
export interface BracketedTimes {
  readonly start?: Bracketed;
  readonly end?: Bracketed;
}

/** The node's estimate, for the run's canvas; `undefined` while the model has none (or there is no model). */
export type EstimateOf = (nodeId: string) => DurationEstimate | undefined;

/** What the run has seen of its nodes' times, and the state of its wait for the next change. */
export interface Foresight {
  readonly nodes: ReadonlyMap<string, BracketedTimes>;
  /** The read that saw the last change (or the start): the wait for the next change began there. */
  readonly waitingSince: number | undefined;
  /** Reads since then. */
  readonly readsSpent: number;
  /**
   * False once a node of this run ended where its estimate said it all but could not (beyond
   * `OUTLIER_SIGMAS`): the model is wrong for this run, which goes on at the cadence alone.
   */
  readonly trusted: boolean;
}

export const NO_FORESIGHT: Foresight = { nodes: new Map(), waitingSince: undefined, readsSpent: 0, trusted: true };

/** A node's log-duration this many σ from its estimate's median is out of the model's reach. */
function beyond(estimate: DurationEstimate, durationMs: number): boolean {
  return Math.abs(Math.log(Math.max(1, durationMs) / estimate.medianMs)) > OUTLIER_SIGMAS * estimate.logSigma;
}

/**
 * The moment within (`from`, `to`] a node that started at `startedAt` most likely ended, by its
 * estimate: the median of its end given that it fell in the bracket. Without an estimate, the middle.
 */
function endWithin(from: number, to: number, startedAt: number | undefined, estimate: DurationEstimate | undefined): number {
  if (startedAt === undefined || estimate === undefined) return (from + to) / 2;
  const still = (at: number): number => Math.exp(logSurvival(estimate, at - startedAt));
  const half = (still(from) + still(to)) / 2;
  let low = from;
  let high = to;
  for (let i = 0; i < 30; i += 1) {
    const middle = (low + high) / 2;
    if (still(middle) > half) low = middle;
    else high = middle;
  }
  return (low + high) / 2;
}

/**
 * Notes the transitions a read at `now` showed (the node events of its diff; the read before was at
 * `previousAt`): a node first seen done ended in the bracket, a node first seen executing started
 * when the last of the nodes that ended in the same bracket did (service.md §3.2: a node starts on the
 * service's next tick, within about 1.5 s of its parents' end), or in the middle of the bracket when
 * none did. Without a bracket (a watch's first read) nothing is guessed.
 */
export function observeTransitions(foresight: Foresight, events: readonly RunEvent[], previousAt: number | undefined, now: number, estimateOf: EstimateOf): Foresight {
  if (previousAt === undefined) return foresight;
  const nodes = new Map(foresight.nodes);
  const widthMs = now - previousAt;
  let lastEnd: number | undefined;
  let { trusted } = foresight;
  for (const event of events) {
    if (event.type !== 'node' || !isNodeDone(event.status)) continue;
    const known = nodes.get(event.nodeId);
    if (known?.end !== undefined) continue;
    const estimate = estimateOf(event.nodeId);
    const startedAt = known?.start?.at;
    // Judged only on the bracket's own ends: a node found done in [from, to] lasted at least from − start, at most to − start.
    if (event.status === 'finish' && estimate !== undefined && startedAt !== undefined && beyond(estimate, previousAt - startedAt) && beyond(estimate, now - startedAt)) trusted = false;
    const at = endWithin(previousAt, now, startedAt, estimate);
    nodes.set(event.nodeId, { ...known, end: { at, widthMs } });
    lastEnd = Math.max(lastEnd ?? at, at);
  }
  for (const event of events) {
    if (event.type !== 'node' || event.status !== 'executing' || nodes.get(event.nodeId)?.start !== undefined) continue;
    nodes.set(event.nodeId, { start: { at: lastEnd ?? (previousAt + now) / 2, widthMs } });
  }
  return { ...foresight, nodes, trusted };
}

/** The read at `now` is one more of the wait, or, when it saw a change, the first of a new one. */
export function countRead(foresight: Foresight, changed: boolean, now: number): Foresight {
  return changed || foresight.waitingSince === undefined ? { ...foresight, waitingSince: now, readsSpent: 1 } : { ...foresight, readsSpent: foresight.readsSpent + 1 };
}

/**
 * Where the next read goes when the model knows every running node and when it started; `undefined`
 * (the cadence decides, exactly as without a model) otherwise: no node executing, a node running past
 * `OUTLIER_SIGMAS` beyond its median, or a run whose nodes have proved the model wrong.
 * The run's allowance is one read per the bounds' maximum, its quiet pace, or per `shareMs` when the
 * budget offers the run that shorter share of the account (`ReadNeed.atShare`): the model spends as
 * many reads as the cadence would, where changes are likely. Its longest wait is `FLOOR_INTERVALS`
 * allowances, never past the bounds' maximum (that many allowances also cap the due time): a model
 * that is wrong costs at most that wait. With an allowance of the bounds' maximum itself, no wait can
 * be longer than the allowance, so the reads are as even as the cadence's: the share is what lets the
 * model save reads where a change is unlikely and spend them where it is likely.
 * When the budget is tight, the read's due time (`ReadTiming.dueAt`) ranks it among the others.
 */
export function foreseeRead(foresight: Foresight, executing: readonly string[], now: number, bounds: CadenceBounds, estimateOf: EstimateOf, shareMs?: number): ReadTiming | undefined {
  if (executing.length === 0 || foresight.waitingSince === undefined || !foresight.trusted) return undefined;
  const running: RunningNode[] = [];
  for (const nodeId of executing) {
    const startedAt = foresight.nodes.get(nodeId)?.start?.at;
    const estimate = estimateOf(nodeId);
    // A node past where its estimate could put its end is one the model knows nothing of.
    if (startedAt === undefined || estimate === undefined || (now - startedAt > estimate.medianMs && beyond(estimate, now - startedAt))) return undefined;
    running.push({ startedAt, estimate });
  }
  const allowanceMs = Math.max(1, Math.min(bounds.maxMs, shareMs ?? bounds.maxMs));
  const floorMs = FLOOR_INTERVALS * allowanceMs;
  return timeNextRead({
    now,
    running,
    allowanceMs,
    waitingSince: foresight.waitingSince,
    readsSpent: foresight.readsSpent,
    minMs: bounds.minMs,
    // Never past the run's own bounds: polls are bounded by `pollInterval`.
    maxMs: Math.max(bounds.minMs, Math.min(bounds.maxMs, floorMs)),
    floorMs,
  });
}

/** A duration the run learned of a node. */
export interface LearnedDuration {
  readonly nodeId: string;
  readonly durationMs: number;
}

/** Observed brackets count as a duration only when both are this small a share of it. */
const OBSERVED_PRECISION = 0.1;

/**
 * The durations of the nodes that finished, to learn from at the end: the service's own times when
 * the output gave them (service.md §4.2), else the observed ones when both brackets were narrow. Only
 * nodes in `finished`: a failed node's time is not how long its work takes.
 */
export function learnedDurations(foresight: Foresight, outputNodes: readonly OutputNode[], finished: ReadonlySet<string>): LearnedDuration[] {
  const learned = new Map<string, number>();
  for (const node of outputNodes) {
    const durationMs = durationOf(serviceNodeTimes(node));
    if (finished.has(node.nodeId) && durationMs !== undefined) learned.set(node.nodeId, durationMs);
  }
  for (const [nodeId, { start, end }] of foresight.nodes) {
    if (learned.has(nodeId) || !finished.has(nodeId) || start === undefined || end === undefined) continue;
    const durationMs = end.at - start.at;
    if (durationMs > 0 && Math.max(start.widthMs, end.widthMs) <= OBSERVED_PRECISION * durationMs) learned.set(nodeId, durationMs);
  }
  return [...learned].map(([nodeId, durationMs]) => ({ nodeId, durationMs }));
}

/*
 * Where the next read goes: a run's next status read when the nodes it waits on have learned durations.
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

/*
 * The little of the log-normal distribution that read timing needs: how likely a node that has run
 * `elapsedMs` is still running, on a log scale so that a node far past its expected end (a survival
 * of 1e-30) still compares with another.
 */

/**
 * ln(erfc(x)) for x ≥ 0, from the Chebyshev fit of Numerical Recipes' `erfcc` (relative error under
 * 1.2e-7 everywhere), written in its log form so that it holds far into the tail.
 */
function logErfc(x: number): number {
  const t = 1 / (1 + 0.5 * x);
  const poly =
    -1.26551223 +
    t * (1.00002368 + t * (0.37409196 + t * (0.09678418 + t * (-0.18628806 + t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277))))))));
  return Math.log(t) - x * x + poly;
}

/** ln P(Z > z) for a standard normal Z. */
function logNormalTail(z: number): number {
  if (z >= 0) return logErfc(z / Math.SQRT2) - Math.LN2;
  // P(Z > z) = 1 − P(Z > −z), and P(Z > −z) ≤ ½ here, so the subtraction loses nothing.
  return Math.log1p(-Math.exp(logErfc(-z / Math.SQRT2) - Math.LN2));
}

/** ln P(duration > elapsedMs) for a node with this estimate; 0 (certain) before it could have ended. */
export function logSurvival(estimate: DurationEstimate, elapsedMs: number): number {
  if (elapsedMs <= 0) return 0;
  return logNormalTail((Math.log(elapsedMs) - Math.log(estimate.medianMs)) / estimate.logSigma);
}
