/** service.md §2.2: identical runs within 1 s are refused. */
export const DUPLICATE_RUN_WINDOW_MS = 1_000;

/** Remembers recent runs by canvas and exact body (key order included, service.md §2.2). */
export class RunDebounce {
  readonly #markedAt = new Map<string, number>();

  /**
   * Marks a run; true when an identical one was marked less than the window ago. The mark of the
   * first run stands: a refused duplicate does not extend the window.
   */
  isDuplicate(canvasId: string, body: string, now: number): boolean {
    const key = `${canvasId}\n${body}`;
    for (const [stale, at] of this.#markedAt) if (now - at >= DUPLICATE_RUN_WINDOW_MS) this.#markedAt.delete(stale);
    if (this.#markedAt.has(key)) return true;
    this.#markedAt.set(key, now);
    return false;
  }
}
