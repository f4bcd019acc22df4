import { lastValueFrom, toArray } from 'rxjs';
import { describe, expect, it } from 'vitest';
import type { ExecutionView } from '../../src/emulator/index.js';
import { outputText } from '../../src/pipeline/output-text.js';
import { runEach } from '../../src/pipeline/run-each.js';
import { executionsOf, setup, task } from './harness.js';

/** The most executions that were running at one emulator instant, from their lifetimes. */
function mostAtOnce(executions: readonly ExecutionView[]): number {
  const moments = executions.flatMap((execution) => [
    { at: execution.createdAt, change: 1 },
    { at: execution.settledAt ?? Number.POSITIVE_INFINITY, change: -1 },
  ]);
  // An execution created at the instant another settled did not overlap it: ends count first.
  moments.sort((a, b) => a.at - b.at || a.change - b.change);
  let running = 0;
  let most = 0;
  for (const moment of moments) {
    running += moment.change;
    most = Math.max(most, running);
  }
  return most;
}

describe('runEach against the emulator with its real rate limit', () => {
  it('runs 30 inputs 5 at a time, in input order, without a single 429', async () => {
    const { emulator, client } = await setup([task('c-each', { durationMs: 30_000, messages: [{ content: 'done' }] })]);
    const inputs = Array.from({ length: 30 }, (_, n) => ({ variables: { n } }));
    const results = await lastValueFrom(runEach(client, 'c-each', inputs, { concurrency: 5 }).pipe(toArray()));

    expect(results.map((each) => each.index)).toEqual(inputs.map((_, n) => n));
    expect(results.every((each) => each.result.status === 'finish' && outputText(each.result) === 'done')).toBe(true);
    const executions = executionsOf(emulator, 'c-each');
    expect(executions).toHaveLength(30);
    // Each result belongs to the execution that read its input.
    for (const each of results) {
      const execution = emulator.executions.get(each.result.executionId);
      expect(execution?.variables).toEqual([{ name: 'n', kind: 'text', value: String(each.index) }]);
    }
    expect(mostAtOnce(executions)).toBe(5);
    expect(emulator.requests.list({ endpoint: 'run' })).toHaveLength(30);
    expect(emulator.requests.list({ status: 429 })).toEqual([]);
    expect(emulator.requests.list().length).toBeGreaterThan(100); // more than one rate-limit window's worth
  });

  it('re-runs a failed workflow up to `retry` times, then errors with WorkflowFailedError', async () => {
    const { emulator, client } = await setup([task('c-flaky', { durationMs: 2_000, failure: { kind: 'error', errors: ['boom'], atMs: 1_000 } })], { rateLimit: false });
    const error: unknown = await lastValueFrom(runEach(client, 'c-flaky', [{ variables: { n: 1 } }], { retry: 2 })).catch((failure: unknown) => failure);
    expect(error).toMatchObject({ name: 'WorkflowFailedError' });
    expect(executionsOf(emulator, 'c-flaky')).toHaveLength(3); // the first run and two retries
    expect(emulator.requests.list({ endpoint: 'abort' })).toEqual([]);
  });

  it('aborts exactly the running executions and starts no more when unsubscribed', async () => {
    const { emulator, client } = await setup([task('c-slow', { durationMs: 600_000 })], { rateLimit: false });
    const inputs = Array.from({ length: 10 }, (_, n) => ({ variables: { n } }));
    const subscription = runEach(client, 'c-slow', inputs, { concurrency: 3 }).subscribe();
    await expect.poll(() => executionsOf(emulator, 'c-slow').length).toBe(3);
    subscription.unsubscribe();
    await expect.poll(() => emulator.requests.list({ endpoint: 'abort' }).length).toBe(3);
    const started = executionsOf(emulator, 'c-slow');
    expect(started).toHaveLength(3);
    expect(new Set(emulator.requests.list({ endpoint: 'abort' }).map((record) => record.executionId))).toEqual(new Set(started.map((execution) => execution.executionId)));
    await expect.poll(() => executionsOf(emulator, 'c-slow').every((execution) => execution.status === 'failed')).toBe(true);
  });
});
