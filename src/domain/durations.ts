/**
 * The vocabulary of learned node durations: what a run learns of how long each node of a
 * workflow takes, kept per (canvasId, nodeId), so that its status reads land where a change is likely.
 * `src/budget/duration-model.ts` keeps it in memory; `flowstream/redis` shares it across a fleet.
 */
import type { Observable } from 'rxjs';

/**
 * What the durations seen so far say of one node: a log-normal fitted robustly (median and median
 * absolute deviation of the log-durations, so one stuck run does not move it).
 *
 * @example
 * ```ts
 * const estimate: DurationEstimate = { samples: 12, medianMs: 42_000, logSigma: 0.3 };
 * ```
 */
export interface DurationEstimate {
  /** How many durations it rests on. */
  readonly samples: number;
  /** The median duration, ms. */
  readonly medianMs: number;
  /** The spread of the log-durations (a log-normal's σ): about the coefficient of variation when small. */
  readonly logSigma: number;
}

/**
 * The durations of one node as JSON: the most recent first-to-last, ms.
 *
 * @example
 * ```ts
 * const node: NodeDurations = { canvasId: 'c-1', nodeId: 'node-write', samplesMs: [41_000, 45_500, 39_800] };
 * ```
 */
export interface NodeDurations {
  readonly canvasId: string;
  readonly nodeId: string;
  readonly samplesMs: readonly number[];
}

/**
 * A model exported as JSON (`DurationModel.toJSON()`), to keep across restarts or seed another.
 *
 * @example
 * ```ts
 * await writeFile('durations.json', JSON.stringify(model.toJSON()));
 * model.import(JSON.parse(await readFile('durations.json', 'utf8')));
 * ```
 */
export interface DurationsJson {
  readonly version: 1;
  readonly nodes: readonly NodeDurations[];
}

/**
 * What a model knows now, for UIs and logs: one entry per node it has seen, with its estimate once it
 * has enough samples.
 *
 * @example
 * ```ts
 * model.state$.subscribe((view) => console.table(view.nodes.map((n) => ({ node: n.nodeId, median: n.estimate?.medianMs }))));
 * ```
 */
export interface DurationsView {
  readonly nodes: readonly { readonly canvasId: string; readonly nodeId: string; readonly samples: number; readonly estimate: DurationEstimate | undefined }[];
}

/**
 * Learned node durations, shared by every run of a client (or of an account, given to several
 * clients through their budget). A node without an estimate is cold: its runs poll exactly as they
 * would without a model.
 *
 * @example
 * ```ts
 * const durations = createDurationModel();
 * const client = createClient({ apiKey, baseUrl, durations });
 * durations.estimate('c-1', 'node-write'); // { samples, medianMs, logSigma } once three runs ended
 * ```
 */
export interface DurationModel {
  /** The node's estimate, or `undefined` while it has too few samples (cold). */
  estimate(canvasId: string, nodeId: string): DurationEstimate | undefined;
  /** Adds one duration a run saw (ms); a value that is not a finite duration is ignored. */
  record(canvasId: string, nodeId: string, durationMs: number): void;
  /** Everything it holds, as JSON. */
  toJSON(): DurationsJson;
  /** Adds the samples of an exported model to its own; `InvalidArgumentError` when `json` is not one. */
  import(json: unknown): void;
  snapshot(): DurationsView;
  /** The view on subscription and after every change. */
  readonly state$: Observable<DurationsView>;
}
