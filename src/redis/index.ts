// flowstream/redis: what a fleet of processes on one account shares in Redis.
// Node-only; needs the `ioredis` package (an optional peer dependency of flowstream).
export { createRedisCheckpointStore, type RedisCheckpointStore, type RedisCheckpointStoreOptions } from './checkpoint-store.js';
export type { RedisOption } from './connection.js';
export { createRedisBudget, type RedisBudget, type RedisBudgetOptions } from './redis-budget.js';
export { createRedisRunHub, type RedisRunHub, type RedisRunHubOptions } from './run-hub.js';
export { createRedisDurations, type RedisDurations, type RedisDurationsOptions } from './durations.js';
export { createRedisIdempotencyStore, type RedisIdempotencyStore, type RedisIdempotencyStoreOptions } from './idempotency-store.js';
