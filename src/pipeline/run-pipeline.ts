import { Observable, type Subscription } from 'rxjs';
import { InvalidArgumentError } from '../errors/validation-errors.js';
import type { RunResult } from '../domain/model.js';
import type { PipelineClient } from './pipeline-client.js';
import { isResumable, type PipelineCheckpoint, type StepCheckpoint, withStep } from './pipeline-checkpoint.js';
import type { PipelineDefinition, PipelineOptions, StepResults } from './pipeline-definition.js';
import type { PipelineEvent, StepOutcome } from './pipeline-events.js';
import { planPipeline } from './pipeline-plan.js';
import { isSettled, nextMoves, type StepPhase } from './pipeline-progress.js';
import { stepRun } from './step-run.js';

/**
 * Runs a DAG of workflows as one Observable. Each step starts once the steps it `dependsOn` have
 * finished, with the input it builds from their results; independent steps run at the same time,
 * all through the client's one request budget. Emits every step's run events tagged `{ step, event }`,
 * a serialisable checkpoint whenever a step starts or ends, and last `finished` with every step's
 * outcome; then completes, or errors with the first failed step's error (`WorkflowFailedError` names
 * the step; the step's dependants are skipped).
 *
 * - `onStepFailure: 'abort-all'` (default): the running steps are aborted and nothing more starts.
 *   `'finish-running'`: branches independent of the failed step run on to their end.
 * - Unsubscribing aborts every running execution (once each) and starts nothing new.
 * - `resume`: steps the checkpoint records as `running` or `finish` are followed with `watch`, not
 *   started again.
 * - A definition that is not a DAG (no steps, an unknown dependency, a cycle) or a checkpoint naming
 *   an unknown step throws `InvalidArgumentError` at once, before anything runs.
 *
 * @example
 * ```ts
 * runPipeline(client, {
 *   steps: {
 *     research: { canvasId: 'c-research', input: () => ({ variables: { topic: 'tides' } }) },
 *     summary: { canvasId: 'c-summary', dependsOn: ['research'], input: (r) => ({ variables: { notes: outputText(r.research!) } }) },
 *     chart: { canvasId: 'c-chart', dependsOn: ['research'], retry: 2 },
 *   },
 * }, { onStepFailure: 'finish-running' }).subscribe((event) => {
 *   if (event.type === 'checkpoint') saveCheckpoint(JSON.stringify(event.checkpoint));
 *   if (event.type === 'finished') console.log(event.outcomes);
 * });
 * ```
 */
export function runPipeline<Name extends string>(
  client: PipelineClient,
  definition: PipelineDefinition<Name>,
  options: PipelineOptions = {},
): Observable<PipelineEvent<Name>> {
  const { steps } = definition;
  const plan = planPipeline(steps);
  const policy = options.onStepFailure ?? 'abort-all';
  const resume: Readonly<Partial<Record<string, StepCheckpoint>>> = options.resume?.steps ?? {};
  for (const step of Object.keys(resume)) {
    if (!Object.hasOwn(steps, step)) throw new InvalidArgumentError('resume', `the checkpoint names a step "${step}" this pipeline does not have`);
  }
  const attached = new Set(plan.order.filter((step) => isResumable(resume[step])));

  return new Observable<PipelineEvent<Name>>((subscriber) => {
    const phases = new Map<Name, StepPhase>(plan.order.map((step) => [step, 'waiting']));
    const outcomes = new Map<Name, StepOutcome<Name>>();
    const results: Partial<Record<Name, RunResult>> = {};
    const running = new Map<Name, Subscription>();
    let checkpoint: PipelineCheckpoint<Name> = { steps: { ...resume } as Partial<Record<Name, StepCheckpoint>> };
    let failure: { readonly step: Name; readonly error: unknown } | undefined;
    let advancing = false;
    let again = false;

    const record = (step: Name, entry: StepCheckpoint): void => {
      checkpoint = withStep(checkpoint, step, entry);
      subscriber.next({ type: 'checkpoint', checkpoint });
    };

    const settle = (step: Name, outcome: StepOutcome<Name>): void => {
      running.delete(step);
      phases.set(step, outcome.status);
      outcomes.set(step, outcome);
      if (outcome.status === 'failed' && failure === undefined) {
        failure = { step, error: outcome.error };
        if (policy === 'abort-all') abortRunning();
      }
      advance();
    };

    // PROTOCOL §3.5: an abort fails the execution; unsubscribing the step's run sends it (once).
    const abortRunning = (): void => {
      for (const [step, subscription] of [...running]) {
        running.delete(step);
        subscription.unsubscribe();
        phases.set(step, 'aborted');
        outcomes.set(step, { status: 'aborted' });
        const entry = checkpoint.steps[step];
        if (entry?.status === 'running') record(step, { executionId: entry.executionId, status: 'aborted' });
      }
    };

    const launch = (step: Name): void => {
      phases.set(step, 'running');
      let result: RunResult | undefined;
      const inputs: StepResults<Name> = { ...results };
      const subscription = stepRun(client, step, steps[step], inputs, attached.has(step) ? resume[step] : undefined, options.run ?? {}).subscribe({
        next: (event) => {
          if (event.type === 'started') record(step, { executionId: event.executionId, status: 'running' });
          if (event.type === 'finished') {
            result = event.result;
            record(step, { executionId: event.executionId, status: event.result.status });
          }
          subscriber.next({ type: 'step', step, event });
        },
        error: (error: unknown) => {
          settle(step, { status: 'failed', error });
        },
        complete: () => {
          if (result === undefined) {
            // A run always ends with `finished` or an error (DESIGN.md); a source that broke this is a bug to show.
            settle(step, { status: 'failed', error: new Error(`step ${step} completed without a finished event`) });
            return;
          }
          results[step] = result;
          settle(step, { status: 'finish', result });
        },
      });
      // The run may have ended, or the consumer left, while it was being subscribed.
      if (!open()) subscription.unsubscribe();
      else if (phases.get(step) === 'running') running.set(step, subscription);
    };

    const finish = (): void => {
      // In declaration order, whatever order the steps ended in.
      const all = Object.fromEntries(Object.keys(steps).map((step) => [step, outcomes.get(step as Name)]));
      subscriber.next({ type: 'finished', outcomes: all as Record<Name, StepOutcome<Name>> });
      if (failure === undefined) subscriber.complete();
      else subscriber.error(failure.error);
    };

    const open = (): boolean => !subscriber.closed;
    const stoppedBy = (): Name | undefined => (policy === 'abort-all' ? failure?.step : undefined);
    const pass = (): void => {
      const moves = nextMoves(plan, phases, attached, stoppedBy());
      for (const [step, blockedBy] of moves.skip) {
        phases.set(step, 'skipped');
        outcomes.set(step, { status: 'skipped', blockedBy });
      }
      // A step launched in this pass may fail at once (its input threw) and stop the pipeline.
      for (const step of moves.start) if (open() && stoppedBy() === undefined && phases.get(step) === 'waiting') launch(step);
    };

    // Re-entrant calls (a step settling while others are being launched) only ask for another pass.
    const advance = (): void => {
      if (advancing) {
        again = true;
        return;
      }
      advancing = true;
      for (again = true; again && open(); ) {
        again = false;
        pass();
      }
      advancing = false;
      if (open() && isSettled(phases)) finish();
    };

    advance();
    return () => {
      for (const subscription of running.values()) subscription.unsubscribe();
      running.clear();
    };
  });
}
