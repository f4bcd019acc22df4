import { CommanderError } from 'commander';
import { describe, expect, it } from 'vitest';
import {
  AuthenticationError,
  InvalidArgumentError,
  NetworkError,
  NotFoundError,
  RateLimitError,
  ResponseValidationError,
  RunTimeoutError,
  ServerError,
  StartInDoubtError,
  TimeoutError,
  WorkflowFailedError,
  type RunResult,
} from '../../src/index.js';
import { type CommandOutcome, exitCodeFor } from '../../src/cli/exit-code.js';
import { UsageError } from '../../src/cli/usage-error.js';

const failed: RunResult = { executionId: 'we-1', status: 'failed', endedBy: 'failed', nodes: [], output: [], files: [], failedNodes: [], runningNodes: [] };
const api = { endpoint: 'status' } as const;

describe('exitCodeFor', () => {
  it.each<[string, CommandOutcome, number]>([
    ['a command that did its job', { kind: 'done' }, 0],
    ['a run that ended failed', { kind: 'workflow-failed' }, 1],
    ['Ctrl-C', { kind: 'interrupted', signal: 'SIGINT' }, 130],
    ['SIGTERM (kill, timeout, a cancelled CI job, a stopped container)', { kind: 'interrupted', signal: 'SIGTERM' }, 143],
    ['SIGHUP (a closed terminal)', { kind: 'interrupted', signal: 'SIGHUP' }, 129],
    ['WorkflowFailedError', { kind: 'error', error: new WorkflowFailedError(failed) }, 1],
    ['RunTimeoutError (the run was aborted at --timeout)', { kind: 'error', error: new RunTimeoutError(1000, 'we-1') }, 1],
    ['a usage error', { kind: 'error', error: new UsageError('no key') }, 2],
    ['a bad argument the library refused', { kind: 'error', error: new InvalidArgumentError('query', 'must not be empty') }, 2],
    ["commander's unknown option", { kind: 'error', error: new CommanderError(1, 'commander.unknownOption', "error: unknown option '--x'") }, 2],
    ["commander's help", { kind: 'error', error: new CommanderError(0, 'commander.helpDisplayed', '(outputHelp)') }, 0],
    ['401', { kind: 'error', error: new AuthenticationError({ ...api, status: 401 }) }, 3],
    ['404', { kind: 'error', error: new NotFoundError({ ...api, status: 404 }) }, 3],
    ['429', { kind: 'error', error: new RateLimitError({ ...api, status: 429, rateLimit: {} }) }, 3],
    ['5xx', { kind: 'error', error: new ServerError({ ...api, status: 503 }) }, 3],
    ['a network failure', { kind: 'error', error: new NetworkError({ endpoint: 'status' }) }, 3],
    ['a request timeout', { kind: 'error', error: new TimeoutError({ endpoint: 'status', timeoutMs: 30_000 }) }, 3],
    ['a body that did not match the schema', { kind: 'error', error: new ResponseValidationError({ endpoint: 'status', reason: 'schema', issues: [] }) }, 3],
    ['a start with an idempotency key in doubt (it may have started: nothing started again)', { kind: 'error', error: new StartInDoubtError('nightly', 0) }, 5],
    ['anything else', { kind: 'error', error: new Error('bug') }, 1],
  ])('%s → %i', (_name, outcome, code) => {
    expect(exitCodeFor(outcome)).toBe(code);
  });
});
