import { map, Observable, Subject } from 'rxjs';
import type { DurationEstimate, DurationModel, DurationsView, NodeDurations } from '../domain/durations.js';
import { LONGEST_NODE_MS } from '../domain/node-times.js';
import { InvalidArgumentError, positiveInteger } from '../errors/validation-errors.js';

/**
 * Options of `createDurationModel`.
 *
 * @example
 * ```ts
 * const durations = createDurationModel({ maxNodes: 5_000, from: JSON.parse(saved) });
 * ```
 */
export interface DurationModelOptions {
  /** Nodes kept at most; the least recently used is forgotten first. Default 1,000. */
  readonly maxNodes?: number;
  /** Durations kept per node, the most recent. Default 32: recent enough to follow a workflow that got slower. */
  readonly window?: number;
  /** Samples a node needs before it has an estimate; until then its runs poll as without a model. Default 3. */
  readonly minSamples?: number;
  /** A model exported with `toJSON()`, to start from. */
  readonly from?: unknown;
}

/** The model's bounds by default, for a store that keeps what it keeps by the same numbers (flowstream/redis). */
export const DURATION_MODEL_DEFAULTS = { maxNodes: 1_000, window: 32, minSamples: 3 } as const;

/** 1.4826 × MAD estimates σ for normal data: the MAD of a standard normal is Φ⁻¹(3/4) = 0.6745. */
const MAD_TO_SIGMA = 1.4826;

/**
 * Never trust a spread tighter than this (about ±5%): the reads' timing, the service's tick and our
 * own observation blur any duration by that much, and a model too sure of itself times its reads
 * into a gap.
 */
export const MIN_LOG_SIGMA = 0.05;

/**
 * A duration more than this many σ from the estimate's median is an outlier (beyond 2 σ: 4.6% of
 * durations when the estimate is right); `SHIFT_AFTER` of them in a row mean the workflow changed, and
 * the node starts over from them.
 */
export const OUTLIER_SIGMAS = 2;
const SHIFT_AFTER = 3;

/**
 * Outliers are judged only against an estimate of this many samples: the first few durations of a
 * fan-out are its shortest (runs started together end shortest first), and judged against them the
 * rest would all look like outliers.
 */
const SHIFT_MIN_SAMPLES = 8;

/**
 * A few samples understate the spread: the fitted σ is pulled towards a wide prior (σ 0.5, about a
 * coefficient of variation of 0.53) as if it were `PRIOR_WEIGHT` samples more, which fades as the
 * node's own samples grow.
 */
const PRIOR_LOG_SIGMA = 0.5;
const PRIOR_WEIGHT = 2;

/** The median of sorted values (at least one). */
function median(sorted: readonly number[]): number {
  const upper = sorted[sorted.length >> 1] ?? Number.NaN;
  const lower = sorted[(sorted.length - 1) >> 1] ?? upper;
  return (lower + upper) / 2;
}

/**
 * A log-normal fitted to `samplesMs` robustly: the median of the logs and 1.4826 × their median
 * absolute deviation, pooled with a wide prior while the samples are few, at least `MIN_LOG_SIGMA`.
 * An outlier moves neither by more than one rank.
 *
 * @example
 * ```ts
 * estimateDuration([9_000, 10_000, 11_000]); // { samples: 3, medianMs: 10000, logSigma: ≈0.15 }
 * ```
 */
export function estimateDuration(samplesMs: readonly number[]): DurationEstimate {
  const logs = samplesMs.map((ms) => Math.log(Math.max(1, ms))).sort((a, b) => a - b);
  const mu = median(logs);
  const deviations = logs.map((log) => Math.abs(log - mu)).sort((a, b) => a - b);
  const fitted = MAD_TO_SIGMA * median(deviations);
  const pooled = Math.sqrt((logs.length * fitted * fitted + PRIOR_WEIGHT * PRIOR_LOG_SIGMA * PRIOR_LOG_SIGMA) / (logs.length + PRIOR_WEIGHT));
  return { samples: logs.length, medianMs: Math.round(Math.exp(mu)), logSigma: Math.max(MIN_LOG_SIGMA, pooled) };
}

/** What the model takes as a duration (no longer than a node can run): a store of samples (flowstream/redis) keeps no other. */
export function isDuration(ms: unknown): ms is number {
  return typeof ms === 'number' && Number.isFinite(ms) && ms >= 0 && ms <= LONGEST_NODE_MS;
}

/** One node's samples and, once computed, its estimate (dropped at every new sample). */
interface Entry {
  readonly canvasId: string;
  readonly nodeId: string;
  readonly samples: number[];
  estimate: DurationEstimate | undefined;
  /** Outliers in a row, the latest last. */
  outliers: number;
}

function entryKey(canvasId: string, nodeId: string): string {
  return `${canvasId}\u0000${nodeId}`;
}

/**
 * Bounds of an imported model: ids of the service are a few dozen characters, a model keeps `window`
 * samples of each of at most `maxNodes` nodes. Beyond these, the input is not an exported model, and
 * it would be stored and passed on (a fleet's model is kept in Redis and sent to every process).
 */
export const IMPORT_BOUNDS = { idLength: 256, samplesPerNode: 10_000, nodes: 100_000 } as const;

class NotAModel extends Error {}

/** An own data property's value; an accessor (a getter) or a missing index (a hole) is not a model's. */
function ownValue(holder: object, key: string, where: string): unknown {
  const descriptor = Object.getOwnPropertyDescriptor(holder, key);
  if (descriptor === undefined) throw new NotAModel(`${where} is missing`);
  if (!('value' in descriptor)) throw new NotAModel(`${where} is an accessor, not a value`);
  return descriptor.value;
}

/** An array's items, each an own data property, at most `max` of them. */
function ownItems(value: unknown, max: number, where: string): unknown[] {
  if (!Array.isArray(value)) throw new NotAModel(`${where} is not an array`);
  const length = ownValue(value, 'length', `${where}.length`);
  if (typeof length !== 'number' || !Number.isSafeInteger(length) || length < 0) throw new NotAModel(`${where}.length is not a length`);
  if (length > max) throw new NotAModel(`${where} has ${String(length)} items (at most ${String(max)})`);
  return Array.from({ length }, (_, index) => ownValue(value, String(index), `${where}[${String(index)}]`));
}

function id(value: unknown, where: string): string {
  if (typeof value !== 'string' || value.length === 0 || value.length > IMPORT_BOUNDS.idLength) throw new NotAModel(`${where} must be a string of 1 to ${String(IMPORT_BOUNDS.idLength)} characters`);
  return value;
}

/**
 * An exported model's nodes, copied into plain values and checked by value: own data properties only
 * (no getters, no holes), ids and counts within `IMPORT_BOUNDS`, samples durations in ms. What the
 * input is (a Proxy, an object with getters) is read once; anything it throws, or that is not a model,
 * is an `InvalidArgumentError`.
 *
 * @example
 * ```ts
 * readDurationsJson({ version: 1, nodes: [{ canvasId: 'c-1', nodeId: 'node-a', samplesMs: [9_000] }] });
 * ```
 */
export function readDurationsJson(json: unknown): readonly NodeDurations[] {
  try {
    if (typeof json !== 'object' || json === null) throw new NotAModel('not an object');
    const version = ownValue(json, 'version', '`version`');
    if (version !== 1) throw new NotAModel(`version ${typeof version === 'number' ? String(version) : typeof version} (expected 1)`);
    return ownItems(ownValue(json, 'nodes', '`nodes`'), IMPORT_BOUNDS.nodes, '`nodes`').map((node, index): NodeDurations => {
      const where = `nodes[${String(index)}]`;
      if (typeof node !== 'object' || node === null) throw new NotAModel(`${where} is not an object`);
      const canvasId = id(ownValue(node, 'canvasId', `${where}.canvasId`), `${where}.canvasId`);
      const nodeId = id(ownValue(node, 'nodeId', `${where}.nodeId`), `${where}.nodeId`);
      const samplesMs = ownItems(ownValue(node, 'samplesMs', `${where}.samplesMs`), IMPORT_BOUNDS.samplesPerNode, `${where}.samplesMs`);
      if (!samplesMs.every(isDuration)) throw new NotAModel(`${where}.samplesMs must be durations in ms`);
      return { canvasId, nodeId, samplesMs };
    });
  } catch (error) {
    const why = error instanceof NotAModel ? error.message : 'reading it threw';
    throw new InvalidArgumentError('durations', `is not an exported duration model: ${why}`);
  }
}

/**
 * Learned node durations kept in memory: per (canvasId, nodeId) the last `window`
 * durations (after three outliers in a row, only those: the workflow changed), for at most
 * `maxNodes` nodes (least recently used forgotten first), each node's estimate computed once per
 * change. Every client has one unless given another (or `durations:
 * false`); give one to several clients, or to `createAccountBudget({ durations })`, and they learn
 * together.
 *
 * @example
 * ```ts
 * const durations = createDurationModel();
 * const client = createClient({ apiKey, baseUrl, durations });
 * process.on('exit', () => writeFileSync('durations.json', JSON.stringify(durations.toJSON())));
 * ```
 */
export function createDurationModel(options: DurationModelOptions = {}): DurationModel {
  const maxNodes = positiveInteger('maxNodes', options.maxNodes ?? DURATION_MODEL_DEFAULTS.maxNodes);
  const window = positiveInteger('window', options.window ?? DURATION_MODEL_DEFAULTS.window);
  const minSamples = positiveInteger('minSamples', options.minSamples ?? DURATION_MODEL_DEFAULTS.minSamples);
  // A Map keeps insertion order: re-inserting on use makes its first entry the least recently used.
  const entries = new Map<string, Entry>();
  const changes = new Subject<void>();

  const touch = (canvasId: string, nodeId: string): Entry => {
    const key = entryKey(canvasId, nodeId);
    const found = entries.get(key);
    if (found !== undefined) entries.delete(key);
    const entry = found ?? { canvasId, nodeId, samples: [], estimate: undefined, outliers: 0 };
    entries.set(key, entry);
    for (const oldest of entries.keys()) {
      if (entries.size <= maxNodes) break;
      entries.delete(oldest);
    }
    return entry;
  };
  const estimateOf = (entry: Entry): DurationEstimate | undefined => {
    if (entry.samples.length < minSamples) return undefined;
    entry.estimate ??= estimateDuration(entry.samples);
    return entry.estimate;
  };
  const add = (entry: Entry, durationMs: number): void => {
    const estimate = estimateOf(entry);
    const outlier = estimate !== undefined && estimate.samples >= SHIFT_MIN_SAMPLES && Math.abs(Math.log(Math.max(1, durationMs) / estimate.medianMs)) > OUTLIER_SIGMAS * estimate.logSigma;
    entry.outliers = outlier ? entry.outliers + 1 : 0;
    entry.samples.push(durationMs);
    // A robust fit ignores a few outliers; this many in a row is a workflow that changed: follow it now.
    if (entry.outliers >= SHIFT_AFTER) {
      entry.samples.splice(0, entry.samples.length - entry.outliers);
      entry.outliers = 0;
    }
    if (entry.samples.length > window) entry.samples.splice(0, entry.samples.length - window);
    entry.estimate = undefined;
  };
  const snapshot = (): DurationsView => ({
    nodes: [...entries.values()].map((entry) => ({ canvasId: entry.canvasId, nodeId: entry.nodeId, samples: entry.samples.length, estimate: estimateOf(entry) })),
  });

  const model: DurationModel = {
    estimate(canvasId, nodeId) {
      const entry = entries.get(entryKey(canvasId, nodeId));
      return entry === undefined ? undefined : estimateOf(entry);
    },
    record(canvasId, nodeId, durationMs) {
      if (!isDuration(durationMs)) return;
      add(touch(canvasId, nodeId), durationMs);
      changes.next();
    },
    toJSON: () => ({ version: 1, nodes: [...entries.values()].map((entry) => ({ canvasId: entry.canvasId, nodeId: entry.nodeId, samplesMs: [...entry.samples] })) }),
    import(json) {
      const nodes = readDurationsJson(json);
      for (const node of nodes) {
        const entry = touch(node.canvasId, node.nodeId);
        for (const ms of node.samplesMs) add(entry, ms);
      }
      if (nodes.length > 0) changes.next();
    },
    snapshot,
    state$: new Observable<DurationsView>((subscriber) => {
      subscriber.next(snapshot());
      return changes.pipe(map(snapshot)).subscribe(subscriber);
    }),
  };
  if (options.from !== undefined) model.import(options.from);
  return model;
}

export type { DurationEstimate, DurationModel, DurationsJson, DurationsView, NodeDurations } from '../domain/durations.js';
