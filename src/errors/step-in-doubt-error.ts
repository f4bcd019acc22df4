import { FlowstreamError, guardFor } from './flowstream-error.js';

/**
 * A pipeline step's start may have reached the service, but its answer was lost (the process that
 * sent it died first): its execution may exist and run, and the service offers no way to find it
 * (service.md §2.2, §3.8). On resume such a step is not started again unless the pipeline says so
 * (`inDoubt: 'start-again'`): it fails with this error, which names the step and when the start was
 * attempted, so a person can look before anything runs twice.
 *
 * @example
 * ```ts
 * runPipeline(client, definition, { resume, inDoubt: 'fail' }).subscribe({
 *   error: (e) => isStepInDoubtError(e) && alert(`Check step ${e.step}, started at ${new Date(e.attemptedAt).toISOString()}`),
 * });
 * ```
 */
export class StepInDoubtError extends FlowstreamError {
  static override readonly kind: string = 'StepInDoubtError';

  readonly step: string;
  /** When the start was attempted (ms since the epoch, on the pipeline's clock). */
  readonly attemptedAt: number;
  /** Which attempt of the step it was (1 for its first start). */
  readonly attempt: number;

  constructor(step: string, attemptedAt: number, attempt: number) {
    super(
      `Step ${step}: its start (attempt ${attempt}, at ${new Date(attemptedAt).toISOString()}) may have reached the service, but no answer was recorded; it is not started again unless inDoubt is 'start-again'`,
      'STEP_IN_DOUBT',
    );
    this.step = step;
    this.attemptedAt = attemptedAt;
    this.attempt = attempt;
  }
}

/**
 * True for a {@link StepInDoubtError} from any realm.
 *
 * @example
 * ```ts
 * if (isStepInDoubtError(error)) console.log(error.step, error.attemptedAt);
 * ```
 */
export const isStepInDoubtError = /* @__PURE__ */ guardFor(StepInDoubtError);
