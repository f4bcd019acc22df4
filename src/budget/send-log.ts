/**
 * The times of our recent sends, oldest first, in a ring buffer: the day's count (which the pacer
 * does not bound), the k-th latest send (when a window can hold one more) and the "used in this
 * window" figures come from it. Appending and pruning are O(1) amortised, the k-th latest O(1), a
 * count since any time O(log n) by binary search. It holds at most a day of sends.
 *
 * A send at `t` has left a window of `w` at `now` when `t + w <= now`, always computed so (never as
 * `t <= now − w`): `readyAt` names `t + w` as the time one more may go, and with times that are not
 * whole milliseconds the two forms can differ by a rounding error, which would let a send go into a
 * window that still counts the one it was waiting for.
 */
export class SendLog {
  #ring = new Float64Array(64);
  #start = 0;
  #length = 0;

  /** How many sends it holds. */
  get length(): number {
    return this.#length;
  }

  /** Appends a send at `at` (never earlier than the last: the budget's clock does not step back). */
  push(at: number): void {
    if (this.#length === this.#ring.length) this.#grow();
    this.#ring[(this.#start + this.#length) % this.#ring.length] = at;
    this.#length += 1;
  }

  /** Drops sends older than `windowMs` before `now`: they can no longer share a window with a future send. */
  prune(now: number, windowMs: number): void {
    while (this.#length > 0 && this.#at(0) + windowMs <= now) {
      this.#start = (this.#start + 1) % this.#ring.length;
      this.#length -= 1;
    }
  }

  /** How many sends happened in the `windowMs` before `now` (`now − windowMs` excluded). */
  within(now: number, windowMs: number): number {
    return this.#length - this.leftBy(now, windowMs);
  }

  /** How many of the sends it holds have left a window of `windowMs` by `at`. */
  leftBy(at: number, windowMs: number): number {
    let low = 0;
    let high = this.#length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (this.#at(middle) + windowMs <= at) low = middle + 1;
      else high = middle;
    }
    return low;
  }

  /** The time of the `k`-th latest send (1 is the latest), if there were that many. */
  latest(k: number): number | undefined {
    return k >= 1 && k <= this.#length ? this.#at(this.#length - k) : undefined;
  }

  /**
   * When a window of `windowMs` ending at the next send can hold it without exceeding `limit`: once
   * the `limit`-th latest send has left the window.
   */
  readyAt(limit: number, windowMs: number): number {
    const blocking = this.latest(limit);
    return blocking === undefined ? Number.NEGATIVE_INFINITY : blocking + windowMs;
  }

  #at(index: number): number {
    return this.#ring[(this.#start + index) % this.#ring.length] ?? Number.NaN;
  }

  #grow(): void {
    const bigger = new Float64Array(this.#ring.length * 2);
    for (let index = 0; index < this.#length; index++) bigger[index] = this.#at(index);
    this.#ring = bigger;
    this.#start = 0;
  }
}
