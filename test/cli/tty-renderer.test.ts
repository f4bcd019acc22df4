import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { RunResult } from '../../src/index.js';
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

  it('colours only when asked (a TTY with colours: NO_COLOR turns them off)', () => {
    const colourCodes = (text: string): number => text.split(`${ESC}[3`).length - 1;
    expect(colourCodes(show(false))).toBe(0);
    expect(colourCodes(show(true))).toBeGreaterThan(0);
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
