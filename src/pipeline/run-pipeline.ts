import { asyncScheduler, defer, from, Observable, of, Subscription, switchMap, timer } from 'rxjs';
import { abortSignalArgument, InvalidArgumentError, knownKeys, objectArgument, oneOf, pathSegment } from '../errors/validation-errors.js';
import type { RunResult } from '../domain/model.js';
import { StepInDoubtError } from '../errors/step-in-doubt-error.js';
import { type CheckpointStore, sameEntry } from './checkpoint-store.js';
import { outageBackoff } from '../runs/poll.js';
import { checkPipelineClient, type PipelineClient } from './pipeline-client.js';
import { entryOf, isResumable, type PipelineCheckpoint, type StepCheckpoint, withStep } from './pipeline-checkpoint.js';
import type { PipelineDefinition, PipelineOptions, PipelineStep, StepCanvasIds, StepFailurePolicy, StepResults } from './pipeline-definition.js';
import type { PipelineEvent, StepOutcome } from './pipeline-events.js';
import { type PipelinePlan, planPipeline } from './pipeline-plan.js';
import { isSettled, nextMoves, type StepPhase } from './pipeline-progress.js';
import type { PipelineTelemetry, StepTelemetry, StepTelemetryEnd } from './pipeline-telemetry.js';
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
 * - Unsubscribing cancels: every running execution is aborted (once each) and nothing new starts.
 *   `detach` leaves instead: nothing is aborted, the last checkpoint comes with `detached`.
 * - `resume` (or `checkpoints`, a store): steps recorded `running` or `finish` are followed with
 *   `watch`, not started again; a step recorded `starting` is in doubt (`inDoubt`).
 * - With typed workflows (`Workflows`), each step's `input` is checked against the variables of its
 *   own `canvasId`, inferred from the call; other canvas ids, and explicit step names
 *   (`runPipeline<'a' | 'b'>(…)`), take any variables.
 * - A definition that is not a DAG (no steps, an unknown dependency, a cycle), a checkpoint naming
 *   an unknown step, or an option that is not one it knows (`onStepFailure: 'abort'`) throws
 *   `InvalidArgumentError` at once, before anything runs.
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
export function runPipeline<Name extends string, Ids extends StepCanvasIds<Name> = StepCanvasIds<Name>>(
  client: PipelineClient,
  definition: PipelineDefinition<Name, Ids>,
  options: PipelineOptions = {},
): Observable<PipelineEvent<Name>> {
  checkPipelineClient(client);
  checkOptions(options);
  checkDefinition(definition);
  // Past the call, where each step's input was checked against its workflow, every step runs alike.
  const untyped = definition as PipelineDefinition<Name>;
  const plan = planPipeline(untyped.steps);
  const stored = options.checkpoints;
  if (stored === undefined) {
    const resume = checkedResume(untyped, options.resume);
    return defer(() => followPipeline(client, untyped, plan, options, resume, undefined));
  }
  // service.md §3.8: no way to list executions — the store's record is the only memory of what started.
  return defer(async () => {
    const token = await stored.store.claim(stored.pipelineId);
    const found = await stored.store.load(stored.pipelineId);
    return { token, cancelled: found?.cancelRequested === true, resume: checkedResume(untyped, found?.checkpoint ?? options.resume) };
  }).pipe(switchMap(({ token, cancelled, resume }) => followPipeline(client, untyped, plan, options, resume, { ...stored, token, cancelled })));
}

/** What a step may have: a misspelt `dependsOn` would run the step at once, beside the steps it was to follow. */
const STEP_FIELDS: readonly string[] = ['canvasId', 'dependsOn', 'input', 'retry', 'run'] satisfies readonly (keyof PipelineStep<string>)[];

/** The definition's shape, as a JavaScript caller can get it wrong, refused before anything runs (the DAG itself: `planPipeline`). */
function checkDefinition(definition: unknown): void {
  if (definition === undefined) throw new InvalidArgumentError('definition', 'is required: { steps: { name: { canvasId, dependsOn?, input?, retry?, run? } } }');
  const { steps } = objectArgument('definition', definition as { readonly steps?: unknown });
  if (typeof steps !== 'object' || steps === null || Array.isArray(steps)) throw new InvalidArgumentError('steps', 'must be an object of named steps');
  for (const [name, step] of Object.entries(steps as Readonly<Record<string, unknown>>)) {
    if (typeof step !== 'object' || step === null || Array.isArray(step)) throw new InvalidArgumentError(`steps.${name}`, 'must be an object: { canvasId, dependsOn?, input?, retry?, run? }');
    knownKeys(`steps.${name}`, step, STEP_FIELDS);
    const { canvasId, dependsOn, input } = step as { readonly canvasId?: unknown; readonly dependsOn?: unknown; readonly input?: unknown };
    pathSegment(`steps.${name}.canvasId`, canvasId);
    if (dependsOn !== undefined && !(Array.isArray(dependsOn) && dependsOn.every((parent) => typeof parent === 'string'))) {
      throw new InvalidArgumentError(`steps.${name}.dependsOn`, 'must be a list of step names');
    }
    if (input !== undefined && typeof input !== 'function') throw new InvalidArgumentError(`steps.${name}.input`, 'must be a function of the results so far, returning the input');
  }
}

/** The options a JavaScript caller can get wrong, refused before anything runs: a misspelt policy must not quietly mean another. */
function checkOptions(options: PipelineOptions): void {
  objectArgument('options', options);
  if (options.onStepFailure !== undefined) oneOf<StepFailurePolicy>('onStepFailure', options.onStepFailure, ['abort-all', 'finish-running']);
  if (options.inDoubt !== undefined) oneOf('inDoubt', options.inDoubt, ['fail', 'start-again']);
  abortSignalArgument('detach', options.detach);
}

/**
 * The steps of a checkpoint to resume from, each entry checked: one that is not a step's entry (a
 * checkpoint edited, or of another shape) would otherwise read as never started, and its step would
 * start again beside the execution it has.
 */
function checkedResume<Name extends string>(definition: PipelineDefinition<Name>, checkpoint: PipelineCheckpoint | undefined): Readonly<Partial<Record<Name, StepCheckpoint>>> {
  const checked: Partial<Record<string, StepCheckpoint>> = {};
  if (checkpoint === undefined) return checked as Readonly<Partial<Record<Name, StepCheckpoint>>>;
  const given: unknown = checkpoint;
  const steps: unknown = typeof given === 'object' && given !== null ? (given as { readonly steps?: unknown }).steps : undefined;
  if (typeof steps !== 'object' || steps === null || Array.isArray(steps)) throw new InvalidArgumentError('resume', 'must be a checkpoint of this pipeline: { steps: { [name]: { status, executionId?, attempt?, attemptedAt? } } }');
  for (const [step, value] of Object.entries(steps as Readonly<Record<string, unknown>>)) {
    if (!Object.hasOwn(definition.steps, step)) throw new InvalidArgumentError('resume', `the checkpoint names a step "${step}" this pipeline does not have`);
    if (value === undefined) continue;
    const entry = entryOf(value);
    if (typeof entry === 'string') throw new InvalidArgumentError('resume', `the entry of step "${step}" is not one a pipeline wrote: ${entry}`);
    checked[step] = entry;
  }
  return checked as Readonly<Partial<Record<Name, StepCheckpoint>>>;
}

/** The pipeline's one follower: this subscription, holding the lead of a stored pipeline when it has one. */
function followPipeline<Name extends string>(
  client: PipelineClient,
  definition: PipelineDefinition<Name>,
  plan: PipelinePlan<Name>,
  options: PipelineOptions,
  resume: Readonly<Partial<Record<Name, StepCheckpoint>>>,
  lead: { readonly store: CheckpointStore; readonly pipelineId: string; readonly token: number; readonly cancelled: boolean } | undefined,
): Observable<PipelineEvent<Name>> {
  const { steps } = definition;
  const policy = options.onStepFailure ?? 'abort-all';
  const scheduler = options.scheduler ?? asyncScheduler;
  const attached = new Set(plan.order.filter((step) => isResumable(resume[step])));
  const inDoubt = plan.order.filter((step) => resume[step]?.status === 'starting');

  return new Observable<PipelineEvent<Name>>((subscriber) => {
    const phases = new Map<Name, StepPhase>(plan.order.map((step) => [step, 'waiting']));
    const outcomes = new Map<Name, StepOutcome<Name>>();
    const results: Partial<Record<Name, RunResult>> = {};
    const running = new Map<Name, Subscription>();
    const listening = new Subscription();
    let checkpoint: PipelineCheckpoint<Name> = { steps: { ...resume } };
    let failure: { readonly step: Name; readonly error: unknown } | undefined;
    let advancing = false;
    let again = false;
    let cancelled = false;
    // Leaving without aborting (the `detach` option, or another process took the lead): steps keep running.
    const leaving = new AbortController();
    // The store's writes, in order: a step's `running` must not overtake its `starting`.
    let writes: Promise<unknown> = Promise.resolve();
    // The entries the store may hold for a step whose write was given up (its answer an error): see writeEntry.
    const unsure = new Map<Name, readonly (StepCheckpoint | undefined)[]>();
    const telemetry = observePipeline(client, definition, options, lead?.pipelineId, scheduler.now());
    const observedSteps = new Map<Name, StepTelemetry>();
    const stepEnded = (step: Name, status: StepTelemetryEnd['status'], error?: unknown): void => {
      const observed = observedSteps.get(step);
      if (observed === undefined) return;
      observedSteps.delete(step);
      observed.end({ at: scheduler.now(), status, ...(error === undefined ? {} : { error }) });
    };
    let pipelineEnded = false;
    const pipelineEnd = (outcome: 'finished' | 'failed' | 'detached' | 'left', error?: unknown): void => {
      if (telemetry === undefined || pipelineEnded) return;
      pipelineEnded = true;
      for (const step of [...observedSteps.keys()]) stepEnded(step, 'left');
      telemetry.end({ at: scheduler.now(), outcome, ...(error === undefined ? {} : { error }) });
    };

    const record = (step: Name, entry: StepCheckpoint): Promise<void> => {
      const previous = checkpoint.steps[step];
      checkpoint = withStep(checkpoint, step, entry);
      subscriber.next({ type: 'checkpoint', checkpoint });
      if (lead === undefined) return Promise.resolve();
      const written = writes.then(async () => {
        if (await writeEntry(lead, step, previous, entry)) return;
        // The store refuses a start once the pipeline is cancelled: this one never leaves.
        if (entry.status === 'starting' && (await lead.store.load(lead.pipelineId))?.cancelRequested === true) {
          unrecord(step, entry, previous);
          cancel();
          throw new PipelineCancelledError();
        }
        // Another process leads the pipeline now: it follows the steps; this one lets go of them.
        leave();
        throw new PipelineLeadLostError();
      });
      writes = written.catch(() => undefined);
      return written;
    };

    /**
     * Moves the step in the store: true once it is written, false when the store refuses (the step
     * moved elsewhere, another process leads, a cancel came before a start). A write whose answer is
     * an error (the store away, Redis out of memory or read-only for a moment) may or may not have
     * been made: a `starting` one fails the step (nothing left, and nothing will: safe either way); any
     * other records what already happened at the service — an execution started or ended — and is made
     * again with backoff while the pipeline is followed, up to `RECORD_ATTEMPTS` times. The writes
     * after it wait (`writes`). A write given up leaves the step's entry in the store unsure
     * (`unsure`): the step's next write compares against what the store holds when that is one this
     * process may have written, never against an entry the store never got — a `finish` after a lost
     * `running` would otherwise be refused and read as the lead lost, and the step left `starting`, in
     * doubt, for whoever resumes. Bounded, so that a store that fails for good fails the next start
     * visibly instead of holding it for ever.
     */
    const writeEntry = async (owner: NonNullable<typeof lead>, step: Name, previous: StepCheckpoint | undefined, entry: StepCheckpoint): Promise<boolean> => {
      const mayHold = unsure.get(step);
      const stored = async (): Promise<StepCheckpoint | undefined> => (await owner.store.load(owner.pipelineId))?.checkpoint.steps[step];
      const written = (): boolean => {
        unsure.delete(step);
        return true;
      };
      for (let failures = 0; ; ) {
        try {
          let expected = previous;
          if (mayHold !== undefined) {
            const stands = await stored();
            if (sameEntry(stands, entry)) return written();
            if (!mayHold.some((candidate) => sameEntry(stands, candidate))) return false;
            expected = stands;
          }
          if (await owner.store.transition(owner.pipelineId, step, expected, entry, owner.token)) return written();
          // Refused, after an attempt whose answer was lost: that attempt may have written it.
          return failures > 0 && sameEntry(await stored(), entry) ? written() : false;
        } catch (error) {
          failures += 1;
          if (entry.status === 'starting' || failures >= RECORD_ATTEMPTS || !(await pauseWhileOpen(outageBackoff(failures, Math.random())))) {
            unsure.set(step, [...(mayHold ?? [previous]), entry]);
            throw error;
          }
        }
      }
    };

    /** Waits `ms` on the pipeline's scheduler: true, or false at once when the pipeline ends or is left first. */
    const pauseWhileOpen = (ms: number): Promise<boolean> =>
      new Promise((resolve) => {
        if (!open()) {
          resolve(false);
          return;
        }
        const wait = timer(ms, scheduler).subscribe(() => {
          listening.remove(wait);
          resolve(true);
        });
        wait.add(() => {
          resolve(false);
        });
        listening.add(wait);
      });

    // A record the store refused: the step stands where it stood before it.
    const unrecord = (step: Name, entry: StepCheckpoint, previous: StepCheckpoint | undefined): void => {
      if (checkpoint.steps[step] !== entry) return;
      checkpoint = previous === undefined ? { steps: Object.fromEntries(Object.entries(checkpoint.steps).filter(([name]) => name !== step)) as Partial<Record<Name, StepCheckpoint>> } : withStep(checkpoint, step, previous);
      if (open()) subscriber.next({ type: 'checkpoint', checkpoint });
    };

    // Cancelled from anywhere: every running execution aborted once, nothing more started.
    const cancel = (): void => {
      if (cancelled || !open() || leaving.signal.aborted) return;
      cancelled = true;
      // Executions resumed but not followed yet are followed only to be aborted.
      for (const step of plan.order) if (phases.get(step) === 'waiting' && attached.has(step) && resume[step]?.status === 'running') launch(step);
      abortRunning();
      for (const step of plan.order) if (phases.get(step) === 'waiting') {
        phases.set(step, 'aborted');
        outcomes.set(step, { status: 'aborted' });
      }
      advance();
    };

    const settle = (step: Name, outcome: StepOutcome<Name>): void => {
      stepEnded(step, outcome.status === 'skipped' ? 'left' : outcome.status, outcome.status === 'failed' ? outcome.error : undefined);
      running.delete(step);
      phases.set(step, outcome.status);
      outcomes.set(step, outcome);
      if (outcome.status === 'failed' && failure === undefined) {
        failure = { step, error: outcome.error };
        if (policy === 'abort-all') abortRunning();
      }
      advance();
    };

    // service.md §3.5: an abort fails the execution; unsubscribing the step's run sends it (once).
    const abortRunning = (): void => {
      for (const [step, subscription] of [...running]) {
        running.delete(step);
        subscription.unsubscribe();
        stepEnded(step, 'aborted');
        phases.set(step, 'aborted');
        outcomes.set(step, { status: 'aborted' });
        const entry = checkpoint.steps[step];
        if (entry?.status === 'running') void record(step, { ...entry, status: 'aborted' }).catch(() => undefined);
      }
    };

    const leave = (): void => {
      if (!leaving.signal.aborted) leaving.abort();
    };

    const launch = (step: Name): void => {
      phases.set(step, 'running');
      let result: RunResult | undefined;
      let attempt = 0;
      let attemptedAt = 0;
      const inputs: StepResults<Name> = { ...results };
      const resumed = resume[step];
      // Without a store the record is made at once, so a pipeline in virtual time stays synchronous.
      const beforeStart = (number: number): Observable<unknown> => {
        attempt = number;
        attemptedAt = scheduler.now();
        const written = record(step, { status: 'starting', attempt, attemptedAt });
        return lead === undefined ? of(undefined) : from(written);
      };
      const firstAttempt = resumed?.status === 'starting' ? (resumed.attempt ?? 1) + 1 : 1;
      const reattached = attached.has(step) && isResumable(resumed) ? resumed : undefined;
      const observed = telemetry?.step({ step, canvasId: steps[step].canvasId, at: scheduler.now(), ...(reattached === undefined ? {} : { resumedExecutionId: reattached.executionId }) });
      if (observed !== undefined) observedSteps.set(step, observed);
      const parent = observed?.parent === undefined ? {} : { telemetryParent: observed.parent };
      const run = stepRun(client, step, steps[step], inputs, reattached, { ...options.run, detach: leaving.signal, ...parent }, { firstAttempt, beforeStart });
      const subscription = run.subscribe({
        next: (event) => {
          if (event.type === 'started') void record(step, { executionId: event.executionId, status: 'running', ...attemptOf(resumed, attempt, attemptedAt) }).catch(() => undefined);
          if (event.type === 'finished') {
            result = event.result;
            void record(step, { executionId: event.executionId, status: event.result.status, ...attemptOf(resumed, attempt, attemptedAt) }).catch(() => undefined);
          }
          subscriber.next({ type: 'step', step, event });
        },
        error: (error: unknown) => {
          if (error instanceof PipelineLeadLostError) settle(step, { status: 'detached' });
          else if (error instanceof PipelineCancelledError) settle(step, { status: 'aborted' });
          else settle(step, { status: 'failed', error });
        },
        complete: () => {
          if (result === undefined) {
            // Detached: the run let go of its execution, which goes on.
            if (leaving.signal.aborted) {
              settle(step, { status: 'detached' });
              return;
            }
            // A run always ends with `finished` or an error; a source that broke this is a bug to show.
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
      pipelineEnd(leaving.signal.aborted ? 'detached' : failure === undefined ? 'finished' : 'failed', failure?.error);
      if (leaving.signal.aborted) {
        subscriber.next({ type: 'detached', checkpoint });
        subscriber.complete();
        return;
      }
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
      // Nothing starts once the pipeline is being left; a step launched in this pass may fail at once
      // (its input threw) and stop the pipeline.
      for (const step of moves.start) if (open() && !leaving.signal.aborted && !cancelled && stoppedBy() === undefined && phases.get(step) === 'waiting') launch(step);
      // Left: every step still waiting is left too — also one whose dependency still runs (detached, it never finishes here).
      if (leaving.signal.aborted) for (const step of plan.order) if (phases.get(step) === 'waiting') phases.set(step, 'detached');
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

    // In doubt: the start may have reached the service; it is never started again without being asked to.
    if (options.inDoubt !== 'start-again') {
      for (const step of inDoubt) {
        const entry = resume[step];
        phases.set(step, 'failed');
        const error = new StepInDoubtError(step, entry?.attemptedAt ?? 0, entry?.attempt ?? 1);
        outcomes.set(step, { status: 'failed', error });
        failure ??= { step, error };
      }
    }
    const onDetach = (): void => {
      leave();
    };
    if (options.detach?.aborted === true) leave();
    else options.detach?.addEventListener('abort', onDetach, { once: true });
    listening.add(() => options.detach?.removeEventListener('abort', onDetach));
    // Leaving: the steps' runs let go of their executions (RunOptions.detach); once all have, `detached`.
    leaving.signal.addEventListener('abort', () => {
      advance();
    }, { once: true });
    if (lead !== undefined) {
      listening.add(
        lead.store.events(lead.pipelineId).subscribe((event) => {
          if (event.type === 'cancel') cancel();
        }),
      );
    }

    // Cancelled before this process took the lead: nothing of it starts.
    if (lead?.cancelled === true) cancel();
    else advance();
    return () => {
      listening.unsubscribe();
      for (const subscription of running.values()) subscription.unsubscribe();
      running.clear();
      pipelineEnd('left');
    };
  });
}

/** The client's telemetry hook told of the pipeline, when the client has one. */
function observePipeline<Name extends string>(
  client: PipelineClient,
  definition: PipelineDefinition<Name>,
  options: PipelineOptions,
  pipelineId: string | undefined,
  at: number,
): PipelineTelemetry | undefined {
  const { name, jobId, parent } = options.telemetry ?? {};
  return client.telemetry?.pipeline({
    steps: Object.keys(definition.steps),
    at,
    ...(name === undefined ? {} : { name }),
    ...(jobId === undefined ? {} : { jobId }),
    ...(pipelineId === undefined ? {} : { pipelineId }),
    ...(parent === undefined ? {} : { parent }),
  });
}

/** How many times a step's record (other than `starting`) is written while the store answers errors: 1¼ to 2½ minutes of backoff (outageBackoff). */
const RECORD_ATTEMPTS = 10;

/** This process no longer leads the pipeline: another one claimed it, and records its steps. */
class PipelineLeadLostError extends Error {}

/** The store refused a step's start: the pipeline was cancelled. */
class PipelineCancelledError extends Error {}

/** The attempt of a step's entry: the one being run, or the one resumed. */
function attemptOf(resumed: StepCheckpoint | undefined, attempt: number, attemptedAt: number): Pick<StepCheckpoint, 'attempt' | 'attemptedAt'> {
  if (attempt > 0) return { attempt, attemptedAt };
  return { ...(resumed?.attempt === undefined ? {} : { attempt: resumed.attempt }), ...(resumed?.attemptedAt === undefined ? {} : { attemptedAt: resumed.attemptedAt }) };
}
