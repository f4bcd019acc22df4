import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { scrubbedEnv, startProcess } from '../cli/support/child-process.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

// As a user runs it on a fresh machine: no REDIS_URL, so it starts redis-server from PATH itself.
describe('examples/pipeline-workers.ts', () => {
  it('runs a pipeline on two worker processes, one killed mid-step, and finishes it without starting any step twice', { timeout: 60_000 }, async () => {
    const run = startProcess(process.execPath, ['--import', 'tsx', 'examples/pipeline-workers.ts'], { env: scrubbedEnv(), cwd: ROOT });
    expect(await run.exited(60_000)).toBe(0);
    const out = run.stdout();
    expect(out).toMatch(/^worker-1 ready \(pid \d+\)$/mu);
    expect(out).toMatch(/^worker-2 ready \(pid \d+\)$/mu);
    expect(out).toMatch(/step scan: running \((we-\w+)\)\nworker-1 killed \(kill -9\) while it followed scan[^\n]*\n[\s\S]*step scan: finish \(\1\)/u);
    expect(out).toMatch(/^pipeline finish\noutcome brief: finish \(we-\w+\)\noutcome scan: finish \(we-\w+\)\noutcome report: finish \(we-\w+\)$/mu);
    expect(out).toMatch(/^c-sample-linear started 1 time\(s\)\nc-sample-parallel started 1 time\(s\)\nc-sample-files started 1 time\(s\)\naborts sent: 0$/mu);
  });
});
