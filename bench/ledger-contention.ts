/**
 * The Redis ledger under contention: P processes (each its own connection and process id) asking one
 * account for grants back to back for a few seconds of real time, on a real redis-server (unix
 * socket). Every call is a whole compare-and-set turn of the account's record (read it, apply the
 * rule book, write it back if nobody wrote meanwhile, else again). Reported: calls answered per
 * second (granted or told when), the conflicts per call, and the latency of a call.
 * `npx tsx bench/ledger-contention.ts`; results in `bench/results/ledger-contention.json`.
 */
import { Redis } from 'ioredis';
import { RedisAccountStore } from '../src/redis/account-store.js';
import { startRedisServer } from '../test/redis/redis-server.js';
import { table, writeResults } from './harness/report.js';
import { SharedProcess } from '../src/budget/process-rules.js';

const DURATION_MS = 3_000;

export interface ContentionRow {
  readonly processes: number;
  readonly callsPerSecond: number;
  readonly grantedPerSecond: number;
  readonly conflictsPerCall: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
}

async function contend(socket: string, processes: number, account: string): Promise<ContentionRow> {
  const clients = Array.from({ length: processes }, () => new Redis({ path: socket, maxRetriesPerRequest: null }));
  const stores = clients.map((client, index) => new RedisAccountStore(client, { account, config: { options: {}, process: new SharedProcess(`p-${index}`, 124_000) }, clock: Date.now, timeScale: 1 }));
  const latencies: number[] = [];
  let granted = 0;
  const end = performance.now() + DURATION_MS;
  await Promise.all(
    stores.map(async (store, index) => {
      for (let call = 0; performance.now() < end; call++) {
        const began = performance.now();
        // A realistic mix: mostly reads with the process's runs waiting, some interactive calls and starts.
        const grant = call % 10 === 0 ? await store.grant('start', 0, `c-${index}-${call} {}`) : call % 10 === 1 ? await store.grant('interactive', 0) : await store.grant('read', 5);
        latencies.push(performance.now() - began);
        if (grant.verdict === 'granted') granted += 1;
      }
    }),
  );
  const conflicts = stores.reduce((sum, store) => sum + store.ledger.conflicts, 0);
  for (const client of clients) client.disconnect();
  latencies.sort((a, b) => a - b);
  const at = (q: number): number => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0;
  return {
    processes,
    callsPerSecond: Math.round(latencies.length / (DURATION_MS / 1_000)),
    grantedPerSecond: Number((granted / (DURATION_MS / 1_000)).toFixed(1)),
    conflictsPerCall: Number((conflicts / Math.max(1, latencies.length)).toFixed(3)),
    p50Ms: Number(at(0.5).toFixed(2)),
    p99Ms: Number(at(0.99).toFixed(2)),
  };
}

const server = await startRedisServer();
const rows: ContentionRow[] = [];
for (const processes of [1, 8]) rows.push(await contend(server.socket, processes, `bench-contention-${processes}`));
await server.close();
console.log('\nThe Redis ledger under contention: calls on one account by P processes, back to back for 3 s (real time)\n');
console.log(
  table(
    ['processes', 'calls/s', 'granted/s', 'conflicts per call', 'p50 ms', 'p99 ms'],
    rows.map((row) => [String(row.processes), String(row.callsPerSecond), String(row.grantedPerSecond), String(row.conflictsPerCall), String(row.p50Ms), String(row.p99Ms)]),
  ),
);
console.log(`→ ${await writeResults('ledger-contention', rows)}`);
