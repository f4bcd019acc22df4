import { Writable } from 'node:stream';
import { runCli } from '../../../src/cli/cli.js';

/** What a command run in this process did: its exit code, and what it wrote to stdout and stderr. */
export interface PipedRun {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs `flowstream <args>` in this process with its output piped (not a TTY) and no stop signals. */
export async function runPiped(args: readonly string[], env: Record<string, string> = {}): Promise<PipedRun> {
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
