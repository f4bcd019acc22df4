import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);

/**
 * Runs `examples/<name>.ts` as `npx tsx` would, with tsx loaded into node (`node --import tsx`): the four
 * run at once, and npm's and tsx's own launcher processes would only take CPU from them. It starts its
 * own emulator and must exit 0.
 */
async function example(name: string): Promise<string> {
  const { stdout } = await run(process.execPath, ['--import', 'tsx', `examples/${name}.ts`], { timeout: 60_000 });
  return stdout;
}

describe.concurrent('the pipeline examples run against their own emulator', () => {
  it('pipeline-chain: three runs, the report file handed on as a fileKey', { timeout: 60_000 }, async () => {
    const out = await example('pipeline-chain');
    expect(out).toMatch(/started c-sample-files as we-/);
    expect(out).toMatch(/report\.md handed on as of_/);
    expect(out).toMatch(/started c-sample-variables as we-[\s\S]*started c-sample-linear as we-/);
    expect(out).toMatch(/chain finished: c-sample-linear finish: \S/);
  });

  it('pipeline-fan-out: twelve results, no 429', { timeout: 60_000 }, async () => {
    const out = await example('pipeline-fan-out');
    expect(out.match(/^\[\d+\/12\] /gm)).toHaveLength(12);
    expect(out).toMatch(/fan-out finished: 12 runs, \d+ requests, 0 answered 429/);
  });

  it('pipeline-dag: the failing branch is named, the other branches finish', { timeout: 60_000 }, async () => {
    const out = await example('pipeline-dag');
    expect(out).toMatch(/outcome research: finish\noutcome scan: finish\noutcome report: finish\noutcome translate: failed\noutcome publish: skipped/);
    expect(out).toMatch(/pipeline failed at step translate: /);
  });

  it('pipeline-resume: every step started exactly once across the two processes', { timeout: 60_000 }, async () => {
    const out = await example('pipeline-resume');
    expect(out).toMatch(/first process died; saved checkpoint: \{"steps":\{"brief":\{"executionId":"we-\w+","status":"finish","attempt":1,"attemptedAt":\d+\},"scan":\{"executionId":"we-\w+","status":"running","attempt":1,"attemptedAt":\d+\}\}\}/);
    expect(out).toMatch(/outcome brief: finish\noutcome scan: finish\noutcome report: finish/);
    expect(out).toMatch(/c-sample-linear started 1 time\(s\)\nc-sample-parallel started 1 time\(s\)\nc-sample-files started 1 time\(s\)/);
  });
});
