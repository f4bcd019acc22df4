import { mkdtemp, readFile, truncate, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createEmulator, type Emulator, type WorkflowDefinition } from '../../src/emulator/index.js';
import { createClient } from '../../src/index.js';
import { type RunningProcess, scrubbedEnv, startProcess } from './support/child-process.js';
import { buildCommand, flowstream, flowstreamInTerminal, ROOT } from './support/built-cli.js';
import { LONG_BRANCH } from '../support/long-branch.js';

// The command as a user runs it: the built dist/cli/main.js, spawned with only PATH, HOME and the
// FLOWSTREAM_* variables, against an emulator of this process on 127.0.0.1. `npm start` is tested
// here too, last: it rebuilds dist/, which must not happen while other tests spawn the command.

const STEPS: WorkflowDefinition = {
  canvasId: 'c-test-steps',
  title: 'Two steps',
  nodes: [
    { id: 'node-start', type: 'start', title: 'Start' },
    { id: 'node-gather', title: 'Gather facts', parents: ['node-start'], durationMs: 40_000,
      messages: [{ content: 'First fact found.', atMs: 10_000 }, { content: 'Second fact found.', atMs: 30_000 }] },
    { id: 'node-write', title: 'Write notes', parents: ['node-gather'], durationMs: 20_000,
      messages: [{ content: 'Notes written.' }],
      files: [{ name: 'notes.md', type: 'text/markdown', content: '# Notes\n' }] },
  ],
};

const OSC52 = '\u001b]52;c;cm0gLXJmIH4=\u0007';
/** Titles and text carrying what a terminal would execute: a clipboard write, a cursor move, a C1 CSI, a bidi override. */
const EVIL: WorkflowDefinition = {
  canvasId: 'c-test-evil',
  title: `Evil${OSC52} title`,
  nodes: [
    { id: 'node-start', type: 'start', title: 'Start' },
    { id: 'node-evil', title: 'Evil\u001b[2J\u001b[H node\u202e', parents: ['node-start'], durationMs: 2_000,
      messages: [{ content: `Line one${OSC52}\nLine\u009b31m two` }] },
  ],
};

let emulator: Emulator;
let connected: Record<string, string>;

beforeAll(async () => {
  await buildCommand();
  emulator = await createEmulator({ speed: 20, rateLimit: false, workflows: [EVIL, LONG_BRANCH, STEPS] });
  connected = { FLOWSTREAM_API_KEY: emulator.apiKey, FLOWSTREAM_BASE_URL: emulator.url };
}, 180_000);

afterAll(async () => {
  await emulator.close();
});

const ANSI = String.fromCharCode(27);

function abortsOf(executionId: string): number {
  return emulator.requests.list({ endpoint: 'abort', executionId }).length;
}

describe('server text in the terminal', { timeout: 60_000 }, () => {
  it('prints titles and messages with every escape sequence and control character removed', async () => {
    for (const args of [['run', 'c-test-evil'], ['search', 'Evil'], ['show', 'c-test-evil']]) {
      const cli = flowstream(args, connected);
      expect(await cli.exited()).toBe(0);
      const out = cli.stdout() + cli.stderr();
      expect(out).not.toContain(ANSI);
      // eslint-disable-next-line no-control-regex -- looking for control characters is the point
      expect(out).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e]/u);
      expect(out).not.toContain(']52;');
      // What is left once the sequences are out: the run's node and message text, the others' title.
      const kept = args[0] === 'run' ? ['Evil node', 'Line one', 'Line two'] : ['Evil title'];
      for (const text of kept) expect(args[0] === 'run' ? cli.stdout() : out).toContain(text);
    }
  });
});

describe('flowstream run', { timeout: 60_000 }, () => {
  it('shows progress as plain lines in a pipe: nodes with status and elapsed time, partial output, files with URLs', async () => {
    const cli = flowstream(['run', 'c-test-steps'], connected);
    expect(await cli.exited()).toBe(0);
    const out = cli.stdout();
    expect(out).toMatch(/^Started execution we-[a-z0-9]+ of c-test-steps$/mu);
    expect(out).toMatch(/^\[\d+\/\d+\] › Gather facts {2}executing {2}\d+\.\ds$/mu);
    expect(out).toMatch(/^\[\d+\/\d+\] ✔ Gather facts {2}finish {2}\d+\.\ds$/mu);
    expect(out).toMatch(/^ {2}Gather facts │ First fact found\.$/mu);
    expect(out).toMatch(/^ {2}Gather facts │ Second fact found\.$/mu);
    // The start node is no work: two task nodes, counted from the first line on.
    expect(out).toMatch(/^✔ Run finished in \d+\.\ds · 2\/2 nodes · execution we-/mu);
    expect(out).not.toMatch(/^\[\d+\/1\]/mu);
    expect(out).not.toContain('Start  finish');
    expect(out).toContain(`notes.md  (text/markdown, 8 B)  ${emulator.url}/drive/file/public/`);
    expect(out).not.toContain(ANSI);
  });

  it('leaves partial output out with --quiet', async () => {
    const cli = flowstream(['run', 'c-sample-parallel', '--quiet'], connected);
    expect(await cli.exited()).toBe(0);
    expect(cli.stdout()).not.toContain('│');
    expect(cli.stdout()).toContain('✔ Run finished');
  });

  it('prints one JSON event per line with --json, from started to finished', async () => {
    const cli = flowstream(['run', 'c-sample-parallel', '--json'], connected);
    expect(await cli.exited()).toBe(0);
    const events = cli.stdout().trimEnd().split('\n').map((line) => JSON.parse(line) as { type: string; result?: { status: string } });
    expect(events[0]?.type).toBe('started');
    expect(events.at(-1)).toMatchObject({ type: 'finished', result: { status: 'finish' } });
    expect(events.filter((event) => event.type === 'node').length).toBeGreaterThanOrEqual(4);
    expect(events.some((event) => event.type === 'message')).toBe(true);
    // Each line says when it was shown.
    for (const line of cli.stdout().trimEnd().split('\n')) expect((JSON.parse(line) as { at: string }).at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/u);
  });

  it('passes --var values and uploads --file files as fileKeys', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'flowstream-cli-'));
    const path = join(dir, 'notes.md');
    await writeFile(path, '# my notes\n');
    const cli = flowstream(['run', 'c-sample-variables', '--var', 'topic=tides', '--var', 'tone=casual', '--file', `attachment=${path}`, '--quiet'], connected);
    expect(await cli.exited()).toBe(0);
    const executionId = /execution (we-[a-z0-9]+)/u.exec(cli.stdout())?.[1] ?? '';
    const variables = emulator.executions.get(executionId)?.variables ?? [];
    expect(variables).toEqual(
      expect.arrayContaining([
        { name: 'topic', kind: 'text', value: 'tides' },
        { name: 'tone', kind: 'text', value: 'casual' },
        { name: 'attachment', kind: 'files', files: [{ fileKey: expect.stringMatching(/^of_/u) as unknown, fileName: 'notes.md' }] },
      ]),
    );
  });
});

describe('exit codes', { timeout: 60_000 }, () => {
  it('exits 1 when the workflow fails, naming the failed node', async () => {
    const cli = flowstream(['run', 'c-sample-branch-failure'], connected);
    expect(await cli.exited()).toBe(1);
    expect(cli.stdout()).toContain('✖ Run failed');
    expect(cli.stdout()).toContain('Translate to French: Request timeout. Please try again later.');
  });

  it('names the branch still running after the failure, and how to stop it, counting no failed task as done', async () => {
    const cli = flowstream(['run', 'c-test-long-branch'], connected);
    expect(await cli.exited()).toBe(1);
    // service.md §3.3: Survey runs on after Check failed and failed the execution.
    const executionId = /execution (we-[a-z0-9]+)/u.exec(cli.stdout())?.[1] ?? '';
    expect(cli.stdout()).toMatch(/^✖ Run failed in \d+\.\ds · 0\/2 nodes \(1 failed\) · /mu);
    expect(cli.stdout()).toContain('✖ Check: Check failed.');
    expect(cli.stdout()).toContain(`› Survey: still running after the failure; flowstream abort ${executionId} stops it`);
    expect(abortsOf(executionId)).toBe(0);
  });

  it('prints the line of a task that failed before any read saw it executing', async () => {
    const cli = flowstream(['run', 'c-sample-credit'], connected);
    expect(await cli.exited()).toBe(1);
    expect(cli.stdout()).toMatch(/^\[0\/1, 1 failed\] ✖ Generate the image {2}failed\b.*credit not available/mu);
  });

  it('exits 1 after --timeout, having aborted the execution once', async () => {
    const cli = flowstream(['run', 'c-sample-timeout', '--timeout', '1'], connected);
    expect(await cli.exited()).toBe(1);
    const executionId = /execution (we-[a-z0-9]+)/u.exec(cli.stdout())?.[1] ?? '';
    expect(abortsOf(executionId)).toBe(1);
    // Said in the flag's own unit, and without suggesting to watch what was aborted.
    expect(cli.stderr()).toContain(`The run did not finish within --timeout 1 s; execution ${executionId} was aborted.`);
    expect(cli.stderr()).not.toContain('may still be running');
    expect(cli.stderr()).not.toContain('1000 ms');
  });

  it.each([
    ['a misspelt variable', ['--var', 'topik=tides'], 'did you mean `topic`?'],
    ['a missing required variable', ['--var', 'tone=casual'], 'variables.topic: is required'],
    ['a value outside the options', ['--var', 'topic=tides', '--var', 'tone=rude'], '"rude" is not one of its options'],
  ])('exits 2 for %s, checked against the plan, starting nothing', async (_case, vars, message) => {
    const before = emulator.requests.list({ endpoint: 'run' }).length;
    const cli = flowstream(['run', 'c-sample-variables', ...vars], connected);
    expect(await cli.exited()).toBe(2);
    expect(cli.stderr()).toContain(message);
    expect(emulator.requests.list({ endpoint: 'run' }).length).toBe(before);
  });

  it('starts without the check with --no-check', async () => {
    const before = emulator.requests.list({ endpoint: 'run' }).length;
    const cli = flowstream(['run', 'c-sample-variables', '--var', 'topic=tides', '--var', 'tone=rude', '--no-check', '--quiet'], connected);
    expect(await cli.exited()).toBe(0);
    expect(emulator.requests.list({ endpoint: 'run' }).length).toBe(before + 1);
  });

  it('says to check the id, not to watch it again, for an execution that does not exist', async () => {
    const cli = flowstream(['watch', 'we-nope'], connected);
    expect(await cli.exited()).toBe(3);
    expect(cli.stderr()).toContain('Check the execution id');
    expect(cli.stderr()).not.toContain('flowstream watch we-nope');
  });

  it('says what is wrong with a key that lacks its rf_ prefix, sending nothing', async () => {
    const before = emulator.requests.list().length;
    const cli = flowstream(['search'], { ...connected, FLOWSTREAM_API_KEY: emulator.apiKey.slice(3) });
    expect(await cli.exited()).toBe(2);
    expect(cli.stderr()).toContain('does not start with rf_');
    expect(cli.stderr()).not.toContain('Missing API key');
    expect(emulator.requests.list().length).toBe(before);
  });

  it('prints its version', async () => {
    const cli = flowstream(['--version'], connected);
    expect(await cli.exited()).toBe(0);
    expect(cli.stdout().trim()).toMatch(/^\d+\.\d+\.\d+/u);
  });

  it.each([
    ['an unknown option', ['run', 'c-sample-linear', '--nope']],
    ['a missing canvas id', ['run']],
    ['a --timeout that is not a number', ['run', 'c-sample-linear', '--timeout', 'soon']],
    ['a --var without =', ['run', 'c-sample-linear', '--var', 'topic']],
    ['an unknown command', ['launch']],
    ['a --file that cannot be read', ['run', 'c-sample-variables', '--file', 'attachment=/nonexistent/notes.md']],
  ])('exits 2 for %s, sending nothing', async (_case, args) => {
    const before = emulator.requests.list().length;
    const cli = flowstream(args, connected);
    expect(await cli.exited()).toBe(2);
    expect(cli.stderr()).not.toBe('');
    expect(emulator.requests.list().length).toBe(before);
  });

  it('exits 3 when the API refuses the key, without showing the key', async () => {
    const wrongKey = `rf_${'x'.repeat(32)}`;
    const cli = flowstream(['run', 'c-sample-linear'], { ...connected, FLOWSTREAM_API_KEY: wrongKey });
    expect(await cli.exited()).toBe(3);
    expect(cli.stderr()).toContain('Check FLOWSTREAM_API_KEY');
    expect(cli.stderr()).not.toContain(wrongKey);
  });

  it('exits 3 for an unknown workflow', async () => {
    const cli = flowstream(['show', 'c-does-not-exist'], connected);
    expect(await cli.exited()).toBe(3);
    expect(cli.stderr()).toMatch(/^Error: /mu);
  });
});

/** A port on 127.0.0.1 where nothing listens: one the system just handed out and took back. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  return typeof address === 'object' && address !== null ? address.port : 0;
}

describe('what a failure says', { timeout: 60_000 }, () => {
  it('calls a base URL that answers 404 for its routes wrong, rather than the id', async () => {
    const wrong = emulator.url.replace(/\/v1$/u, '/api/v1');
    for (const args of [['watch', 'we-abcdefghijklmnopqrstuvwx'], ['search'], ['show', 'c-sample-linear']]) {
      const cli = flowstream([...args, '--base-url', wrong], connected);
      expect(await cli.exited()).toBe(3);
      expect(cli.stderr()).toContain(`Error: The API base URL looks wrong: ${wrong} has no`);
      expect(cli.stderr()).toContain('Check FLOWSTREAM_BASE_URL (or --base-url)');
      expect(cli.stderr()).not.toMatch(/Check the (execution|workflow) id/u);
    }
  });

  it('says that a refused connection sent nothing, naming the cause and the URL', async () => {
    const url = `http://127.0.0.1:${await closedPort()}/v1`;
    const cli = flowstream(['run', 'c-sample-linear', '--no-check'], { ...connected, FLOWSTREAM_BASE_URL: url });
    expect(await cli.exited()).toBe(3);
    expect(cli.stderr()).toContain(`Error: Could not connect to ${url} (ECONNREFUSED) for run: nothing was sent, so no execution was started.`);
    expect(cli.stderr()).not.toContain('may have started');
    expect(cli.stderr()).not.toContain(emulator.apiKey);
  });

  it('names the workflow that was not found', async () => {
    const cli = flowstream(['run', 'c-nope'], connected);
    expect(await cli.exited()).toBe(3);
    expect(cli.stderr()).toContain('Error: The workflow c-nope was not found (E1000).');
    expect(cli.stderr()).not.toContain('Not found on detail');
  });

  it('names the execution that was not found', async () => {
    const cli = flowstream(['watch', 'we-abcdefghijklmnopqrstuvwx'], connected);
    expect(await cli.exited()).toBe(3);
    expect(cli.stderr()).toContain('Error: The execution we-abcdefghijklmnopqrstuvwx was not found (E1021).');
  });

  it('says a file over 50 MiB is over the limit, uploading nothing', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'flowstream-cli-'));
    const path = join(dir, 'big.bin');
    await writeFile(path, '');
    await truncate(path, 50 * 1024 * 1024 + 1);
    const before = emulator.requests.list().length;
    for (const args of [['upload', path], ['run', 'c-sample-variables', '--var', 'topic=tides', '--file', `attachment=${path}`]]) {
      const cli = flowstream(args, connected);
      expect(await cli.exited()).toBe(2);
      expect(cli.stderr()).toContain("the file is 52,428,801 bytes, over the service's limit of 50 MiB (52,428,800 bytes) per file. Nothing was uploaded.");
      expect(cli.stderr()).not.toContain('Invalid path');
    }
    expect(emulator.requests.list().length).toBe(before);
  });

  it('says --file takes name=path', async () => {
    const cli = flowstream(['run', 'c-sample-variables', '--file', 'attachment'], connected);
    expect(await cli.exited()).toBe(2);
    expect(cli.stderr()).toContain('--file expects name=path (got "attachment")');
  });
});

describe('Ctrl-C', { timeout: 60_000 }, () => {
  it('aborts the execution exactly once and exits 130', async () => {
    const cli = flowstream(['run', 'c-sample-timeout'], connected);
    const [, executionId = ''] = await cli.waitFor(/Started execution (we-[a-z0-9]+)/u);
    cli.child.kill('SIGINT');
    expect(await cli.exited()).toBe(130);
    expect(cli.stderr()).toContain(`Interrupted: aborting execution ${executionId}.`);
    expect(abortsOf(executionId)).toBe(1);
    expect(emulator.executions.get(executionId)?.status).toBe('failed');
  });

  it('in a terminal, with the live display on, aborts the execution exactly once and exits 130', async () => {
    const cli = flowstreamInTerminal(['run', 'c-sample-timeout'], connected);
    // The live frame names the execution once it has started.
    const [executionId = ''] = await cli.waitFor(/we-[a-z0-9]{24}/u);
    cli.child.stdin?.write('\x03');
    expect(await cli.exited()).toBe(130);
    expect(cli.stdout()).toContain(`Interrupted: aborting execution ${executionId}.`);
    expect(abortsOf(executionId)).toBe(1);
    expect(emulator.executions.get(executionId)?.status).toBe('failed');
  });

  it('aborts exactly once when Ctrl-C comes while the start request is still in flight', async () => {
    emulator.faults.add({ kind: 'latency', ms: 3000, endpoint: 'run', times: 1 });
    const known = new Set(emulator.executions.list().map((execution) => execution.executionId));
    // No plan check first: Ctrl-C must meet the start itself on its way.
    const cli = flowstream(['run', 'c-sample-timeout', '--no-check'], connected);
    await cli.waitFor(/^Starting a run of c-sample-timeout$/mu);
    cli.child.kill('SIGINT');
    expect(await cli.exited()).toBe(130);
    expect(cli.stderr()).toContain('Interrupted: the run is aborted as soon as it has started.');
    const started = emulator.executions.list().filter((execution) => !known.has(execution.executionId));
    expect(started).toHaveLength(1);
    expect(abortsOf(started[0]!.executionId)).toBe(1);
  });

  it('with --no-abort detaches: no abort, the execution keeps running and its id is printed to watch', async () => {
    const cli = flowstream(['run', 'c-sample-timeout', '--no-abort'], connected);
    const [, executionId = ''] = await cli.waitFor(/Started execution (we-[a-z0-9]+)/u);
    cli.child.kill('SIGINT');
    expect(await cli.exited()).toBe(130);
    expect(cli.stderr()).toContain(`flowstream watch ${executionId}`);
    expect(abortsOf(executionId)).toBe(0);
    expect(emulator.executions.get(executionId)?.status).toBe('executing');
  });
});

/** The pid of the command that `script` runs (its one child: the shell that exec'd it), once it is there. */
async function commandUnder(script: RunningProcess): Promise<number> {
  const pid = script.child.pid ?? 0;
  for (let attempt = 0; attempt < 100; attempt += 1) {
    const [child] = (await readFile(`/proc/${pid}/task/${pid}/children`, 'utf8')).trim().split(' ').filter((word) => word !== '');
    if (child !== undefined) return Number(child);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`script ${pid} started no command`);
}

/** Whether `pid` runs: an ended process that no one has reaped yet (state `Z`) has ended too. */
async function isRunning(pid: number): Promise<boolean> {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

/** Resolves once the process `pid` (not a child of this one) has ended; rejects after `timeoutMs`. */
async function ended(pid: number, timeoutMs = 30_000): Promise<void> {
  for (const start = Date.now(); await isRunning(pid); ) {
    if (Date.now() - start > timeoutMs) throw new Error(`process ${pid} still running after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('SIGTERM and SIGHUP', { timeout: 60_000 }, () => {
  it.each([
    ['SIGTERM', 143],
    ['SIGHUP', 129],
  ] as const)('%s aborts the execution exactly once, waits for the answer, and exits %i', async (signal, code) => {
    const cli = flowstream(['run', 'c-sample-timeout'], connected);
    const [, executionId = ''] = await cli.waitFor(/Started execution (we-[a-z0-9]+)/u);
    cli.child.kill(signal);
    expect(await cli.exited()).toBe(code);
    expect(cli.stderr()).toContain(`Interrupted by ${signal}: aborting execution ${executionId}.`);
    // Answered before the process ended: the service shows it at once.
    expect(abortsOf(executionId)).toBe(1);
    expect(emulator.executions.get(executionId)?.status).toBe('failed');
  });

  it('a closed terminal (the kernel sends SIGHUP; nothing can be written any more) still aborts exactly once', async () => {
    const stderrFile = join(await mkdtemp(join(tmpdir(), 'flowstream-hangup-')), 'stderr');
    const terminal = flowstreamInTerminal(['run', 'c-sample-timeout'], connected, { stderrFile });
    const [executionId = ''] = await terminal.waitFor(/we-[a-z0-9]{24}/u);
    const command = await commandUnder(terminal);
    // The terminal window closes: its master side goes with `script`, and the kernel hangs the pty up.
    terminal.child.kill('SIGKILL');
    await ended(command);
    expect(abortsOf(executionId)).toBe(1);
    expect(emulator.executions.get(executionId)?.status).toBe('failed');
    const said = await readFile(stderrFile, 'utf8');
    expect(said).toContain(`Interrupted by SIGHUP: aborting execution ${executionId}.`);
    // Node fails an assertion on its way out when it cannot restore a terminal that is gone: not here.
    expect(said).not.toContain('Assertion failed');
  });

  it('a second signal quits at once, while the abort waits for its answer', async () => {
    const slowAbort = emulator.faults.add({ kind: 'latency', ms: 60_000, endpoint: 'abort', times: 1 });
    try {
      const cli = flowstream(['run', 'c-sample-timeout'], connected);
      await cli.waitFor(/Started execution (we-[a-z0-9]+)/u);
      cli.child.kill('SIGTERM');
      await cli.waitFor(/Interrupted by SIGTERM: aborting execution/u);
      await vi.waitFor(() => {
        expect(slowAbort.hits).toBe(1);
      }, { timeout: 15_000 });
      cli.child.kill('SIGTERM');
      // Well before the abort's answer (60 s) or the wait for it (35 s).
      expect(await cli.exited(10_000)).toBe(143);
    } finally {
      slowAbort.remove();
    }
  });

  it('with --no-abort, SIGTERM detaches: no abort, and the id is printed to watch or abort it', async () => {
    const cli = flowstream(['run', 'c-sample-timeout', '--no-abort'], connected);
    const [, executionId = ''] = await cli.waitFor(/Started execution (we-[a-z0-9]+)/u);
    cli.child.kill('SIGTERM');
    expect(await cli.exited()).toBe(143);
    expect(cli.stderr()).toContain(`Detached: execution ${executionId} keeps running.`);
    expect(cli.stderr()).toContain(`flowstream watch ${executionId}`);
    expect(cli.stderr()).toContain(`flowstream abort ${executionId}`);
    expect(abortsOf(executionId)).toBe(0);
    expect(emulator.executions.get(executionId)?.status).toBe('executing');
  });

  it('watch stops watching on SIGTERM and never aborts', async () => {
    const response = await fetch(`${emulator.url}/openapi/workflow/c-sample-timeout/run`, { method: 'POST', headers: { Authorization: `Bearer ${emulator.apiKey}` } });
    const { data } = (await response.json()) as { data: { executionId: string } };
    const cli = flowstream(['watch', data.executionId], connected);
    await cli.waitFor(/Analyse everything/u);
    cli.child.kill('SIGTERM');
    expect(await cli.exited()).toBe(143);
    expect(cli.stderr()).toContain(`Detached: execution ${data.executionId} keeps running.`);
    expect(abortsOf(data.executionId)).toBe(0);
  });

  it('says when the abort could not be sent, with the id and how to abort it later, and exits 4', async () => {
    const refused = emulator.faults.add({ kind: 'status', status: 403, endpoint: 'abort', times: 1 });
    try {
      const cli = flowstream(['run', 'c-sample-timeout'], connected);
      const [, executionId = ''] = await cli.waitFor(/Started execution (we-[a-z0-9]+)/u);
      cli.child.kill('SIGTERM');
      expect(await cli.exited()).toBe(4);
      expect(cli.stderr()).toContain(`Could not abort execution ${executionId}: `);
      expect(cli.stderr()).toContain(`Execution ${executionId} may still be running, and spending credits. Abort it with: flowstream abort ${executionId}`);
      expect(emulator.executions.get(executionId)?.status).toBe('executing');
      // What it says to do works.
      const abort = flowstream(['abort', executionId], connected);
      expect(await abort.exited()).toBe(0);
      expect(emulator.executions.get(executionId)?.status).toBe('failed');
    } finally {
      refused.remove();
    }
  });

  it('emulator stops cleanly on SIGHUP', async () => {
    const cli = flowstream(['emulator', '--speed', '50']);
    await cli.waitFor(/Press Ctrl-C to stop\./u);
    cli.child.kill('SIGHUP');
    expect(await cli.exited()).toBe(0);
    expect(cli.stdout()).toContain('Emulator stopped.');
  });
});

describe('flowstream abort', { timeout: 60_000 }, () => {
  async function started(canvasId: string): Promise<string> {
    const response = await fetch(`${emulator.url}/openapi/workflow/${canvasId}/run`, { method: 'POST', headers: { Authorization: `Bearer ${emulator.apiKey}` } });
    return ((await response.json()) as { data: { executionId: string } }).data.executionId;
  }

  it('aborts a running execution once and says so', async () => {
    const executionId = await started('c-sample-timeout');
    const cli = flowstream(['abort', executionId], connected);
    expect(await cli.exited()).toBe(0);
    expect(cli.stdout()).toBe(`Aborted execution ${executionId} (it was executing; now failed).\n`);
    expect(abortsOf(executionId)).toBe(1);
    expect(emulator.executions.get(executionId)?.status).toBe('failed');
  });

  it('leaves an execution that already ended as it is, saying how it ended', async () => {
    const executionId = await started('c-sample-timeout');
    await createClient({ apiKey: emulator.apiKey, baseUrl: emulator.url }).executions.abort(executionId);
    const cli = flowstream(['abort', executionId], connected);
    expect(await cli.exited()).toBe(0);
    expect(cli.stdout()).toBe(`Execution ${executionId} already ended: failed. Nothing to abort.\n`);
    expect(abortsOf(executionId)).toBe(1);
  });

  it('prints one JSON object with --json', async () => {
    const executionId = await started('c-sample-timeout');
    const cli = flowstream(['abort', executionId, '--json'], connected);
    expect(await cli.exited()).toBe(0);
    expect(JSON.parse(cli.stdout())).toEqual({ executionId, aborted: true, status: 'failed' });
    const again = flowstream(['abort', executionId, '--json'], connected);
    expect(await again.exited()).toBe(0);
    expect(JSON.parse(again.stdout())).toEqual({ executionId, aborted: false, status: 'failed' });
  });

  it('exits 3 for an execution that does not exist, naming it', async () => {
    const cli = flowstream(['abort', 'we-nosuchexecution'], connected);
    expect(await cli.exited()).toBe(3);
    expect(cli.stderr()).toContain('The execution we-nosuchexecution was not found');
  });
});

describe('flowstream watch', { timeout: 60_000 }, () => {
  it('follows an execution started elsewhere to its end', async () => {
    const response = await fetch(`${emulator.url}/openapi/workflow/c-test-steps/run`, { method: 'POST', headers: { Authorization: `Bearer ${emulator.apiKey}` } });
    const { data } = (await response.json()) as { data: { executionId: string } };
    const cli = flowstream(['watch', data.executionId], connected);
    expect(await cli.exited()).toBe(0);
    expect(cli.stdout()).toContain('✔ Write notes  finish');
    expect(cli.stdout()).toContain('notes.md');
  });
});

describe('configuration', { timeout: 60_000 }, () => {
  it('says which settings are missing and exits 2', async () => {
    const cli = flowstream(['search']);
    expect(await cli.exited()).toBe(2);
    expect(cli.stderr()).toContain('No API key: set FLOWSTREAM_API_KEY or pass --api-key <key>.');
    expect(cli.stderr()).toContain('No API address: set FLOWSTREAM_BASE_URL');
    expect(cli.stderr()).toContain('flowstream emulator');
  });

  it('takes --api-key and --base-url over the environment', async () => {
    const cli = flowstream(['search', 'report', '--api-key', emulator.apiKey, '--base-url', emulator.url], {
      FLOWSTREAM_API_KEY: `rf_${'y'.repeat(32)}`,
      FLOWSTREAM_BASE_URL: 'http://127.0.0.1:9/v1',
    });
    expect(await cli.exited()).toBe(0);
    expect(cli.stdout()).toMatch(/^c-sample-files {2}Quarterly report with files$/mu);
  });
});

describe('the other commands', { timeout: 60_000 }, () => {
  it('search lists matching workflows, at most --limit, or as JSON lines', async () => {
    const oldest = flowstream(['search', '--limit', '2', '--order', 'creationAsc'], connected);
    expect(await oldest.exited()).toBe(0);
    expect(oldest.stdout().trimEnd().split('\n').map((line) => line.split(' ')[0])).toEqual(['c-sample-linear', 'c-sample-parallel']);
    const newest = flowstream(['search', '--limit', '1', '--order', 'creationDesc'], connected);
    expect(await newest.exited()).toBe(0);
    expect(newest.stdout()).toMatch(/^c-test-steps {2}Two steps\n$/u);
    const json = flowstream(['search', 'report', '--json'], connected);
    expect(await json.exited()).toBe(0);
    const found = json.stdout().trimEnd().split('\n').map((line) => JSON.parse(line) as { canvasId: string });
    expect(found.map((workflow) => workflow.canvasId)).toEqual(expect.arrayContaining(['c-sample-files', 'c-sample-sales']));
  });

  it('show prints the plan: tasks, what they wait for, variables and how to run it', async () => {
    const cli = flowstream(['show', 'c-sample-parallel'], connected);
    expect(await cli.exited()).toBe(0);
    expect(cli.stdout()).toContain('Summarise the market');
    expect(cli.stdout()).toContain('after: Scan competitors, Compare pricing');
    const variables = flowstream(['show', 'c-sample-variables'], connected);
    expect(await variables.exited()).toBe(0);
    expect(variables.stdout()).toMatch(/topic {2}string, required/u);
    expect(variables.stdout()).toContain('Run it: flowstream run c-sample-variables --var topic=<value> --var tone=<value> --file attachment=<path>');
    const json = flowstream(['show', 'c-sample-parallel', '--json'], connected);
    expect(await json.exited()).toBe(0);
    expect(JSON.parse(json.stdout())).toMatchObject({ title: 'Market scan (parallel branches)' });
  });

  it('upload prints a fileKey per file', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'flowstream-cli-'));
    await writeFile(join(dir, 'a.txt'), 'a');
    await writeFile(join(dir, 'b.txt'), 'b');
    const cli = flowstream(['upload', join(dir, 'a.txt'), join(dir, 'b.txt')], connected);
    expect(await cli.exited()).toBe(0);
    expect(cli.stdout()).toMatch(/^of_\S+ {2}a\.txt\nof_\S+ {2}b\.txt\n$/u);
  });

  it('generate builds a workflow from a prompt and shows its plan', async () => {
    const cli = flowstream(['generate', 'Search the web for tides. Then send an email with a summary.', '--locale', 'en'], connected);
    expect(await cli.exited()).toBe(0);
    expect(cli.stdout()).toMatch(/Tasks \(2\):/u);
    expect(cli.stdout()).toContain('tools: web_search');
  });

  it('generate passes an undocumented locale on, with a warning', async () => {
    const cli = flowstream(['generate', 'Search the web for tides. Then send an email with a summary.', '--locale', 'zh-Hans'], connected);
    expect(await cli.exited()).toBe(0);
    expect(cli.stderr()).toContain('warning:');
    expect(cli.stderr()).toContain('zh-Hans');
    expect(cli.stdout()).toMatch(/Tasks \(2\):/u);
  });

  it('generate --replace rewrites the tasks of an existing workflow', async () => {
    const cli = flowstream(['generate', 'Translate the digest; then email it', '--replace', 'c-sample-news', '--json'], connected);
    expect(await cli.exited()).toBe(0);
    expect(JSON.parse(cli.stdout())).toMatchObject({ canvasId: 'c-sample-news' });
    const show = flowstream(['show', 'c-sample-news'], connected);
    expect(await show.exited()).toBe(0);
    expect(show.stdout()).toContain('Tasks (2):');
    expect(show.stdout()).toContain('tools: send_email');
  });

  it('generate refuses an empty prompt at once, before saying it is generating (exit 2)', async () => {
    const cli = flowstream(['generate', '   '], connected);
    expect(await cli.exited()).toBe(2);
    expect(cli.stderr()).toContain('the prompt must say what the workflow should do');
    expect(cli.stderr()).not.toContain('Generating');
  });

  it('emulator serves the samples in the foreground, prints its URL and key, and stops on Ctrl-C', async () => {
    const cli = flowstream(['emulator', '--speed', '50', '--profile', 'spec']);
    const [, url = ''] = await cli.waitFor(/listening on (http:\/\/127\.0\.0\.1:\d+\/v1) \(profile spec, time 50x\)/u);
    const [, apiKey = ''] = await cli.waitFor(/API key: (rf_\w+)/u);
    const search = flowstream(['search', 'parallel'], { FLOWSTREAM_API_KEY: apiKey, FLOWSTREAM_BASE_URL: url });
    expect(await search.exited()).toBe(0);
    expect(search.stdout()).toContain('c-sample-parallel');
    cli.child.kill('SIGINT');
    expect(await cli.exited()).toBe(0);
    expect(cli.stdout()).toContain('Emulator stopped.');
  });
});

describe('--help', { timeout: 60_000 }, () => {
  it('lists the commands and the configuration', async () => {
    const cli = flowstream(['--help']);
    expect(await cli.exited()).toBe(0);
    for (const command of ['run', 'watch', 'abort', 'search', 'show', 'upload', 'generate', 'emulator']) expect(cli.stdout()).toMatch(new RegExp(`^ {2}${command}\\b`, 'mu'));
    expect(cli.stdout()).toContain('FLOWSTREAM_API_KEY');
  });

  it.each(['run', 'watch', 'abort', 'search', 'show', 'upload', 'generate', 'emulator'])('explains %s', async (command) => {
    const cli = flowstream([command, '--help']);
    expect(await cli.exited()).toBe(0);
    expect(cli.stdout()).toContain(`Usage: flowstream ${command}`);
  });

  it('documents Ctrl-C, --no-abort and the exit codes of run', async () => {
    const cli = flowstream(['run', '--help']);
    expect(await cli.exited()).toBe(0);
    for (const text of ['--var <name=value>', '--file <name=path>', '--json', '--no-abort', '--timeout <seconds>', '--idempotency-key <key>', '--idempotency-ttl <seconds>', '--quiet', 'Exit codes: 0 finished, 1 workflow failed', '5 a start with the']) {
      expect(cli.stdout()).toContain(text);
    }
  });
});

// The two demos run at once (each mostly waits on its emulator's clock): the second runs the
// dist/cli/start.js that the first's `npm start` built, once that build is done (its time includes
// that wait, so it has the first's timeout).
describe.concurrent('npm start', { timeout: 60_000 }, () => {
  let builtCommand: () => void = () => undefined;
  const built = new Promise<void>((resolve) => {
    builtCommand = resolve;
  });

  it('builds, runs the demo pipeline with live progress, prints the outputs and files, and exits 0', async () => {
    const demo = startProcess('npm', ['start'], { env: scrubbedEnv(), cwd: ROOT });
    // The demo's first line comes once the build is done (or the build failed: then the other test finds no new build to run).
    void Promise.race([demo.waitFor(/^flowstream demo — /mu, 120_000), demo.exited(120_000)])
      .catch(() => undefined)
      .then(builtCommand);
    expect(await demo.exited(120_000)).toBe(0);
    const out = demo.stdout();
    expect(out).toMatch(/flowstream demo — an embedded emulator at http:\/\/127\.0\.0\.1:\d+\/v1/u);
    expect(out).toMatch(/^Started execution we-\S+ of c-demo-research$/mu);
    expect(out).toMatch(/^\[\d+\/\d+\] › Compare pricing {2}executing/mu);
    expect(out).toMatch(/^ {2}brief\.md {2}\(text\/markdown, \d+ B\) {2}http:\/\/127\.0\.0\.1:\d+\/v1\/drive\/file\/public\//mu);
    expect(out).toMatch(/^Started execution we-\S+ of c-demo-report$/mu);
    expect(out).toMatch(/^ {2}chart\.png {2}\(image\/png, 4\.0 KiB\)/mu);
    expect(out).toContain('Final output of c-demo-report:\n  Recommendation: enter with a free tier and guided onboarding.');
    expect(out).toMatch(/^Demo finished in \d+\.\ds\./mu);
    expect(out).not.toContain('FLOWSTREAM_API_KEY and FLOWSTREAM_BASE_URL are set');
  }, 150_000);

  it('with FLOWSTREAM_* set, explains how to run against the service without calling it', async () => {
    await built;
    let requests = 0;
    const service = createServer((_request, response) => {
      requests += 1;
      response.end();
    });
    await new Promise<void>((resolve) => service.listen(0, '127.0.0.1', resolve));
    const address = service.address();
    const port = typeof address === 'object' && address !== null ? address.port : 0;
    try {
      const demo = startProcess(process.execPath, ['dist/cli/start.js'], {
        env: scrubbedEnv({ FLOWSTREAM_API_KEY: `rf_${'z'.repeat(32)}`, FLOWSTREAM_BASE_URL: `http://127.0.0.1:${port}/v1` }),
        cwd: ROOT,
      });
      expect(await demo.exited(60_000)).toBe(0);
      expect(demo.stdout()).toContain(`FLOWSTREAM_API_KEY and FLOWSTREAM_BASE_URL are set (http://127.0.0.1:${port}/v1).`);
      expect(demo.stdout()).toContain('npx flowstream run <canvasId>');
      expect(demo.stdout()).toContain('Demo finished in');
      expect(requests).toBe(0);
    } finally {
      service.close();
    }
  }, 150_000);
});
