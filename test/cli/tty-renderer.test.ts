import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { RunResult } from '../../src/index.js';
import { displayWidth } from '../../src/cli/format/display-width.js';
import { renderMode } from '../../src/cli/progress/renderer.js';
import { ttyRenderer } from '../../src/cli/progress/tty-renderer.js';

const ESC = String.fromCharCode(27);
const executionId = 'we-1';
const result: RunResult = { executionId, status: 'finish', endedBy: 'finish', nodes: [], output: [], files: [], failedNodes: [], runningNodes: [] };

/** A stream that says it is a terminal of 80×24, and keeps what was written. */
function terminal(): { stream: NodeJS.WriteStream; text: () => string } {
  const stream = Object.assign(new PassThrough(), { isTTY: true, columns: 80, rows: 24 }) as unknown as NodeJS.WriteStream;
  let text = '';
  (stream as unknown as PassThrough).on('data', (chunk: Buffer) => (text += chunk.toString()));
  return { stream, text: () => text };
}

/** What the display wrote without its colours, cursor moves and erasures. */
function withoutEscapes(text: string): string {
  // eslint-disable-next-line no-control-regex -- removing the escape sequences is the point
  return text.replace(/\u001b\[[0-9;?]*[A-Za-z]/gu, '');
}

function show(colors: boolean): string {
  const { stream, text } = terminal();
  let now = 0;
  const renderer = ttyRenderer(stream, { quiet: false, now: () => now, colors });
  renderer.event({ type: 'started', executionId, canvasId: 'c-1', status: 'executing' });
  renderer.event({ type: 'node', executionId, nodeId: 'n-a', title: 'Draft', status: 'executing' });
  now = 1200;
  renderer.event({ type: 'message', executionId, nodeId: 'n-a', messageId: 'm', role: 'ai', delta: 'Hello', reasoningDelta: '', content: 'Hello', reasoningContent: '', replaced: false });
  renderer.event({ type: 'node', executionId, nodeId: 'n-a', title: 'Draft', status: 'finish', previous: 'executing' });
  renderer.event({ type: 'finished', executionId, result });
  renderer.close(result);
  return text();
}

describe('the live display', () => {
  it('draws a bar for the run and a line per node, prints output above it and ends with the summary', () => {
    const text = show(false);
    expect(text).toContain('1/1 nodes');
    expect(text).toContain('█'.repeat(20));
    expect(text).toContain('✔ Draft  finish  1.2s');
    expect(text).toContain('Draft │ Hello');
    expect(text).toContain('✔ Run finished');
  });

  it('leaves a branch still running after a failure marked running in the last frame, not failed', () => {
    // service.md §3.3: the execution failed at once; German runs on. The run's ✖ is the header's alone.
    const { stream, text } = terminal();
    const renderer = ttyRenderer(stream, { quiet: true, now: () => 1000, colors: false });
    const error = { message: 'Request timeout', messages: ['Request timeout'], raw: '["Request timeout"]' };
    renderer.event({ type: 'started', executionId, canvasId: 'c-1', status: 'executing' });
    renderer.event({ type: 'node', executionId, nodeId: 'n-de', title: 'German', status: 'executing' });
    renderer.event({ type: 'node', executionId, nodeId: 'n-fr', title: 'French', status: 'failed', previous: 'executing', error });
    const german = { nodeId: 'n-de', status: 'executing' as const, rawStatus: 'executing', title: 'German' };
    const french = { nodeId: 'n-fr', status: 'failed' as const, rawStatus: 'failed', title: 'French', error };
    const output = [{ ...german, messages: [] }, { ...french, messages: [] }];
    const failed: RunResult = { ...result, status: 'failed', endedBy: 'failed', nodes: [german, french], output, failedNodes: [french], runningNodes: [german] };
    renderer.event({ type: 'finished', executionId, result: failed });
    renderer.close(failed);
    const frames = withoutEscapes(text());
    expect(frames).toContain('✖ French  failed');
    expect(frames).not.toMatch(/✖ German/u);
    expect(frames).toMatch(/› German {2}executing/u);
  });

  it('colours only when asked (a TTY with colours: NO_COLOR turns them off)', () => {
    const colourCodes = (text: string): number => text.split(`${ESC}[3`).length - 1;
    expect(colourCodes(show(false))).toBe(0);
    expect(colourCodes(show(true))).toBeGreaterThan(0);
  });
});

/** The lines of the last frame that holds `marker` under a running node, without colours. */
async function runningLine(content: string, marker: string): Promise<string | undefined> {
  const { stream, text } = terminal();
  const renderer = ttyRenderer(stream, { quiet: true, now: () => 0, colors: true });
  renderer.event({ type: 'started', executionId, canvasId: 'c-1', status: 'executing' });
  renderer.event({ type: 'node', executionId, nodeId: 'n-a', title: 'Draft', status: 'executing' });
  renderer.event({ type: 'message', executionId, nodeId: 'n-a', messageId: 'm', role: 'ai', delta: content, reasoningDelta: '', content, reasoningContent: '', replaced: false });
  await Promise.resolve();
  renderer.close(undefined);
  const lines = withoutEscapes(text()).split('\n');
  return lines.findLast((line) => line.startsWith(`      ${marker}`));
}

describe('the text under a running node', () => {
  it('is cut to the terminal by display width: a Chinese line takes at most 79 of 80 columns', async () => {
    const line = await runningLine('这是一个很长的中文句子'.repeat(8), '这是');
    expect(line).toBeDefined();
    expect(line!.endsWith('…')).toBe(true);
    expect(displayWidth(line!)).toBeLessThanOrEqual(79);
    expect(displayWidth(line!)).toBeGreaterThanOrEqual(78);
  });

  it('never cuts an emoji in half', async () => {
    const line = await runningLine(`${'x'.repeat(72)}👍🏽👍🏽👍🏽`, 'x');
    expect(line).toBe(`      ${'x'.repeat(72)}…`);
    expect(line).not.toContain('\uFFFD');
  });
});

describe('the live display through an outage', () => {
  it('shows a reconnecting line in place while reads fail, with since when and the attempt, and drops it once they succeed', async () => {
    const { stream, text } = terminal();
    let now = 0;
    const renderer = ttyRenderer(stream, { quiet: false, now: () => now, colors: false });
    renderer.event({ type: 'started', executionId, canvasId: 'c-1', status: 'executing' });
    renderer.event({ type: 'node', executionId, nodeId: 'n-a', title: 'Draft', status: 'executing' });
    now = 2_000;
    renderer.event({ type: 'connection', executionId, reconnecting: { attempts: 1, failingForMs: 0, error: 'HTTP 503' } });
    now = 14_000;
    renderer.event({ type: 'connection', executionId, reconnecting: { attempts: 4, failingForMs: 12_000, error: 'network error' } });
    await Promise.resolve();
    expect(text()).toContain('reconnecting… network error (since 12.0s, attempt 4)');
    const before = text().length;
    now = 20_000;
    renderer.event({ type: 'connection', executionId });
    await Promise.resolve();
    const after = text().slice(before);
    expect(after).toContain('Draft');
    expect(after).not.toContain('reconnecting');
    renderer.close(undefined);
  });
});

describe('renderMode', () => {
  it.each([
    [{ json: true, isTTY: true }, 'json'],
    [{ json: false, isTTY: true }, 'tty'],
    [{ json: false, isTTY: false }, 'plain'],
    [{ json: false, isTTY: undefined }, 'plain'],
  ] as const)('%o → %s', (options, mode) => {
    expect(renderMode(options)).toBe(mode);
  });
});

describe('output printed above the live display', () => {
  it('is wrapped to the terminal by display width: a long Chinese message takes at most 80 columns a line, every character kept', async () => {
    const { stream, text } = terminal();
    const renderer = ttyRenderer(stream, { quiet: false, now: () => 0, colors: false });
    const content = '这是一个很长的中文句子'.repeat(12);
    renderer.event({ type: 'started', executionId, canvasId: 'c-1', status: 'executing' });
    renderer.event({ type: 'node', executionId, nodeId: 'n-a', title: 'Draft', status: 'executing' });
    renderer.event({ type: 'message', executionId, nodeId: 'n-a', messageId: 'm', role: 'ai', delta: content, reasoningDelta: '', content, reasoningContent: '', replaced: false });
    await Promise.resolve();
    renderer.close(undefined);
    const lines = withoutEscapes(text()).split('\n');
    const printed = lines.filter((line) => /[这是]/u.test(line) && !line.startsWith('      '));
    expect(printed.length).toBeGreaterThan(1);
    for (const line of printed) expect(displayWidth(line)).toBeLessThanOrEqual(80);
    expect(printed.join('').replace('Draft │ ', '').replace(/\s/gu, '')).toBe(content);
  });
});
