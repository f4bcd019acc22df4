/**
 * One process of an app serving a run relay over node:http on 127.0.0.1 (the relay tests spawn several):
 * its client on the emulator's clock (same speed and real start as the test's emulator), its hub the
 * account's in Redis. Prints `listening <port>` once it serves. Config: one JSON argument (see `RelayWorkerConfig`).
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Redis } from 'ioredis';
import { createClient } from '../../src/client.js';
import { clockScheduler, createScaledClock } from '../../src/emulator/index.js';
import { createRedisRunHub } from '../../src/redis/index.js';
import { createRunRelay } from '../../src/relay/run-relay.js';
import { createRunTokens } from '../../src/relay/run-tokens.js';
import { toNodeListener } from '../../src/relay/node-listener.js';
import type { HubWorkerConfig } from './hub-worker.js';

/** A hub worker's settings, and the relay's tokens' secret and heartbeat. */
export interface RelayWorkerConfig extends HubWorkerConfig {
  readonly secret: string;
  readonly heartbeatMs: number;
}

const config = JSON.parse(process.argv[2] ?? '{}') as RelayWorkerConfig;
const redis = new Redis({ path: config.socket, maxRetriesPerRequest: null });
const scheduler = clockScheduler(createScaledClock(config.speed, Date.now, config.realStart));
const hub = createRedisRunHub({ redis, account: config.account, leaseMs: config.leaseMs, scheduler });
const client = createClient({ apiKey: config.apiKey, baseUrl: config.baseUrl, scheduler, budget: false, polling: { minMs: config.pollMs, maxMs: config.pollMs }, timeoutMs: 120_000, hub });
const relay = createRunRelay({ client, tokens: createRunTokens({ secret: config.secret, scheduler }), scheduler, heartbeatMs: config.heartbeatMs });
const server = createServer(toNodeListener(relay));
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`listening ${String((server.address() as AddressInfo).port)}\n`);
});
