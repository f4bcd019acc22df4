/**
 * What a pipeline tells a telemetry hook (`ClientOptions.telemetry`, read off the pipeline's client):
 * the pipeline and each step's run, with their outcomes. Times are readings of the pipeline's scheduler.
 */

/**
 * A pipeline about to be followed.
 *
 * @example
 * ```ts
 * const start: PipelineTelemetryStart = { steps: ['draft', 'review'], at: scheduler.now() };
 * ```
 */
export interface PipelineTelemetryStart {
  readonly steps: readonly string[];
  /** Its name, where it has one (a queued pipeline's job name). */
  readonly name?: string;
  /** Its id in the checkpoint store, when it has one. */
  readonly pipelineId?: string;
  /** The id of the queue job that carries it (`flowstream/bullmq`). */
  readonly jobId?: string;
  /** What the caller gave as the parent of its telemetry (`PipelineOptions.telemetry.parent`). */
  readonly parent?: unknown;
  readonly at: number;
}

/**
 * A step about to run: its workflow, and the execution it re-attaches to when resumed.
 *
 * @example
 * ```ts
 * const start: StepTelemetryStart = { step: 'draft', canvasId: 'c-1', at: scheduler.now() };
 * ```
 */
export interface StepTelemetryStart {
  readonly step: string;
  readonly canvasId: string;
  readonly resumedExecutionId?: string;
  readonly at: number;
}

/**
 * How a step ended: its outcome (`StepOutcome.status`), or `left` when the pipeline's subscriber left.
 *
 * @example
 * ```ts
 * observer.end({ at: scheduler.now(), status: 'finish' });
 * ```
 */
export interface StepTelemetryEnd {
  readonly at: number;
  readonly status: 'finish' | 'failed' | 'aborted' | 'detached' | 'left';
  readonly error?: unknown;
}

/**
 * The observer of one step; `parent` is what the step's run is reported under (`RunOptions.telemetryParent`).
 *
 * @example
 * ```ts
 * const step: StepTelemetry = { parent: stepContext, end: () => undefined };
 * ```
 */
export interface StepTelemetry {
  readonly parent?: unknown;
  end(end: StepTelemetryEnd): void;
}

/**
 * How a pipeline's subscription ended: `finished` (every step settled, none failed), `failed`,
 * `detached` (left without aborting), or `left` (its subscriber left).
 *
 * @example
 * ```ts
 * observer.end({ at: scheduler.now(), outcome: 'finished' });
 * ```
 */
export interface PipelineTelemetryEnd {
  readonly at: number;
  readonly outcome: 'finished' | 'failed' | 'detached' | 'left';
  readonly error?: unknown;
}

/**
 * The observer of one pipeline, handed back by {@link PipelineTelemetryHook.pipeline}.
 *
 * @example
 * ```ts
 * const pipeline: PipelineTelemetry = { step: () => ({ end: () => undefined }), end: () => undefined };
 * ```
 */
export interface PipelineTelemetry {
  step(start: StepTelemetryStart): StepTelemetry;
  end(end: PipelineTelemetryEnd): void;
}

/**
 * Where pipelines report themselves and their steps.
 *
 * @example
 * ```ts
 * const hook: PipelineTelemetryHook = { pipeline: () => ({ step: () => ({ end: () => undefined }), end: (end) => console.log(end.outcome) }) };
 * ```
 */
export interface PipelineTelemetryHook {
  pipeline(start: PipelineTelemetryStart): PipelineTelemetry;
}

/**
 * What a pipeline tells its telemetry about itself (`PipelineOptions.telemetry`).
 *
 * @example
 * ```ts
 * runPipeline(client, definition, { telemetry: { name: 'article', parent: context.active() } });
 * ```
 */
export interface PipelineTelemetryOptions {
  readonly name?: string;
  /** The id of the queue job that carries the pipeline. */
  readonly jobId?: string;
  /** The parent of the pipeline's telemetry (with `flowstream/otel`, an OpenTelemetry `Context`). */
  readonly parent?: unknown;
}
