/**
 * The times of our recent sends, oldest first: the day's count (which the pacer does not bound) and
 * the "used in this window" figure for UIs come from it.
 *
 * @example
 * ```ts
 * const log = logSend(pruneSendLog(previous, now, limits.dayWindowMs), now);
 * ```
 */
export type SendLog = readonly number[];

/**
 * Drops sends older than `windowMs`: they can no longer share a window with a future send.
 *
 * @example
 * ```ts
 * pruneSendLog([0, 10, 20], 25, 10); // [20]
 * ```
 */
export function pruneSendLog(log: SendLog, now: number, windowMs: number): SendLog {
  const first = firstWithin(log, now, windowMs);
  return first === 0 ? log : log.slice(first);
}

/**
 * The log with a send at `now` appended.
 *
 * @example
 * ```ts
 * logSend([1, 2], 3); // [1, 2, 3]
 * ```
 */
export function logSend(log: SendLog, now: number): SendLog {
  return [...log, now];
}

/**
 * How many sends happened in the `windowMs` before `now` (`now − windowMs` excluded).
 *
 * @example
 * ```ts
 * sendsWithin([0, 10, 20], 25, 10); // 1
 * ```
 */
export function sendsWithin(log: SendLog, now: number, windowMs: number): number {
  return log.length - firstWithin(log, now, windowMs);
}

/**
 * When a window of `windowMs` ending at the next send can hold it without exceeding `limit`: once
 * the `limit`-th most recent send has left the window.
 *
 * @example
 * ```ts
 * logReadyAt([0, 10, 20], 2, 100); // 110: the send at 10 must leave the window first
 * ```
 */
export function logReadyAt(log: SendLog, limit: number, windowMs: number): number {
  const blocking = log[log.length - limit];
  return blocking === undefined ? Number.NEGATIVE_INFINITY : blocking + windowMs;
}

/** Index of the first send after `now − windowMs` (binary search: the log can hold a day of sends). */
function firstWithin(log: SendLog, now: number, windowMs: number): number {
  const after = now - windowMs;
  let low = 0;
  let high = log.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if ((log[middle] ?? Number.POSITIVE_INFINITY) <= after) low = middle + 1;
    else high = middle;
  }
  return low;
}
