import { defineConfig } from 'vitest/config';

/**
 * Tests that run fleets of child processes against one account (a real redis-server, the emulator on
 * an accelerated clock): they measure fairness and timing across processes, so they run after every
 * other test file, one at a time, with the machine's cores to themselves.
 */
const FLEETS = ['test/redis/fleet.integration.test.ts', 'test/bullmq/workers.integration.test.ts', 'test/soak/fault-soak.integration.test.ts', 'test/soak/fault-soak.outages.integration.test.ts'];

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
          exclude: FLEETS,
          typecheck: {
            enabled: true,
            include: ['test/**/*.test-d.ts'],
            tsconfig: './tsconfig.json',
          },
        },
      },
      {
        extends: true,
        test: {
          name: 'fleets',
          include: FLEETS,
          fileParallelism: false,
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
