import type { WorkflowDefinition } from '../../src/emulator/index.js';

/**
 * A workflow whose one branch fails half a second in while the other runs on for an hour (emulator
 * time): its execution is `failed` at once with a branch still executing (service.md §3.3), however
 * slowly the machine reads it.
 */
export const LONG_BRANCH: WorkflowDefinition = {
  canvasId: 'c-test-long-branch',
  title: 'A failing branch beside a long one',
  nodes: [
    { id: 'node-start', type: 'start', title: 'Start' },
    { id: 'node-check', title: 'Check', parents: ['node-start'], durationMs: 1_000, failure: { kind: 'error', errors: ['Check failed.'], atMs: 500 } },
    { id: 'node-survey', title: 'Survey', parents: ['node-start'], durationMs: 3_600_000 },
  ],
};
