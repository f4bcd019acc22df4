import { fileURLToPath } from 'node:url';
import type { WorkflowDefinition } from '../../src/emulator/index.js';

/** The command's entry point, run from source (`node --import tsx`): no build before the test. */
export const MAIN = fileURLToPath(new URL('../../src/cli/main.ts', import.meta.url));
export const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** Two steps with a variable of each kind a tool's schema shows: text, required, and a choice. */
export const NOTES: WorkflowDefinition = {
  canvasId: 'c-test-notes',
  title: 'Research notes',
  nodes: [
    { id: 'node-start', type: 'start', title: 'Start' },
    { id: 'node-gather', title: 'Gather facts', parents: ['node-start'], durationMs: 40_000,
      messages: [{ content: 'First fact found.', atMs: 10_000 }, { content: 'Second fact found.', atMs: 30_000 }] },
    { id: 'node-write', title: 'Write notes', parents: ['node-gather'], durationMs: 10_000,
      messages: [{ content: 'Notes written.' }],
      files: [{ name: 'notes.md', type: 'text/markdown', content: '# Notes\n' }] },
  ],
  variables: [
    { name: 'topic', variableType: 'string', required: true },
    { name: 'tone', variableType: 'option', options: ['formal', 'casual'] },
  ],
};

/** One node that runs for an hour of emulator time: a run of it is still going when cancelled. */
export const LONG: WorkflowDefinition = {
  canvasId: 'c-test-long',
  title: 'Long survey',
  nodes: [
    { id: 'node-start', type: 'start', title: 'Start' },
    { id: 'node-survey', title: 'Survey', parents: ['node-start'], durationMs: 3_600_000 },
  ],
};

/** Resolves once `check` holds, polling every 20 ms; rejects after `timeoutMs`. For readiness only. */
export async function eventually(check: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`Not true within ${timeoutMs} ms: ${check.toString()}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
