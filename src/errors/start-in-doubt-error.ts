import { FlowstreamError, guardFor } from './flowstream-error.js';

/**
 * A run with an idempotency key (`RunOptions.idempotencyKey`) found the key claimed by a start whose
 * answer was never recorded: the process that sent it died first (or its start failed in a way that
 * may have reached the service). Its execution may exist and run, and the service offers no way to
 * find it (service.md §2.2, §3.8), so the run does not start it again: it fails with this error,
 * which names the key and when the claim was made, so a person can look before anything runs twice.
 * The key is free again once its `idempotencyTtlMs` has passed from that claim.
 *
 * @example
 * ```ts
 * client.run('c-1', { variables }, { idempotencyKey: `invoice-${invoiceId}` }).subscribe({
 *   error: (e) => isStartInDoubtError(e) && alert(`Check invoice ${invoiceId}: its run may have started at ${new Date(e.claimedAt).toISOString()}`),
 * });
 * ```
 */
export class StartInDoubtError extends FlowstreamError {
  static override readonly kind: string = 'StartInDoubtError';

  /** The idempotency key of the start in doubt. */
  readonly key: string;
  /** When its start was claimed (ms since the epoch, on the clock of the client that claimed it). */
  readonly claimedAt: number;

  constructor(key: string, claimedAt: number) {
    super(
      `The start with idempotency key "${key}" (claimed at ${new Date(claimedAt).toISOString()}) may have reached the service, but no answer was recorded; it is not started again while the key lives`,
      'START_IN_DOUBT',
    );
    this.key = key;
    this.claimedAt = claimedAt;
  }
}

/**
 * True for a {@link StartInDoubtError} from any realm.
 *
 * @example
 * ```ts
 * if (isStartInDoubtError(error)) console.log(error.key, error.claimedAt);
 * ```
 */
export const isStartInDoubtError = /* @__PURE__ */ guardFor(StartInDoubtError);
