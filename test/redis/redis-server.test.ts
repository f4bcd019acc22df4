import { existsSync, readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { startRedisServer, type RedisServer } from './redis-server.js';

describe('the test helper that runs a real redis-server', () => {
  let server: RedisServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it('starts redis-server on a unix socket of its own, answers commands, and leaves nothing behind', async () => {
    server = await startRedisServer();
    await expect(server.command('PING')).resolves.toBe('+PONG\r\n');
    await expect(server.command('SET', 'flowstream:probe', 'ok')).resolves.toBe('+OK\r\n');
    await expect(server.command('GET', 'flowstream:probe')).resolves.toBe('$2\r\nok\r\n');
    // No TCP port: the unix socket is the only way in.
    await expect(server.command('CONFIG', 'GET', 'port')).resolves.toBe('*2\r\n$4\r\nport\r\n$1\r\n0\r\n');

    const { socket } = server;
    await server.close();
    server = undefined;
    expect(existsSync(socket)).toBe(false);
  });

  it('survives a crash and a restart on the same socket, with its data gone (nothing is saved)', async () => {
    server = await startRedisServer();
    await server.command('SET', 'flowstream:probe', 'ok');
    await server.stop({ crash: true });
    await expect(server.command('PING')).rejects.toThrow();
    await server.restart();
    await expect(server.command('GET', 'flowstream:probe')).resolves.toBe('$-1\r\n');
  });

  it('pauses (SIGSTOP) with commands left waiting, resumes (SIGCONT) to answer them, and closes while paused', async () => {
    server = await startRedisServer();
    const pid = server.pid!;
    // The kernel's own record of the process: state T is stopped by a signal.
    const state = (): string | undefined => /^\d+ \(.*\) (\S)/u.exec(readFileSync(`/proc/${pid}/stat`, 'utf8'))?.[1];
    server.pause();
    await expect.poll(state, { timeout: 5_000, interval: 10 }).toBe('T');
    let answer: string | undefined;
    const ping = server.command('PING').then((text) => (answer = text));
    // Stopped, the server cannot have read the command, whatever the machine's speed.
    expect(state()).toBe('T');
    expect(answer).toBeUndefined();
    server.resume();
    await expect(ping).resolves.toBe('+PONG\r\n');

    server.pause();
    await expect.poll(state, { timeout: 5_000, interval: 10 }).toBe('T');
    await server.close();
    server = undefined;
    expect(existsSync(`/proc/${pid}`)).toBe(false);
  });
});
