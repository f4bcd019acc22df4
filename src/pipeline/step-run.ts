import { catchError, defer, type Observable, throwError } from 'rxjs';
import { isWorkflowFailedError, WorkflowFailedError } from '../errors/run-errors.js';
import type { RunEvent } from '../runs/events.js';
import type { RunOptions } from '../runs/run-lifecycle.js';
import type { PipelineClient } from './pipeline-client.js';
import type { PipelineStep, StepResults } from './pipeline-definition.js';
import type { StepCheckpoint } from './pipeline-checkpoint.js';
import { retryFailedWorkflow } from './retry-failed-workflow.js';
import { runWithInput } from './step-input.js';

/**
 * One step's run as a cold Observable of its events. The first attempt re-attaches to `resumed` with
 * `watch` when given; later attempts (retries of a failed workflow) start anew from `input`, each
 * after `beforeStart(attempt)` has recorded it (`starting`: a start that may leave must be on record
 * first, so a crash can never make it start twice unseen). The pipeline owns the step's execution, so
 * unsubscribing aborts it (`abortOnUnsubscribe` also for a watch) — unless the run is detached
 * (`RunOptions.detach`) — and a failed workflow always errors (`failOnWorkflowError`), with the step named.
 */
export function stepRun<Name extends string>(
  client: PipelineClient,
  name: Name,
  step: PipelineStep<Name>,
  results: StepResults<Name>,
  resumed: (StepCheckpoint & { readonly executionId: string }) | undefined,
  defaults: RunOptions,
  start: { readonly firstAttempt: number; readonly beforeStart: (attempt: number) => Observable<unknown> },
): Observable<RunEvent> {
  const options: RunOptions = { ...defaults, ...step.run, abortOnUnsubscribe: true, failOnWorkflowError: true };
  let attach = resumed;
  let attempt = start.firstAttempt - 1;
  const attemptRun = defer(() => {
    const execution = attach;
    attach = undefined;
    if (execution !== undefined) return client.watch(execution.executionId, options);
    attempt += 1;
    const number = attempt;
    return runWithInput(client, step.canvasId, (context) => step.input?.(results, context) ?? {}, options, () => start.beforeStart(number));
  });
  return attemptRun.pipe(
    retryFailedWorkflow(step.retry ?? 0),
    catchError((error: unknown) => throwError(() => (isWorkflowFailedError(error) ? new WorkflowFailedError(error.result, { step: name }) : error))),
  );
}
