import { defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * The files that take longest (tens of seconds each: they build the package, spawn the command, the
 * examples and worker processes), longest first. Among the two workers' files they start first, so
 * that the workers end together instead of one running a long file alone at the end. Vitest orders by
 * the last run's durations when it has them (its cache in node_modules), which a fresh clone has not:
 * it would then start them in the file system's order, possibly last.
 */
const LONGEST = ['test/cli/flowstream.test.ts', 'test/bench/bench.test.ts', 'test/package/packed-package.test.ts', 'test/examples/examples.test.ts', 'test/bullmq/pipeline-workers-example.test.ts'];

/** Vitest's order (project by project, in group order), with `LONGEST` first within each project. */
class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const rank = (file: TestSpecification): number => {
      const index = LONGEST.findIndex((path) => file.moduleId.endsWith(path));
      return index === -1 ? LONGEST.length : index;
    };
    const sorted = await super.sort(files);
    // Vitest's order keeps each project's files together: reorder within each run of one project only.
    const runs: TestSpecification[][] = [];
    for (const file of sorted) {
      const last = runs.at(-1);
      if (last?.[0]?.project.name === file.project.name) last.push(file);
      else runs.push([file]);
    }
    return runs.flatMap((run) => run.map((file, index) => ({ file, index })).sort((a, b) => rank(a.file) - rank(b.file) || a.index - b.index).map(({ file }) => file));
  }
}

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
    sequence: { sequencer: LongestFirst },
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
          // Each worker runs its files one after another in one process, its modules loaded once,
          // rather than a process per file (in one run on the loaded machine: the project 360 → 273 s,
          // its import time, summed over files, about 100 → 18 s). What a file could leave behind for
          // the next is undone after every test: spies, stubbed globals and environment variables
          // (the tests restore their fake timers themselves).
          isolate: false,
          restoreMocks: true,
          unstubGlobals: true,
          unstubEnvs: true,
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
