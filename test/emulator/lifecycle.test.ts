import { describe, expect, it } from 'vitest';
import { createManualClock } from '../../src/emulator/index.js';
import type { ManualClock, WorkflowDefinition } from '../../src/emulator/index.js';
import { callJson, pollUntil, run, startEmulator } from './harness.js';
import type { OutputData, RunData, StatusData } from './wire.js';

async function statusOf(emulator: Awaited<ReturnType<typeof startEmulator>>, executionId: string): Promise<StatusData> {
  const { body } = await callJson<StatusData>(emulator, `/openapi/workflow/${executionId}/status`);
  if (body.data === undefined) throw new Error(JSON.stringify(body));
  return body.data;
}

async function outputOf(emulator: Awaited<ReturnType<typeof startEmulator>>, executionId: string): Promise<OutputData> {
  const { body } = await callJson<OutputData>(emulator, `/openapi/workflow/${executionId}/output`);
  if (body.data === undefined) throw new Error(JSON.stringify(body));
  return body.data;
}

/** service.md §3.2: a task below the start node starts on the service's first poll tick. */
const FIRST_TICK_MS = 1_500;

const nodeStatuses = (status: StatusData): Record<string, string> => Object.fromEntries(status.nodeExecutions.map((node) => [node.nodeId, node.status]));

async function manual(workflows: WorkflowDefinition[] = [], profile: 'service' | 'spec' = 'service'): Promise<{ clock: ManualClock; emulator: Awaited<ReturnType<typeof startEmulator>> }> {
  const clock = createManualClock();
  const emulator = await startEmulator({ clock, workflows, profile });
  return { clock, emulator };
}

describe('execution lifecycle (service.md §3)', () => {
  it('answers run with status "running" while the execution reads "executing" (service.md §3.1)', async () => {
    const { emulator } = await manual();
    const { body } = await callJson<RunData>(emulator, '/openapi/workflow/c-sample-linear/run', { body: {} });
    expect(body.success).toBe(true);
    expect(body.data?.status).toBe('running');
    expect(body.data?.executionId).toMatch(/^we-[a-z0-9]{24}$/);
    expect((await statusOf(emulator, body.data?.executionId ?? '')).status).toBe('executing');
  });

  it('moves a linear chain node by node, each starting on the poll tick after its parent finishes (service.md §3.2)', async () => {
    const { clock, emulator } = await manual();
    const id = await run(emulator, 'c-sample-linear');
    const statuses = async (): Promise<Record<string, string>> => nodeStatuses(await statusOf(emulator, id));
    // The start node is finish from the start; its child waits for the first tick, 1.5 s on.
    expect(await statuses()).toEqual({ 'node-start': 'finish', 'node-research': 'init', 'node-outline': 'init', 'node-write': 'init' });
    clock.advance(1_499);
    expect((await statuses())['node-research']).toBe('init');
    clock.advance(1);
    expect(await statuses()).toEqual({ 'node-start': 'finish', 'node-research': 'executing', 'node-outline': 'init', 'node-write': 'init' });
    // Research (6 s) ends at 7.5 s, on a tick that began before it: the next one, at 9 s, starts the outline.
    clock.advance(6_000);
    expect(await statuses()).toEqual({ 'node-start': 'finish', 'node-research': 'finish', 'node-outline': 'init', 'node-write': 'init' });
    clock.advance(1_499);
    expect((await statuses())['node-outline']).toBe('init');
    clock.advance(1);
    expect(await statuses()).toEqual({ 'node-start': 'finish', 'node-research': 'finish', 'node-outline': 'executing', 'node-write': 'init' });
    expect(emulator.executions.get(id)?.nodes.map((node) => node.startedAt === undefined ? undefined : node.startedAt - clock.now() + 9_000)).toEqual([0, 1_500, 9_000, undefined]);
    // Outline (4 s) ends at 13 s, write starts at 13.5 s and ends at 18.5 s; the execution is finish at 19.5 s.
    clock.advance(9_500);
    expect(await statuses()).toEqual({ 'node-start': 'finish', 'node-research': 'finish', 'node-outline': 'finish', 'node-write': 'finish' });
    expect((await statusOf(emulator, id)).status).toBe('executing');
    clock.advance(1_000);
    const done = await statusOf(emulator, id);
    expect(done.status).toBe('finish');
    expect(done.nodeExecutions.map((node) => node.errorMessage)).toEqual([undefined, '[]', '[]', '[]']);
  });

  it('spec: starts a node the instant its parents finish', async () => {
    const { clock, emulator } = await manual([], 'spec');
    const id = await run(emulator, 'c-sample-linear');
    expect(nodeStatuses(await statusOf(emulator, id))).toEqual({ 'node-start': 'finish', 'node-research': 'executing', 'node-outline': 'init', 'node-write': 'init' });
    clock.advance(6_000);
    expect(nodeStatuses(await statusOf(emulator, id))).toEqual({ 'node-start': 'finish', 'node-research': 'finish', 'node-outline': 'executing', 'node-write': 'init' });
    clock.advance(9_000);
    expect((await statusOf(emulator, id)).status).toBe('finish');
  });

  it('finishes content nodes on a tick after their task parent finishes, from init straight to finish (service.md §3.2)', async () => {
    const { clock, emulator } = await manual([
      {
        canvasId: 'c-content',
        nodes: [
          { id: 'node-start', type: 'start' },
          { id: 'node-cover', type: 'image' },
          { id: 'node-draft', parents: ['node-start'], durationMs: 2_000 },
          { id: 'node-doc', type: 'document', parents: ['node-draft'] },
          { id: 'node-code', type: 'codeArtifact', parents: ['node-draft'] },
          { id: 'node-review', parents: ['node-doc'], durationMs: 1_000 },
          { id: 'node-stray', type: 'audio', parents: ['node-start'] },
        ],
      },
    ]);
    const id = await run(emulator, 'c-content');
    // Without parents the run itself starts it, and a content node finishes at once.
    expect(nodeStatuses(await statusOf(emulator, id))).toMatchObject({ 'node-cover': 'finish', 'node-draft': 'init', 'node-doc': 'init', 'node-code': 'init' });
    clock.advance(1_500);
    expect(nodeStatuses(await statusOf(emulator, id))).toMatchObject({ 'node-draft': 'executing', 'node-doc': 'init' });
    // The draft ends at 3.5 s; the tick at 4.5 s finishes its content children, never executing.
    clock.advance(2_000);
    expect(nodeStatuses(await statusOf(emulator, id))).toMatchObject({ 'node-draft': 'finish', 'node-doc': 'init', 'node-code': 'init' });
    clock.advance(999);
    expect(nodeStatuses(await statusOf(emulator, id))).toMatchObject({ 'node-doc': 'init', 'node-code': 'init' });
    clock.advance(1);
    expect(nodeStatuses(await statusOf(emulator, id))).toMatchObject({ 'node-doc': 'finish', 'node-code': 'finish', 'node-review': 'init' });
    // A task below a content node starts on the tick after that.
    clock.advance(1_500);
    expect(nodeStatuses(await statusOf(emulator, id))).toMatchObject({ 'node-review': 'executing' });
    expect(emulator.executions.get(id)?.nodes.find((node) => node.nodeId === 'node-review')?.startedAt).toBe(clock.now());
    // A content node below no task is never finished: the execution runs into its timeout.
    clock.advance(10 * 60 * 1_000);
    const later = await statusOf(emulator, id);
    expect(nodeStatuses(later)).toMatchObject({ 'node-review': 'finish', 'node-stray': 'init' });
    expect(later.status).toBe('executing');
    // Content nodes are not task nodes: output leaves them out.
    expect((await outputOf(emulator, id)).output.map((node) => node.nodeId)).toEqual(['node-draft', 'node-review']);
  });

  it('spec: content nodes are finish from the start', async () => {
    const { emulator } = await manual([{ canvasId: 'c-content', nodes: [{ id: 'node-draft' }, { id: 'node-doc', type: 'document', parents: ['node-draft'] }] }], 'spec');
    const id = await run(emulator, 'c-content');
    expect(nodeStatuses(await statusOf(emulator, id))).toEqual({ 'node-draft': 'executing', 'node-doc': 'finish' });
  });

  it('reads all nodes finish while the execution is still executing until the next tick (service.md §3.3)', async () => {
    const { clock, emulator } = await manual([{ canvasId: 'c-one', title: 'One', nodes: [{ id: 'node-a', durationMs: 1_000 }] }]);
    const id = await run(emulator, 'c-one');
    clock.advance(1_000);
    const between = await statusOf(emulator, id);
    expect(nodeStatuses(between)).toEqual({ 'node-a': 'finish' });
    expect(between.status).toBe('executing');
    clock.advance(500);
    expect((await statusOf(emulator, id)).status).toBe('finish');
  });

  it('fails the execution at the first tick after a branch fails, while the sibling branch goes on (service.md §3.3, §3.4)', async () => {
    const { clock, emulator } = await manual();
    const id = await run(emulator, 'c-sample-branch-failure');
    // Both translations start on the first tick; French fails 4 s later.
    clock.advance(FIRST_TICK_MS + 4_000);
    const failedNode = await statusOf(emulator, id);
    expect(nodeStatuses(failedNode)['node-translate-fr']).toBe('failed');
    expect(failedNode.status).toBe('executing');
    clock.advance(500);
    const failed = await statusOf(emulator, id);
    expect(failed.status).toBe('failed');
    expect(nodeStatuses(failed)).toMatchObject({ 'node-translate-de': 'executing', 'node-merge': 'init' });
    expect(failed.nodeExecutions.find((node) => node.nodeId === 'node-translate-fr')?.errorMessage).toBe('["Request timeout. Please try again later."]');
    clock.advance(60 * 60 * 1_000);
    const later = await statusOf(emulator, id);
    expect(later.status).toBe('failed');
    expect(nodeStatuses(later)).toMatchObject({ 'node-translate-de': 'finish', 'node-merge': 'init' });
  });

  it('lists every node parents before children, ties by nodeId (service.md §4.1)', async () => {
    const { emulator } = await manual([
      {
        canvasId: 'c-order',
        nodes: [
          { id: 'node-z', parents: ['node-b'] },
          { id: 'node-c' },
          { id: 'node-b', parents: ['node-a'] },
          { id: 'node-a', type: 'start' },
        ],
      },
    ]);
    const id = await run(emulator, 'c-order');
    expect((await statusOf(emulator, id)).nodeExecutions.map((node) => node.nodeId)).toEqual(['node-a', 'node-b', 'node-c', 'node-z']);
  });

  it('finishes an empty workflow at once (service.md §3.1)', async () => {
    const { emulator } = await manual();
    const id = await run(emulator, 'c-sample-empty');
    const status = await statusOf(emulator, id);
    expect(status.status).toBe('finish');
    expect(status.nodeExecutions).toEqual([]);
  });

  it('keeps a workflow whose nodes have no work executing until the first tick (service.md §3.1, §3.3)', async () => {
    const { clock, emulator } = await manual();
    const id = await run(emulator, 'c-sample-untitled');
    const first = await statusOf(emulator, id);
    expect(nodeStatuses(first)).toEqual({ 'node-start': 'finish', 'node-note': 'finish' });
    expect(first.status).toBe('executing');
    clock.advance(1_500);
    expect((await statusOf(emulator, id)).status).toBe('finish');
  });

  it('fails a node without credits when it starts, with the plain credit message (service.md §3.7, §4.3)', async () => {
    const { clock, emulator } = await manual();
    const id = await run(emulator, 'c-sample-credit');
    expect((await statusOf(emulator, id)).nodeExecutions[1]?.status).toBe('init');
    clock.advance(FIRST_TICK_MS);
    const status = await statusOf(emulator, id);
    expect(status.nodeExecutions[1]).toMatchObject({ status: 'failed', errorMessage: expect.stringMatching(/^credit not available: /) as unknown });
    expect(status.status).toBe('executing');
    clock.advance(1_500);
    expect((await statusOf(emulator, id)).status).toBe('failed');
  });

  it('fails a 40-minute node with the execution on the first tick past 30 minutes, not with a node timeout (service.md §3.6)', async () => {
    const { clock, emulator } = await manual();
    const id = await run(emulator, 'c-sample-timeout');
    // Ticks every 1.5 s from creation: the one at 1800 s is not past 30 minutes, the one at 1801.5 s is.
    clock.advance(30 * 60 * 1_000 + 1_499);
    expect((await statusOf(emulator, id)).status).toBe('executing');
    clock.advance(1);
    const status = await statusOf(emulator, id);
    expect(status.status).toBe('failed');
    expect(status.nodeExecutions[1]).toMatchObject({ status: 'failed', errorMessage: 'Workflow execution timeout exceeded (1801s)' });
  });

  it('times the whole execution out on the first tick past 30 minutes, with its real age in seconds (service.md §3.6)', async () => {
    const twenty = 20 * 60 * 1_000;
    const { clock, emulator } = await manual([
      { canvasId: 'c-long', nodes: [{ id: 'node-a', durationMs: twenty }, { id: 'node-b', parents: ['node-a'], durationMs: twenty }] },
    ]);
    const id = await run(emulator, 'c-long');
    clock.advance(30 * 60 * 1_000);
    expect((await statusOf(emulator, id)).status).toBe('executing');
    clock.advance(1_500);
    const status = await statusOf(emulator, id);
    expect(status.status).toBe('failed');
    expect(status.nodeExecutions).toEqual([
      { nodeId: 'node-a', status: 'finish', title: 'node-a', errorMessage: '[]' },
      { nodeId: 'node-b', status: 'failed', title: 'node-b', errorMessage: 'Workflow execution timeout exceeded (1801s)' },
    ]);
    expect(emulator.executions.get(id)?.settledAt).toBe(clock.now());
  });

  it('spec: times a node out, and the whole execution, at 30 minutes exactly', async () => {
    const twenty = 20 * 60 * 1_000;
    const { clock, emulator } = await manual([
      { canvasId: 'c-long', nodes: [{ id: 'node-a', durationMs: twenty }, { id: 'node-b', parents: ['node-a'], durationMs: twenty }] },
    ], 'spec');
    const long = await run(emulator, 'c-long');
    const single = await run(emulator, 'c-sample-timeout');
    clock.advance(30 * 60 * 1_000 - 1);
    expect((await statusOf(emulator, single)).status).toBe('executing');
    clock.advance(1);
    expect((await statusOf(emulator, single)).nodeExecutions[1]).toMatchObject({ status: 'failed', errorMessage: 'Node execution timeout exceeded (1800s)' });
    expect((await statusOf(emulator, single)).status).toBe('failed');
    expect((await statusOf(emulator, long)).nodeExecutions[1]).toMatchObject({ status: 'failed', errorMessage: 'Workflow execution timeout exceeded (1800s)' });
  });

  it('runs on an accelerated clock (speed 50)', async () => {
    const emulator = await startEmulator({ speed: 50 });
    expect(emulator.clock.speed).toBe(50);
    const id = await run(emulator, 'c-sample-linear');
    const done = await pollUntil(() => statusOf(emulator, id), (status) => status.status === 'finish');
    expect(nodeStatuses(done)).toEqual({ 'node-start': 'finish', 'node-research': 'finish', 'node-outline': 'finish', 'node-write': 'finish' });
  });

  it('shows executions to tests with their node states and times', async () => {
    const { clock, emulator } = await manual();
    const id = await run(emulator, 'c-sample-linear');
    clock.advance(10_000);
    const view = emulator.executions.get(id);
    expect(view).toMatchObject({ executionId: id, canvasId: 'c-sample-linear', status: 'executing', settledAt: undefined });
    expect(view?.nodes.map((node) => [node.nodeId, node.status, node.startedAt === undefined ? undefined : node.startedAt - (view.createdAt)])).toEqual([
      ['node-start', 'finish', 0],
      ['node-research', 'finish', 1_500],
      ['node-outline', 'executing', 9_000],
      ['node-write', 'init', undefined],
    ]);
    expect(emulator.executions.list().map((execution) => execution.executionId)).toEqual([id]);
    expect(emulator.executions.get('we-unknown')).toBeUndefined();
  });
});

describe('abort (service.md §3.5)', () => {
  it('fails every unfinished node, init included, and the execution at once', async () => {
    const { clock, emulator } = await manual();
    const id = await run(emulator, 'c-sample-linear');
    // Research has finished (1.5 s to 7.5 s), the outline executes (from 9 s), the write is init.
    clock.advance(10_000);
    const { status, body } = await callJson(emulator, `/openapi/workflow/${id}/abort`, { method: 'POST' });
    expect(status).toBe(200);
    expect(body).toEqual({ success: true, data: null });
    const after = await statusOf(emulator, id);
    expect(after.status).toBe('failed');
    expect(after.nodeExecutions.map((node) => [node.status, node.errorMessage])).toEqual([
      ['finish', undefined],
      ['finish', '[]'],
      ['failed', 'Workflow aborted by user'],
      ['failed', 'Workflow aborted by user'],
    ]);
    const output = await outputOf(emulator, id);
    expect(output.output.map((node) => [node.nodeId, node.startTime === undefined])).toEqual([
      ['node-research', false],
      ['node-outline', false],
      ['node-write', true],
    ]);
    clock.advance(60_000);
    expect((await statusOf(emulator, id)).status).toBe('failed');
  });

  it('succeeds silently on a finished execution and changes nothing', async () => {
    const { clock, emulator } = await manual();
    const id = await run(emulator, 'c-sample-linear');
    clock.advance(20_000);
    const { body } = await callJson(emulator, `/openapi/workflow/${id}/abort`, { method: 'POST' });
    expect(body).toEqual({ success: true, data: null });
    const status = await statusOf(emulator, id);
    expect(status.status).toBe('finish');
    expect(status.nodeExecutions.every((node) => node.status === 'finish')).toBe(true);
    expect(emulator.executions.get(id)?.abortedAt).toBeUndefined();
  });

  it('succeeds silently on a failed execution', async () => {
    const { clock, emulator } = await manual();
    const id = await run(emulator, 'c-sample-credit');
    clock.advance(1_500);
    const { body } = await callJson(emulator, `/openapi/workflow/${id}/abort`, { method: 'POST' });
    expect(body).toEqual({ success: true, data: null });
    expect((await statusOf(emulator, id)).nodeExecutions[1]?.errorMessage).toMatch(/^credit not available/);
  });

  it('answers an unknown execution with E1021', async () => {
    const { emulator } = await manual();
    const { status, body } = await callJson(emulator, '/openapi/workflow/we-nothing/abort', { method: 'POST' });
    expect(status).toBe(200);
    expect(body).toMatchObject({ success: false, errCode: 'E1021' });
  });
});

describe('output (service.md §4.2–§4.6)', () => {
  const messages: WorkflowDefinition = {
    canvasId: 'c-messages',
    nodes: [
      { id: 'node-start', type: 'start' },
      {
        id: 'node-writer',
        parents: ['node-start'],
        durationMs: 10_000,
        messages: [
          { content: 'abcdefgh', atMs: 1_000 },
          { content: 'second', reasoning: 'why', atMs: 4_000 },
          { content: '', reasoning: '', atMs: 5_000 },
        ],
      },
      { id: 'node-after', parents: ['node-writer'], durationMs: 1_000, messages: [{ content: 'later', reasoning: null }] },
    ],
  };

  it('lists only task nodes; errorMessage null until they end; no messages before they start', async () => {
    const { clock, emulator } = await manual([messages]);
    const id = await run(emulator, 'c-messages');
    clock.advance(FIRST_TICK_MS);
    const early = await outputOf(emulator, id);
    expect(early.output.map((node) => node.nodeId)).toEqual(['node-writer', 'node-after']);
    expect(early.output[0]).toMatchObject({ status: 'executing', errorMessage: null, messages: [] });
    expect(early.output[0]?.startTime).toBeDefined();
    expect(early.output[0]?.endTime).toBeUndefined();
    expect(early.output[1]).toEqual({ nodeId: 'node-after', title: 'node-after', status: 'init', errorMessage: null, messages: [] });
    clock.advance(12_000);
    const done = await outputOf(emulator, id);
    expect(done.output[0]?.errorMessage).toBe('[]');
    expect(done.output[1]?.messages).toEqual([{ messageId: expect.stringMatching(/^am-[a-z0-9]{24}$/) as unknown, content: 'later', reasoningContent: null, type: 'ai' }]);
  });

  it('service: whole messages appear in ~3 s batches, content never changes, empty ones are left out (service.md §4.4, §4.5)', async () => {
    const { clock, emulator } = await manual([messages]);
    const id = await run(emulator, 'c-messages');
    clock.advance(FIRST_TICK_MS);
    const contents = async (): Promise<string[]> => (await outputOf(emulator, id)).output[0]?.messages.map((message) => message.content) ?? [];
    clock.advance(1_000);
    expect(await contents()).toEqual([]);
    clock.advance(2_000);
    expect(await contents()).toEqual(['abcdefgh']);
    clock.advance(2_999);
    expect(await contents()).toEqual(['abcdefgh']);
    clock.advance(1);
    const full = (await outputOf(emulator, id)).output[0]?.messages;
    expect(full?.map((message) => [message.content, message.reasoningContent])).toEqual([
      ['abcdefgh', ''],
      ['second', 'why'],
    ]);
    clock.advance(10_000);
    expect((await outputOf(emulator, id)).output[0]?.messages).toEqual(full);
  });

  it('spec: a message grows while its node executes (service.md §4.4)', async () => {
    const { clock, emulator } = await manual([messages], 'spec');
    const id = await run(emulator, 'c-messages');
    clock.advance(500);
    const first = (await outputOf(emulator, id)).output[0]?.messages;
    expect(first?.map((message) => message.content)).toEqual(['abcd']);
    clock.advance(500);
    const second = (await outputOf(emulator, id)).output[0]?.messages;
    expect(second?.map((message) => message.content)).toEqual(['abcdefgh']);
    expect(second?.[0]?.messageId).toBe(first?.[0]?.messageId);
    clock.advance(1_500);
    expect((await outputOf(emulator, id)).output[0]?.messages.map((message) => [message.content, message.reasoningContent])).toEqual([
      ['abcdefgh', ''],
      ['sec', 'w'],
    ]);
  });

  it('keeps the partial output of a failed node', async () => {
    const { clock, emulator } = await manual();
    const id = await run(emulator, 'c-sample-branch-failure');
    clock.advance(FIRST_TICK_MS + 5_000);
    const french = (await outputOf(emulator, id)).output.find((node) => node.nodeId === 'node-translate-fr');
    expect(french).toMatchObject({ status: 'failed', errorMessage: '["Request timeout. Please try again later."]' });
    expect(french?.messages.map((message) => message.content)).toEqual(['Bonjour, le monde']);
  });

  it('shows files only once their node is finish, served without auth on the emulator host (service.md §4.6)', async () => {
    const { clock, emulator } = await manual();
    const id = await run(emulator, 'c-sample-files');
    clock.advance(FIRST_TICK_MS + 4_999);
    expect((await outputOf(emulator, id)).files).toEqual([]);
    clock.advance(1);
    const files = (await outputOf(emulator, id)).files;
    expect(files.map((file) => [file.name, file.type, file.nodeId])).toEqual([
      ['report.md', 'text/markdown', 'node-report'],
      ['figures.csv', 'text/csv', 'node-report'],
    ]);
    const report = files[0];
    expect(report?.url.startsWith(`${emulator.url}/drive/file/public/df-`)).toBe(true);
    const download = await fetch(report?.url ?? '');
    expect(download.status).toBe(200);
    expect(download.headers.get('content-type')).toBe('text/markdown');
    const text = await download.text();
    expect(text).toContain('# Quarterly report');
    expect(report?.size).toBe(new TextEncoder().encode(text).byteLength);
    // The chart starts on the tick after the report's end (7.5 s) and takes 4 s.
    clock.advance(5_000);
    const chart = (await outputOf(emulator, id)).files.find((file) => file.name === 'chart.png');
    expect(chart?.size).toBe(2_048);
    const png = new Uint8Array(await (await fetch(chart?.url ?? '')).arrayBuffer());
    expect(png.byteLength).toBe(2_048);
    // A real picture, so that a page previewing it shows an image (its decoding is checked in Chromium): the PNG signature, then the header chunk, and the end chunk last.
    expect([...png.subarray(0, 16)]).toEqual([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52]);
    expect(new TextDecoder().decode(png.subarray(-8, -4))).toBe('IEND');
  });

  it('serves no unknown file, and no known file under another name', async () => {
    const { clock, emulator } = await manual();
    const id = await run(emulator, 'c-sample-files');
    clock.advance(FIRST_TICK_MS + 5_000);
    const report = (await outputOf(emulator, id)).files[0];
    const renamed = await fetch((report?.url ?? '').replace(/report\.md$/, 'other.md'));
    expect(renamed.status).toBe(404);
    const unknown = await fetch(`${emulator.url}/drive/file/public/df-unknown/chart.png`);
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toEqual({ statusCode: 404, message: 'File not found', error: 'Not Found' });
  });
});
