import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A real redis-server of this test run, reachable only through its unix socket. */
export interface RedisServer {
  /** The unix socket's path (ioredis: `{ path }`). */
  readonly socket: string;
  /** The server process's id while it runs, else undefined. */
  readonly pid: number | undefined;
  /** Sends one command and resolves with the raw RESP answer, e.g. `+PONG\r\n`. */
  command(...args: string[]): Promise<string>;
  /**
   * Freezes the server (SIGSTOP), as a stalled host would: its connections stay open and every command
   * waits unanswered until `resume()`.
   */
  pause(): void;
  /** Lets a paused server run again (SIGCONT); it answers what waited. */
  resume(): void;
  /** Stops the server (SIGKILL when `crash`; a paused one too) and waits for it to exit. */
  stop(options?: { crash?: boolean }): Promise<void>;
  /** Starts the server again on the same socket (the data is gone: nothing is saved). */
  restart(): Promise<void>;
  /** Stops the server and removes its folder. */
  close(): Promise<void>;
}

const READY_WITHIN_MS = 10_000;

/** One command in RESP, the form every Redis client sends. */
function encode(args: readonly string[]): string {
  return `*${args.length}\r\n${args.map((arg) => `$${Buffer.byteLength(arg)}\r\n${arg}\r\n`).join('')}`;
}

/** Sends one command over the socket and resolves with the first answer's bytes. */
function sendCommand(socket: string, args: readonly string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const connection = connect(socket);
    connection.setEncoding('utf8');
    connection.once('error', reject);
    connection.once('connect', () => connection.end(encode(args)));
    let answer = '';
    connection.on('data', (chunk: string) => { answer += chunk; });
    connection.once('close', () => { resolve(answer); });
  });
}

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => { resolve(); }));
}

/**
 * Starts Debian's `redis-server` (installed by `npm test`'s own pre-step, scripts/system-packages.mjs)
 * on a unix socket in a fresh temporary folder: no TCP port (`--port 0`), nothing saved, and ready when
 * it answers PING. Readiness is polled in steps of 20 ms, bounded; no outcome depends on the wait.
 */
export async function startRedisServer(): Promise<RedisServer> {
  const dir = await mkdtemp(join(tmpdir(), 'flowstream-redis-'));
  const socket = join(dir, 'redis.sock');
  let child: ChildProcess | undefined;
  let paused = false;
  let output = '';

  const launch = async (): Promise<void> => {
    output = '';
    const started = spawn('redis-server', ['--port', '0', '--unixsocket', socket, '--unixsocketperm', '700', '--save', '', '--appendonly', 'no', '--dir', dir], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child = started;
    paused = false;
    const collect = (chunk: Buffer): void => { output += chunk.toString(); };
    started.stdout.on('data', collect);
    started.stderr.on('data', collect);
    const deadline = Date.now() + READY_WITHIN_MS;
    for (;;) {
      if (started.exitCode !== null) throw new Error(`redis-server exited at start (code ${started.exitCode}): ${output}`);
      const pong = await sendCommand(socket, ['PING']).catch(() => '');
      if (pong.startsWith('+PONG')) return;
      if (Date.now() > deadline) {
        started.kill('SIGKILL');
        throw new Error(`redis-server did not answer PING within ${READY_WITHIN_MS} ms: ${output}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };

  const stop = async (options: { crash?: boolean } = {}): Promise<void> => {
    if (child === undefined) return;
    const running = child;
    child = undefined;
    running.kill(options.crash === true ? 'SIGKILL' : 'SIGTERM');
    // A stopped process holds SIGTERM until it runs again.
    if (paused) running.kill('SIGCONT');
    paused = false;
    await exited(running);
  };

  const signal = (name: 'SIGSTOP' | 'SIGCONT'): void => {
    // Resuming a server that is not running is harmless (an afterEach that makes sure nothing stays frozen).
    if (child === undefined && name === 'SIGCONT') return;
    if (child === undefined) throw new Error(`redis-server is not running: cannot send ${name}`);
    child.kill(name);
    paused = name === 'SIGSTOP';
  };

  await launch();
  return {
    socket,
    get pid() {
      return child?.pid;
    },
    command: (...args) => sendCommand(socket, args),
    pause: () => { signal('SIGSTOP'); },
    resume: () => { signal('SIGCONT'); },
    stop,
    restart: launch,
    close: async () => {
      await stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
