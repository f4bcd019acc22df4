import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createEmulator, type Emulator } from '../../src/emulator/index.js';
import { scrubbedEnv, startProcess } from '../cli/support/child-process.js';

// Each example as a user runs it (`npx tsx examples/<name>.ts`), in a scrubbed environment: without
// FLOWSTREAM_* it starts its own emulator; some are pointed at an emulator of this process so that
// the test can read its request log. tsx is loaded into node (`node --import tsx`, tsx's in-process
// form) rather than its CLI, whose parent process relays a SIGINT to the script and SIGKILLs it when
// the script is slow to answer — a loaded machine would then decide the Ctrl-C test.

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
let emulator: Emulator;
beforeAll(async () => {
  emulator = await createEmulator({ speed: 10, rateLimit: false });
});
afterAll(async () => {
  await emulator.close();
});

function example(name: string, args: readonly string[] = [], env: Record<string, string> = {}): ReturnType<typeof startProcess> {
  return startProcess(process.execPath, ['--import', 'tsx', `examples/${name}.ts`, ...args], { env: scrubbedEnv(env), cwd: ROOT });
}

describe('examples/single-run.ts', () => {
  it('shows node changes and text as they come, then the end', async () => {
    const run = example('single-run');
    expect(await run.exited(60_000)).toBe(0);
    expect(run.stdout()).toMatch(/^started we-/mu);
    expect(run.stdout()).toContain('node Compare pricing:');
    expect(run.stdout()).toContain('Summarise the market says: A crowded market with room at the low end.');
    expect(run.stdout()).toContain('finished: finish, 3 task nodes');
  }, 60_000);

  it('reports a failed workflow and exits 1', async () => {
    const run = example('single-run', ['c-sample-branch-failure']);
    expect(await run.exited(60_000)).toBe(1);
    expect(run.stdout()).toContain('failed: Translate to French: Request timeout. Please try again later.');
  }, 60_000);
});

describe('examples/single-run.ts on Ctrl-C', () => {
  it('aborts the execution once and exits 130', async () => {
    const run = example('single-run', ['c-sample-timeout'], { FLOWSTREAM_API_KEY: emulator.apiKey, FLOWSTREAM_BASE_URL: emulator.url });
    const [, executionId = ''] = await run.waitFor(/^started (we-\S+)$/mu, 30_000);
    run.child.kill('SIGINT');
    expect(await run.exited(60_000)).toBe(130);
    expect(run.stdout()).toContain('interrupted: the execution was aborted');
    expect(emulator.requests.list({ endpoint: 'abort', executionId })).toHaveLength(1);
  }, 60_000);
});

describe('examples/telemetry.ts', () => {
  it("prints a run's spans with the console exporter, then its span tree and metrics", async () => {
    const run = example('telemetry');
    expect(await run.exited(60_000)).toBe(0);
    const out = run.stdout();
    expect(out).toContain("name: 'flowstream.request'");
    expect(out).toMatch(/^ {2}flowstream\.run {2}c-sample-files ended by finish, \d+ node events, 3 files/mu);
    expect(out).toMatch(/^ {4}flowstream\.request {2}POST openapi\/workflow\/\{canvasId\}\/run → 200/mu);
    expect(out).toMatch(/^ {2}flowstream\.runs \{"flowstream\.ended_by":"finish","flowstream\.run\.kind":"run"\} 1$/mu);
  }, 60_000);
});

describe('examples/upload-run-download.ts', () => {
  it('uploads a file, runs a workflow with it and downloads the output files', async () => {
    const run = example('upload-run-download');
    expect(await run.exited(60_000)).toBe(0);
    expect(run.stdout()).toMatch(/^uploaded notes\.md as of_\S+$/mu);
    expect(run.stdout()).toMatch(/^run we-\S+: finish$/mu);
    const [, path = ''] = /^downloaded summary\.md \(\d+ bytes\) to (\S+)$/mu.exec(run.stdout()) ?? [];
    expect(await readFile(path, 'utf8')).toBe('# Summary\n\nThree lines.\n');
  }, 60_000);
});

describe('examples/sse-service.ts', () => {
  /** Reads server-sent events until `stop` says enough; returns the events read. */
  async function readEvents(body: ReadableStream<Uint8Array>, stop: (events: readonly { event: string; data: unknown }[]) => boolean): Promise<{ event: string; data: unknown }[]> {
    const events: { event: string; data: unknown }[] = [];
    const reader = body.getReader();
    const decoder = new TextDecoder();
    let buffer = '';
    while (!stop(events)) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true });
      for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
        const fields = Object.fromEntries(buffer.slice(0, end).split('\n').map((line) => [line.slice(0, line.indexOf(':')), line.slice(line.indexOf(':') + 2)]));
        events.push({ event: fields['event'] ?? '', data: JSON.parse(fields['data'] ?? 'null') });
        buffer = buffer.slice(end + 2);
      }
    }
    return events;
  }

  async function until(condition: () => boolean, what: string): Promise<void> {
    for (let tries = 0; !condition(); tries += 1) {
      if (tries > 200) throw new Error(`Timed out waiting for ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  it('streams a run to the end as events', async () => {
    const service = example('sse-service', [], { FLOWSTREAM_API_KEY: emulator.apiKey, FLOWSTREAM_BASE_URL: emulator.url });
    try {
      const [, url = ''] = await service.waitFor(/listening on (http:\/\/127\.0\.0\.1:\d+)/u, 30_000);
      const response = await fetch(`${url}/runs/c-sample-parallel`);
      expect(response.headers.get('content-type')).toBe('text/event-stream');
      const events = await readEvents(response.body!, () => false);
      expect(events[0]?.event).toBe('started');
      expect(events.at(-1)).toMatchObject({ event: 'finished', data: { result: { status: 'finish' } } });
    } finally {
      service.child.kill('SIGINT');
      await service.exited();
    }
  }, 60_000);

  it('aborts the execution exactly once when the client disconnects', async () => {
    const service = example('sse-service', [], { FLOWSTREAM_API_KEY: emulator.apiKey, FLOWSTREAM_BASE_URL: emulator.url });
    try {
      const [, url = ''] = await service.waitFor(/listening on (http:\/\/127\.0\.0\.1:\d+)/u, 30_000);
      const disconnect = new AbortController();
      const response = await fetch(`${url}/runs/c-sample-timeout`, { signal: disconnect.signal });
      const events = await readEvents(response.body!, (read) => read.some((event) => event.event === 'node'));
      const started = events.find((event) => event.event === 'started')?.data as { executionId: string };
      disconnect.abort();
      await until(() => emulator.executions.get(started.executionId)?.status === 'failed', 'the abort');
      expect(emulator.requests.list({ endpoint: 'abort', executionId: started.executionId })).toHaveLength(1);
      expect(emulator.executions.get(started.executionId)?.nodes.some((node) => node.errorMessage === 'Workflow aborted by user')).toBe(true);
    } finally {
      service.child.kill('SIGINT');
      expect(await service.exited()).toBe(0);
    }
  }, 60_000);
});

describe('examples/chat-bot-runs.ts', () => {
  it('refuses a user\'s third run before it starts, aborts the cancelled one once, and lists the files of the others', async () => {
    const runsBefore = emulator.requests.list({ endpoint: 'run' }).length;
    const run = example('chat-bot-runs', [], { FLOWSTREAM_API_KEY: emulator.apiKey, FLOWSTREAM_BASE_URL: emulator.url });
    expect(await run.exited(60_000)).toBe(0);
    const out = run.stdout();
    expect(out).toContain('[ana] c-sample-parallel: refused: 2 runs are already active for "ana"');
    expect(out).toContain('[ana] c-sample-files: finish, files: report.md, figures.csv, chart.png');
    expect(out).toMatch(/^\[bo\] c-sample-linear: finish$/mu);
    expect(out).toMatch(/^\[ana\] c-sample-files: \d+\/2 steps/mu);
    const cancelled = /cancelled (we-[a-z0-9]+)/u.exec(out)?.[1] ?? '';
    // The refused run started nothing: three starts for four requests.
    expect(emulator.requests.list({ endpoint: 'run' }).length - runsBefore).toBe(3);
    await vi.waitFor(() => { expect(emulator.requests.list({ endpoint: 'abort', executionId: cancelled })).toHaveLength(1); }, { timeout: 10_000 });
  }, 60_000);
});

describe('examples/limited-handles.ts', () => {
  it('runs one handle at a time per user — upload, start and result in one slot — and refuses a quick question meanwhile', async () => {
    const runsBefore = emulator.requests.list({ endpoint: 'run' }).length;
    const run = example('limited-handles', [], { FLOWSTREAM_API_KEY: emulator.apiKey, FLOWSTREAM_BASE_URL: emulator.url });
    expect(await run.exited(60_000)).toBe(0);
    const ana = run.stdout().split('\n').filter((line) => line.startsWith('[ana]'));
    expect(ana[0]).toBe('[ana] quick question refused: a run is going');
    // The second request starts only once the first ended: the slot covered the whole handle.
    expect(ana.slice(1).map((line) => line.replace(/ as we-\S+$/u, ''))).toEqual([
      '[ana] started c-sample-linear',
      '[ana] ended c-sample-linear: finish',
      '[ana] started c-sample-parallel',
      '[ana] ended c-sample-parallel: finish',
    ]);
    expect(run.stdout()).toContain('[bo] ended c-sample-linear: finish');
    expect(emulator.requests.list({ endpoint: 'run' }).length - runsBefore).toBe(3);
  }, 60_000);
});
