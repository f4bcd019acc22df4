import { describe, expect, it } from 'vitest';
import { auditSoak, NO_VIOLATIONS, violationLists, type AuditedAbort, type AuditedExecution, type AuditedRun, type RunError, type SoakViolations } from './soak-audit.js';

const error = (code: string, endpoint: string, executionId?: string): RunError => ({ name: 'Error', code, endpoint, executionId, message: code });
const finished = (key: string, executionId: string): AuditedRun => ({ key, ending: { kind: 'finished', executionId, status: 'finish' } });
const left = (key: string): AuditedRun => ({ key, ending: { kind: 'left' } });
const execution = (executionId: string, runKey: string | undefined, status: AuditedExecution['status']): AuditedExecution => ({ executionId, runKey, status });
const answered = (executionId: string): AuditedAbort => ({ executionId, answered: true });

/** Only the violations that are not empty. */
function brokenOf(violations: SoakViolations): Partial<Record<keyof SoakViolations, readonly string[]>> {
  return Object.fromEntries(violationLists(violations).filter(([, list]) => list.length > 0));
}

describe("the fault soak's audit", () => {
  it('passes a soak where every run finished or was left and aborted once, counting what happened', () => {
    const audit = auditSoak(
      [finished('k-0', 'we-0'), left('k-1'), left('k-2'), { key: 'k-3', ending: { kind: 'errored', error: error('SERVER_ERROR', 'run') } }],
      [execution('we-0', 'k-0', 'finish'), execution('we-1', 'k-1', 'failed')],
      // k-2 left before its start was sent: no execution, nothing to abort. An abort the outage refused
      // before it reached the service, then its retry, is one abort.
      [{ executionId: 'we-1', answered: false }, answered('we-1')],
    );
    expect(audit).toEqual({
      runs: 4,
      executions: 2,
      endings: { finished: 1, left: 2, errored: 1, unsettled: 0 },
      startsRefused: 1,
      aborts: { sent: 2, answered: 1 },
      errorsByCode: { SERVER_ERROR: 1 },
      violations: NO_VIOLATIONS,
      broken: 0,
    });
  });

  it.each([
    {
      promise: 'an execution aborted twice',
      runs: [left('k-0')],
      executions: [execution('we-0', 'k-0', 'failed')],
      aborts: [answered('we-0'), answered('we-0')],
      broken: { abortedTwice: ['we-0'] },
    },
    {
      promise: 'a left run whose abort never reached the service',
      runs: [left('k-0')],
      executions: [execution('we-0', 'k-0', 'finish')],
      aborts: [{ executionId: 'we-0', answered: false }],
      broken: { abortsLost: ['k-0'] },
    },
    {
      promise: 'a run started twice',
      runs: [finished('k-0', 'we-1')],
      executions: [execution('we-0', 'k-0', 'finish'), execution('we-1', 'k-0', 'finish')],
      aborts: [],
      broken: { startedTwice: ['k-0'] },
    },
    {
      promise: 'an execution left running, and one no run asked for',
      runs: [left('k-0')],
      executions: [execution('we-0', 'k-0', 'executing'), execution('we-9', undefined, 'finish')],
      aborts: [answered('we-0')],
      broken: { leftRunning: ['we-0'], strayExecutions: ['we-9'] },
    },
    {
      promise: 'an abort nobody asked for',
      runs: [finished('k-0', 'we-0')],
      executions: [execution('we-0', 'k-0', 'failed')],
      aborts: [answered('we-0')],
      broken: { abortedUnasked: ['we-0'] },
    },
    {
      promise: 'a run that gave up on its execution during an outage',
      runs: [{ key: 'k-0', ending: { kind: 'errored', error: error('NETWORK_ERROR', 'status', 'we-0') } }],
      executions: [execution('we-0', 'k-0', 'finish')],
      aborts: [],
      broken: { notFollowed: ['k-0'] },
    },
    {
      promise: 'a start the budget gave up on while Redis was away',
      runs: [{ key: 'k-0', ending: { kind: 'errored', error: error('BUDGET_UNAVAILABLE', 'run') } }],
      executions: [],
      aborts: [],
      broken: { failedWithoutExecution: ['k-0'] },
    },
    {
      promise: 'a run that stayed and saw its execution fail',
      runs: [{ key: 'k-0', ending: { kind: 'finished', executionId: 'we-0', status: 'failed' } }],
      executions: [execution('we-0', 'k-0', 'failed')],
      aborts: [],
      broken: { notFinished: ['k-0'] },
    },
    {
      promise: 'a run the client never reported',
      runs: [{ key: 'k-0', ending: { kind: 'unsettled' } }],
      executions: [],
      aborts: [],
      broken: { unsettled: ['k-0'] },
    },
  ] satisfies { promise: string; runs: AuditedRun[]; executions: AuditedExecution[]; aborts: AuditedAbort[]; broken: Partial<Record<keyof SoakViolations, string[]>> }[])(
    'flags $promise',
    ({ runs, executions, aborts, broken }) => {
      const audit = auditSoak(runs, executions, aborts);
      expect(brokenOf(audit.violations)).toEqual(broken);
      expect(audit.broken).toBe(Object.values(broken).flat().length);
    },
  );
});
