import { last, lastValueFrom, map, type Observable, type OperatorFunction, pipe } from 'rxjs';
import type { RunResult } from '../domain/model.js';
import type { RunEvent } from './events.js';
import { ofType } from './of-type.js';

/**
 * The end of a run as a Promise: resolves with the `RunResult` of `finished`, rejects as the run
 * errors (`WorkflowFailedError` for a failed workflow unless `failOnWorkflowError: false`, transport
 * errors, `RunTimeoutError`), and rejects with rxjs `EmptyError` if the run completed without one.
 * Call it with the run, or without arguments for a function to hand to rxjs `pipe()`.
 *
 * @example
 * ```ts
 * const result = await runResult(client.run('c-1'));
 * const later = pipe(shareRun(), runResult())(client.run('c-2'));
 * console.log(result.files.map((file) => file.url));
 * ```
 */
export function runResult(source: Observable<RunEvent>): Promise<RunResult>;
export function runResult(): (source: Observable<RunEvent>) => Promise<RunResult>;
export function runResult(
  source?: Observable<RunEvent>,
): Promise<RunResult> | ((source: Observable<RunEvent>) => Promise<RunResult>) {
  return source === undefined ? resultOf : resultOf(source);
}

function resultOf(source: Observable<RunEvent>): Promise<RunResult> {
  return lastValueFrom(source.pipe(toRunResult()));
}

/** The same as an operator: the run's events become its one `RunResult`, with the same errors. */
export function toRunResult(): OperatorFunction<RunEvent, RunResult> {
  return pipe(
    ofType('finished'),
    last(),
    map((event) => event.result),
  );
}
