import type { RunResult } from '../http/model.js';
import type { RunInput } from '../runs/create-runs.js';

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
export type ChainInput = (result: RunResult, context: StepContext) => RunInput | PromiseLike<RunInput>;
