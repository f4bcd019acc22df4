import type { RunEvent } from './events.js';
import type { ExecutionView } from './execution-view.js';

/** Something odd in a reading, for the logger: the differ stays pure and the shell logs. */
export interface DiffWarning {
  readonly message: string;
  readonly meta: Readonly<Record<string, unknown>>;
}

/** What one reading changed: the events to emit, in order, and the view to compare the next reading to. */
export interface ViewDiff {
  readonly view: ExecutionView;
  readonly events: readonly RunEvent[];
  readonly warnings: readonly DiffWarning[];
}

/**
 * Collects warnings, each odd reading once per run: the set of reported keys lives in the view, so an
 * unknown status seen on every poll is logged the first time only.
 */
export class WarningLog {
  readonly warnings: DiffWarning[] = [];
  readonly #reported: Set<string>;

  constructor(reported: ReadonlySet<string>) {
    this.#reported = new Set(reported);
  }

  once(key: string, message: string, meta: Readonly<Record<string, unknown>>): void {
    if (this.#reported.has(key)) return;
    this.#reported.add(key);
    this.warnings.push({ message, meta });
  }

  get reported(): ReadonlySet<string> {
    return this.#reported;
  }
}
