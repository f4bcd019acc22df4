import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { type RunningProcess, scrubbedEnv, startProcess } from './child-process.js';

/** The repository root. */
export const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
/** The built command, as package.json `bin` names it. */
export const CLI = fileURLToPath(new URL('../../../dist/cli/main.js', import.meta.url));

/** `npm run build`, as a user would before running the command from a clone. */
export async function build(): Promise<void> {
  await promisify(execFile)('npm', ['run', 'build', '--silent'], { cwd: ROOT, env: scrubbedEnv() });
}

/** Runs the built `flowstream` with `args`, in a scrubbed environment plus `env`. */
export function flowstream(args: readonly string[], env: Record<string, string> = {}): RunningProcess {
  return startProcess(process.execPath, [CLI, ...args], { env: scrubbedEnv(env), cwd: ROOT });
}
