import { filter, type OperatorFunction } from 'rxjs';
import type { RunEvent, RunEventOf, RunEventType } from './events.js';

/**
 * Keeps the events of the given types, narrowed to them.
 *
 * @example
 * ```ts
 * run$.pipe(ofType('message')).subscribe((event) => process.stdout.write(event.delta));
 * run$.pipe(ofType('node', 'finished')).subscribe((event) => console.log(event.type));
 * ```
 */
export function ofType<T extends RunEventType>(...types: readonly [T, ...T[]]): OperatorFunction<RunEvent, RunEventOf<T>> {
  const wanted: ReadonlySet<RunEventType> = new Set(types);
  return filter((event): event is RunEventOf<T> => wanted.has(event.type));
}
