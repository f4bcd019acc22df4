import { defer, from, map, mergeMap, type Observable, type ObservableInput } from 'rxjs';
import { InvalidArgumentError, objectArgument, shownType } from '../errors/validation-errors.js';
import type { RunResult } from '../domain/model.js';
import type { RunInput } from '../runs/runs.js';
import type { CanvasId, WorkflowInput } from '../domain/workflows.js';
import type { RunOptions } from '../runs/run-lifecycle.js';
import { toRunResult } from '../runs/events.js';
import { inInputOrder } from './in-input-order.js';
import { checkPipelineClient, type PipelineClient } from './pipeline-client.js';
import { retryFailedWorkflow } from './retry-failed-workflow.js';

/**
 * Options of {@link runEach}.
 *
 * @example
 * ```ts
 * const options: RunEachOptions = { concurrency: 5, order: 'completion', retry: 1, run: { output: 'final' } };
 * ```
 */
export interface RunEachOptions {
  /** How many executions run at once (default 5). The client's budget paces their requests either way. */
  readonly concurrency?: number;
  /** `input` (default): results in the order of the inputs. `completion`: each as soon as it finishes. */
  readonly order?: 'input' | 'completion';
  /** Re-run a failed workflow up to this many times (default 0). */
  readonly retry?: number;
  /** Options of every run; `failOnWorkflowError: false` turns failed workflows into results instead of an error. */
  readonly run?: RunOptions;
}

/**
 * One finished run of {@link runEach}.
 *
 * @example
 * ```ts
 * runEach(client, 'c-1', inputs).subscribe(({ index, result }) => console.log(index, result.status));
 * ```
 */
export interface EachResult {
  /** The position of the input, from 0. */
  readonly index: number;
  readonly input: RunInput;
  readonly result: RunResult;
}

/** Defaults of {@link RunEachOptions}. */
const EACH_DEFAULTS = { concurrency: 5, order: 'input', retry: 0 } as const;

/**
 * Fans a workflow out over many inputs: one run per input, at most `concurrency` executions at once,
 * all through the client's one request budget (so the fan-out does not draw 429s, service.md §2.1).
 * Emits one {@link EachResult} per input and completes after the last. A workflow that fails (after
 * its retries) errors the whole fan-out with its `WorkflowFailedError`: every running execution is
 * aborted (once) and no further input starts — as on unsubscribe.
 *
 * @example
 * ```ts
 * const topics = ['tides', 'moons', 'comets'];
 * runEach(client, 'c-brief', topics.map((topic) => ({ variables: { topic } })), { concurrency: 2 })
 *   .subscribe(({ index, result }) => console.log(topics[index], outputText(result)));
 * ```
 */
export function runEach<Id extends CanvasId>(client: PipelineClient, canvasId: Id, inputs: ObservableInput<WorkflowInput<Id>>, options: RunEachOptions = {}): Observable<EachResult> {
  checkPipelineClient(client);
  objectArgument('options', options);
  const concurrency = options.concurrency ?? EACH_DEFAULTS.concurrency;
  const order = options.order ?? EACH_DEFAULTS.order;
  const retries = options.retry ?? EACH_DEFAULTS.retry;
  if (!(concurrency === Number.POSITIVE_INFINITY || (Number.isInteger(concurrency) && concurrency >= 1))) {
    throw new InvalidArgumentError('concurrency', `must be a whole number ≥ 1 or Infinity, got ${concurrency}`);
  }
  const retrying = retryFailedWorkflow<RunResult>(retries);
  const source = inputsOf(inputs);
  return defer(() => {
    const results = source.pipe(
      mergeMap(
        (input, index) =>
          client.run<string>(canvasId, input, options.run).pipe(
            toRunResult(),
            retrying,
            map((result): EachResult => ({ index, input, result })),
          ),
        concurrency,
      ),
    );
    switch (order) {
      case 'input':
        return results.pipe(inInputOrder());
      case 'completion':
        return results;
      default: {
        const unknown: never = order;
        throw new InvalidArgumentError('order', `must be 'input' or 'completion', got ${String(unknown)}`);
      }
    }
  });
}

/** The inputs as an Observable, or an `InvalidArgumentError` at the call when they are nothing RxJS can read. */
function inputsOf<T>(inputs: ObservableInput<T>): Observable<T> {
  try {
    // `from` only wraps its argument; it reads nothing until subscribed.
    return from(inputs);
  } catch {
    const given: unknown = inputs;
    throw new InvalidArgumentError('inputs', `must be an array, an iterable, an async iterable, a Promise or an Observable of inputs (got ${shownType(given)})`);
  }
}
