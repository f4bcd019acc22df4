import { afterEach, describe, expect, it } from 'vitest';
import type { BudgetState } from '../../src/budget/index.js';
import { createClient } from '../../src/client.js';
import { createEmulator, type Emulator, type WorkflowDefinition } from '../../src/emulator/index.js';
import { runResult } from '../../src/runs/events.js';
import { REQUEST_TIMEOUT_MS } from '../support/request-timeout.js';

/**
 * Emulator ms per real ms: the emulator's minute, its rate-limit window, lasts 3 real seconds, and the
 * budget's minute with it (the client runs on `emulator.scheduler`). Measured: the whole test takes ~15 s. Not faster: client and
 * emulator share this process (~9 ms of CPU per request, both sides), and the budget's 2 s latency
 * allowance is 100 real ms at this speed (measured: requests arrive 1 ms after the budget lets them
 * go, 75 ms at most). At 50× the process saturates: requests arrive seconds of emulator time after
 * they were let through, bunch up as the backlog drains, and draw 429s.
 */
const SPEED = 20;
const RUNS = 50;

const CANVAS = 'c-fan-in';
/** A start, three parallel branches of 80–120 s and a 40 s summary joining them: 160 s per run. */
const FAN_IN: WorkflowDefinition = {
  canvasId: CANVAS,
  title: 'Three sources, one summary',
  nodes: [
    { id: 'node-start', type: 'start' },
    { id: 'node-news', parents: ['node-start'], durationMs: 80_000, messages: [{ content: 'news read' }] },
    { id: 'node-papers', parents: ['node-start'], durationMs: 120_000, messages: [{ content: 'papers read', atMs: 40_000 }, { content: 'papers ranked' }] },
    { id: 'node-forums', parents: ['node-start'], durationMs: 100_000, messages: [{ content: 'forums read' }] },
    { id: 'node-summary', parents: ['node-news', 'node-papers', 'node-forums'], durationMs: 40_000, messages: [{ content: 'summary' }] },
  ],
};

const open: Emulator[] = [];

afterEach(async () => {
  await Promise.all(open.splice(0).map((emulator) => emulator.close()));
});

/**
 * Each run's status polls as the budget let them through, in emulator ms, rebuilt from the
 * states it published: every send publishes a state whose `cadences` hold the key's `lastSentAt`
 * (idle keys are later pruned from the state, their history is not).
 */
function statusPollsByRun(states: readonly BudgetState[]): Map<string, number[]> {
  const polls = new Map<string, number[]>();
  for (const state of states) {
    for (const [executionId, cadence] of Object.entries(state.cadences)) {
      const times = polls.get(executionId) ?? [];
      if (times.at(-1) !== cadence.lastSentAt) times.push(cadence.lastSentAt);
      polls.set(executionId, times);
    }
  }
  return polls;
}

function meanInterval(times: readonly number[]): number {
  return ((times.at(-1) ?? 0) - (times[0] ?? 0)) / (times.length - 1);
}

describe('one client budget shared by 50 concurrent runs, on the emulator with its real rate limit', () => {
  it('finishes 50 concurrent runs of a workflow with parallel branches without a single 429, every request through the budget', { timeout: 60_000 }, async () => {
    const emulator = await createEmulator({ speed: SPEED, workflows: [FAN_IN] });
    open.push(emulator);
    const client = createClient({
      apiKey: emulator.apiKey,
      baseUrl: emulator.url,
      // The whole client on the emulator's clock: the default cadence, the budget's windows, every timer.
      scheduler: emulator.scheduler,
      timeoutMs: REQUEST_TIMEOUT_MS,
    });
    const budget = client.budget!;
    // The process's first fetch loads the HTTP stack: warm it up so the runs' first requests travel as fast as the rest.
    await client.workflows.get(CANVAS);

    const states: BudgetState[] = [];
    const subscription = budget.state$.subscribe((state) => states.push(state));
    const started = performance.now();
    const results = await Promise.all(Array.from({ length: RUNS }, (_, n) => runResult(client.run(CANVAS, { variables: { n } }))));
    const realMs = performance.now() - started;
    subscription.unsubscribe();

    // All 50 finished, none failed, and the service never had to refuse a request.
    expect(results.map((result) => result.status)).toEqual(Array.from({ length: RUNS }, () => 'finish'));
    expect(results.every((result) => result.output.some((node) => node.messages.some((message) => message.content === 'summary')))).toBe(true);
    expect(emulator.executions.list().map((execution) => execution.status)).toEqual(Array.from({ length: RUNS }, () => 'finish'));
    const requests = emulator.requests.list();
    expect(emulator.requests.list({ status: 429 })).toEqual([]);
    expect(requests.every((request) => request.status === 200)).toBe(true);
    expect(emulator.requests.list({ endpoint: 'run' })).toHaveLength(RUNS);
    expect(emulator.requests.list({ endpoint: 'abort' })).toEqual([]);
    // Every request the service saw was let through by the budget, and every one it let through arrived.
    expect(budget.snapshot().usedToday).toBe(requests.length);
    expect(budget.snapshot().inFlight).toBe(0);
    // Several of the service's minutes: the limit was really in play.
    const minutes = ((requests.at(-1)?.emulatorTime ?? 0) - (requests[0]?.emulatorTime ?? 0)) / 60_000;
    expect(minutes).toBeGreaterThan(3);
    expect(requests.length).toBeGreaterThan(3 * 100);

    // The budget was tight: requests waited for it, most of the time one per run.
    const mostQueued = Math.max(...states.map((state) => state.queued.total));
    expect(mostQueued).toBeGreaterThanOrEqual(RUNS * 0.8);
    // Each run's status reads were spaced about evenly: a run's status and output reads share one
    // round-robin by run (fair-queue.ts), so no run is left behind. Measured ×1.00 (3–4 status reads
    // per run: while a node streams, a run's reads are output reads, which carry the task statuses).
    const polls = statusPollsByRun(states);
    expect(polls.size).toBe(RUNS);
    const intervals = [...polls.values()].map(meanInterval);
    const spread = Math.max(...intervals) / Math.min(...intervals);
    console.info(
      `${RUNS} runs in ${(realMs / 1000).toFixed(1)} s real, ${minutes.toFixed(1)} emulator minutes, ${requests.length} requests, most queued ${mostQueued}, ` +
        `status polls per run ${Math.min(...[...polls.values()].map((times) => times.length))}–${Math.max(...[...polls.values()].map((times) => times.length))}, ` +
        `mean interval per run ${(Math.min(...intervals) / 1000).toFixed(1)}–${(Math.max(...intervals) / 1000).toFixed(1)} s (×${spread.toFixed(2)})`,
    );
    expect(spread).toBeLessThan(1.5);
  });
});
