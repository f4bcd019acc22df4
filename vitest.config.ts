import { defineConfig } from 'vitest/config';

/**
 * Tests that run fleets of child processes against one account (a real redis-server, the emulator on
 * an accelerated clock): they measure fairness and timing across processes, so they run after every
 * other test file, one at a time, with the machine's cores to themselves.
 */
const FLEETS = ['test/redis/fleet.integration.test.ts', 'test/bullmq/workers.integration.test.ts', 'test/soak/fault-soak.integration.test.ts', 'test/soak/fault-soak.outages.integration.test.ts'];

/**
 * Files that run one at a time after the parallel ones: the pages in Chromium (a page waits on its own
 * real clock) and the integration tests whose real-time margins on an accelerated clock are the
 * thinnest (many starts against one account's limit, a soak of 1,000 runs).
 */
const SERIAL = [
  'test/browser/**/*.test.ts',
  'test/budget/shared-budget.integration.test.ts',
  'test/redis/mixed-limits.integration.test.ts',
  'test/runs/soak.integration.test.ts',
  'test/pipeline/examples.test.ts',
  'test/http/client-secrets.test.ts',
];

export default defineConfig({
  test: {
    testTimeout: 20_000,
    hookTimeout: 20_000,
    projects: [
      {
        extends: true,
        test: {
          name: 'flowstream',
          include: ['test/**/*.test.ts'],
          exclude: [...FLEETS, ...SERIAL],
          // Two files at a time on two cores: most of these wait on child processes, loopback and
          // virtual time. Only test/cli/flowstream.test.ts runs the built command (dist/, which its
          // `npm start` rebuilds); the packed-package test builds from a copy of the sources.
          // The type tests (test/**/*.test-d.ts) are compiled by `npm run typecheck` (tsc over
          // test/, first in `npm test`), where any of their assertions fails the build.
          maxWorkers: 2,
        },
      },
      {
        extends: true,
        test: {
          name: 'serial',
          include: SERIAL,
          fileParallelism: false,
          sequence: { groupOrder: 1 },
        },
      },
      {
        extends: true,
        test: {
          name: 'fleets',
          include: FLEETS,
          fileParallelism: false,
          sequence: { groupOrder: 2 },
        },
      },
    ],
  },
});
