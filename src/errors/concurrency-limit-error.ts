import { FlowstreamError, guardFor } from './flowstream-error.js';

/**
 * A run limiter in `reject` mode refused a run: `limit` runs are already active for `key`. Nothing
 * was started.
 *
 * @example
 * ```ts
 * limiter.run(userId, () => client.run('c-1')).subscribe({
 *   error: (e) => isConcurrencyLimitError(e) && reply(`You already have ${e.limit} runs going.`),
 * });
 * ```
 */
export class ConcurrencyLimitError extends FlowstreamError {
  static override readonly kind: string = 'ConcurrencyLimitError';

  readonly key: string;
  readonly limit: number;

  constructor(key: string, limit: number) {
    super(`${limit} run${limit === 1 ? ' is' : 's are'} already active for "${key}"; the run limiter refuses more`, 'CONCURRENCY_LIMIT');
    this.key = key;
    this.limit = limit;
  }
}

/**
 * True for a {@link ConcurrencyLimitError} from any realm.
 *
 * @example
 * ```ts
 * if (isConcurrencyLimitError(error)) console.log(error.key, error.limit);
 * ```
 */
export const isConcurrencyLimitError = /* @__PURE__ */ guardFor(ConcurrencyLimitError);
