import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

/**
 * The release's fault soak alone (`npm run test:release-soak`): outside `npm test`'s files (`*.test.ts`)
 * until the client follows runs and aborts through outages of the service and of Redis.
 */
export default defineConfig({
  root: fileURLToPath(new URL('../..', import.meta.url)),
  test: {
    include: ['test/soak/fault-soak.release.ts'],
    testTimeout: 180_000,
  },
});
