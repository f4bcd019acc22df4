import { concat, defer, EMPTY, type OperatorFunction, tap } from 'rxjs';
import type { RunResult } from '../domain/model.js';
import type { RunEvent } from '../runs/events.js';
import type { RunOptions } from '../runs/run-lifecycle.js';
import type { CanvasId } from '../domain/workflows.js';
import { checkPipelineClient, type PipelineClient } from './pipeline-client.js';
import { retryFailedWorkflow } from './retry-failed-workflow.js';
import { type ChainInput, runWithInput } from './step-input.js';
import { objectArgument } from '../errors/validation-errors.js';

/**
 * Options of {@link thenRun}: those of the new run, and how often to re-run it when its workflow fails.
 *
 * @example
 * ```ts
 * thenRun(client, 'c-2', (result) => ({}), { retry: 2, output: 'final' });
 * ```
 */
export interface ThenRunOptions extends RunOptions {
  /** Re-run the new workflow up to this many times when it fails (default 0); its input is built anew each time. */
  readonly retry?: number;
}

/**
 * Chains a run after the run upstream: the upstream events pass through, and once it has finished
 * successfully, `input(result)` builds the variables (and files) of a new run of `canvasId`, whose
 * events follow. So `runResult()` of a chain is the result of its last run.
 *
 * Cancellation reaches every link: unsubscribing aborts whichever execution runs at that moment (the
 * run layer sends that abort exactly once), aborts the signal given to `input` while it prepares the
 * next run, and starts nothing new. A failed upstream workflow errors the chain with
 * `WorkflowFailedError` and the next run never starts; with `failOnWorkflowError: false` upstream, a
 * failed result ends the chain there, completed. `retry` re-runs the new link's failed workflow (the
 * first link's with `retryFailedWorkflow(n)` on its run).
 *
 * @example
 * ```ts
 * const result = await runResult(
 *   client.run('c-research', { variables: { topic: 'tides' } }).pipe(
 *     thenRun(client, 'c-summarise', (research) => ({ variables: { notes: outputText(research) } })),
 *     thenRun(client, 'c-illustrate', async (summary, { signal }) => {
 *       const [doc] = await transferFiles(client, [outputFile(summary, 'summary.md')], { signal });
 *       return { variables: { document: doc!.fileKey } };
 *     }),
 *   ),
 * );
 * ```
 */
export function thenRun<Id extends CanvasId>(client: PipelineClient, canvasId: Id, input: ChainInput<Id>, options: ThenRunOptions = {}): OperatorFunction<RunEvent, RunEvent> {
  checkPipelineClient(client);
  objectArgument('options', options);
  const { retry = 0, ...runOptions } = options;
  const retrying = retryFailedWorkflow<RunEvent>(retry);
  return (source) =>
    defer(() => {
      let last: RunResult | undefined;
      const next = defer(() => {
        if (last?.status !== 'finish') return EMPTY;
        const result = last;
        const attempt = defer(() => runWithInput(client, canvasId, (context) => input(result, context), runOptions));
        return attempt.pipe(retrying);
      });
      return concat(
        source.pipe(
          tap((event) => {
            if (event.type === 'finished') last = event.result;
          }),
        ),
        next,
      );
    });
}
