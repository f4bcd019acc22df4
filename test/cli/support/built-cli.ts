import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { type RunningProcess, scrubbedEnv, startProcess } from './child-process.js';

/** The repository root. */
export const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
/** The built command, as package.json `bin` names it. */
export const CLI = fileURLToPath(new URL('../../../dist/cli/main.js', import.meta.url));

/**
 * Builds the command as `npm run build` does in its last step (scripts/bundle-cli.mjs): dist/cli/main.js
 * and dist/cli/start.js bundle the library from src/, so they need nothing of the library's own `tsc`
 * output. The whole `npm run build` is run by the `npm start` test and by the packed package's `prepack`.
 */
export async function buildCommand(): Promise<void> {
  await promisify(execFile)(process.execPath, ['scripts/bundle-cli.mjs'], { cwd: ROOT, env: scrubbedEnv() });
}

/** Runs the built `flowstream` with `args`, in a scrubbed environment plus `env`. */
export function flowstream(args: readonly string[], env: Record<string, string> = {}): RunningProcess {
  return startProcess(process.execPath, [CLI, ...args], { env: scrubbedEnv(env), cwd: ROOT });
}

function shellQuoted(word: string): string {
  return `'${word.replaceAll("'", `'\\''`)}'`;
}

/**
 * Runs the built `flowstream` in a pseudo-terminal, as in a user's terminal: util-linux `script`
 * gives it a pty of 100×40 (stdout and stderr are TTYs, so the live display and everything it loads
 * are on), passes on what is written to `child.stdin` as typed keys (`\x03` is Ctrl-C: the pty's line
 * discipline turns it into SIGINT) and exits with the command's exit code. The command is the pty's
 * session leader (`exec`): when `script` dies, the kernel hangs the terminal up and sends it SIGHUP.
 * `stderrFile` sends its stderr to a file instead, to read what it says after its terminal is gone.
 */
export function flowstreamInTerminal(args: readonly string[], env: Record<string, string> = {}, options: { readonly stderrFile?: string } = {}): RunningProcess {
  const redirect = options.stderrFile === undefined ? [] : [`2>${shellQuoted(options.stderrFile)}`];
  const command = ['stty cols 100 rows 40 &&', 'exec', ...[process.execPath, CLI, ...args].map(shellQuoted), ...redirect].join(' ');
  return startProcess('script', ['--quiet', '--flush', '--return', '--command', command, '/dev/null'], { env: scrubbedEnv(env), cwd: ROOT, stdin: 'pipe' });
}
