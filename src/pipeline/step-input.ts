import { last, type Observable, of, switchMap } from 'rxjs';
import type { RunResult } from '../domain/model.js';
import type { RunInput, Runs } from '../runs/runs.js';
import type { WorkflowInput } from '../domain/workflows.js';
import type { RunEvent } from '../runs/events.js';
import { fromAbortable, type RunOptions } from '../runs/run-lifecycle.js';

/**
 * What a step's input function may use besides the results: a signal that aborts when the pipeline
 * is unsubscribed (pass it to `transferFiles` and any fetch of your own).
 *
 * @example
 * ```ts
 * const input = async (result: RunResult, { signal }: StepContext) => ({ variables: { doc: (await transferFiles(client, result.files, { signal }))[0]!.fileKey } });
 * ```
 */
export interface StepContext {
  readonly signal: AbortSignal;
}

/**
 * Builds the next run's input from the previous run's result, at once or asynchronously (for example
 * after moving its files along with `transferFiles`).
 *
 * @example
 * ```ts
 * const input: ChainInput = (result) => ({ variables: { text: outputText(result) } });
 * ```
 */
export type ChainInput<Id extends string = string> = (result: RunResult, context: StepContext) => WorkflowInput<Id> | PromiseLike<WorkflowInput<Id>>;

/**
 * A run whose input is built first, from earlier results: the input function gets a signal that
 * aborts when the run is unsubscribed before the input is ready, and the run starts with what it
 * returns. `thenRun` and the steps of `runPipeline` start their runs this way. `beforeRun`, once the
 * input is ready, must emit before the run is subscribed (a pipeline puts its start on record there).
 */
export function runWithInput(
  client: Runs,
  canvasId: string,
  input: (context: StepContext) => RunInput | PromiseLike<RunInput>,
  options: RunOptions,
  beforeRun: () => Observable<unknown> = () => of(undefined),
): Observable<RunEvent> {
  return fromAbortable((signal) => input({ signal })).pipe(
    switchMap((runInput) => beforeRun().pipe(last(undefined, undefined), switchMap(() => client.run(canvasId, runInput, options)))),
  );
}
