import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from './support.js';
import { runCli } from '../../src/cli/cli.js';
import type { StopSignal } from '../../src/cli/progress/interrupts.js';
import { createEmulator, type Emulator } from '../../src/emulator/index.js';

// `flowstream mcp`'s mistakes of configuration, in-process: each stops it before it serves, with exit
// code 2 and a message naming what to fix, and nothing on stdout (the protocol's channel).

let emulator: Emulator;

beforeAll(async () => {
  emulator = await createEmulator({ rateLimit: false });
});

afterAll(async () => {
  await emulator.close();
});

/** Where the test presses Ctrl-C: the listener the command registered, if one is registered. */
const interrupt: { send?: ((signal: StopSignal) => void) | undefined } = {};

async function mcp(args: readonly string[], env: Record<string, string>, written = { stdout: '', stderr: '' }): Promise<{ code: number; stdout: string; stderr: string }> {
  const sink = (name: keyof typeof written) =>
    new Writable({
      write(chunk: Buffer, _encoding, done) {
        written[name] += chunk.toString();
        done();
      },
    }) as unknown as NodeJS.WriteStream;
  const interrupts = (listener: (signal: StopSignal) => void): (() => void) => {
    interrupt.send = listener;
    return () => {
      interrupt.send = undefined;
    };
  };
  const code = await runCli(['mcp', ...args], { env, stdout: sink('stdout'), stderr: sink('stderr'), interrupts });
  return { code, ...written };
}

describe('flowstream mcp, configured wrong', () => {
  it('names the environment variables it needs, and takes no key from a flag', async () => {
    const unset = await mcp([], {});
    expect(unset.code).toBe(2);
    expect(unset.stderr).toContain('Set FLOWSTREAM_API_KEY and FLOWSTREAM_BASE_URL in the environment of `flowstream mcp`');
    const flag = await mcp(['--api-key', emulator.apiKey], { FLOWSTREAM_BASE_URL: emulator.url });
    expect(flag.code).toBe(2);
    expect(flag.stderr).toContain("unknown option '--api-key'");
    expect(flag.stderr).not.toContain(emulator.apiKey);
    expect(unset.stdout + flag.stdout).toBe('');
  });

  it('names a configured workflow the account does not have', async () => {
    const { code, stdout, stderr } = await mcp(['--workflow', 'c-sample-linear', '--workflow', 'c-nowhere:missing'], { FLOWSTREAM_API_KEY: emulator.apiKey, FLOWSTREAM_BASE_URL: emulator.url });
    expect(code).toBe(2);
    expect(stderr).toContain('No workflow c-nowhere in this account');
    expect(stdout).toBe('');
  });

  it('says which entry of a configuration file is wrong', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'flowstream-mcp-'));
    const file = join(dir, 'flowstream.mcp.json');
    await writeFile(file, JSON.stringify({ workflows: ['c-sample-linear', { canvasId: 'c-sample-parallel', tool: '' }] }));
    const { code, stderr } = await mcp(['--config', file], { FLOWSTREAM_API_KEY: emulator.apiKey, FLOWSTREAM_BASE_URL: emulator.url });
    expect(code).toBe(2);
    expect(stderr).toContain(`${file} is not a flowstream mcp configuration`);
    expect(stderr).toContain('workflows.1.tool: a tool name cannot be empty');
    await writeFile(file, '{ "workflows": [');
    expect((await mcp(['--config', file], { FLOWSTREAM_API_KEY: emulator.apiKey, FLOWSTREAM_BASE_URL: emulator.url })).stderr).toContain(`The configuration file ${file} is not JSON`);
  });
});

describe('flowstream mcp --http without FLOWSTREAM_MCP_TOKEN', () => {
  it('makes a token, prints it once to stderr, and takes requests that send it', async () => {
    const written = { stdout: '', stderr: '' };
    const serving = mcp(['--http', '--port', '0'], { FLOWSTREAM_API_KEY: emulator.apiKey, FLOWSTREAM_BASE_URL: emulator.url }, written);
    await eventually(() => /Bearer <token>\): \S+\n/u.test(written.stderr));
    const [, token = ''] = /Bearer <token>\): (\S+)\n/u.exec(written.stderr) ?? [];
    const [, endpoint = ''] = /listening on (\S+)/u.exec(written.stderr) ?? [];
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/u);
    const initialize = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } } };
    const post = (authorization: string) =>
      fetch(endpoint, { method: 'POST', headers: { Authorization: authorization, 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' }, body: JSON.stringify(initialize) });
    const accepted = await post(`Bearer ${token}`);
    expect(accepted.status).toBe(200);
    expect(accepted.headers.get('mcp-session-id')).toMatch(/\S/u);
    await accepted.body?.cancel();
    expect((await post('Bearer')).status).toBe(401);
    interrupt.send?.('SIGINT');
    const { code } = await serving;
    expect(code).toBe(0);
    expect(written.stderr.split(token)).toHaveLength(2);
    expect(written.stdout).toBe('');
  });
});
