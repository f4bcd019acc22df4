import { CALL_PRIORITIES, type CallPriority } from '../domain/endpoints.js';
import { InvalidArgumentError } from '../errors/validation-errors.js';
import type { CallOptions } from './calls.js';
import { objectArgument } from './object-argument.js';

/**
 * A call's options, checked: `signal`, `priority` and `dueAt` as the transport's `RequestSpec` takes them. A
 * priority outside {@link CALL_PRIORITIES} (`'abort'` from plain JavaScript, say) is an
 * `InvalidArgumentError`: the classes above are earned by the endpoint, not asked for.
 *
 * @example
 * ```ts
 * return send({ endpoint: 'detail', method: 'get', path, schema, ...callOptions(options) });
 * ```
 */
export function callOptions(options: CallOptions | undefined): { readonly signal: AbortSignal | undefined; readonly priority: CallPriority | undefined; readonly dueAt: number | undefined } {
  const { signal, priority, dueAt } = objectArgument('options', options);
  const due: unknown = dueAt;
  if (due !== undefined && !(typeof due === 'number' && Number.isFinite(due))) throw new InvalidArgumentError('options.dueAt', `must be a finite number of ms (got ${typeof due === 'number' ? String(due) : typeof due})`);
  const given: unknown = priority;
  if (given !== undefined && !(CALL_PRIORITIES as readonly unknown[]).includes(given)) {
    throw new InvalidArgumentError('options.priority', `must be one of ${CALL_PRIORITIES.join(', ')} (got ${typeof given === 'string' ? given : typeof given})`);
  }
  return { signal, priority, dueAt };
}
