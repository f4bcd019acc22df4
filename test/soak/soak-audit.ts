/**
 * The fault soak's accounting, pure: from how each run ended in the client and from the emulator's own
 * record of every execution and of every abort it received, which promises held and which broke.
 *
 * The promises: every execution ends exactly once, finished or aborted, as its run asked — a run whose
 * subscriber left before `finished` has its execution aborted once (an abort the service answered); a
 * run whose subscriber stayed follows its execution to `finished` through every outage, with no abort;
 * no run starts two executions; none is left running; and no run is ended by the client's own failure
 * once its execution exists (a start refused by a failing service, before any execution, is the one
 * error a run may end with).
 */

/** The executions' statuses, as the emulator reports them (service.md §3.1). */
export type ExecutionStatus = 'init' | 'executing' | 'finish' | 'failed';

/** How a run ended, as its client saw it. */
export type RunEnding =
  | { readonly kind: 'finished'; readonly executionId: string; readonly status: 'finish' | 'failed' }
  /** The subscriber left while the run was still open: the run must abort its execution, if any. */
  | { readonly kind: 'left' }
  | { readonly kind: 'errored'; readonly error: RunError }
  /** The client never said: it died or hung before the run ended. */
  | { readonly kind: 'unsettled' };

/** What the client saw of an error that ended a run. */
export interface RunError {
  readonly name: string;
  readonly code: string | undefined;
  /** The request that failed last (`run` for a start). */
  readonly endpoint: string | undefined;
  readonly executionId: string | undefined;
  readonly message: string;
}

export interface AuditedRun {
  readonly key: string;
  readonly ending: RunEnding;
}

export interface AuditedExecution {
  readonly executionId: string;
  /** The key of the run that started it (its variable), if it has one. */
  readonly runKey: string | undefined;
  /** Its status at the end of the soak. */
  readonly status: ExecutionStatus;
}

/** One abort request the emulator received: `answered` when it reached the service (HTTP 200). */
export interface AuditedAbort {
  readonly executionId: string;
  readonly answered: boolean;
}

/** Broken promises, each with the run keys or execution ids concerned. */
export interface SoakViolations {
  /** A run with more than one execution. */
  readonly startedTwice: readonly string[];
  /** An execution no run of the soak asked for. */
  readonly strayExecutions: readonly string[];
  /** An execution still executing at the end. */
  readonly leftRunning: readonly string[];
  /** A run that left before `finished`, whose execution the service was never asked to abort. */
  readonly abortsLost: readonly string[];
  /** An execution aborted more than once. */
  readonly abortedTwice: readonly string[];
  /** An execution aborted though its run did not leave. */
  readonly abortedUnasked: readonly string[];
  /** A run whose execution exists but that did not follow it to `finished` (it errored). */
  readonly notFollowed: readonly string[];
  /** A run that stayed and saw its execution end otherwise than `finish` (the soak's workflow never fails). */
  readonly notFinished: readonly string[];
  /** A run ended by an error other than a start refused by the service (e.g. the budget gave up). */
  readonly failedWithoutExecution: readonly string[];
  /** A run the client never reported ended. */
  readonly unsettled: readonly string[];
}

export interface SoakAudit {
  readonly runs: number;
  readonly executions: number;
  readonly endings: { readonly finished: number; readonly left: number; readonly errored: number; readonly unsettled: number };
  /** Starts the failing service refused (5xx, dropped): the run errored, no execution exists. */
  readonly startsRefused: number;
  /** Abort requests received, and those that reached the service. */
  readonly aborts: { readonly sent: number; readonly answered: number };
  /** How many runs ended with each error code. */
  readonly errorsByCode: Readonly<Record<string, number>>;
  readonly violations: SoakViolations;
  /** Total count of broken promises. */
  readonly broken: number;
}

/** Each kind of broken promise with its list. */
/** The audit of a soak that kept every promise. */
export const NO_VIOLATIONS: SoakViolations = { startedTwice: [], strayExecutions: [], leftRunning: [], abortsLost: [], abortedTwice: [], abortedUnasked: [], notFollowed: [], notFinished: [], failedWithoutExecution: [], unsettled: [] };

export function violationLists(violations: SoakViolations): [name: keyof SoakViolations, list: readonly string[]][] {
  return (Object.keys(violations) as (keyof SoakViolations)[]).map((name) => [name, violations[name]]);
}

/** A start's failure that proves nothing was started: the service answered 5xx, or its connection dropped. */
const START_REFUSALS = new Set(['SERVER_ERROR', 'NETWORK_ERROR']);

function countBy<T>(items: readonly T[], keyOf: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) groups.set(keyOf(item), [...(groups.get(keyOf(item)) ?? []), item]);
  return groups;
}

/**
 * Audits one soak.
 *
 * @example
 * auditSoak([{ key: 'k-0', ending: { kind: 'left' } }], [{ executionId: 'we-1', runKey: 'k-0', status: 'failed' }], [{ executionId: 'we-1', answered: true }]);
 * // { …, broken: 0 }
 */
export function auditSoak(runs: readonly AuditedRun[], executions: readonly AuditedExecution[], aborts: readonly AuditedAbort[]): SoakAudit {
  const executionsByRun = countBy(executions, (execution) => execution.runKey ?? '');
  const answeredAborts = countBy(
    aborts.filter((abort) => abort.answered),
    (abort) => abort.executionId,
  );
  const runKeys = new Set(runs.map((run) => run.key));

  const startedTwice: string[] = [];
  const abortsLost: string[] = [];
  const abortedTwice: string[] = [];
  const abortedUnasked: string[] = [];
  const notFollowed: string[] = [];
  const notFinished: string[] = [];
  const failedWithoutExecution: string[] = [];
  const unsettled: string[] = [];
  let startsRefused = 0;

  for (const run of runs) {
    const own = executionsByRun.get(run.key) ?? [];
    if (own.length > 1) startedTwice.push(run.key);
    const { ending } = run;
    for (const execution of own) {
      const abortCount = answeredAborts.get(execution.executionId)?.length ?? 0;
      if (abortCount > 1) abortedTwice.push(execution.executionId);
      if (ending.kind === 'left') {
        if (abortCount === 0) abortsLost.push(run.key);
      } else if (abortCount > 0) abortedUnasked.push(execution.executionId);
    }
    switch (ending.kind) {
      case 'finished':
        if (ending.status !== 'finish') notFinished.push(run.key);
        break;
      case 'left':
        break;
      case 'errored':
        if (own.length > 0) notFollowed.push(run.key);
        else if (ending.error.endpoint === 'run' && START_REFUSALS.has(ending.error.code ?? '')) startsRefused += 1;
        else failedWithoutExecution.push(run.key);
        break;
      case 'unsettled':
        unsettled.push(run.key);
        break;
    }
  }

  const strayExecutions = executions.filter((execution) => execution.runKey === undefined || !runKeys.has(execution.runKey)).map((execution) => execution.executionId);
  const leftRunning = executions.filter((execution) => execution.status === 'executing' || execution.status === 'init').map((execution) => execution.executionId);
  const violations: SoakViolations = { startedTwice, strayExecutions, leftRunning, abortsLost, abortedTwice, abortedUnasked, notFollowed, notFinished, failedWithoutExecution, unsettled };
  const errorsByCode: Record<string, number> = {};
  for (const run of runs) {
    if (run.ending.kind !== 'errored') continue;
    const code = run.ending.error.code ?? run.ending.error.name;
    errorsByCode[code] = (errorsByCode[code] ?? 0) + 1;
  }
  const endingsOf = (kind: RunEnding['kind']): number => runs.filter((run) => run.ending.kind === kind).length;

  return {
    runs: runs.length,
    executions: executions.length,
    endings: { finished: endingsOf('finished'), left: endingsOf('left'), errored: endingsOf('errored'), unsettled: endingsOf('unsettled') },
    startsRefused,
    aborts: { sent: aborts.length, answered: aborts.filter((abort) => abort.answered).length },
    errorsByCode,
    violations,
    broken: violationLists(violations).reduce((sum, [, list]) => sum + list.length, 0),
  };
}
