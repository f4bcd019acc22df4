import { existsSync } from 'node:fs';
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
});
