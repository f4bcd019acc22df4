import { type ChildProcess, type ChildProcessByStdio, spawn } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';

/** A spawned command whose output the test reads as it comes. */
export interface RunningProcess {
  readonly child: ChildProcess;
  readonly stdout: () => string;
  readonly stderr: () => string;
  /** Resolves once stdout+stderr match `pattern`, with the match; rejects after `timeoutMs`. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  /** Resolves with the exit code once the process has exited; kills it and rejects after `timeoutMs`. */
  exited(timeoutMs?: number): Promise<number | null>;
}

/**
 * Spawns `command` with exactly `env` (a scrubbed environment: nothing of the test's own leaks in);
 * `stdin: 'pipe'` to type into it (`child.stdin`).
 */
export function startProcess(
  command: string,
  args: readonly string[],
  options: { readonly env: Record<string, string>; readonly cwd?: string; readonly stdin?: 'ignore' | 'pipe' },
): RunningProcess {
  // stdout and stderr are pipes whatever stdin is; TypeScript cannot tell from a stdin chosen at run time.
  const child = spawn(command, args, { env: options.env, cwd: options.cwd, stdio: [options.stdin ?? 'ignore', 'pipe', 'pipe'] }) as ChildProcessByStdio<Writable | null, Readable, Readable>;
  let stdout = '';
  let stderr = '';
  const listeners = new Set<() => void>();
  const changed = (): void => {
    for (const listener of listeners) listener();
  };
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
    changed();
  });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
    changed();
  });
  const exit = new Promise<number | null>((resolve) => {
    child.once('exit', (code) => {
      resolve(code);
    });
  });

  return {
    child,
    stdout: () => stdout,
    stderr: () => stderr,
    waitFor: (pattern, timeoutMs = 15_000) =>
      new Promise((resolve, reject) => {
        const check = (): void => {
          const match = `${stdout}${stderr}`.match(pattern);
          if (match === null) return;
          done();
          resolve(match);
        };
        const timer = setTimeout(() => {
          done();
          reject(new Error(`No ${String(pattern)} within ${timeoutMs} ms.\nstdout:\n${stdout}\nstderr:\n${stderr}`));
        }, timeoutMs);
        const done = (): void => {
          clearTimeout(timer);
          listeners.delete(check);
        };
        listeners.add(check);
        check();
      }),
    exited: (timeoutMs = 30_000) =>
      new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          child.kill('SIGKILL');
          reject(new Error(`Still running after ${timeoutMs} ms.\nstdout:\n${stdout}\nstderr:\n${stderr}`));
        }, timeoutMs);
        void exit.then((code) => {
          clearTimeout(timer);
          resolve(code);
        });
      }),
  };
}

/** Only what a user's shell would certainly have, plus the given variables. */
export function scrubbedEnv(extra: Record<string, string> = {}): Record<string, string> {
  return { PATH: process.env['PATH'] ?? '', HOME: process.env['HOME'] ?? '', ...extra };
}
