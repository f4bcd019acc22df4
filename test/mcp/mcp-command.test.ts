import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../src/cli/cli.js';
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

async function mcp(args: readonly string[], env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  const written = { stdout: '', stderr: '' };
  const sink = (name: keyof typeof written) =>
    new Writable({
      write(chunk: Buffer, _encoding, done) {
        written[name] += chunk.toString();
        done();
      },
    }) as unknown as NodeJS.WriteStream;
  const code = await runCli(['mcp', ...args], { env, stdout: sink('stdout'), stderr: sink('stderr'), interrupts: () => () => undefined });
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
