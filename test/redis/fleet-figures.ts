/**
 * What a fleet of processes on one account did, read from the emulator's request log alone: how often
 * each run's status was read, how evenly runs and processes were served, how much of the account's
 * rate was used while runs waited, and how many requests the service refused. Pure: the fleet test and
 * `bench/fleet.ts` gather the log and the window, these functions only count.
 */

/** The part of a request record the figures read (the emulator's `RequestRecord` has all of it). */
export interface LoggedRequest {
  readonly endpoint: string;
  readonly status: number;
  readonly emulatorTime: number;
  readonly executionId: string | undefined;
}

/** A span of emulator time, `from` included, `to` excluded. */
export interface Span {
  readonly from: number;
  readonly to: number;
}

export interface FleetFigures {
  /** Per process (in the order given), per run, the mean time between two status reads in the span, emulator ms. */
  readonly runIntervalsMs: readonly (readonly number[])[];
  /** Per process, the mean of its runs' intervals; `null` for a process with none measured. */
  readonly processMeansMs: readonly (number | null)[];
  /** Largest ÷ smallest of the per-process means (1 = every process served alike). */
  readonly processSpread: number | null;
  /** Largest ÷ smallest of every run's interval. */
  readonly runSpread: number | null;
  /** Requests the service received in the span ÷ what the account's rate allows over it. */
  readonly utilisation: number;
  /** Requests answered 429 over the whole log. */
  readonly rateLimited: number;
  readonly requests: number;
}

/** The aims of a fleet: no 429, the account used at ≥ 85% while runs wait, runs and processes read within ×1.3 of each other. */
export const FLEET_AIMS = { utilisation: 0.85, spread: 1.3 } as const;

/** The aims `figures` miss, in words (`utilisation 81%`, `runs ×1.42`); empty when every one is met. */
export function missedAims(figures: FleetFigures, aims: { readonly utilisation: number; readonly spread: number } = FLEET_AIMS): readonly string[] {
  const spread = (name: string, value: number | null): string[] => (value === null || value > aims.spread ? [`${name} ×${value === null ? '—' : value.toFixed(2)}`] : []);
  return [
    ...(figures.rateLimited > 0 ? [`${figures.rateLimited} × 429`] : []),
    ...(figures.utilisation < aims.utilisation ? [`utilisation ${(figures.utilisation * 100).toFixed(0)}%`] : []),
    ...spread('processes', figures.processSpread),
    ...spread('runs', figures.runSpread),
  ];
}

/** Requests of `status` arriving in `span`, by emulator time, for one execution. */
const statusReadsOf = (requests: readonly LoggedRequest[], executionId: string, span: Span): number[] =>
  requests
    .filter((request) => request.executionId === executionId && request.endpoint === 'status' && request.emulatorTime >= span.from && request.emulatorTime < span.to)
    .map((request) => request.emulatorTime)
    .sort((a, b) => a - b);

/** The mean time between consecutive status reads of `executionId` in `span`; `undefined` with fewer than `minReads`. */
export function meanStatusInterval(requests: readonly LoggedRequest[], executionId: string, span: Span, minReads = 3): number | undefined {
  const reads = statusReadsOf(requests, executionId, span);
  if (reads.length < Math.max(2, minReads)) return undefined;
  return (reads.at(-1)! - reads[0]!) / (reads.length - 1);
}

/** Largest ÷ smallest; `null` when there is nothing to compare. */
export function spreadOf(values: readonly number[]): number | null {
  if (values.length === 0) return null;
  return Math.max(...values) / Math.min(...values);
}

/** The most requests in any window of `windowMs` (sliding, `from` included, `from + windowMs` excluded). */
export function busiestWindow(times: readonly number[], windowMs = 60_000): number {
  const sorted = [...times].sort((a, b) => a - b);
  let most = 0;
  for (let first = 0, last = 0; last < sorted.length; last += 1) {
    while (sorted[last]! - sorted[first]! >= windowMs) first += 1;
    most = Math.max(most, last - first + 1);
  }
  return most;
}

/**
 * The longest time between two requests (or from the span's start to the first, or from the last to
 * its end) within `span`: `ms` long from `from`. A fleet that stops sending for a whole window (the
 * service's count higher than the budget's, so that every process waits the window out) shows here.
 */
export function longestQuiet(times: readonly number[], span: Span): { readonly from: number; readonly ms: number } {
  const inSpan = times.filter((time) => time >= span.from && time < span.to).sort((a, b) => a - b);
  const edges = [span.from, ...inSpan, span.to];
  let longest = { from: span.from, ms: 0 };
  for (let index = 1; index < edges.length; index += 1) {
    const ms = edges[index]! - edges[index - 1]!;
    if (ms > longest.ms) longest = { from: edges[index - 1]!, ms };
  }
  return longest;
}

/**
 * The figures of a fleet: `runsByProcess` lists each process's execution ids (a process killed or
 * left out of the fairness figures simply is not listed); `steady` is the span in which every run
 * listed is alive and waiting for reads; `perMinute` is the account's rate.
 */
export function fleetFigures(requests: readonly LoggedRequest[], runsByProcess: readonly (readonly string[])[], steady: Span, perMinute: number): FleetFigures {
  const runIntervalsMs = runsByProcess.map((ids) => ids.flatMap((id) => meanStatusInterval(requests, id, steady) ?? []));
  const processMeansMs = runIntervalsMs.map((intervals) => (intervals.length === 0 ? null : intervals.reduce((sum, value) => sum + value, 0) / intervals.length));
  const sent = requests.filter((request) => request.emulatorTime >= steady.from && request.emulatorTime < steady.to).length;
  const allowed = (perMinute * Math.max(0, steady.to - steady.from)) / 60_000;
  return {
    runIntervalsMs,
    processMeansMs,
    processSpread: spreadOf(processMeansMs.filter((mean): mean is number => mean !== null)),
    runSpread: spreadOf(runIntervalsMs.flat()),
    utilisation: allowed === 0 ? 0 : sent / allowed,
    rateLimited: requests.filter((request) => request.status === 429).length,
    requests: requests.length,
  };
}

/**
 * Reads of one process's executions sent strictly within another process's start phase (its first
 * start to its last, by the emulator's clock). `started`: each process's execution ids.
 */
export function readsWhileStarting(requests: readonly LoggedRequest[], started: readonly (readonly string[])[]): number {
  const owner = new Map<string, number>();
  started.forEach((ids, index) => {
    for (const id of ids) owner.set(id, index);
  });
  const phases = started.map((ids) => {
    const own = new Set(ids);
    const times = requests.filter((request) => request.endpoint === 'run' && own.has(request.executionId ?? '')).map((request) => request.emulatorTime);
    return times.length === 0 ? undefined : { from: Math.min(...times), to: Math.max(...times) };
  });
  return requests.filter((request) => {
    if (request.endpoint !== 'status' && request.endpoint !== 'output') return false;
    const reader = owner.get(request.executionId ?? '');
    return phases.some((phase, index) => phase !== undefined && index !== reader && request.emulatorTime > phase.from && request.emulatorTime < phase.to);
  }).length;
}
