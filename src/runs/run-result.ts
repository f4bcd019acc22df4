import { lastValueFrom, map, type Observable } from 'rxjs';
import type { RunResult } from '../http/model.js';
import type { RunEvent } from './events.js';
import { ofType } from './of-type.js';

/**
 * The end of a run as a Promise: resolves with the `RunResult` of `finished`, rejects as the run
 * errors (`WorkflowFailedError` for a failed workflow unless `failOnWorkflowError: false`, transport
 * errors, `RunTimeoutError`), and rejects with rxjs `EmptyError` if the run completed without one.
 *
 * @example
 * ```ts
 * const result = await client.run('c-1').pipe(runResult());
 * console.log(result.files.map((file) => file.url));
 * ```
 */
export function runResult(): (source: Observable<RunEvent>) => Promise<RunResult> {
  return (source) =>
    lastValueFrom(
      source.pipe(
        ofType('finished'),
        map((event) => event.result),
      ),
    );
}
