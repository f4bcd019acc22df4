/**
 * The fault soak's runs, drawn from a seeded generator: when each run is subscribed and whether (and
 * when) its subscriber leaves before the end. Pure; times are emulator ms from the soak's start.
 */

/** One run of the soak. */
export interface PlannedRun {
  readonly index: number;
  /** The run's one variable, unique in the soak: it ties the emulator's execution to the run. */
  readonly key: string;
  readonly startAtMs: number;
  /** When the subscriber leaves, after subscribing (0: at once, the start not yet answered); undefined: it stays to the end. */
  readonly leaveAfterMs: number | undefined;
}

export interface RunPlanOptions {
  readonly runs: number;
  /** Starts are spread evenly at random over [0, arrivalMs]. */
  readonly arrivalMs: number;
  /** Share of runs whose subscriber leaves. */
  readonly leaveShare: number;
  /** Share of the leaving ones that leave at once, during the start. */
  readonly leaveAtOnceShare: number;
  /** The others leave after up to this long. */
  readonly leaveWithinMs: number;
  /** Prefix of every key, so that two soaks on one emulator never share one. */
  readonly prefix: string;
}

/**
 * Draws the plan, in order of start.
 *
 * @example
 * runPlan(mulberry32(7), { runs: 3, arrivalMs: 60_000, leaveShare: 0.5, leaveAtOnceShare: 0.1, leaveWithinMs: 50_000, prefix: 's7' });
 */
export function runPlan(random: () => number, options: RunPlanOptions): PlannedRun[] {
  const drawn = Array.from({ length: options.runs }, () => {
    const startAtMs = Math.round(random() * options.arrivalMs);
    const leaves = random() < options.leaveShare;
    const atOnce = random() < options.leaveAtOnceShare;
    const after = Math.round(random() * options.leaveWithinMs);
    return { startAtMs, leaveAfterMs: leaves ? (atOnce ? 0 : after) : undefined };
  });
  return drawn
    .sort((a, b) => a.startAtMs - b.startAtMs)
    .map((run, index) => ({ index, key: `${options.prefix}-${String(index)}`, ...run }));
}
