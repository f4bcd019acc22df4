import { fileURLToPath } from 'node:url';
import { type RunningProcess, scrubbedEnv, startProcess } from './child-process.js';
import { ROOT } from './built-cli.js';

/** The command's entry point, run from source (`node --import tsx`): no build before the test. */
const MAIN = fileURLToPath(new URL('../../../src/cli/main.ts', import.meta.url));

function shellQuoted(word: string): string {
  return `'${word.replaceAll("'", `'\\''`)}'`;
}

/**
 * Runs `flowstream` from source in a pseudo-terminal of 100×40 (util-linux `script`, as
 * `flowstreamInTerminal` does for the built command): stdin, stdout and stderr are TTYs, what is
 * written to `child.stdin` is typed, and `script` exits with the command's exit code.
 */
export function flowstreamFromSourceInTerminal(args: readonly string[], env: Record<string, string> = {}): RunningProcess {
  const command = ['stty cols 100 rows 40 &&', 'exec', ...[process.execPath, '--import', 'tsx', MAIN, ...args].map(shellQuoted)].join(' ');
  return startProcess('script', ['--quiet', '--flush', '--return', '--command', command, '/dev/null'], { env: scrubbedEnv(env), cwd: ROOT, stdin: 'pipe' });
}

/** Runs `flowstream` from source with its output in pipes, in a scrubbed environment plus `env`. */
export function flowstreamFromSource(args: readonly string[], env: Record<string, string> = {}): RunningProcess {
  return startProcess(process.execPath, ['--import', 'tsx', MAIN, ...args], { env: scrubbedEnv(env), cwd: ROOT });
}
