import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { runCli } from '../../src/cli/cli.js';
import { createEmulator } from '../../src/emulator/index.js';

/** Runs the command in this process, piped: its exit code and what it wrote. */
async function piped(args: readonly string[], env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  const out = { stdout: '', stderr: '' };
  const sink = (name: 'stdout' | 'stderr'): NodeJS.WriteStream =>
    new Writable({
      write(chunk: Buffer, _encoding, done) {
        out[name] += chunk.toString();
        done();
      },
    }) as unknown as NodeJS.WriteStream;
  const code = await runCli(args, { env, stdout: sink('stdout'), stderr: sink('stderr'), interrupts: () => () => undefined });
  return { code, ...out };
}

describe('options in seconds', () => {
  it('flowstream run refuses a --timeout longer than a timer can wait as a usage error naming --timeout, starting nothing', async () => {
    const emulator = await createEmulator({ listen: false });
    try {
      const cli = await piped(['run', 'c-sample-linear', '--timeout', '1e9'], { FLOWSTREAM_API_KEY: emulator.apiKey, FLOWSTREAM_BASE_URL: emulator.url });
      expect(cli.code).toBe(2);
      expect(cli.stderr).toContain("option '--timeout <seconds>' argument '1e9' is invalid");
      expect(emulator.requests.list()).toEqual([]);
    } finally {
      await emulator.close();
    }
  });
});
