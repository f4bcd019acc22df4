import fc from 'fast-check';
import { asapScheduler } from 'rxjs';
import { describe, expect, it } from 'vitest';
import type { NodeStatus } from '../../src/domain/model.js';
import { RunReader } from '../../src/runs/run-state.js';
import type { RunState } from '../../src/runs/run-state.js';
import type { RunEvent, RunResult } from '../../src/index.js';
import { plainRenderer } from '../../src/cli/progress/plain-renderer.js';
import { advanceProgress, initialProgress, nodeElapsedMs, progressCount, withOutputNodes } from '../../src/cli/progress/run-progress.js';

const executionId = 'we-1';
const result: RunResult = {
  executionId,
  status: 'finish',
  endedBy: 'finish',
  nodes: [],
  output: [],
  files: [{ name: 'a.md', type: 'text/markdown', size: 2048, url: 'http://127.0.0.1/v1/drive/file/public/df-1/a.md' }],
  failedNodes: [],
  runningNodes: [],
};

/** A quiet plain display at 1 s on its clock, and what it printed so far. */
function quietDisplay(): { readonly renderer: ReturnType<typeof plainRenderer>; readonly text: () => string } {
  let text = '';
  const renderer = plainRenderer({ write: (chunk: string) => (text += chunk) }, { quiet: true, now: () => 1000 });
  return { renderer, text: () => text };
}

/** A node that ended `failed` with `message`, and the result of a failed run of `nodes` whose output lists `failed` alone. */
function failedNode(nodeId: string, title: string, message: string) {
  const error = { message, messages: [message], raw: JSON.stringify([message]) };
  const node = { nodeId, status: 'failed' as const, rawStatus: 'failed', title, error };
  const resultOf = (nodes: RunResult['nodes']): RunResult => ({ ...result, status: 'failed', endedBy: 'failed', nodes, output: [{ ...node, messages: [] }], failedNodes: [node], files: [] });
  return { error, node, resultOf };
}

function scripted(): { events: readonly [number, RunEvent][] } {
  return {
    events: [
      [0, { type: 'started', executionId, canvasId: 'c-1', status: 'executing' }],
      [100, { type: 'node', executionId, nodeId: 'n-start', title: 'Start', status: 'finish' }],
      [100, { type: 'node', executionId, nodeId: 'n-a', title: 'Draft', status: 'init' }],
      [100, { type: 'node', executionId, nodeId: 'n-b', title: 'Review', status: 'init' }],
      [600, { type: 'node', executionId, nodeId: 'n-a', title: 'Draft', status: 'executing', previous: 'init' }],
      [900, { type: 'message', executionId, nodeId: 'n-a', messageId: 'm-1', role: 'ai', delta: 'line one\nline two', reasoningDelta: '', content: 'line one\nline two', reasoningContent: '', replaced: false }],
      [2100, { type: 'node', executionId, nodeId: 'n-a', title: 'Draft', status: 'finish', previous: 'executing' }],
      [2200, { type: 'file', executionId, file: result.files[0]! }],
      [2300, { type: 'finished', executionId, result }],
    ],
  };
}

/** Feeds the events as polls do: those of one time arrive together, each time's in a turn of its own. */
async function render(quiet: boolean): Promise<string> {
  let now = 0;
  let text = '';
  const renderer = plainRenderer({ write: (chunk: string) => (text += chunk) }, { quiet, now: () => now });
  for (const [at, event] of scripted().events) {
    if (at !== now) await Promise.resolve();
    now = at;
    renderer.event(event);
  }
  now = 2500;
  renderer.close(result);
  return text;
}

describe('the plain display', () => {
  it('prints a line per task node change with status and elapsed time, the output as it comes, and the files at the end; the count is over task nodes and whole from the first line', async () => {
    expect(await render(false)).toBe(
      [
        'Started execution we-1 of c-1',
        '[0/2] › Draft  executing  0.0s',
        '  Draft │ line one',
        '  Draft │ line two',
        '[1/2] ✔ Draft  finish  1.5s',
        '✔ Run finished in 2.5s · 1/2 nodes · execution we-1',
        'Files:',
        '  a.md  (text/markdown, 2.0 KiB)  http://127.0.0.1/v1/drive/file/public/df-1/a.md',
        '',
      ].join('\n'),
    );
  });

  it('closes a watched run with its age since the execution was created', () => {
    let text = '';
    const now = Date.parse('2026-01-01T00:10:00Z');
    const renderer = plainRenderer({ write: (chunk: string) => (text += chunk) }, { quiet: true, now: () => now, createdAt: '2026-01-01T00:08:30Z' });
    renderer.close(result);
    expect(text).toContain('✔ Run finished in 1m30s · 0/0 nodes · execution we-1');
  });

  it('says a run that someone aborted was aborted, not failed', () => {
    let text = '';
    const renderer = plainRenderer({ write: (chunk: string) => (text += chunk) }, { quiet: true, now: () => 0 });
    const aborted = { nodeId: 'n-a', status: 'failed' as const, rawStatus: 'failed', title: 'Draft', error: { message: 'Workflow aborted by user', messages: ['Workflow aborted by user'], raw: 'Workflow aborted by user' } };
    renderer.close({ ...result, status: 'failed', endedBy: 'failed', nodes: [aborted], failedNodes: [aborted], files: [] });
    expect(text).toMatch(/^✖ Run aborted in /u);
  });

  it('counts an aborted task as failed, not as done work, in its line and in the summary', async () => {
    let text = '';
    let now = 0;
    const renderer = plainRenderer({ write: (chunk: string) => (text += chunk) }, { quiet: true, now: () => now });
    const error = { message: 'Workflow aborted by user', messages: ['Workflow aborted by user'], raw: 'Workflow aborted by user' };
    renderer.event({ type: 'started', executionId, canvasId: 'c-1', status: 'executing' });
    renderer.event({ type: 'node', executionId, nodeId: 'n-a', title: 'Draft', status: 'executing' });
    renderer.event({ type: 'node', executionId, nodeId: 'n-b', title: 'Review', status: 'init' });
    await Promise.resolve();
    now = 1000;
    renderer.event({ type: 'node', executionId, nodeId: 'n-a', title: 'Draft', status: 'failed', previous: 'executing', error });
    const aborted = { nodeId: 'n-a', status: 'failed' as const, rawStatus: 'failed', title: 'Draft', error };
    renderer.close({ ...result, status: 'failed', endedBy: 'aborted', nodes: [aborted], failedNodes: [aborted], files: [] });
    expect(text).toContain('[0/2, 1 failed] ✖ Draft');
    expect(text).toMatch(/· 0\/2 nodes \(1 failed\) ·/u);
  });

  it('prints the line of a task first seen already failed, once the output says it is a task', async () => {
    // service.md §3.7: a node without credits fails as it starts, before the first status read sees it
    // executing; until the output lists it (§4.2) it could be a node with no work.
    const { renderer, text } = quietDisplay();
    const image = failedNode('n-image', 'Image', 'credit not available');
    renderer.event({ type: 'started', executionId, canvasId: 'c-1', status: 'executing' });
    await Promise.resolve();
    renderer.event({ type: 'node', executionId, nodeId: 'n-start', title: 'Start', status: 'finish' });
    renderer.event({ type: 'node', executionId, nodeId: 'n-image', title: 'Image', status: 'failed', error: image.error });
    renderer.event({ type: 'status', executionId, status: 'failed', previous: 'executing' });
    await Promise.resolve();
    const failed = image.resultOf([image.node]);
    renderer.event({ type: 'finished', executionId, result: failed });
    renderer.close(failed);
    expect(text()).toContain('[0/1, 1 failed] ✖ Image  failed');
    expect(text().indexOf('✖ Image  failed')).toBeLessThan(text().indexOf('✖ Run failed'));
    expect(text()).not.toContain('Start  finish');
  });

  it('names the branches still running after the failure in the summary, and how to stop them', () => {
    // service.md §3.3: a failed node fails the execution at once; the other branches run on.
    const { renderer, text } = quietDisplay();
    const french = failedNode('n-fr', 'French', 'Request timeout');
    const german = { nodeId: 'n-de', status: 'executing' as const, rawStatus: 'executing', title: 'German' };
    renderer.close({ ...french.resultOf([german, french.node]), runningNodes: [german] });
    expect(text()).toContain('  ✖ French: Request timeout');
    expect(text()).toContain(`  › German: still running after the failure; flowstream abort ${executionId} stops it`);
  });

  it('counts in the summary only the task nodes the output lists, not a content node seen waiting', async () => {
    // service.md §3.2: a content node (video, audio…) reads `init` until a tick after its task parent;
    // §4.2: the output lists the task nodes alone. Below a failed task it stays `init` (§3.4).
    const { renderer, text } = quietDisplay();
    const draft = failedNode('n-a', 'Draft', 'Request timeout');
    renderer.event({ type: 'started', executionId, canvasId: 'c-1', status: 'executing' });
    await Promise.resolve();
    renderer.event({ type: 'node', executionId, nodeId: 'n-a', title: 'Draft', status: 'executing' });
    renderer.event({ type: 'node', executionId, nodeId: 'n-video', title: 'Video', status: 'init' });
    await Promise.resolve();
    renderer.event({ type: 'node', executionId, nodeId: 'n-a', title: 'Draft', status: 'failed', previous: 'executing', error: draft.error });
    const video = { nodeId: 'n-video', status: 'init' as const, rawStatus: 'init', title: 'Video' };
    const failed = draft.resultOf([draft.node, video]);
    renderer.event({ type: 'finished', executionId, result: failed });
    renderer.close(failed);
    expect(text()).toMatch(/· 0\/1 nodes \(1 failed\) ·/u);
  });

  it('leaves the output out when quiet', async () => {
    expect(await render(true)).not.toContain('│');
  });
});

describe('run progress', () => {
  it('times a node from when it was seen executing to when it was seen done', () => {
    let progress = initialProgress(0);
    for (const [at, event] of scripted().events) progress = advanceProgress(progress, event, at);
    const draft = progress.nodes.find((node) => node.nodeId === 'n-a')!;
    expect(nodeElapsedMs(draft, 9999)).toBe(1500);
    expect(draft.lastLine).toBe('line two');
  });

  it('gives no time to a node first seen done, whose start nobody saw', () => {
    const progress = advanceProgress(initialProgress(0), { type: 'node', executionId, nodeId: 'n', status: 'finish', previous: 'init' }, 50);
    expect(nodeElapsedMs(progress.nodes[0]!, 100)).toBeUndefined();
  });

  it('times nodes by the run\'s own rule: for any events of a node, the display\'s elapsed time is the run state\'s', () => {
    const statuses = fc.constantFrom<NodeStatus>('init', 'waiting', 'executing', 'finish', 'failed', 'unknown');
    fc.assert(
      fc.property(fc.array(fc.tuple(statuses, fc.nat({ max: 5_000 })), { maxLength: 8 }), fc.nat({ max: 5_000 }), (steps, after) => {
        let now = 0;
        const reader = new RunReader({ now: () => now, schedule: asapScheduler.schedule.bind(asapScheduler) });
        let progress = initialProgress(0);
        let state: RunState | undefined;
        for (const [status, gap] of steps) {
          now += gap;
          const event: RunEvent = { type: 'node', executionId, nodeId: 'n', status };
          progress = advanceProgress(progress, event, now);
          state = reader.read([event]).state;
        }
        now += after;
        if (state !== undefined) state = reader.read([]).state;
        expect(nodeElapsedMs(progress.nodes[0] ?? { nodeId: 'n', title: 'n', status: 'init', lastLine: '', task: false }, now)).toBe(state?.nodes[0]?.elapsedMs);
      }),
    );
  });

  it('times a watched node by the service\'s own start and end, not from when the watch attached', () => {
    const attachedAt = Date.parse('2026-01-01T00:10:00Z');
    const progress = withOutputNodes(initialProgress(attachedAt), [
      { nodeId: 'n-done', title: 'Done', status: 'finish', rawStatus: 'finish', messages: [], startTime: '2026-01-01T00:00:00Z', endTime: '2026-01-01T00:02:30Z' },
      { nodeId: 'n-running', title: 'Running', status: 'executing', rawStatus: 'executing', messages: [], startTime: '2026-01-01T00:05:00Z' },
    ], attachedAt);
    expect(nodeElapsedMs(progress.nodes[0]!, attachedAt)).toBe(150_000);
    expect(nodeElapsedMs(progress.nodes[1]!, attachedAt + 1_000)).toBe(301_000);
    expect(progressCount(progress)).toEqual({ succeeded: 1, failed: 0, done: 1, total: 2 });
  });

  it('keeps the times it saw when the result brings the service\'s own (an accelerated clock), so that no node outlasts its run', () => {
    let progress = initialProgress(0);
    for (const [at, event] of scripted().events.slice(0, -1)) progress = advanceProgress(progress, event, at);
    // Eight seconds by the service's clock, running 4× faster than the display's.
    const output = [{ nodeId: 'n-a', title: 'Draft', status: 'finish' as const, rawStatus: 'finish', messages: [], startTime: new Date(600).toISOString(), endTime: new Date(8600).toISOString() }];
    progress = advanceProgress(progress, { type: 'finished', executionId, result: { ...result, output } }, 2300);
    const draft = progress.nodes.find((node) => node.nodeId === 'n-a')!;
    expect(nodeElapsedMs(draft, 2300)).toBe(1500);
    expect(nodeElapsedMs(draft, 2300)).toBeLessThanOrEqual(2300 - progress.startedAtMs);
  });

  it('counts a watched execution\'s time from its creation, and not from a creation time ahead of the display\'s clock', () => {
    const attachedAt = Date.parse('2026-01-01T00:10:00Z');
    expect(initialProgress(attachedAt, '2026-01-01T00:08:30Z').startedAtMs).toBe(attachedAt - 90_000);
    expect(initialProgress(attachedAt, '2026-01-01T00:11:00Z').startedAtMs).toBe(attachedAt);
    expect(initialProgress(attachedAt, 'not a time').startedAtMs).toBe(attachedAt);
  });

  it('takes a snapshot (a late subscriber of a shared run) as the run it stands for', () => {
    const state = {
      executionId,
      canvasId: 'c-1',
      status: 'executing' as const,
      nodes: [
        { nodeId: 'n-start', title: 'Start', status: 'finish' as const, messages: [], text: '', task: false },
        { nodeId: 'n-a', title: 'Draft', status: 'executing' as const, messages: [], text: 'line one\nline two', task: true, elapsedMs: 1_200 },
      ],
      files: [],
      progress: { succeeded: 0, failed: 0, done: 0, total: 1 },
      elapsedMs: 3_000,
    };
    const progress = advanceProgress(initialProgress(1_000), { type: 'snapshot', executionId, state }, 5_000);
    expect(progress).toMatchObject({ startedAtMs: 1_000, executionId, canvasId: 'c-1', status: 'executing' });
    const draft = progress.nodes.find((node) => node.nodeId === 'n-a')!;
    expect(nodeElapsedMs(draft, 5_000)).toBe(1_200);
    expect(draft.lastLine).toBe('line two');
    expect(progressCount(progress)).toEqual({ succeeded: 0, failed: 0, done: 0, total: 1 });
  });

  it('counts no start or memo node as work', () => {
    let progress = initialProgress(0);
    progress = advanceProgress(progress, { type: 'node', executionId, nodeId: 'n-start', status: 'finish' }, 0);
    progress = advanceProgress(progress, { type: 'node', executionId, nodeId: 'n-memo', status: 'finish' }, 0);
    progress = advanceProgress(progress, { type: 'node', executionId, nodeId: 'n-a', status: 'init' }, 0);
    expect(progressCount(progress)).toEqual({ succeeded: 0, failed: 0, done: 0, total: 1 });
  });
});

describe('the plain display through an outage', () => {
  it('prints one line as the outage starts and one as it ends, none per attempt', async () => {
    let now = 0;
    let text = '';
    const renderer = plainRenderer({ write: (chunk: string) => (text += chunk) }, { quiet: false, now: () => now });
    renderer.event({ type: 'started', executionId, canvasId: 'c-1', status: 'executing' });
    for (const [at, attempts] of [[1_000, 1], [2_000, 2], [4_000, 3]] as const) {
      now = at;
      renderer.event({ type: 'connection', executionId, reconnecting: { attempts, failingForMs: at - 1_000, error: 'HTTP 502' } });
      await Promise.resolve();
    }
    now = 7_500;
    renderer.event({ type: 'connection', executionId });
    renderer.close(undefined);
    expect(text.split('\n').filter((line) => line !== '')).toEqual([
      'Started execution we-1 of c-1',
      'Reconnecting: reads fail (HTTP 502); reading again with backoff',
      'Reconnected after 6.5s (3 failed attempts)',
    ]);
  });
});
