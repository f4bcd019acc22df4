import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createEmulator, type Emulator, type WorkflowDefinition } from '../../src/emulator/index.js';
import { flowstreamFromSource } from './support/source-cli.js';

// `flowstream run --idempotency-key` as a retrying CI job uses it: each run of the command its own
// process (from source), the keys in a state folder of the test's own, the emulator's request log the
// oracle of what was started.

const SHORT: WorkflowDefinition = {
  canvasId: 'c-test-nightly',
  title: 'Nightly report',
  nodes: [
    { id: 'node-start', type: 'start', title: 'Start' },
    { id: 'node-report', title: 'Write the report', parents: ['node-start'], durationMs: 4_000, messages: [{ content: 'Report written.' }] },
  ],
};

/** A run that takes a file (a resource variable, service.md §5.5). */
const ATTACHED: WorkflowDefinition = {
  canvasId: 'c-test-attached',
  title: 'Summarise the attachment',
  nodes: [
    { id: 'node-start', type: 'start', title: 'Start' },
    { id: 'node-attachment', type: 'resource', title: 'Attachment' },
    { id: 'node-summary', title: 'Summarise', parents: ['node-start', 'node-attachment'], durationMs: 4_000, messages: [{ content: 'Summarised.' }] },
  ],
  variables: [{ name: 'attachment', variableType: 'resource' }],
};

let emulator: Emulator;
let state: string;
let env: Record<string, string>;
let attachment: string;

beforeAll(async () => {
  emulator = await createEmulator({ speed: 20, rateLimit: false, workflows: [SHORT, ATTACHED] });
  state = await mkdtemp(join(tmpdir(), 'flowstream-state-'));
  env = { FLOWSTREAM_API_KEY: emulator.apiKey, FLOWSTREAM_BASE_URL: emulator.url, FLOWSTREAM_STATE_DIR: state };
  attachment = join(state, 'notes.md');
  await writeFile(attachment, '# Notes\n');
});

afterAll(async () => {
  await emulator.close();
  await rm(state, { recursive: true, force: true });
});

function startsOf(canvasId: string): number {
  return emulator.requests.list({ endpoint: 'run', canvasId }).length;
}

describe('flowstream run --idempotency-key', { timeout: 60_000 }, () => {
  it('run twice with the same key starts one execution: the second follows it to its end', async () => {
    const first = flowstreamFromSource(['run', 'c-test-nightly', '--idempotency-key', 'nightly-1', '--json'], env);
    expect(await first.exited()).toBe(0);
    const second = flowstreamFromSource(['run', 'c-test-nightly', '--idempotency-key', 'nightly-1', '--json'], env);
    expect(await second.exited()).toBe(0);
    expect(startsOf('c-test-nightly')).toBe(1);
    const executionOf = (stdout: string): string => (JSON.parse(stdout.trimEnd().split('\n').at(-1) ?? '') as { result: { executionId: string } }).result.executionId;
    expect(executionOf(second.stdout())).toBe(executionOf(first.stdout()));
    // Another key is another start.
    const other = flowstreamFromSource(['run', 'c-test-nightly', '--idempotency-key', 'nightly-2', '--quiet'], env);
    expect(await other.exited()).toBe(0);
    expect(startsOf('c-test-nightly')).toBe(2);
  });

  it('two runs with one key at the same time start one execution: the other waits for its answer and follows it', async () => {
    const before = startsOf('c-test-nightly');
    const runs = [0, 1].map(() => flowstreamFromSource(['run', 'c-test-nightly', '--idempotency-key', 'nightly-at-once', '--quiet'], env));
    expect(await Promise.all(runs.map((cli) => cli.exited()))).toEqual([0, 0]);
    expect(startsOf('c-test-nightly')).toBe(before + 1);
  });

  it('a start whose answer was lost is in doubt: the next run with the key starts nothing and exits 5', async () => {
    // The start is made and its answer dropped: the command cannot tell whether it started.
    emulator.faults.add({ kind: 'drop', after: true, endpoint: 'run', times: 1 });
    const before = startsOf('c-test-nightly');
    const lost = flowstreamFromSource(['run', 'c-test-nightly', '--idempotency-key', 'nightly-3'], env);
    expect(await lost.exited()).toBe(3);
    const again = flowstreamFromSource(['run', 'c-test-nightly', '--idempotency-key', 'nightly-3'], env);
    expect(await again.exited()).toBe(5);
    expect(again.stderr()).toContain('--idempotency-key nightly-3 was started at');
    expect(again.stderr()).toContain('Nothing was started again');
    expect(startsOf('c-test-nightly')).toBe(before + 1);
  });

  it('run again with a key that started an execution uploads no --file: it follows that execution', async () => {
    const first = flowstreamFromSource(['run', 'c-test-attached', '--file', `attachment=${attachment}`, '--idempotency-key', 'attached-1', '--quiet'], env);
    expect(await first.exited()).toBe(0);
    const uploads = emulator.requests.list({ endpoint: 'upload' }).length;
    expect(uploads).toBeGreaterThan(0);
    const again = flowstreamFromSource(['run', 'c-test-attached', '--file', `attachment=${attachment}`, '--idempotency-key', 'attached-1', '--quiet'], env);
    expect(await again.exited()).toBe(0);
    expect(emulator.requests.list({ endpoint: 'upload' })).toHaveLength(uploads);
    expect(startsOf('c-test-attached')).toBe(1);
  });

  it('says it follows the execution the key started, with its id, rather than that it starts a run', async () => {
    const first = flowstreamFromSource(['run', 'c-test-nightly', '--idempotency-key', 'nightly-said'], env);
    expect(await first.exited()).toBe(0);
    expect(first.stdout()).toContain('Starting a run of c-test-nightly');
    const [started] = emulator.requests.list({ endpoint: 'run', canvasId: 'c-test-nightly' }).slice(-1);
    const again = flowstreamFromSource(['run', 'c-test-nightly', '--idempotency-key', 'nightly-said'], env);
    expect(await again.exited()).toBe(0);
    expect(again.stdout()).not.toContain('Starting a run');
    expect(again.stdout().split('\n')[0]).toBe(`Following execution ${started?.executionId ?? '?'} of c-test-nightly, started earlier with --idempotency-key nightly-said`);
  });

  it('run again with a key whose start is in doubt uploads no --file and exits 5', async () => {
    emulator.faults.add({ kind: 'drop', after: true, endpoint: 'run', times: 1 });
    const lost = flowstreamFromSource(['run', 'c-test-attached', '--file', `attachment=${attachment}`, '--idempotency-key', 'attached-2'], env);
    expect(await lost.exited()).toBe(3);
    const uploads = emulator.requests.list({ endpoint: 'upload' }).length;
    const again = flowstreamFromSource(['run', 'c-test-attached', '--file', `attachment=${attachment}`, '--idempotency-key', 'attached-2'], env);
    expect(await again.exited()).toBe(5);
    expect(again.stderr()).toContain('Nothing was started again');
    expect(emulator.requests.list({ endpoint: 'upload' })).toHaveLength(uploads);
  });

  it('two runs with one key and a --file at the same time upload once and start once: the other waits and follows', async () => {
    const [uploads, starts] = [emulator.requests.list({ endpoint: 'upload' }).length, startsOf('c-test-attached')];
    // Uploads answer late (real time, only to keep both commands at their uploads together; the outcome
    // does not depend on it): before the fix both looked at the free key, then both uploaded.
    const slow = emulator.faults.add({ kind: 'latency', ms: 3_000, endpoint: 'upload' });
    try {
      const runs = [0, 1].map(() => flowstreamFromSource(['run', 'c-test-attached', '--file', `attachment=${attachment}`, '--idempotency-key', 'attached-at-once'], env));
      expect(await Promise.all(runs.map((cli) => cli.exited()))).toEqual([0, 0]);
      expect(emulator.requests.list({ endpoint: 'upload' })).toHaveLength(uploads + 1);
      expect(startsOf('c-test-attached')).toBe(starts + 1);
      expect(runs.filter((cli) => cli.stdout().includes('Following execution'))).toHaveLength(1);
    } finally {
      slow.remove();
    }
  });

  it('a run killed -9 during its uploads leaves its key free: the next run with the key uploads and starts', async () => {
    const starts = startsOf('c-test-attached');
    const stuck = emulator.faults.add({ kind: 'latency', ms: 60_000, endpoint: 'upload', times: 1 });
    const killed = flowstreamFromSource(['run', 'c-test-attached', '--file', `attachment=${attachment}`, '--idempotency-key', 'attached-killed'], env);
    // Its key was taken before its upload, which the fault now holds.
    await vi.waitFor(() => {
      expect(stuck.hits).toBe(1);
    }, { timeout: 30_000, interval: 50 });
    killed.child.kill('SIGKILL');
    await killed.exited();
    stuck.remove();
    const again = flowstreamFromSource(['run', 'c-test-attached', '--file', `attachment=${attachment}`, '--idempotency-key', 'attached-killed'], env);
    expect(await again.exited()).toBe(0);
    expect(again.stdout()).toContain('Starting a run of c-test-attached');
    expect(startsOf('c-test-attached')).toBe(starts + 1);
  });

  it('refuses --idempotency-ttl without a key, sending nothing (exit 2)', async () => {
    const before = emulator.requests.list().length;
    const cli = flowstreamFromSource(['run', 'c-test-nightly', '--idempotency-ttl', '60'], env);
    expect(await cli.exited()).toBe(2);
    expect(cli.stderr()).toContain('--idempotency-ttl needs --idempotency-key');
    expect(emulator.requests.list()).toHaveLength(before);
  });
});
