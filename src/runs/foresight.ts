import type { DurationEstimate } from '../domain/durations.js';
import type { OutputNode } from '../domain/model.js';
import type { CadenceBounds } from './cadence.js';
import type { RunEvent } from './events.js';
import { isNodeDone } from './node-progress.js';
import { OUTLIER_SIGMAS } from '../budget/duration-model.js';
import { logSurvival } from './log-normal.js';
import { FLOOR_INTERVALS, type ReadTiming, type RunningNode, timeNextRead } from './read-timing.js';

/*
 * What a run knows of its nodes' times, for learned durations: when each node was seen to
 * start and end, bracketed by the reads around it, and — once the model knows the nodes that are
 * running — where its next read goes (read-timing.ts).
 */

/** A moment known to lie within `widthMs` before `at`'s bracket end; `at` is the best guess. */
export interface Bracketed {
  readonly at: number;
  readonly widthMs: number;
}

/** When a node was seen starting and ending. */
export interface NodeTimes {
  readonly start?: Bracketed;
  readonly end?: Bracketed;
}

/** The node's estimate, for the run's canvas; `undefined` while the model has none (or there is no model). */
export type EstimateOf = (nodeId: string) => DurationEstimate | undefined;

/** What the run has seen of its nodes' times, and the state of its wait for the next change. */
export interface Foresight {
  readonly nodes: ReadonlyMap<string, NodeTimes>;
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
 * The run's allowance is one read per the bounds' maximum, its quiet pace: the model spends as many
 * reads as the cadence would at rest, where changes are likely. Its longest wait is the bounds' maximum
 * (`FLOOR_INTERVALS` allowances caps the due time): a model that is wrong costs at most that wait.
 * When the budget is tight, the read's due time (`ReadTiming.dueAt`) ranks it among the others.
 */
export function foreseeRead(foresight: Foresight, executing: readonly string[], now: number, bounds: CadenceBounds, estimateOf: EstimateOf): ReadTiming | undefined {
  if (executing.length === 0 || foresight.waitingSince === undefined || !foresight.trusted) return undefined;
  const running: RunningNode[] = [];
  for (const nodeId of executing) {
    const startedAt = foresight.nodes.get(nodeId)?.start?.at;
    const estimate = estimateOf(nodeId);
    // A node past where its estimate could put its end is one the model knows nothing of.
    if (startedAt === undefined || estimate === undefined || (now - startedAt > estimate.medianMs && beyond(estimate, now - startedAt))) return undefined;
    running.push({ startedAt, estimate });
  }
  const allowanceMs = Math.max(1, bounds.maxMs);
  const floorMs = FLOOR_INTERVALS * allowanceMs;
  return timeNextRead({
    now,
    running,
    allowanceMs,
    waitingSince: foresight.waitingSince,
    readsSpent: foresight.readsSpent,
    minMs: bounds.minMs,
    // Never past the run's own bounds: polls are bounded by `pollInterval`.
    maxMs: Math.max(bounds.minMs, bounds.maxMs),
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
    if (!finished.has(node.nodeId) || node.startTime === undefined || node.endTime === undefined) continue;
    const durationMs = Date.parse(node.endTime) - Date.parse(node.startTime);
    if (Number.isFinite(durationMs) && durationMs >= 0) learned.set(node.nodeId, durationMs);
  }
  for (const [nodeId, { start, end }] of foresight.nodes) {
    if (learned.has(nodeId) || !finished.has(nodeId) || start === undefined || end === undefined) continue;
    const durationMs = end.at - start.at;
    if (durationMs > 0 && Math.max(start.widthMs, end.widthMs) <= OBSERVED_PRECISION * durationMs) learned.set(nodeId, durationMs);
  }
  return [...learned].map(([nodeId, durationMs]) => ({ nodeId, durationMs }));
}
