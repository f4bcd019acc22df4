import type { Reporter, TestModule } from 'vitest/node';

/**
 * `npm test` fails when any test was skipped: a skipped suite is not a pass (a suite that quietly skips
 * where Chromium or redis-server is missing would hide exactly the failures it exists to catch).
 * Only `npm test` uses this reporter, so a filtered run (`vitest run -t …`) during development is not
 * affected.
 */
export default class NoSkippedTests implements Reporter {
  onTestRunEnd(testModules: readonly TestModule[]): void {
    const skipped = testModules.flatMap((module) => [...module.children.allTests('skipped')].map((test) => `${module.moduleId}: ${test.fullName}`));
    if (skipped.length === 0) return;
    console.error(`\n${skipped.length} test(s) were skipped, and npm test counts a skip as a failure:\n${skipped.map((name) => `  - ${name}`).join('\n')}`);
    process.exitCode = 1;
  }
}
